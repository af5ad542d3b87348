// SPDX-License-Identifier: MIT
/*
 * fault_churn: processes that come and go faster than a profiler can read
 * their maps and binaries (tests/e2e/test_faults.sh).  For SECONDS, keeps
 * up to 4 children alive; each child re-executes this program as
 * "fault_churn child", burns about 2 ms of CPU and exits, so the profiler
 * sees a stream of new processes, execs and exits, most of them gone by
 * the time it looks at /proc/<pid>.  Prints its pid first.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void churn_burn(double secs)
{
	double end = now() + secs;

	while (now() < end)
		for (int i = 0; i < 10000; i++)
			sink += (unsigned long)i;
}

int main(int argc, char **argv)
{
	double secs, end;
	int running = 0;

	if (argc > 1 && strcmp(argv[1], "child") == 0) {
		churn_burn(0.002);
		return 0;
	}
	secs = argc > 1 ? atof(argv[1]) : 10;
	end = now() + secs;
	printf("%d\n", (int)getpid());
	fflush(stdout);
	while (now() < end) {
		pid_t pid;

		while (running >= 4 && waitpid(-1, NULL, 0) > 0)
			running--;
		pid = fork();
		if (pid == 0) {
			execl("/proc/self/exe", "fault_churn", "child", (char *)NULL);
			_exit(127);
		}
		if (pid > 0)
			running++;
		while (running && waitpid(-1, NULL, WNOHANG) > 0)
			running--;
	}
	while (waitpid(-1, NULL, 0) > 0)
		;
	return 0;
}
