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

#define T_OK(name) printf("ok - %s\n", (name))
#define T_SKIP(name, ...)                                                     \
	do {                                                                  \
		printf("skip - %s: ", (name));                                \
		printf(__VA_ARGS__);                                          \
		printf("\n");                                                 \
	} while (0)

/* CHECK(cond, name, fmt, ...): pass when cond holds, else say why. */
#define CHECK(cond, name, ...)                                                \
	do {                                                                  \
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

#define T_EXIT() (t_failed ? 1 : 0)

#endif
