// SPDX-License-Identifier: MIT
/*
 * sym_inline: a leaf function inlined into its caller, for source-line and
 * inline-frame checks.  sym_inline [SECONDS]; prints its pid.
 *
 * inlined_step() is always inlined into outer_loop(), so a sample in it is
 * one location with two lines: inlined_step (innermost), then outer_loop at
 * the line of the call.  The line numbers are asserted by the tests: the
 * markers LINE_* below name them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static inline __attribute__((always_inline)) void inlined_step(unsigned long i)
{
	sink += i * 7; /* LINE_INLINED_BODY */
}

__attribute__((noinline)) void outer_loop(double end)
{
	while (now() < end)
		for (unsigned long i = 0; i < 1000000; i++)
			inlined_step(i); /* LINE_CALL */
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 10;

	printf("%d\n", getpid());
	fflush(stdout);
	outer_loop(now() + secs);
	return 0;
}
