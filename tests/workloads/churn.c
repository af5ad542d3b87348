// SPDX-License-Identifier: MIT
/*
 * churn: many short-lived processes, one after another, for the memory
 * test of continuous mode.  churn N MS: N times, fork and exec ourselves as
 * a child that burns MS ms of CPU and exits.  Prints "1000" after the
 * thousandth child and "done" at the end, for the test to sample the
 * profiler's memory at those points.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) static void child_work(double ms)
{
	double end = cpu_ms() + ms;

	while (cpu_ms() < end)
		for (int i = 0; i < 10000; i++)
			sink += (unsigned long)i;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000;

	if (argc > 2 && !strcmp(argv[1], "child")) {
		child_work(atof(argv[2]));
		return 0;
	}
	for (int i = 1; i <= n; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			execl("/proc/self/exe", "churn", "child", argc > 2 ? argv[2] : "2", (char *)NULL);
			_exit(127);
		}
		if (pid > 0)
			waitpid(pid, NULL, 0);
		if (i == 1000) {
			printf("1000\n");
			fflush(stdout);
		}
	}
	printf("done\n");
	fflush(stdout);
	return 0;
}
