// SPDX-License-Identifier: MIT
/*
 * sysloop: the CPU time of one cheap system call (getppid), in ns a call,
 * for bench/syscalls.sh.  Thread CPU time, not wall time: a busy host
 * delays the loop without making its calls dearer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long calls = argc > 1 ? atol(argv[1]) : 2000000;
	double best = 0;

	/* the best of 5 rounds: an interrupt or a migration only adds */
	for (int r = 0; r < 5; r++) {
		double t0 = cpu_ns(), ns;

		for (long i = 0; i < calls; i++)
			syscall(SYS_getppid);
		ns = (cpu_ns() - t0) / (double)calls;
		if (!r || ns < best)
			best = ns;
	}
	printf("%.1f\n", best);
	return 0;
}
