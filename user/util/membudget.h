/* SPDX-License-Identifier: MIT */
/*
 * membudget: a bound on bytes several holders share (arenas, symbol
 * tables, the kernel's catalog and cache): each takes before it
 * allocates and gives back what it frees, so that together they stay
 * under one limit, and the peak and the refusals can be reported.
 */
#ifndef CPROF_MEMBUDGET_H
#define CPROF_MEMBUDGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes that may be taken, by arenas and by anything else that asks. */
struct membudget {
	uint64_t used, max, peak;
	size_t refused; /* takes turned away */
};

/* Takes @n bytes if they fit; false (and counted) when over max. */
bool membudget_take(struct membudget *b, uint64_t n);
void membudget_give(struct membudget *b, uint64_t n);

#endif
