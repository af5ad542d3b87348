// SPDX-License-Identifier: MIT
/*
 * mapchurn: a process whose mappings are costly to read, and keep changing.
 * mapchurn MAPPINGS SECONDS: makes MAPPINGS mappings (pages of alternate
 * protections, so none merge), prints its pid, then for SECONDS one thread
 * keeps mapping executable memory, running code there and unmapping it
 * (as a JIT would: each new code address asks the profiler for a fresh
 * snapshot of the maps), while the main thread spins in mapchurn_spin().
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define RING 16
#define CODE_AREA_PAGES 4096

static volatile unsigned long sink;
static double deadline;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void mapchurn_spin(double end)
{
	while (now() < end)
		for (int i = 0; i < 10000; i++)
			sink += (unsigned long)i;
}

/* x86-64: mov ecx, 200000; 1: dec ecx; jnz 1b; ret.  Elsewhere, no code is run. */
static const unsigned char code[] = { 0xb9, 0x40, 0x0d, 0x03, 0x00, 0xff, 0xc9, 0x75, 0xfc, 0xc3 };

static void *churn(void *arg)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	char *area = arg, *ring[RING] = { 0 };
	unsigned long n = 0;

	while (now() < deadline) {
		/* Each piece of code at a new address, as a JIT's would be. */
		char *hint = area + (n % CODE_AREA_PAGES) * page;
		char *m = mmap(hint, page, PROT_READ | PROT_WRITE | PROT_EXEC,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (m == MAP_FAILED)
			continue;
		memcpy(m, code, sizeof(code));
#ifdef __x86_64__
		((void (*)(void))m)();
#endif
		if (ring[n % RING])
			munmap(ring[n % RING], page);
		ring[n % RING] = m;
		n++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long want = argc > 2 ? atol(argv[1]) : 0;
	double secs = argc > 2 ? atof(argv[2]) : 0;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	char *many, *area;
	pthread_t t;

	if (want <= 0 || secs <= 0) {
		fprintf(stderr, "usage: mapchurn MAPPINGS SECONDS\n");
		return 2;
	}
	many = mmap(NULL, (size_t)want * page, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	/* Kept apart from the code area: its pages are reserved, then freed for the hints. */
	area = mmap(NULL, CODE_AREA_PAGES * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (many == MAP_FAILED || area == MAP_FAILED) {
		perror("mapchurn: mmap");
		return 1;
	}
	munmap(area, CODE_AREA_PAGES * page);
	for (long i = 1; i < want; i += 2)
		if (mprotect(many + i * page, page, PROT_READ)) {
			perror("mapchurn: mprotect");
			return 1;
		}
	deadline = now() + secs;
	printf("%d\n", (int)getpid());
	fflush(stdout);
	if (pthread_create(&t, NULL, churn, area))
		return 1;
	mapchurn_spin(deadline);
	pthread_join(t, NULL);
	return 0;
}
