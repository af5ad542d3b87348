// SPDX-License-Identifier: MIT
/*
 * offcpu: workloads that wait, for --off-cpu's tests and bench.
 *
 *   offcpu sleep SECS     one thread: ~3 ms of CPU in compute_phase(), then
 *                         ~7 ms asleep in sleep_phase() (nanosleep), each
 *                         a random length so that the rounds cannot
 *                         phase-lock with the sampling period.  At the
 *                         end (or on SIGINT) it prints its own measure,
 *                         wall time inside each phase: "sleep_ns
 *                         compute_ns total_ns".
 *   offcpu longsleep SECS  sleeps 2.5 s at a time in sleep_phase(): waits
 *                         that span --interval windows.
 *   offcpu mutex SECS     two threads, one mutex: "holder" keeps it ~4 ms
 *                         at a time, "waiter" takes it in wait_for_lock()
 *                         and so mostly waits in pthread_mutex_lock.
 *   offcpu pingpong SECS [same|split]
 *                         two processes sending a byte back and forth over
 *                         a pair of pipes, both on one CPU (same), on two
 *                         (split) or where the scheduler puts them; prints
 *                         round trips a second, the two processes'
 *                         voluntary context switches a second, and round
 *                         trips a second of their CPU time.
 *
 * Each prints its pid first, then runs SECS seconds (default 10).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;
static volatile sig_atomic_t done;

static int64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Burns @ns of this thread's CPU. */
static void burn(int64_t ns)
{
	int64_t end = now_ns(CLOCK_THREAD_CPUTIME_ID) + ns;

	while (now_ns(CLOCK_THREAD_CPUTIME_ID) < end)
		for (int i = 0; i < 2000; i++)
			sink += i * 7;
}

/* @ms milliseconds, give or take a third, at random. */
static int64_t about_ms(unsigned int *seed, int ms)
{
	int64_t ns = ms * 1000000LL;

	return ns - ns / 3 + (int64_t)(rand_r(seed) % (2 * ns / 3 + 1));
}

__attribute__((noinline)) void compute_phase(int64_t ns)
{
	burn(ns);
}

__attribute__((noinline)) void sleep_phase(int64_t ns)
{
	struct timespec ts = { ns / 1000000000LL, ns % 1000000000LL };

	nanosleep(&ts, NULL);
}

static void on_sigint(int sig)
{
	done = 1;
}

static int run_sleep(int secs)
{
	int64_t start = now_ns(CLOCK_MONOTONIC), end = start + secs * 1000000000LL, t;
	int64_t slept = 0, computed = 0;
	unsigned int seed = (unsigned int)getpid();
	struct sigaction sa = { .sa_handler = on_sigint };

	sigaction(SIGINT, &sa, NULL);

	while (!done && (t = now_ns(CLOCK_MONOTONIC)) < end) {
		int64_t t2;

		compute_phase(about_ms(&seed, 3));
		t2 = now_ns(CLOCK_MONOTONIC);
		computed += t2 - t;
		sleep_phase(about_ms(&seed, 7));
		slept += now_ns(CLOCK_MONOTONIC) - t2;
	}
	printf("%lld %lld %lld\n", (long long)slept, (long long)computed,
	       (long long)(now_ns(CLOCK_MONOTONIC) - start));
	return 0;
}

static int run_longsleep(int secs)
{
	int64_t end = now_ns(CLOCK_MONOTONIC) + secs * 1000000000LL;

	while (now_ns(CLOCK_MONOTONIC) < end)
		sleep_phase(2500000000LL);
	return 0;
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *holder(void *arg)
{
	pthread_setname_np(pthread_self(), "holder");
	while (!done) {
		pthread_mutex_lock(&lock);
		burn(4000000);
		pthread_mutex_unlock(&lock);
		usleep(200); /* lets the waiter in */
	}
	return arg;
}

__attribute__((noinline)) void wait_for_lock(void)
{
	pthread_mutex_lock(&lock);
	sink++;
	pthread_mutex_unlock(&lock);
}

static void *waiter(void *arg)
{
	pthread_setname_np(pthread_self(), "waiter");
	while (!done)
		wait_for_lock();
	return arg;
}

static int run_mutex(int secs)
{
	pthread_t h, w;

	pthread_create(&h, NULL, holder, NULL);
	pthread_create(&w, NULL, waiter, NULL);
	sleep(secs);
	done = 1;
	pthread_join(h, NULL);
	pthread_join(w, NULL);
	return 0;
}

static double tv_secs(struct timeval tv)
{
	return tv.tv_sec + tv.tv_usec / 1e6;
}

/* Pins the calling thread to @cpu; -1 leaves it where the scheduler likes. */
static int pin_to(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return 0;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/*
 * @cpus: "same" runs both processes on the host's last CPU (every round
 * trip two switches, task to task), "split" the parent on CPU 0 and the
 * child on the last (each wakes the other across CPUs, which go idle in
 * between); anything else lets the scheduler place them, which moves
 * the throughput between those two as it changes its mind.
 */
static int run_pingpong(int secs, const char *cpus)
{
	int last = (int)sysconf(_SC_NPROCESSORS_ONLN) - 1;
	int parent_cpu = -1, child_cpu = -1;
	int ping[2], pong[2];
	int64_t end, start, trips = 0;
	struct rusage self, kid;
	double secs_run, cpu;
	char c = 0;
	pid_t child;

	if (!strcmp(cpus, "same"))
		parent_cpu = child_cpu = last;
	else if (!strcmp(cpus, "split") && last > 0)
		parent_cpu = 0, child_cpu = last;
	if (pipe(ping) || pipe(pong) || pin_to(parent_cpu))
		return 1;
	child = fork();
	if (child < 0)
		return 1;
	if (child == 0) {
		if (pin_to(child_cpu))
			_exit(1);
		while (read(ping[0], &c, 1) == 1 && c)
			if (write(pong[1], &c, 1) != 1)
				break;
		_exit(0);
	}
	start = now_ns(CLOCK_MONOTONIC);
	end = start + secs * 1000000000LL;
	c = 1;
	while (now_ns(CLOCK_MONOTONIC) < end) {
		if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1)
			return 1;
		trips++;
	}
	secs_run = (double)(now_ns(CLOCK_MONOTONIC) - start) / 1e9;
	c = 0;
	if (write(ping[1], &c, 1) != 1 || waitpid(child, NULL, 0) != child)
		return 1;
	getrusage(RUSAGE_SELF, &self);
	getrusage(RUSAGE_CHILDREN, &kid);
	cpu = tv_secs(self.ru_utime) + tv_secs(self.ru_stime) + tv_secs(kid.ru_utime) +
	      tv_secs(kid.ru_stime);
	printf("%.0f %.0f %.0f\n", trips / secs_run, (self.ru_nvcsw + kid.ru_nvcsw) / secs_run,
	       cpu > 0 ? trips / cpu : 0);
	return 0;
}

int main(int argc, char **argv)
{
	int secs = argc > 2 ? atoi(argv[2]) : 10;
	const char *mode = argc > 1 ? argv[1] : "";

	printf("%d\n", getpid());
	fflush(stdout);
	if (!strcmp(mode, "sleep"))
		return run_sleep(secs);
	if (!strcmp(mode, "longsleep"))
		return run_longsleep(secs);
	if (!strcmp(mode, "mutex"))
		return run_mutex(secs);
	if (!strcmp(mode, "pingpong"))
		return run_pingpong(secs, argc > 3 ? argv[3] : "");
	fprintf(stderr, "usage: offcpu sleep|longsleep|mutex|pingpong [SECS [same|split]]\n");
	return 2;
}
