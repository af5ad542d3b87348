/* SPDX-License-Identifier: MIT */
/*
 * addrsearch: the binary search over sorted arrays of records keyed by an
 * unsigned address or offset (a symbol's or a mapping's start, a mapping's
 * end, a CIE's section offset, the kernel catalog's 32-bit offsets), or
 * over bare arrays of such keys.  A record names its key by ADDRSEARCH_KEY
 * (its size, the key's offset and width), so one search serves them all.
 * All inline: symbolization and unwind-table lookups run it per frame, and
 * the caller's constant record size and key offset then fold into the loop
 * as in a search written for that type.
 */
#ifndef CPROF_ADDRSEARCH_H
#define CPROF_ADDRSEARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Where a record's key is; from ADDRSEARCH_KEY or ADDRSEARCH_BARE, constant. */
struct addrsearch_key {
	size_t size;  /* of one record */
	size_t off;   /* of the key in the record */
	size_t width; /* of the key: 4 or 8 bytes, unsigned */
};

/* Records of @type sorted by their unsigned @member. */
#define ADDRSEARCH_KEY(type, member)                                                    \
	((struct addrsearch_key){ sizeof(type), offsetof(type, member),                 \
				  sizeof(((const type *)0)->member) })

/* An array of the unsigned keys themselves, of @type. */
#define ADDRSEARCH_BARE(type) ((struct addrsearch_key){ sizeof(type), 0, sizeof(type) })

/* Forced, so that an unoptimizing build still folds the constant key in. */
#define ADDRSEARCH_INLINE static inline __attribute__((always_inline))

/* The key of @base's record @i. */
ADDRSEARCH_INLINE uint64_t addrsearch_key_at(const void *base, size_t i, struct addrsearch_key k)
{
	const char *p = (const char *)base + i * k.size + k.off;
	uint32_t v32;
	uint64_t v64;

	/* memcpy: the records are only known as bytes here; it compiles to a load */
	if (k.width == sizeof(v32)) {
		memcpy(&v32, p, sizeof(v32));
		return v32;
	}
	memcpy(&v64, p, sizeof(v64));
	return v64;
}

/*
 * How many of the @n records at @base (ascending by key @k) have a key
 * below @key, or with @or_equal one at or below it: the index of the first
 * record at or above @key, or above it.  The one search of the module.
 */
ADDRSEARCH_INLINE size_t addrsearch_rank(const void *base, size_t n, struct addrsearch_key k,
					 uint64_t key, bool or_equal)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t a = addrsearch_key_at(base, mid, k);

		if (a < key || (or_equal && a == key))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The number of records whose key is below @key: the first at or above it (lower bound). */
ADDRSEARCH_INLINE size_t addrsearch_below(const void *base, size_t n, struct addrsearch_key k,
					  uint64_t key)
{
	return addrsearch_rank(base, n, k, key, false);
}

/* The number of records whose key is at or below @key: the first above it (upper bound). */
ADDRSEARCH_INLINE size_t addrsearch_upto(const void *base, size_t n, struct addrsearch_key k,
					 uint64_t key)
{
	return addrsearch_rank(base, n, k, key, true);
}

/* The first record whose key is @key, or NULL. */
ADDRSEARCH_INLINE const void *addrsearch_find(const void *base, size_t n, struct addrsearch_key k,
					      uint64_t key)
{
	size_t i = addrsearch_below(base, n, k, key);

	return i < n && addrsearch_key_at(base, i, k) == key ? (const char *)base + i * k.size
							      : NULL;
}

/* The last record whose key is at or below @key (ranges by their start), or NULL. */
ADDRSEARCH_INLINE const void *addrsearch_floor(const void *base, size_t n, struct addrsearch_key k,
					       uint64_t key)
{
	size_t i = addrsearch_upto(base, n, k, key);

	return i ? (const char *)base + (i - 1) * k.size : NULL;
}

#endif
