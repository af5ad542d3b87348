// SPDX-License-Identifier: MIT
#include <string.h>

#include "addrsearch.h"

const void *addr_search(const void *base, size_t n, size_t size, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const char *rec = (const char *)base + mid * size;
		uint64_t a;

		memcpy(&a, rec, sizeof(a));
		if (a < addr)
			lo = mid + 1;
		else if (a > addr)
			hi = mid;
		else
			return rec;
	}
	return NULL;
}

const void *addr_floor(const void *base, size_t n, size_t size, uint64_t addr)
{
	size_t lo = 0, hi = n;

	/* lo: the first record above @addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t a;

		memcpy(&a, (const char *)base + mid * size, sizeof(a));
		if (a <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? (const char *)base + (lo - 1) * size : NULL;
}
