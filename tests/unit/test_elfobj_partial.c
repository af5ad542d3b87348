// SPDX-License-Identifier: MIT
/*
 * Tests for elfobj_load_symbols_for(): a table read for some addresses
 * names each of them as the whole table does (on this machine's libc with
 * its debug file, python3, libelf: thousands of addresses, inside and
 * between functions), costs memory for those addresses only, and a table
 * over the bound asked is refused whole.  The big case is an object with
 * 300,000 symbols written by tests/workloads/bigsyms.c.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "elf/elfobj.h"
#include "elfobjcheck.h"
#include "testlib.h"
#include "testutil.h"

static const struct elfobj_debug_opts host = { .debug_root = "/usr/lib/debug" };

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* What a lookup found, kept across loads. */
struct found {
	uint64_t start, size;
	char name[128];
	bool some;
};

static struct found found_at(const struct elfobj *o, uint64_t a)
{
	const struct elfobj_sym *s = elfobj_lookup(o, a);
	struct found f = { 0 };

	if (s) {
		f = (struct found){ .start = s->start, .size = s->size, .some = true };
		snprintf(f.name, sizeof(f.name), "%s", s->name);
	}
	return f;
}

/*
 * @o's symbols for 4000 addresses (symbol starts, middles, ends and random
 * addresses over its range), loaded for those addresses only, against the
 * whole table.
 */
static void compare(const char *what, struct elfobj *o)
{
	const struct elfobj_debug_opts *opts = &host;
	const struct elfobj_sym *all;
	struct found *want;
	uint64_t *addrs, lo, hi, seed = 0x9e3779b97f4a7c15ull;
	size_t n, na = 0, nu = 0, same = 0, named = 0, full_bytes, part_bytes;
	char name[256];
	int rc;

	rc = elfobj_load_symbols(o, opts, NULL);
	all = elfobj_symbols(o, &n);
	snprintf(name, sizeof(name), "%s: symbols read for 4000 addresses name them as the whole table",
		 what);
	if (rc || n < 50) {
		T_SKIP(name, "only %zu symbols (rc %d)", n, rc);
		return;
	}
	full_bytes = elfobj_symbols_bytes(o);
	lo = all[0].start;
	hi = all[n - 1].start + all[n - 1].size + 64;
	addrs = malloc(4000 * sizeof(*addrs));
	want = malloc(4000 * sizeof(*want));
	for (size_t i = 0; i < 1000; i++) {
		const struct elfobj_sym *s = &all[(i * 7919) % n];

		addrs[na++] = s->start;
		addrs[na++] = s->start + s->size / 2;
		addrs[na++] = s->start + s->size;
		seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
		addrs[na++] = lo + seed % (hi - lo);
	}
	qsort(addrs, na, sizeof(*addrs), cmp_u64);
	for (size_t i = 0; i < na; i++)
		if (!nu || addrs[nu - 1] != addrs[i])
			addrs[nu++] = addrs[i];
	for (size_t i = 0; i < nu; i++)
		want[i] = found_at(o, addrs[i]);

	rc = elfobj_load_symbols_for(o, opts, addrs, nu, UINT64_MAX, NULL);
	part_bytes = elfobj_symbols_bytes(o);
	for (size_t i = 0; !rc && i < nu; i++) {
		struct found got = found_at(o, addrs[i]);
		bool eq = got.some == want[i].some &&
			  (!got.some || (got.start == want[i].start && got.size == want[i].size &&
					 !strcmp(got.name, want[i].name)));

		if (!eq && same == i)
			printf("# %#llx: whole table %s, partial %s\n", (unsigned long long)addrs[i],
			       want[i].some ? want[i].name : "(none)", got.some ? got.name : "(none)");
		same += eq;
		named += got.some;
	}
	CHECK(rc == 0 && same == nu && named > nu / 4, name, "rc %d, %zu of %zu alike, %zu named",
	      rc, same, nu, named);
	snprintf(name, sizeof(name), "%s: ... in no more memory than the whole table", what);
	CHECK(part_bytes > 0 && part_bytes <= full_bytes, name, "%zu bytes, whole table %zu",
	      part_bytes, full_bytes);
	printf("# %s: %zu symbols, %zu bytes; for %zu addresses %zu bytes\n", what, n, full_bytes,
	       nu, part_bytes);
	free(addrs);
	free(want);
}

static void test_system(void)
{
	static const struct {
		const char *what, *fn;
	} libs[] = { { "libc", "getpid" }, { "libelf", "elf_begin" } };

	for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); i++) {
		Dl_info info;
		void *fn = dlsym(RTLD_DEFAULT, libs[i].fn);
		struct elfobj *o;

		if (!fn || !dladdr(fn, &info) || !(o = elfobj_at(info.dli_fname))) {
			T_SKIP(libs[i].what, "not found");
			continue;
		}
		compare(libs[i].what, o);
		elfobj_free(o);
	}
	{
		struct elfobj *o = elfobj_at("/usr/bin/python3");

		if (!o) {
			T_SKIP("python3", "not installed");
			return;
		}
		compare("python3", o);
		elfobj_free(o);
	}
}

/* 300,000 symbols: the few sampled ones cost little, the whole table is refused over a bound. */
static void test_big(void)
{
	const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
	char dir[] = "/tmp/cprof-partial-XXXXXX", path[PATH_MAX];
	uint64_t hot[4] = { 0x1000, 0x1100, 0x1180, 0x1300 };
	struct errbuf err = { "" };
	size_t full_bytes = 0, part_bytes;
	double t0, t1, t2;
	struct elfobj *o;
	bool names_ok = true;
	int rc;

	if (!mkdtemp(dir) ||
	    sh(fmt("'%s/workloads/bigsyms' gen '%s/big.so' 300000 7", build, dir))) {
		T_SKIP("300,000 symbols", "no %s/workloads/bigsyms (make workloads)", build);
		return;
	}
	snprintf(path, sizeof(path), "%s/big.so", dir);
	o = elfobj_at(path);
	t0 = now_ms();
	rc = o ? elfobj_load_symbols_for(o, NULL, hot, 4, UINT64_MAX, &err) : -EBADF;
	t1 = now_ms();
	part_bytes = o ? elfobj_symbols_bytes(o) : 0;
	for (int k = 0; k < 4 && o; k++) {
		const struct elfobj_sym *s = elfobj_lookup(o, hot[k]);
		char want[16];

		snprintf(want, sizeof(want), "hot_%d", k == 2 ? 1 : k);
		names_ok &= s && !strcmp(s->name, want);
	}
	CHECK(rc == 0 && names_ok && part_bytes < 64 * 1024,
	      "300,000 symbols, 4 addresses: named right in under 64 KiB",
	      "rc %d (%s), %zu bytes", rc, err.msg, part_bytes);
	if (o) {
		rc = elfobj_load_symbols_for(o, NULL, NULL, 0, UINT64_MAX, &err);
		t2 = now_ms();
		full_bytes = elfobj_symbols_bytes(o);
		printf("# 300,000 symbols: for 4 addresses %zu bytes in %.1f ms; whole table %zu bytes in %.1f ms\n",
		       part_bytes, t1 - t0, full_bytes, t2 - t1);
		rc = elfobj_load_symbols_for(o, NULL, NULL, 0, full_bytes / 2, &err);
		CHECK(rc == -EFBIG && elfobj_symbols_bytes(o) == 0 && !elfobj_lookup(o, hot[0]) &&
		      strstr(err.msg, "symbols over"),
		      "whole table over the bound asked: -EFBIG, nothing kept", "rc %d (%s), %zu bytes",
		      rc, err.msg, elfobj_symbols_bytes(o));
		rc = elfobj_load_symbols_for(o, NULL, hot, 4, 100, &err);
		CHECK(rc == -EFBIG && elfobj_symbols_bytes(o) == 0,
		      "even 4 addresses' symbols over a 100-byte bound: -EFBIG", "rc %d", rc);
		elfobj_unload_symbols(o);
		CHECK(elfobj_symbols_bytes(o) == 0 && !elfobj_lookup(o, hot[0]) &&
		      elfobj_load_symbols(o, NULL, NULL) == 0 && elfobj_lookup(o, hot[0]),
		      "unloaded: nothing found, and loading again works", "lookup after reload failed");
		elfobj_free(o);
	}
	sh(fmt("rm -rf '%s'", dir));
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	T_PLAN(10);
	test_system();
	test_big();
	return T_EXIT();
}
