/* SPDX-License-Identifier: MIT */
/*
 * stackshot.h: the records stackshot.c writes and test_unwind_walk.c
 * reads, one after another in a file:
 *
 *   struct shot_header, then nframes uint64_t return addresses (what
 *   glibc's backtrace() says, from the capture point on), then stack_len
 *   bytes of the stack from sp on.
 */
#ifndef CPROF_STACKSHOT_H
#define CPROF_STACKSHOT_H

#include <stdint.h>

#define SHOT_MAGIC "STKSHOT1"
#define SHOT_MAX_FRAMES 256

struct shot_header {
	char magic[8];
	char place[24];       /* where it was taken: "deep", "qsort", ... */
	uint64_t pc, sp, bp;  /* the registers where capture() returns to */
	uint64_t nframes;     /* backtrace() addresses that follow, pc first */
	uint64_t stack_len;   /* bytes from sp to the end of the stack's mapping */
};

#endif
