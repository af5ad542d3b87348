// SPDX-License-Identifier: MIT
/*
 * stackshot: records its own stack at known places, for test_unwind_walk
 * to walk with the BPF unwinder.  Built without frame pointers, as
 * distribution binaries are (PIE, non-PIE and static: see the Makefile).
 *
 *   stackshot FILE
 *
 * At each place, stackshot_capture() (assembly) takes the registers as
 * they are where it returns to; stackshot_shoot() writes them, the stack
 * from sp to the end of its mapping, and what glibc's backtrace() says
 * from there (the oracle: libgcc's DWARF unwinder, not ours) to FILE
 * (stackshot.h).  Then "ready" on stdout, and the process waits for its
 * stdin to close, so that the test reads its mappings while it lives; the
 * last record is written on the way out.
 *
 * Places: a recursion through frames of three shapes (plain, a big frame,
 * alloca with an rbp-based CFA), a qsort callback (frames in libc), a
 * signal handler interrupting a loop (the signal frame), a thread (whose
 * stack ends in clone3), a destructor (run by the dynamic loader's
 * _dl_fini: a frame in ld.so).
 */
#include <alloca.h>
#include <execinfo.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "stackshot.h"

#define DEPTH 24

void stackshot_capture(const char *place);
void stackshot_shoot(const char *place, uint64_t pc, uint64_t sp, uint64_t bp);

/* Calls stackshot_shoot(place, pc, sp, rbp) with the registers of its return. */
__asm__(".text\n"
	".globl stackshot_capture\n"
	".type stackshot_capture, @function\n"
	"stackshot_capture:\n"
	"	.cfi_startproc\n"
	"	movq (%rsp), %rsi\n"  /* pc: where it returns to */
	"	leaq 8(%rsp), %rdx\n" /* sp once it has returned */
	"	movq %rbp, %rcx\n"
	"	subq $8, %rsp\n"      /* the call's 16-byte alignment */
	"	.cfi_adjust_cfa_offset 8\n"
	"	call stackshot_shoot\n"
	"	addq $8, %rsp\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	ret\n"
	"	.cfi_endproc\n"
	"	.size stackshot_capture, .-stackshot_capture\n");

/* Keeps calls out of tail position: each function keeps its frame. */
#define AFTER_CALL() __asm__ volatile("" ::: "memory")

static int out = -1;
static volatile int sink;
static volatile sig_atomic_t fired;

static void put(const void *p, size_t n)
{
	const char *b = p;

	while (n) {
		ssize_t w = write(out, b, n);

		if (w <= 0)
			_exit(3);
		b += w;
		n -= (size_t)w;
	}
}

/* The end of the mapping that holds @addr, from /proc/self/maps; 0: none. */
static uint64_t mapping_end(uint64_t addr)
{
	static char buf[1 << 16];
	ssize_t n = 0, r;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	while (n < (ssize_t)sizeof(buf) - 1 && (r = read(fd, buf + n, sizeof(buf) - 1 - n)) > 0)
		n += r;
	close(fd);
	buf[n] = '\0';
	for (char *line = buf; line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		unsigned long long lo, hi;

		if (sscanf(line, "%llx-%llx", &lo, &hi) == 2 && lo <= addr && addr < hi)
			return hi;
	}
	return 0;
}

void stackshot_shoot(const char *place, uint64_t pc, uint64_t sp, uint64_t bp)
{
	void *bt[SHOT_MAX_FRAMES];
	int n = backtrace(bt, SHOT_MAX_FRAMES), k = 0;
	uint64_t end = mapping_end(sp);
	struct shot_header h = { .pc = pc, .sp = sp, .bp = bp };

	memcpy(h.magic, SHOT_MAGIC, sizeof(h.magic));
	snprintf(h.place, sizeof(h.place), "%s", place);
	/* backtrace() starts in this function: the caller's frames begin at pc */
	while (k < n && (uint64_t)(uintptr_t)bt[k] != pc)
		k++;
	h.nframes = (uint64_t)(n - k);
	h.stack_len = end > sp ? end - sp : 0;
	put(&h, sizeof(h));
	for (int i = k; i < n; i++) {
		uint64_t a = (uint64_t)(uintptr_t)bt[i];

		put(&a, sizeof(a));
	}
	put((const void *)(uintptr_t)sp, h.stack_len);
}

__attribute__((noinline)) static int down(int n, const char *place);

/* A frame bigger than the stack window's first read. */
__attribute__((noinline)) static int wide(int n, const char *place)
{
	volatile char buf[600];
	int r;

	buf[n % 600] = (char)n;
	r = down(n - 1, place);
	AFTER_CALL();
	return r + buf[(n * 7) % 600];
}

/* alloca: the CFA is found from rbp even without frame pointers. */
__attribute__((noinline)) static int dyn(int n, const char *place)
{
	char *p = alloca(32 + (size_t)n * 8);
	int r;

	memset(p, n, 32 + (size_t)n * 8);
	r = down(n - 1, place);
	AFTER_CALL();
	return r + p[n];
}

__attribute__((noinline)) static int down(int n, const char *place)
{
	int r;

	if (n <= 0) {
		stackshot_capture(place);
		AFTER_CALL();
		return 0;
	}
	if (n % 3 == 0)
		r = wide(n, place);
	else if (n % 3 == 1)
		r = dyn(n, place);
	else
		r = down(n - 1, place);
	AFTER_CALL();
	sink = r;
	return r + n;
}

static int compare(const void *a, const void *b)
{
	static bool taken;
	int x = *(const int *)a, y = *(const int *)b;

	if (!taken) {
		taken = true;
		stackshot_capture("qsort");
		AFTER_CALL();
	}
	return (x > y) - (x < y);
}

static void on_alarm(int sig)
{
	(void)sig;
	stackshot_capture("signal");
	AFTER_CALL();
	fired = 1;
}

/* Busy until the signal: it lands somewhere in this loop. */
__attribute__((noinline)) static void spin(void)
{
	volatile unsigned long x = 0;

	while (!fired)
		x++;
	AFTER_CALL();
}

__attribute__((destructor)) static void at_exit(void)
{
	if (out < 0)
		return;
	stackshot_capture("exit");
	AFTER_CALL();
	close(out);
}

static void *thread_main(void *arg)
{
	sink = down(7, arg);
	return NULL;
}

int main(int argc, char **argv)
{
	struct itimerval once = { .it_value = { .tv_usec = 20000 } };
	void *warm[4];
	int v[64];
	pthread_t th;
	char c;

	if (argc != 2) {
		fprintf(stderr, "usage: %s FILE\n", argv[0]);
		return 2;
	}
	out = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (out < 0)
		return 2;
	/* backtrace() loads libgcc_s on first use: not inside the signal handler */
	backtrace(warm, 4);

	sink = down(DEPTH, "deep");
	for (int i = 0; i < 64; i++)
		v[i] = (i * 37) % 64;
	qsort(v, 64, sizeof(v[0]), compare);
	if (pthread_create(&th, NULL, thread_main, "thread") || pthread_join(th, NULL))
		return 2;
	signal(SIGALRM, on_alarm);
	setitimer(ITIMER_REAL, &once, NULL);
	spin();
	AFTER_CALL();

	if (write(1, "ready\n", 6) != 6)
		return 2;
	while (read(0, &c, 1) > 0)
		;
	return 0;
}
