// SPDX-License-Identifier: MIT
/*
 * fault_target: the process the fault tests corrupt the binary of
 * (tests/e2e/test_faults.sh).  Prints its pid, then spends SECONDS of CPU
 * in fault_leaf() <- fault_mid() <- main.
 *
 *   fault_target SECONDS          as above
 *   fault_target SECONDS LIB      loads LIB with dlopen() and spends the
 *                                 time in its plugin_work() instead (the
 *                                 test truncates LIB under the process)
 *
 * Built by the test with -rdynamic, so .dynsym names the functions too.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void fault_leaf(void)
{
	for (int i = 0; i < 200000; i++)
		sink += (unsigned long)i * 3;
}

__attribute__((noinline)) void fault_mid(double end, void (*work)(void))
{
	while (now() < end)
		work();
	sink++; /* not a tail call */
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 10;
	void (*work)(void) = fault_leaf;

	if (argc > 2) {
		void *h = dlopen(argv[2], RTLD_NOW);

		if (!h || !(work = (void (*)(void))dlsym(h, "plugin_work"))) {
			fprintf(stderr, "fault_target: %s\n", dlerror());
			return 1;
		}
	}
	printf("%d\n", (int)getpid());
	fflush(stdout);
	fault_mid(now() + secs, work);
	return 0;
}
