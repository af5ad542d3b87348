// SPDX-License-Identifier: MIT
/*
 * sleeper: loops whose period is close to the sampling clock's, for the
 * phase-lock tests (issue 34).  Each of THREADS threads, in turn, sleeps
 * SLEEP_US with nanosleep (a timer the kernel may fire with the
 * profiler's) and spins SPIN_US of its own CPU time in spin_part(); they
 * end after SECS seconds, and the program prints the CPU milliseconds
 * spin_part() used in all (its own measure of what a profiler should find
 * there) and the turns taken.  It first sleeps DELAY seconds, for a
 * profiler told its pid to start.
 *
 *   sleeper [SECS [SLEEP_US [SPIN_US [DELAY [THREADS]]]]]
 *   (default 12 7000 3000 0 1)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define MAX_THREADS 16

static volatile unsigned long sink;
static double end_s;
static long sleep_us, spin_us;

struct result {
	double spun; /* ms */
	long turns;
};

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static double wall_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Spins @us of this thread's CPU time; what it used, in ms. */
__attribute__((noinline)) double spin_part(long us)
{
	double t0 = cpu_ms(), t;

	do {
		for (int i = 0; i < 2000; i++)
			sink += i * 7;
		t = cpu_ms();
	} while (t - t0 < us / 1e3);
	return t - t0;
}

static void *loop(void *arg)
{
	struct result *r = arg;
	struct timespec nap = { sleep_us / 1000000, (sleep_us % 1000000) * 1000 };

	while (wall_s() < end_s) {
		nanosleep(&nap, NULL);
		r->spun += spin_part(spin_us);
		r->turns++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 12;
	double delay = argc > 4 ? atof(argv[4]) : 0;
	int n = argc > 5 ? atoi(argv[5]) : 1;
	struct timespec wait = { (time_t)delay, (long)((delay - (time_t)delay) * 1e9) };
	struct result res[MAX_THREADS] = { { 0 } };
	pthread_t t[MAX_THREADS];
	double spun = 0;
	long turns = 0;

	sleep_us = argc > 2 ? atol(argv[2]) : 7000;
	spin_us = argc > 3 ? atol(argv[3]) : 3000;
	if (n < 1 || n > MAX_THREADS)
		n = 1;
	if (delay > 0)
		nanosleep(&wait, NULL);
	end_s = wall_s() + secs;
	for (int i = 1; i < n; i++)
		if (pthread_create(&t[i], NULL, loop, &res[i]))
			return 1;
	loop(&res[0]);
	for (int i = 0; i < n; i++) {
		if (i)
			pthread_join(t[i], NULL);
		spun += res[i].spun;
		turns += res[i].turns;
	}
	printf("%.1f %ld\n", spun, turns);
	return 0;
}
