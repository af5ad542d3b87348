// SPDX-License-Identifier: MIT
/*
 * Tests for the layout of unwind tables as the BPF unwinder reads them
 * (bpf/cprof.h): 16-bit pcs under a page index, rules numbered by use,
 * the rarer ones through exceptions.
 *
 * The reference is the table as rows, each a 32-bit pc and its rule (what
 * the BPF side searched until it read 8-byte rows): for every address of
 * libc and of the biggest library at hand (libLLVM-14 where installed),
 * and of made-up tables that reach the layout's corners (sparse pages,
 * hundreds of rules, one row), the BPF code itself (bpf/unwind.bpf.h built
 * as plain C: search_row, and find_row with its row cache) must find the
 * rule a plain search of the rows finds.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "unwind/bpfunwind.h"
#include "testlib.h"
#include "testutil.h"
#include "unwind/unwind.h"
#include "unwindcheck.h"

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static bool same_rule(const struct cprof_unwind_rule *a, const struct cprof_unwind_rule *b)
{
	return a == b || (a && b && memcmp(a, b, sizeof(*a)) == 0);
}

/*
 * Every address from below the first row to past the last row's page:
 * search_row and find_row (row cache first) at each, find_row again at
 * every row's start and the byte before, against a walk of the rows.
 * Returns the mismatches.
 */
static size_t every_address(const struct unwind_table *t, size_t *checked)
{
	const struct cprof_table *d = laid_out(t);
	uint64_t lo = t->base >= 64 ? t->base - 64 : 0;
	uint64_t hi = t->base + t->pcs[t->n - 1] + (2ull << d->index_shift);
	size_t bad = 0, r = 0; /* rows at or below the address */

	*checked = 0;
	for (uint64_t a = lo; a < hi; a++) {
		const struct cprof_unwind_rule *want;

		while (r < t->n && t->base + t->pcs[r] <= a)
			r++;
		want = a >= t->base && r ? unwind_rule(t, r - 1) : NULL;
		bad += !same_rule(row_at_uncached(t, a), want);
		/* in order: the row cache answers by the span of a page a row holds over */
		bad += !same_rule(row_at(t, a), want);
		if (r && t->base + t->pcs[r - 1] == a) {
			bad += !same_rule(row_at(t, a), want);
			bad += a > t->base && !same_rule(row_at(t, a - 1),
							 r >= 2 ? unwind_rule(t, r - 2) : NULL);
		}
		(*checked)++;
	}
	return bad;
}

/* The layout's own figures: rules by use, exceptions, size. */
static void check_plan(const char *name, const struct unwind_table *t)
{
	struct unwind_layout lay;
	size_t *uses, exc = 0, bad_order = 0;
	int rc = unwind_plan(t, &lay);

	uses = calloc(t->nrules ? t->nrules : 1, sizeof(*uses));
	if (rc || !uses) {
		CHECK(false, fmt("%s: planned", name), "rc %d", rc);
		free(uses);
		return;
	}
	for (size_t i = 0; i < t->n; i++)
		uses[t->ids[i]]++;
	for (size_t k = 1; k < t->nrules; k++)
		bad_order += uses[lay.rule_of[k - 1]] < uses[lay.rule_of[k]];
	for (size_t k = CPROF_ID_ESCAPE; k < t->nrules; k++)
		exc += uses[lay.rule_of[k]];
	CHECK(bad_order == 0 && lay.desc.nexc == exc && lay.desc.nrows == t->n &&
		      lay.desc.nrules == t->nrules,
	      fmt("%s: rules numbered by use, the rows of the rarer ones (%zu) exceptions", name,
		  exc),
	      "%zu out of order, nexc %u", bad_order, lay.desc.nexc);
	CHECK(lay.nslots == CPROF_TABLE_SLOTS(&lay.desc) &&
		      lay.desc.npages == (t->pcs[t->n - 1] >> lay.desc.index_shift) + 1,
	      fmt("%s: the plan's size is the layout's", name), "%u slots", lay.nslots);
	unwind_layout_free(&lay);
	free(uses);
}

/* A real object: every address, and the bytes a row. */
static void test_object(const char *name, const char *path, double max_bytes)
{
	struct errbuf err = { "" };
	struct unwind_table t;
	const struct cprof_table *d;
	size_t bad, checked;
	double t0, bytes;

	if (build_file(path, &t, &err) || !t.n) {
		CHECK(false, fmt("%s: table built", name), "%s: %s", path, err.msg);
		unwind_table_free(&t);
		return;
	}
	check_plan(name, &t);
	t0 = now_ms();
	d = laid_out(&t);
	bad = every_address(&t, &checked);
	bytes = (double)CPROF_TABLE_SLOTS(d) * sizeof(union cprof_table_slot) / t.n;
	CHECK(bad == 0,
	      fmt("%s: at each of %zu addresses the BPF lookups give the rows' rule "
		  "(%zu rows, %zu rules, %u exceptions, %u pages of %u B)",
		  name, checked, t.n, t.nrules, d->nexc, d->npages, 1u << d->index_shift),
	      "%zu differ", bad);
	CHECK(bytes <= max_bytes,
	      fmt("%s: %.2f bytes a row, index and rules included (at most %.1f)", name, bytes,
		  max_bytes),
	      "%.2f", bytes);
	printf("# %s (%s): %.0f ms for every address\n", name, path, now_ms() - t0);
	unwind_table_free(&t);
}

/* The biggest shared library in @dir (libLLVM-14 where installed), or "". */
static void biggest_library(const char *dir, char *out, size_t len)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	off_t best = 0;

	*out = '\0';
	while (d && (e = readdir(d))) {
		char path[PATH_MAX];
		struct stat st;

		if (!strstr(e->d_name, ".so"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (lstat(path, &st) || !S_ISREG(st.st_mode) || st.st_size <= best)
			continue;
		best = st.st_size;
		snprintf(out, len, "%s", path);
	}
	if (d)
		closedir(d);
}

/* A made-up table of @n rows, @step bytes apart, rule i % @nrules. */
static void synthetic(struct unwind_table *t, size_t n, uint32_t step, size_t nrules)
{
	forget_layout();
	memset(t, 0, sizeof(*t));
	t->pcs = calloc(n, sizeof(*t->pcs));
	t->ids = calloc(n, sizeof(*t->ids));
	t->rules = calloc(nrules, sizeof(*t->rules));
	if (!t->pcs || !t->ids || !t->rules)
		exit(2);
	t->n = n;
	t->nrules = nrules;
	t->base = 0x401000;
	for (size_t k = 0; k < nrules; k++)
		t->rules[k] = (struct cprof_unwind_rule){
			.cfa_off = (int16_t)(8 + 8 * k),
			.rules = CPROF_ROW_RULES(CPROF_CFA_RSP, k % 2 ? CPROF_RBP_OFFSET : CPROF_RBP_SAME),
			.rbp_off = (int8_t)(k % 2 ? -2 : 0),
		};
	/* skewed uses: rule k on about 1/(k+1) of the rows, so numbering reorders them */
	for (size_t i = 0; i < n; i++) {
		t->pcs[i] = (uint32_t)(i * step);
		t->ids[i] = (uint16_t)((i * 2654435761u >> 7) % nrules);
		if (i % 3 == 0)
			t->ids[i] = (uint16_t)(nrules - 1);
	}
}

static void test_synthetic(const char *name, size_t n, uint32_t step, size_t nrules)
{
	struct unwind_table t;
	size_t bad, checked;

	synthetic(&t, n, step, nrules);
	check_plan(name, &t);
	bad = every_address(&t, &checked);
	CHECK(bad == 0,
	      fmt("%s: %zu rows %u B apart, %zu rules: the BPF lookups give the rows' rule at "
		  "each of %zu addresses (pages of %u B)",
		  name, n, step, nrules, checked, 1u << laid_out(&t)->index_shift),
	      "%zu differ", bad);
	unwind_table_free(&t);
}

int main(void)
{
	char big[PATH_MAX];

	setvbuf(stdout, NULL, _IOLBF, 0);
	T_PLAN(20);
	test_synthetic("one row", 1, 1, 1);
	test_synthetic("rare rules", 20000, 3, 700);   /* exceptions */
	test_synthetic("sparse", 300, 70000, 300);     /* pages of 64 KiB, some empty */
	test_synthetic("dense", 70000, 1, 255);        /* every byte a row, no exception */
	test_object("libc", "/lib/x86_64-linux-gnu/libc.so.6", 4.0);
	if (access("/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1", R_OK) == 0)
		snprintf(big, sizeof(big), "/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1");
	else
		biggest_library("/usr/lib/x86_64-linux-gnu", big, sizeof(big));
	if (*big)
		test_object(strstr(big, "libLLVM-14") ? "libLLVM-14" : "the biggest library", big,
			    4.0);
	else
		T_SKIP("the biggest library", "none in /usr/lib/x86_64-linux-gnu");
	return T_EXIT();
}
