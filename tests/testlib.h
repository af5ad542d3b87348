/* SPDX-License-Identifier: MIT */
/*
 * A minimal test harness for the C unit tests.
 *
 * Each check prints one line that tests/run.sh counts:
 *   "ok - <name>", "not ok - <name>: <why>" or "skip - <name>: <why>".
 * A skipped check is never counted as passed.  main() returns non-zero when
 * anything failed, so a test binary is also usable on its own.
 */
#ifndef CPROF_TESTLIB_H
#define CPROF_TESTLIB_H

#include <stdio.h>
#include <string.h>

/* One count for a test and the helpers in tests/ linked into it. */
__attribute__((weak)) int t_failed;
/* Results reported, skips among them, and the plan (-1: none yet). */
__attribute__((weak)) int t_results, t_skipped;
__attribute__((weak)) int t_plan = -1;

/*
 * The number of results this test reports (TAP's "1..N"): tests/run.sh
 * fails a test that reports another number, so a test that returns early
 * is seen.  Printed once the test knows it runs (after what skips it whole).
 */
#define T_PLAN(n) (t_plan = (n), printf("1..%d\n", t_plan))

#define T_OK(name) (t_results++, printf("ok - %s\n", (name)))
#define T_SKIP(name, ...)                                                     \
	do {                                                                  \
		t_results++;                                                  \
		t_skipped++;                                                  \
		printf("skip - %s: ", (name));                                \
		printf(__VA_ARGS__);                                          \
		printf("\n");                                                 \
	} while (0)

/* CHECK(cond, name, fmt, ...): pass when cond holds, else say why. */
#define CHECK(cond, name, ...)                                                \
	do {                                                                  \
		t_results++;                                                  \
		if (cond) {                                                   \
			printf("ok - %s\n", (name));                          \
		} else {                                                      \
			t_failed++;                                           \
			printf("not ok - %s: ", (name));                      \
			printf(__VA_ARGS__);                                  \
			printf(" (%s:%d)\n", __FILE__, __LINE__);             \
		}                                                             \
	} while (0)

#define CHECK_EQ_U64(a, b, name)                                              \
	CHECK((unsigned long long)(a) == (unsigned long long)(b), name,       \
	      "%s = %#llx, expected %#llx", #a, (unsigned long long)(a),      \
	      (unsigned long long)(b))

#define CHECK_STR(a, b, name)                                                 \
	do {                                                                  \
		const char *_a = (a), *_b = (b);                              \
		CHECK(_a && _b && strcmp(_a, _b) == 0, name,                  \
		      "%s = \"%s\", expected \"%s\"", #a, _a ? _a : "(null)", \
		      _b ? _b : "(null)");                                    \
	} while (0)

/*
 * Ends a test: non-zero when a check failed.  A part skipped for what the
 * machine lacks (T_SKIP, then return) leaves its checks unrun: each is
 * reported as skipped, so the plan holds on such a machine too.  Without
 * a skip, a test that reports fewer than its plan fails in tests/run.sh.
 */
static inline int t_exit(void)
{
	for (int i = t_results + 1; t_skipped && i <= t_plan; i++)
		printf("skip - check %d of %d: not run, a part skipped above\n", i, t_plan);
	return t_failed ? 1 : 0;
}

#define T_EXIT() t_exit()

#endif
