/* SPDX-License-Identifier: MIT */
/*
 * hmap: an open-addressing hash table of fixed-size entries, each starting
 * with a fixed-size key compared bytewise.  One implementation serves the
 * stack store, the string pool, the per-process sample tables, the process
 * table, the profile writer's de-duplication and the pprof encoder's
 * functions.  The tables of their own say why: the pprof encoder's strings
 * (proto/pprof_tables.c), the unwind rules (unwind/rows.h), the object
 * cache's indexes (elf/objcache.c) and the BPF shim's hash maps
 * (unwind/bpfshim.h).
 *
 * Entry pointers stay valid only until the next insertion (the table may
 * grow and move them).  Keys must be fully initialised, padding included,
 * since comparison is by memcmp.
 */
#ifndef CPROF_HMAP_H
#define CPROF_HMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hmap {
	size_t key_size, entry_size;
	size_t cap, n; /* cap: 0 or a power of two */
	uint8_t *used; /* cap bytes: 1 when the slot holds an entry */
	uint8_t *slots;
};

void hmap_init(struct hmap *m, size_t key_size, size_t entry_size);
void hmap_free(struct hmap *m);

/* The entry whose key equals @key, or NULL. */
void *hmap_find(const struct hmap *m, const void *key);

/*
 * The entry for @key, created zero-filled (but for the key) when missing;
 * *@created tells which.  NULL when out of memory.
 */
void *hmap_insert(struct hmap *m, const void *key, bool *created);

/*
 * Removes the entries @dead says are dead (open addressing cannot delete
 * in place without tombstones; rebuilding is simpler and rare).  Shrinks
 * the table when it is mostly empty, so memory follows the live entries.
 */
int hmap_compact(struct hmap *m, bool (*dead)(const void *entry));

/* Removes everything; keeps the allocation for reuse. */
void hmap_clear(struct hmap *m);

/* Iteration: for (void *e = hmap_next(m, &i); e; e = hmap_next(m, &i)) with i = 0. */
void *hmap_next(const struct hmap *m, size_t *iter);

/* Bytes allocated by the table. */
size_t hmap_bytes(const struct hmap *m);

#endif
