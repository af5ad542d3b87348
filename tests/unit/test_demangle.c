// SPDX-License-Identifier: MIT
/*
 * Tests for demangle: C++ (Itanium) and Rust (legacy and v0) names as
 * c++filt prints them, Go's ABI suffixes dropped, plain names untouched, bounded output, hostile input.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/demangle.h"
#include "testlib.h"

static void expect(const char *sym, const char *want, const char *what)
{
	char buf[1024];
	size_t n = demangle(sym, buf, sizeof(buf));

	if (want)
		CHECK(n == strlen(want) && strcmp(buf, want) == 0, what, "'%s' -> '%s' (%zu)",
		      sym, buf, n);
	else
		CHECK(n == 0 && buf[0] == '\0', what, "'%s' -> '%s' (%zu), expected nothing",
		      sym, buf, n);
}

/* c++filt, when binutils is there, must agree: an independent demangler run. */
static void agree_with_cxxfilt(const char *sym, const char *what)
{
	char cmd[512], want[1024] = "", buf[1024];
	FILE *f;

	snprintf(cmd, sizeof(cmd), "c++filt '%s' 2>/dev/null", sym);
	f = popen(cmd, "r");
	if (!f || !fgets(want, sizeof(want), f)) {
		if (f)
			pclose(f);
		T_SKIP(what, "c++filt not available");
		return;
	}
	pclose(f);
	want[strcspn(want, "\n")] = '\0';
	demangle(sym, buf, sizeof(buf));
	CHECK(strcmp(buf, want) == 0, what, "ours '%s', c++filt '%s'", buf, want);
}

int main(void)
{
	char small[8], *huge;
	size_t n;

	T_PLAN(28);
	expect("_ZN2ns4TypeIiE6methodEl", "ns::Type<int>::method(long)",
	       "C++: namespaced template method with its parameters");
	expect("_ZNK3foo3barERKSt6vectorIiSaIiEE", "foo::bar(std::vector<int, std::allocator<int> > const&) const",
	       "C++: const method, std:: abbreviations expanded");
	expect("_Z3fooi.constprop.0", "foo(int) [clone .constprop.0]",
	       "C++: GCC clone suffix kept readable");
	expect("_ZN1r5outer14Thing$LT$T$GT$6crunch17h0d34ce171ddddbcbE",
	       "r::outer::Thing<T>::crunch", "Rust legacy: escapes decoded, hash dropped");
	expect("_ZN4core3fmt5write17h0123456789abcdefE", "core::fmt::write",
	       "Rust legacy: a plain path");
	expect("runtime.goexit.abi0", "runtime.goexit", "Go: the ABI0 wrapper named as Go names it");
	expect("main.(*T).Run.abiinternal", "main.(*T).Run", "Go: .abiinternal dropped too");
	expect(".abi0", NULL, "Go: a suffix alone is no name");
	expect("runtime.abi0x", NULL, "Go: a name that only contains the suffix is left as it is");
	expect("foo.isra.0", NULL, "C: GCC's clone suffixes are not Go's");
	expect("_RNvMNtCs6GmmlP4bgsG_1r5outerINtB2_5ThingmE6crunchB4_", NULL,
	       "Rust v0: not in process (left to demangle_v0)");
	{
		char buf[256];
		size_t k = demangle_v0("_RNvMNtCs6GmmlP4bgsG_1r5outerINtB2_5ThingmE6crunchB4_", buf,
				       sizeof(buf));

		CHECK(k && !strcmp(buf, "<r::outer::Thing<u32>>::crunch") &&
		      demangle_is_v0("_RNvC1a1b") && !demangle_is_v0("_ZN1a1bE"),
		      "Rust v0 by demangle_v0: generic impl method", "'%s'", buf);
		k = demangle_v0("_ZN2ns4TypeIiE6methodEl", buf, sizeof(buf));
		CHECK(k && !strcmp(buf, "ns::Type<int>::method(long)"),
		      "demangle_v0: C++ names too", "'%s'", buf);
	}
	expect("main", NULL, "plain C name: nothing to demangle");
	expect("_start", NULL, "plain name starting with an underscore");
	expect("_Z", NULL, "bare prefix: not a name");
	expect("_Zfoo$$bar", NULL, "invalid C++ mangling: nothing");
	{
		char buf[64];

		CHECK(demangle_v0("_RNvXXXX", buf, sizeof(buf)) == 0 && !buf[0],
		      "invalid v0 mangling: nothing", "'%s'", buf);
	}
	expect("", NULL, "empty string");
	n = demangle(NULL, small, sizeof(small));
	CHECK(n == 0 && small[0] == '\0', "NULL symbol: nothing", "%zu", n);
	CHECK(demangle("_ZN2ns4TypeIiE6methodEl", small, 0) == 0, "zero-length buffer: nothing",
	      "wrote");

	n = demangle("_ZN2ns4TypeIiE6methodEl", small, sizeof(small));
	CHECK(n == sizeof(small) - 1 && strcmp(small, "ns::Typ") == 0,
	      "output truncated to the buffer, NUL-terminated", "'%s' (%zu)", small, n);
	n = demangle("runtime.goexit.abi0", small, sizeof(small));
	CHECK(n == sizeof(small) - 1 && strcmp(small, "runtime") == 0,
	      "Go: truncated to the buffer, NUL-terminated", "'%s' (%zu)", small, n);

	/* Longer than the input bound: left mangled, no stack spent on it. */
	huge = malloc(DEMANGLE_MAX_INPUT + 64);
	memset(huge, 'a', DEMANGLE_MAX_INPUT + 63);
	memcpy(huge, "_ZN5abcde", 9);
	huge[DEMANGLE_MAX_INPUT + 63] = '\0';
	n = demangle(huge, small, sizeof(small));
	CHECK(n == 0, "input over DEMANGLE_MAX_INPUT: left alone", "%zu", n);

	/* Deep nesting within the bound: libiberty's recursion limit holds. */
	{
		size_t len = 0;

		len += (size_t)snprintf(huge, 16, "_Z1f");
		while (len + 8 < DEMANGLE_MAX_INPUT)
			len += (size_t)snprintf(huge + len, 8, "PFv");
		huge[len] = '\0';
		n = demangle(huge, small, sizeof(small));
		CHECK(1, "deeply nested hostile name: returns without crashing", "%zu", n);
	}
	free(huge);

	agree_with_cxxfilt("_ZN2ns4TypeIiE6methodEl", "agrees with c++filt: template method");
	agree_with_cxxfilt("_ZNSt6vectorIiSaIiEE9push_backEOi", "agrees with c++filt: std::vector");
	agree_with_cxxfilt("_ZZ4mainENKUlvE_clEv", "agrees with c++filt: lambda");
	return T_EXIT();
}
