/* SPDX-License-Identifier: MIT */
/*
 * arena: many small allocations (interned strings) from big blocks that
 * never move and are freed all at once, optionally drawing their memory
 * from a budget several arenas share.
 */
#ifndef CPROF_ARENA_H
#define CPROF_ARENA_H

#include <stddef.h>
#include <stdint.h>

#include "util/membudget.h"

struct arena {
	struct arena_block *blocks; /* the newest (being filled) first */
	size_t block_size;          /* of the next block */
	size_t block_max;           /* what block_size may double up to */
	uint64_t bytes;             /* allocated, blocks' headers included */
	struct membudget *budget;   /* NULL: unbounded */
};

/* @budget may be NULL; it must outlive the arena. */
void arena_init(struct arena *a, size_t block_size, struct membudget *budget);

/*
 * As arena_init(), with blocks that double from @first bytes up to @max
 * as they are made: few blocks for a big arena, little slack in a small one.
 */
void arena_init_growing(struct arena *a, size_t first, size_t max, struct membudget *budget);

/*
 * @n bytes (unaligned: for characters) that stay put until arena_free;
 * NULL when out of memory or over the budget.
 */
void *arena_alloc(struct arena *a, size_t n);

/* A NUL-terminated copy of @n bytes of @s, or NULL as arena_alloc. */
char *arena_strndup(struct arena *a, const char *s, size_t n);

/* Frees every block and gives their memory back to the budget. */
void arena_free(struct arena *a);

#endif
