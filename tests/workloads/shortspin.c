// SPDX-License-Identifier: MIT
/*
 * shortspin MS: spins on the CPU for MS milliseconds (default 50) and exits: a
 * short-lived C program for the unwinder's tests of a process's first
 * samples.  Built like a distribution binary (no frame pointers).
 */
#include <stdlib.h>
#include <time.h>

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static __attribute__((noinline)) unsigned long spin_inner(unsigned long x)
{
	for (int i = 0; i < 1000; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	return x;
}

static __attribute__((noinline)) unsigned long spin_outer(double end)
{
	unsigned long x = 1;

	while (now_ms() < end)
		x = spin_inner(x);
	return x;
}

int main(int argc, char **argv)
{
	double ms = argc > 1 ? atof(argv[1]) : 50;

	return spin_outer(now_ms() + ms) == 42;
}
