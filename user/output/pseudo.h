/* SPDX-License-Identifier: MIT */
/*
 * pseudo: the frames a profile shows where a sample has no (complete)
 * stack, and why: a lost sample, a stack BPF could not read or store, a
 * user walk that stopped early (at its root, named for the reason).
 */
#ifndef CPROF_PSEUDO_H
#define CPROF_PSEUDO_H

#include <stdint.h>

enum pseudo {
	PSEUDO_NONE,       /* not one: a walk that ended as it should */
	PSEUDO_LOST,       /* the sample itself was not counted */
	PSEUDO_READ,       /* CPROF_STACK_ERR_READ */
	PSEUDO_EMPTY,      /* CPROF_STACK_ERR_EMPTY */
	PSEUDO_FULL,       /* CPROF_STACK_ERR_FULL */
	PSEUDO_UNKNOWN,    /* a stack hash with no stored frames */
	/* a user stack walk that stopped early: enum cprof_unwind_status */
	PSEUDO_TRUNCATED,
	PSEUDO_UNWIND_READ,
	PSEUDO_NO_ROW,
	PSEUDO_BAD_CFA,
	PSEUDO_UNMAPPED,   /* a frame-pointer walk left the process's code */
	PSEUDO_UNWALKED,   /* CPROF_STACK_UNWALKED */
	PSEUDO_MAX,
};

/* The name pseudo-frame @p shows ("[lost samples]"); NULL for none. */
const char *pseudo_name(uint64_t p);

/* The pseudo-frame of a sample side stored as @stack, a status not a hash. */
enum pseudo pseudo_of_status(uint64_t stack);

/* The pseudo-frame at the root of a walk that ended as @how (its status's low byte). */
enum pseudo pseudo_of_unwind(uint32_t how);

#endif
