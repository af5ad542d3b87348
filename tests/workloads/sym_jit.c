// SPDX-License-Identifier: MIT
/*
 * sym_jit: generates machine code at run time and announces it in
 * /tmp/perf-<pid>.map, as Node, the JVM or Python 3.12 do, so that the
 * profile can name the JIT frames.  x86-64 only (elsewhere it exits 2).
 * sym_jit [SECONDS]; prints its pid (as its own pid namespace sees it).
 *
 * Two generated functions, cprof_jit_hot and cprof_jit_cold, each a counted
 * loop, are called alternately; hot loops three times as long.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

typedef void (*jit_fn)(void);

/* The map's path, for the SIGTERM handler: a killed JIT leaves no litter. */
static char map_path[64];

static void on_term(int sig)
{
	(void)sig;
	unlink(map_path);
	_exit(0);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
#if defined(__x86_64__)
	/* mov ecx, N; l: dec ecx; jnz l; ret */
	static const unsigned char loop[] = { 0xb9, 0, 0, 0, 0, 0xff, 0xc9, 0x75, 0xfc, 0xc3 };
	const unsigned int counts[2] = { 3000000, 1000000 };
	const char *names[2] = { "cprof_jit_hot", "cprof_jit_cold" };
	double secs = argc > 1 ? atof(argv[1]) : 10, end;
	long page = sysconf(_SC_PAGESIZE);
	unsigned char *code;
	jit_fn fns[2];
	FILE *map;

	/* Written, then made executable: W^X, as JITs do. */
	code = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED)
		return 1;
	for (int i = 0; i < 2; i++) {
		unsigned char *f = code + 64 * i;

		memcpy(f, loop, sizeof(loop));
		memcpy(f + 1, &counts[i], 4);
		fns[i] = (jit_fn)(void *)f;
	}
	if (mprotect(code, (size_t)page, PROT_READ | PROT_EXEC))
		return 1;
	snprintf(map_path, sizeof(map_path), "/tmp/perf-%d.map", getpid());
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	map = fopen(map_path, "w");
	if (!map)
		return 1;
	for (int i = 0; i < 2; i++)
		fprintf(map, "%lx %zx %s\n", (unsigned long)(code + 64 * i), sizeof(loop), names[i]);
	fclose(map);

	printf("%d\n", getpid());
	fflush(stdout);
	end = now() + secs;
	while (now() < end) {
		fns[0]();
		fns[1]();
	}
	unlink(map_path);
	return 0;
#else
	(void)argc;
	(void)argv;
	return 2;
#endif
}
