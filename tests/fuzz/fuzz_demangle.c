// SPDX-License-Identifier: MIT
/*
 * fuzz_demangle: any bytes as a symbol name (every ELF symbol and DWARF
 * linkage name of a profiled process reaches demangle()), with output
 * buffers of every size.
 *
 *   u8  small    the length of a second, small output buffer (1..256)
 *   ... the name (up to its first NUL, or the end)
 *
 * Checked: the output is NUL-terminated where the returned length says;
 * nothing comes back for names that are not _Z mangled or are over
 * DEMANGLE_MAX_INPUT, nor for Rust v0 names (_R: libiberty may loop on
 * them for 2^64 iterations; demangle_v0() runs them in the sandboxed
 * worker, where a timeout kills it); the same name gives the same output
 * twice, demangle_v0() the same output for the others; and a small buffer
 * gets a prefix of what a big one gets.
 */
#include <stdint.h>

#include "util/demangle.h"
#include "fuzz_common.h"

#define BIG 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char big[BIG], again[BIG], small[256];
	size_t small_len, n, n2, ns;
	char *sym;

	if (!size)
		return 0;
	small_len = 1 + data[0] % sizeof(small);
	sym = malloc(size);
	if (!sym)
		return 0;
	memcpy(sym, data + 1, size - 1);
	sym[size - 1] = '\0';

	n = demangle(sym, big, sizeof(big));
	FUZZ_ASSERT(n < sizeof(big) && strlen(big) == n);
	if (n) {
		FUZZ_ASSERT(sym[0] == '_' && sym[1] == 'Z');
		FUZZ_ASSERT(strlen(sym) <= DEMANGLE_MAX_INPUT);
	}
	n2 = demangle(sym, again, sizeof(again));
	FUZZ_ASSERT(n2 == n && !memcmp(big, again, n + 1));
	if (!demangle_is_v0(sym)) {
		n2 = demangle_v0(sym, again, sizeof(again));
		FUZZ_ASSERT(n2 == n && !memcmp(big, again, n + 1));
	}

	ns = demangle(sym, small, small_len);
	FUZZ_ASSERT(ns < small_len && strlen(small) == ns);
	FUZZ_ASSERT(ns == (n < small_len - 1 ? n : small_len - 1));
	FUZZ_ASSERT(!memcmp(small, big, ns));
	FUZZ_ASSERT(demangle(sym, small, 0) == 0);
	free(sym);
	return 0;
}
