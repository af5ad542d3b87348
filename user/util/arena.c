// SPDX-License-Identifier: MIT
#include <stdlib.h>
#include <string.h>

#include "util/arena.h"

struct arena_block {
	struct arena_block *next;
	size_t used, cap;
	char data[];
};

void arena_init(struct arena *a, size_t block_size, struct membudget *budget)
{
	arena_init_growing(a, block_size, block_size, budget);
}

void arena_init_growing(struct arena *a, size_t first, size_t max, struct membudget *budget)
{
	*a = (struct arena){ .block_size = first, .block_max = max, .budget = budget };
}

void *arena_alloc(struct arena *a, size_t n)
{
	struct arena_block *b = a->blocks;
	size_t cap, bytes;

	if (b && b->cap - b->used >= n) {
		b->used += n;
		return b->data + b->used - n;
	}
	/* Big allocations get a block of their own. */
	cap = n > a->block_size / 4 ? n : a->block_size;
	bytes = sizeof(*b) + cap;
	if (cap < n || (a->budget && !membudget_take(a->budget, bytes)))
		return NULL;
	b = malloc(bytes);
	if (!b) {
		if (a->budget)
			membudget_give(a->budget, bytes);
		return NULL;
	}
	b->cap = cap;
	b->used = n;
	a->bytes += bytes;
	/*
	 * A block made for one big allocation goes behind the one being
	 * filled, so that one's free space is not given up.
	 */
	if (cap > a->block_size && a->blocks) {
		b->next = a->blocks->next;
		a->blocks->next = b;
	} else {
		b->next = a->blocks;
		a->blocks = b;
	}
	if (cap == a->block_size && cap < a->block_max)
		a->block_size = cap > a->block_max / 2 ? a->block_max : 2 * cap;
	return b->data;
}

char *arena_strndup(struct arena *a, const char *s, size_t n)
{
	char *p = n + 1 ? arena_alloc(a, n + 1) : NULL;

	if (p) {
		memcpy(p, s, n);
		p[n] = '\0';
	}
	return p;
}

void arena_free(struct arena *a)
{
	struct arena_block *b = a->blocks;

	while (b) {
		struct arena_block *next = b->next;

		free(b);
		b = next;
	}
	if (a->budget)
		membudget_give(a->budget, a->bytes);
	a->blocks = NULL;
	a->bytes = 0;
}
