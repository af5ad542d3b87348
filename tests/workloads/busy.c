// SPDX-License-Identifier: MIT
/*
 * busy: a CPU-bound process with a fixed call chain, used for whole-host
 * runs and benchmarks.  busy [SECONDS] [DEPTH]: recurses DEPTH frames
 * (default 20) and spins at the bottom until SECONDS (default 10) pass.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void busy_leaf(double end)
{
	while (now() < end)
		for (int i = 0; i < 100000; i++)
			sink += i;
}

__attribute__((noinline)) void busy_descend(int depth, double end)
{
	if (depth > 0)
		busy_descend(depth - 1, end);
	else
		busy_leaf(end);
	sink++; /* not a tail call: keeps every frame on the stack */
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 10;
	int depth = argc > 2 ? atoi(argv[2]) : 20;

	busy_descend(depth, now() + secs);
	return 0;
}
