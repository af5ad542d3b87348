/* SPDX-License-Identifier: MIT */
/*
 * grow: room in a growable array, with a bound on what untrusted input can
 * make it allocate.  The one growth loop of the program.
 */
#ifndef CPROF_GROW_H
#define CPROF_GROW_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* No bound but the address space's. */
#define GROW_NO_MAX SIZE_MAX

/*
 * Grows @*v (of @size-byte elements, @*cap of them allocated) to hold at
 * least @need, doubling from @first up to @max elements.  -E2BIG when
 * @need is over @max, -ENOMEM when realloc fails; @*v is unchanged then.
 */
static inline int grow_to(void **v, size_t *cap, size_t need, size_t size, size_t first,
			  size_t max)
{
	size_t ncap;
	void *nv;

	if (need <= *cap)
		return 0;
	if (max > SIZE_MAX / size)
		max = SIZE_MAX / size;
	if (need > max)
		return -E2BIG;
	ncap = *cap ? *cap : first;
	while (ncap < need)
		ncap = ncap > max / 2 ? max : ncap * 2;
	if (ncap > max)
		ncap = max;
	nv = realloc(*v, ncap * size);
	if (!nv)
		return -ENOMEM;
	*v = nv;
	*cap = ncap;
	return 0;
}

/* Room for one more element after the @n used: grow_to(@n + 1). */
static inline int grow(void **v, size_t *cap, size_t n, size_t size, size_t first, size_t max)
{
	return n < SIZE_MAX ? grow_to(v, cap, n + 1, size, first, max) : -E2BIG;
}

#endif
