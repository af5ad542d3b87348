// SPDX-License-Identifier: MIT
/*
 * spin: an overloaded host in one process, for tests/e2e/test_overload.sh
 * and bench/overload.sh.
 *
 * spin THREADS SECONDS [COMMAND ARGS...]: makes THREADS threads, then lets
 * them all spin in spin_thread() for SECONDS, and meanwhile runs COMMAND as
 * its child, started as the threads are made (so in its session, as
 * `spin & command` from a user's shell would).
 * Threads keep the scheduling of whoever started spin, as a user's would.
 * Prints "pid PID" first, and at the end
 * "cpu SECONDS" (the CPU time its threads used while spinning) and "wall
 * SECONDS" (how long they spun); exits with the command's status.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;
static double deadline;
static pthread_barrier_t ready;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
}

__attribute__((noinline)) static void spin_until(double end)
{
	while (now() < end)
		for (int i = 0; i < 10000; i++)
			sink += (unsigned long)i;
}

static void *spin_thread(void *arg)
{
	/* Nobody spins before every thread exists: the load starts at once. */
	pthread_barrier_wait(&ready);
	spin_until(deadline);
	return arg;
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[1]) : 0;
	double secs = argc > 2 ? atof(argv[2]) : 0, start, cpu0;
	pthread_t *t = calloc(n > 0 ? (size_t)n : 1, sizeof(*t));
	pthread_attr_t attr;
	int status = 0;
	pid_t child = -1;

	if (!t || n <= 0 || secs <= 0) {
		fprintf(stderr, "usage: spin THREADS SECONDS [COMMAND ARGS...]\n");
		return 2;
	}
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	/*
	 * The command starts as the threads are made (tens of ms for 2000),
	 * as `spin & command` from a shell would start it: what it does before
	 * its main() runs cannot be helped by the command itself.
	 */
	if (argc > 3) {
		child = fork();
		if (child == 0) {
			execvp(argv[3], argv + 3);
			_exit(127);
		}
	}
	pthread_barrier_init(&ready, NULL, (unsigned int)n + 1);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (int i = 0; i < n; i++) {
		if (pthread_create(&t[i], &attr, spin_thread, NULL)) {
			fprintf(stderr, "spin: thread %d not started\n", i);
			_exit(2); /* the others wait at the barrier for ever */
		}
	}
	cpu0 = cpu_seconds();
	start = now();
	deadline = start + secs;
	pthread_barrier_wait(&ready);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("cpu %.3f\nwall %.3f\n", cpu_seconds() - cpu0, now() - start);
	fflush(stdout);
	if (child > 0 && waitpid(child, &status, 0) == child)
		return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	return child < 0 && argc > 3 ? 127 : 0;
}
