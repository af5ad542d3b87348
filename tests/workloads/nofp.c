// SPDX-License-Identifier: MIT
/*
 * nofp: a workload for the DWARF unwinder, built -O2 -fomit-frame-pointer
 * (and -rdynamic, so its own backtrace() can name its functions).
 *
 *   nofp split SECS     75/25 CPU split between work_hot() and work_cold(),
 *                       both under stage_two() <- stage_one() <- main
 *   nofp qsort SECS     the time in a qsort() comparison callback, called
 *                       from inside libc
 *   nofp deep SECS N    spins at the bottom of an N-deep recursion
 *   nofp dlopen SECS LIB  runs 0.5 s in main, then loads LIB with dlopen()
 *                       and calls its plugin_work() from run_plugin()
 *   nofp exec SECS PROG ARG...  runs SECS in work_hot(), then execs PROG
 *   nofp signal SECS    half the time in a SIGPROF handler that interrupts
 *                       signal_loop(): the unwinder must cross the signal
 *                       frame (__restore_rt) back into the interrupted code
 *   nofp oracle         prints glibc backtrace() (a DWARF unwinder) from
 *                       work_hot's frame, one function per line, and exits
 *
 * Every mode prints its pid first.  The frames must not be merged by the
 * compiler: noinline everywhere, and work after each call so no call is a
 * tail call.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <sys/time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static double wall_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Busy work whose stack frame is the caller's: a macro, not a call. */
#define SPIN_MS(ms)                                                           \
	do {                                                                  \
		double _end = cpu_ms() + (ms);                                \
		while (cpu_ms() < _end)                                       \
			for (int _i = 0; _i < 20000; _i++)                    \
				sink += (unsigned long)_i * 3;                \
	} while (0)

__attribute__((noinline)) static void print_backtrace(void)
{
	void *pcs[64];
	int n = backtrace(pcs, 64);
	char **names = backtrace_symbols(pcs, n);

	/* "./nofp(work_hot+0x1c) [0x...]" -> "work_hot" */
	for (int i = 1; names && i < n; i++) {
		char *open = strchr(names[i], '('), *plus;

		if (!open)
			continue;
		plus = strpbrk(open + 1, "+)");
		if (plus && plus > open + 1)
			printf("%.*s\n", (int)(plus - open - 1), open + 1);
	}
	free(names);
}

__attribute__((noinline)) void work_hot(int oracle)
{
	if (oracle)
		print_backtrace();
	else
		SPIN_MS(30);
	sink++;
}

__attribute__((noinline)) void work_cold(void)
{
	SPIN_MS(10);
	sink++;
}

__attribute__((noinline)) void stage_two(int oracle)
{
	work_hot(oracle);
	if (!oracle)
		work_cold();
	sink++;
}

__attribute__((noinline)) void stage_one(int oracle)
{
	stage_two(oracle);
	sink++;
}

__attribute__((noinline)) int compare_slowly(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	for (int i = 0; i < 2000; i++)
		sink += (unsigned long)i ^ (unsigned long)x;
	return (x > y) - (x < y);
}

__attribute__((noinline)) void sort_many(void)
{
	int v[512];

	for (int i = 0; i < 512; i++)
		v[i] = (int)((i * 7919u) % 512);
	qsort(v, 512, sizeof(v[0]), compare_slowly);
	sink++;
}

__attribute__((noinline)) void recurse(int depth, double end)
{
	if (depth > 1)
		recurse(depth - 1, end);
	else
		while (wall_s() < end)
			for (int i = 0; i < 20000; i++)
				sink += (unsigned long)i;
	sink++;
}

__attribute__((noinline)) static void on_sigprof(int sig)
{
	SPIN_MS(5);
	sink += (unsigned long)sig;
}

__attribute__((noinline)) void signal_loop(double end)
{
	struct itimerval it = { { 0, 10000 }, { 0, 10000 } };
	struct sigaction sa = { .sa_handler = on_sigprof };

	sigaction(SIGPROF, &sa, NULL);
	setitimer(ITIMER_PROF, &it, NULL);
	while (wall_s() < end)
		for (int i = 0; i < 20000; i++)
			sink += (unsigned long)i;
	sink++;
}

__attribute__((noinline)) void run_plugin(void (*work)(void), double end)
{
	while (wall_s() < end)
		work();
	sink++;
}

static int dlopen_mode(const char *lib, double end)
{
#ifdef NOFP_STATIC
	(void)lib;
	(void)end;
	fprintf(stderr, "nofp: no dlopen in the static build\n");
	return 2;
#else
	void *h;
	void (*work)(void);

	SPIN_MS(500); /* the profiler sees us, and our mappings, before dlopen */
	h = dlopen(lib, RTLD_NOW);
	work = h ? (void (*)(void))dlsym(h, "plugin_work") : NULL;
	if (!work) {
		fprintf(stderr, "nofp: %s\n", dlerror());
		return 1;
	}
	run_plugin(work, end);
	return 0;
#endif
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "split";
	double secs = argc > 2 ? atof(argv[2]) : 10, end;

	if (!strcmp(mode, "oracle")) {
		stage_one(1);
		return 0;
	}
	printf("%d\n", getpid());
	fflush(stdout);
	end = wall_s() + secs;
	if (!strcmp(mode, "split")) {
		while (wall_s() < end)
			stage_one(0);
	} else if (!strcmp(mode, "qsort")) {
		while (wall_s() < end)
			sort_many();
	} else if (!strcmp(mode, "deep")) {
		recurse(argc > 3 ? atoi(argv[3]) : 300, end);
	} else if (!strcmp(mode, "dlopen")) {
		return dlopen_mode(argc > 3 ? argv[3] : "./libplugin.so", end);
	} else if (!strcmp(mode, "exec") && argc > 3) {
		while (wall_s() < end)
			stage_one(0);
		execv(argv[3], argv + 3);
		perror("nofp: execv");
		return 1;
	} else if (!strcmp(mode, "signal")) {
		signal_loop(end);
	} else {
		fprintf(stderr, "nofp: unknown mode %s\n", mode);
		return 2;
	}
	return 0;
}
