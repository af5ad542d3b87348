// SPDX-License-Identifier: MIT
/*
 * fakejvm MODE SECS: a process that maps a libjvm.so whose serviceability
 * tables are MODE's lie (libjvm.c), then spins in fake_spin() under main
 * for SECS seconds.  Prints its pid first.  MODE "late": the tables are
 * "zero"'s for the first second (a JVM starting), then "lying"'s.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int fakejvm_fill(const char *mode);

static volatile unsigned long sink;

__attribute__((noinline)) static void fake_spin(double until)
{
	struct timespec ts;

	do {
		for (int i = 0; i < 100000; i++)
			sink = sink * 6364136223846793005UL + 1;
		clock_gettime(CLOCK_MONOTONIC, &ts);
	} while (ts.tv_sec + ts.tv_nsec / 1e9 < until);
}

int main(int argc, char **argv)
{
	struct timespec ts;

	bool late = argc > 1 && !strcmp(argv[1], "late");
	double t0;

	if (argc < 3 || fakejvm_fill(late ? "zero" : argv[1])) {
		fprintf(stderr, "usage: fakejvm lying|endless|stride|empty|zero|late SECS\n");
		return 2;
	}
	printf("%d\n", (int)getpid());
	fflush(stdout);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t0 = ts.tv_sec + ts.tv_nsec / 1e9;
	if (late) {
		fake_spin(t0 + 1);
		fakejvm_fill("lying");
	}
	fake_spin(t0 + atof(argv[2]));
	return 0;
}
