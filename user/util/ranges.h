/* SPDX-License-Identifier: MIT */
/*
 * ranges: sets of address ranges [lo, hi), kept sorted and disjoint so
 * that membership is a binary search (an object's executable sections,
 * the code one CFI section already describes).
 */
#ifndef CPROF_RANGES_H
#define CPROF_RANGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/addrsearch.h"

struct range {
	uint64_t lo, hi;
};

/* Sorts and merges @n ranges in place; returns the new count. */
size_t range_normalize(struct range *r, size_t n);

/* How many of the sorted ranges start at or below @addr (one FDE each: inline). */
static inline size_t range_count_le(const struct range *r, size_t n, uint64_t addr)
{
	return addrsearch_upto(r, n, ADDRSEARCH_KEY(struct range, lo), addr);
}

/* Whether @addr is in one of the sorted, disjoint ranges. */
static inline bool range_contains(const struct range *r, size_t n, uint64_t addr)
{
	size_t i = range_count_le(r, n, addr);

	return i > 0 && addr < r[i - 1].hi;
}

/* Whether [lo, hi) meets any of the sorted, disjoint ranges. */
static inline bool range_overlaps(const struct range *r, size_t n, uint64_t lo, uint64_t hi)
{
	size_t i = range_count_le(r, n, hi - 1);

	return i > 0 && r[i - 1].hi > lo;
}

#endif
