// SPDX-License-Identifier: MIT
#include <string.h>

#include "util/addrsearch.h"

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

/* The number of records whose @width-byte leading key is at or below @key. */
static size_t count_at_or_below(const void *base, size_t n, size_t size, size_t width,
				uint64_t key)
{
	size_t lo = 0, hi = n;

	/* lo: the first record above @key */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const char *rec = (const char *)base + mid * size;
		uint64_t a;

		if (width == sizeof(uint32_t)) {
			uint32_t a32;

			memcpy(&a32, rec, sizeof(a32));
			a = a32;
		} else {
			memcpy(&a, rec, sizeof(a));
		}
		if (a <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const void *addr_floor(const void *base, size_t n, size_t size, uint64_t addr)
{
	size_t lo = count_at_or_below(base, n, size, sizeof(uint64_t), addr);

	return lo ? (const char *)base + (lo - 1) * size : NULL;
}

size_t off32_floor(const uint32_t *v, size_t n, uint32_t off)
{
	size_t lo = count_at_or_below(v, n, sizeof(*v), sizeof(*v), off);

	return lo ? lo - 1 : SIZE_MAX;
}
