// SPDX-License-Identifier: MIT
/*
 * fault_stacks: more distinct stacks than a small counts map can hold, to
 * overflow it on purpose (tests/e2e/test_faults.sh, --counts-max).
 *
 * THREADS threads (default 8) each recurse to a pseudo-random depth of
 * 1-48 through three functions picked by pseudo-random bits, and burn a
 * little CPU at the bottom: thousands of distinct (thread, stack) keys a
 * second.  fault_stacks SECONDS [THREADS]; prints its pid first.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;
static double end_time;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static unsigned int next(unsigned int *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	return *seed >> 8;
}

__attribute__((noinline)) void stack_a(unsigned int *seed, int depth);
__attribute__((noinline)) void stack_b(unsigned int *seed, int depth);
__attribute__((noinline)) void stack_c(unsigned int *seed, int depth);

__attribute__((noinline)) static void stack_bottom(void)
{
	for (int i = 0; i < 5000; i++)
		sink += (unsigned long)i;
}

static void descend(unsigned int *seed, int depth)
{
	if (depth <= 0) {
		stack_bottom();
		return;
	}
	switch (next(seed) % 3) {
	case 0:
		stack_a(seed, depth - 1);
		break;
	case 1:
		stack_b(seed, depth - 1);
		break;
	default:
		stack_c(seed, depth - 1);
		break;
	}
}

/* The work after each call keeps them from becoming tail calls. */
__attribute__((noinline)) void stack_a(unsigned int *seed, int depth) { descend(seed, depth); sink++; }
__attribute__((noinline)) void stack_b(unsigned int *seed, int depth) { descend(seed, depth); sink += 2; }
__attribute__((noinline)) void stack_c(unsigned int *seed, int depth) { descend(seed, depth); sink += 3; }

static void *worker(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg * 2654435761u + 1;

	while (now() < end_time)
		descend(&seed, 1 + (int)(next(&seed) % 48));
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 10;
	int n = argc > 2 ? atoi(argv[2]) : 8;
	pthread_t t[64];

	if (n < 1 || n > 64)
		n = 8;
	end_time = now() + secs;
	printf("%d\n", (int)getpid());
	fflush(stdout);
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}
