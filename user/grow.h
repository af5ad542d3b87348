/* SPDX-License-Identifier: MIT */
/*
 * grow: room for one more element in a growable array, with a bound on
 * what untrusted input can make it allocate.
 */
#ifndef CPROF_GROW_H
#define CPROF_GROW_H

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

/*
 * Grows @*v (of @size-byte elements, @*cap of them allocated, @n used) to
 * hold one more, doubling from @first up to @max elements.  -E2BIG at
 * @max, -ENOMEM when realloc fails; @*v is unchanged then.
 */
static inline int grow(void **v, size_t *cap, size_t n, size_t size, size_t first, size_t max)
{
	size_t ncap;
	void *nv;

	if (n < *cap)
		return 0;
	if (*cap >= max)
		return -E2BIG;
	ncap = *cap ? *cap * 2 : first;
	if (ncap > max)
		ncap = max;
	nv = realloc(*v, ncap * size);
	if (!nv)
		return -ENOMEM;
	*v = nv;
	*cap = ncap;
	return 0;
}

#endif
