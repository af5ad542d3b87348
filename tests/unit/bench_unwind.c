// SPDX-License-Identifier: MIT
/*
 * bench_unwind: how long unwind_build_fd() takes and how big its tables are.
 *
 *   build/tests/bench_unwind [-d] [-n RUNS] FILE...
 *
 * For each file: the best and median wall time of RUNS builds (default 10),
 * rows, distinct rules, bytes in the BPF layout (and a row), FDEs, skipped
 * entries and how many rows have each CFA rule.
 * -d also dumps the rows ("vaddr cfa-rule cfa_off rbp-rule rbp_off").
 * Not a test (the runner only runs test_*): build it with
 *   make build/tests/bench_unwind
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "unwind/unwind.h"

static const char *const cfa_names[] = { "invalid", "rsp", "rbp", "plt", "signal", "stop" };
static const char *const rbp_names[] = { "same", "offset", "invalid" };

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int bench(const char *path, int runs, int dump)
{
	struct errbuf err = { "" };
	struct unwind_table t = { 0 };
	struct unwind_layout lay = { 0 };
	size_t by_cfa[6] = { 0 }, bytes = 0;
	double *ms = calloc((size_t)runs, sizeof(*ms));
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = 0;

	if (fd < 0 || !ms) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		free(ms);
		if (fd >= 0)
			close(fd);
		return 1;
	}
	for (int i = 0; i < runs && !rc; i++) {
		double t0 = now_ms();

		unwind_table_free(&t);
		rc = unwind_build_fd(fd, &t, &err);
		ms[i] = now_ms() - t0;
	}
	close(fd);
	if (rc) {
		fprintf(stderr, "%s: %s (%d)\n", path, err.msg, rc);
		free(ms);
		return 1;
	}
	qsort(ms, (size_t)runs, sizeof(*ms), cmp_double);
	for (size_t i = 0; i < t.n; i++)
		if (CPROF_ROW_CFA(unwind_rule(&t, i)) < 6)
			by_cfa[CPROF_ROW_CFA(unwind_rule(&t, i))]++;
	if (t.n && unwind_plan(&t, &lay) == 0)
		bytes = (size_t)lay.nslots * sizeof(union cprof_table_slot);
	unwind_layout_free(&lay);
	printf("%s: best %.2f ms, median %.2f ms; %zu rows, %zu rules, %zu bytes (%.2f a row), "
	       "%zu FDEs, %zu skipped; base %#llx\n",
	       path, ms[0], ms[runs / 2], t.n, t.nrules, bytes, t.n ? (double)bytes / t.n : 0.0,
	       t.fdes, t.skipped, (unsigned long long)t.base);
	printf("  rows by CFA rule:");
	for (int i = 0; i < 6; i++)
		printf(" %s %zu", cfa_names[i], by_cfa[i]);
	printf("\n");
	for (size_t i = 0; dump && i < t.n; i++) {
		const struct cprof_unwind_rule *r = unwind_rule(&t, i);

		printf("%#llx %s %d %s %d\n", (unsigned long long)(t.base + t.pcs[i]),
		       CPROF_ROW_CFA(r) < 6 ? cfa_names[CPROF_ROW_CFA(r)] : "?", r->cfa_off,
		       CPROF_ROW_RBP(r) < 3 ? rbp_names[CPROF_ROW_RBP(r)] : "?", r->rbp_off);
	}
	unwind_table_free(&t);
	free(ms);
	return 0;
}

int main(int argc, char **argv)
{
	int runs = 10, dump = 0, opt, failed = 0;

	while ((opt = getopt(argc, argv, "dn:")) != -1) {
		if (opt == 'd')
			dump = 1;
		else if (opt == 'n' && atoi(optarg) > 0)
			runs = atoi(optarg);
		else
			return fprintf(stderr, "usage: %s [-d] [-n RUNS] FILE...\n", argv[0]), 2;
	}
	for (int i = optind; i < argc; i++)
		failed |= bench(argv[i], runs, dump);
	return failed;
}
