// SPDX-License-Identifier: MIT
/*
 * throughput: fixed units of CPU work, counted, for measuring what a
 * profiler costs the program it profiles (bench/scale.sh builds it with
 * gcc -O2, i.e. without frame pointers, as distribution binaries are).
 *
 *   throughput SECS [DEPTH]
 *
 * Recurses DEPTH frames (default 12), then repeats a unit of work (a few
 * microseconds of integer arithmetic, no memory traffic, no syscalls)
 * until SECS of wall time pass.  Prints "UNITS WALL_S CPU_S": the units
 * done, the wall time and this process's CPU time they took.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One unit: 4096 rounds of xorshift; the result goes to sink. */
__attribute__((noinline)) static void unit(void)
{
	unsigned long x = sink | 1;

	for (int i = 0; i < 4096; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	sink = x;
}

__attribute__((noinline)) static unsigned long work(double end)
{
	unsigned long n = 0;

	do {
		for (int i = 0; i < 64; i++)
			unit();
		n += 64;
	} while (clock_s(CLOCK_MONOTONIC) < end);
	return n;
}

__attribute__((noinline)) static unsigned long descend(int depth, double end)
{
	unsigned long n = depth > 0 ? descend(depth - 1, end) : work(end);

	sink++; /* not a tail call: keeps every frame on the stack */
	return n;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 5;
	int depth = argc > 2 ? atoi(argv[2]) : 12;
	double t0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
	unsigned long n = descend(depth, t0 + secs);

	printf("%lu %.6f %.6f\n", n, clock_s(CLOCK_MONOTONIC) - t0,
	       clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0);
	return 0;
}
