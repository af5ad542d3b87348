// SPDX-License-Identifier: MIT
/*
 * split: a workload with a known CPU split, for the end-to-end tests.
 *
 * Thread "split-a" alternates 30 ms of CPU in spin_a() with 10 ms in
 * spin_b() (a 75/25 split of its time); thread "split-c" spends all its
 * time in spin_c() called through call_c1() -> call_c2().  The main thread
 * sleeps.  Runs for argv[1] seconds (default 10).  The time is thread CPU
 * time, so the split holds however the scheduler shares the CPUs.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;
static volatile int done;

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Burns @ms of this thread's CPU inside the calling function's frame. */
#define BURN(ms)                                                              \
	do {                                                                  \
		double _end = cpu_ms() + (ms);                                \
		while (cpu_ms() < _end)                                       \
			for (int _i = 0; _i < 20000; _i++)                    \
				sink += _i * 7;                               \
	} while (0)

__attribute__((noinline)) void spin_a(void) { BURN(30); }
__attribute__((noinline)) void spin_b(void) { BURN(10); }
__attribute__((noinline)) void spin_c(void) { BURN(20); }
__attribute__((noinline)) void call_c2(void) { spin_c(); }
__attribute__((noinline)) void call_c1(void) { call_c2(); }

static void *thread_a(void *arg)
{
	pthread_setname_np(pthread_self(), "split-a");
	while (!done) {
		spin_a();
		spin_b();
	}
	return arg;
}

static void *thread_c(void *arg)
{
	pthread_setname_np(pthread_self(), "split-c");
	while (!done)
		call_c1();
	return arg;
}

int main(int argc, char **argv)
{
	int secs = argc > 1 ? atoi(argv[1]) : 10;
	pthread_t a, c;

	pthread_create(&a, NULL, thread_a, NULL);
	pthread_create(&c, NULL, thread_c, NULL);
	printf("%d\n", getpid());
	fflush(stdout);
	sleep(secs);
	done = 1;
	pthread_join(a, NULL);
	pthread_join(c, NULL);
	return 0;
}
