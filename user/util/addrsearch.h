/* SPDX-License-Identifier: MIT */
/*
 * addrsearch: lookups in a sorted array of records that each begin with
 * their uint64_t address (resolved kernel and perf-map symbols, kept kernel
 * functions), or of bare uint32_t offsets from a base (the kernel's
 * catalog: half the memory of addresses).
 */
#ifndef CPROF_ADDRSEARCH_H
#define CPROF_ADDRSEARCH_H

#include <stddef.h>
#include <stdint.h>

/*
 * The record of @base (@n records of @size bytes, sorted by their leading
 * address, unique) whose address is @addr, or NULL.
 */
const void *addr_search(const void *base, size_t n, size_t size, uint64_t addr);

/* The record with the highest address at or below @addr (ranges by their start), or NULL. */
const void *addr_floor(const void *base, size_t n, size_t size, uint64_t addr);

/* The index of the highest of @v's @n ascending offsets at or below @off, or SIZE_MAX. */
size_t off32_floor(const uint32_t *v, size_t n, uint32_t off);

#endif
