// SPDX-License-Identifier: MIT
/*
 * sym_unnamed: half its time in a named function, half in code no symbol
 * covers (as a PLT stub or a hand-written blob is), for the mapping flags'
 * check: one unnamed address must not make the mapping say it has no
 * functions (pprof would then name all of it again itself, with its own
 * addr2line, over our names).  sym_unnamed [SECONDS]; prints its pid.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/*
 * A loop of @rdi turns under a local label only, after a symbol whose size
 * ends before it (a sizeless one before it would be taken to hold it): no
 * symbol, no line.
 */
__asm__(".text\n"
	"\t.p2align 4\n"
	"\t.type sized_before, @function\n"
	"sized_before:\n"
	"\tret\n"
	"\t.size sized_before, 1\n"
	"\t.p2align 4\n"
	".Lunnamed_spin:\n"
	"\t.cfi_startproc\n"
	"1:\tdec %rdi\n"
	"\tjnz 1b\n"
	"\tret\n"
	"\t.cfi_endproc\n"
	"\t.data\n"
	"\t.p2align 3\n"
	"unnamed_spin_at:\n"
	"\t.quad .Lunnamed_spin\n"
	"\t.text\n");
extern void (*const unnamed_spin_at)(long);

static volatile unsigned long sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void named_spin(long n)
{
	for (long i = 0; i < n; i++)
		sink += i * 7;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 10, end;

	printf("%d\n", getpid());
	fflush(stdout);
	for (end = now() + secs; now() < end;) {
		named_spin(2000000);
		unnamed_spin_at(2000000);
	}
	return 0;
}
