/* SPDX-License-Identifier: MIT */
/*
 * hash: the one hash function of the program's tables (hmap, the string
 * pools, the object cache, the pprof encoder's string table).
 */
#ifndef CPROF_HASH_H
#define CPROF_HASH_H

#include <stddef.h>
#include <stdint.h>

/*
 * 64-bit FNV-1a, then a multiply and two xor-shifts so that the low bits,
 * which pick a table's slot, depend on every byte (FNV alone leaves
 * sequential keys in neighbouring slots).
 */
static inline uint64_t hash_bytes(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ULL;
	}
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return h;
}

/* The hash of one 64-bit value (a pointer, an index). */
static inline uint64_t hash_u64(uint64_t v)
{
	return hash_bytes(&v, sizeof(v));
}

#endif
