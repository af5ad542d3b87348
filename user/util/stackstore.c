// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cprof.h"
#include "util/grow.h"
#include "util/hash.h"
#include "util/stackstore.h"

struct stack_entry {
	uint64_t hash;
	uint32_t nr;
	uint32_t status;
	size_t off;
};

void stackstore_init(struct stackstore *s)
{
	memset(s, 0, sizeof(*s));
	hmap_init(&s->map, sizeof(uint64_t), sizeof(struct stack_entry));
}

void stackstore_free(struct stackstore *s)
{
	hmap_free(&s->map);
	free(s->frames);
	memset(s, 0, sizeof(*s));
}

int stackstore_add(struct stackstore *s, uint64_t hash, const uint64_t *ip, uint32_t nr,
		   uint32_t status)
{
	struct stack_entry *e;
	bool created;

	if (hmap_find(&s->map, &hash))
		return 0;
	if (grow_to((void **)&s->frames, &s->cap, s->nframes + nr, sizeof(*s->frames), 1024,
		    GROW_NO_MAX))
		return -ENOMEM;
	e = hmap_insert(&s->map, &hash, &created);
	if (!e)
		return -ENOMEM;
	e->nr = nr;
	e->status = status;
	e->off = s->nframes;
	memcpy(s->frames + s->nframes, ip, nr * sizeof(*ip));
	s->nframes += nr;
	return 0;
}

int stackstore_leaf(struct stackstore *s, uint64_t hash, uint32_t at, uint64_t leaf,
		    uint64_t *out)
{
	const struct stack_entry *e = hmap_find(&s->map, &hash);
	uint64_t whole = hash_u64(hash ^ hash_u64(leaf)) | CPROF_STACK_HASHED;
	uint32_t nr, status;
	size_t off;
	int ret;

	*out = whole;
	if (!e || e->nr <= at || hmap_find(&s->map, &whole))
		return 0;
	nr = e->nr;
	status = e->status;
	off = e->off;
	/* room first: the frames copied are in s->frames, which growing moves */
	if (grow_to((void **)&s->frames, &s->cap, s->nframes + nr, sizeof(*s->frames), 1024,
		    GROW_NO_MAX))
		return -ENOMEM;
	ret = stackstore_add(s, whole, s->frames + off, nr, status);
	if (!ret)
		s->frames[s->nframes - nr + at] = leaf;
	return ret;
}

const uint64_t *stackstore_get(const struct stackstore *s, uint64_t hash, uint32_t *nr,
			       uint32_t *status)
{
	const struct stack_entry *e = hmap_find(&s->map, &hash);

	if (!e)
		return NULL;
	*nr = e->nr;
	if (status)
		*status = e->status;
	return s->frames + e->off;
}

size_t stackstore_bytes(const struct stackstore *s)
{
	return hmap_bytes(&s->map) + s->cap * sizeof(uint64_t);
}

static int cmp_off(const void *a, const void *b)
{
	const struct stack_entry *x = *(const struct stack_entry *const *)a;
	const struct stack_entry *y = *(const struct stack_entry *const *)b;

	return x->off < y->off ? -1 : x->off > y->off;
}

int stackstore_carry(struct stackstore *s, uint32_t keep, size_t max_frames)
{
	struct stack_entry **pick = NULL, *e;
	size_t n = 0, cap = 0, first, frames = 0, it = 0;
	struct stackstore next;
	int ret = 0;

	stackstore_init(&next);
	while ((e = hmap_next(&s->map, &it))) {
		if (!(e->status & keep))
			continue;
		if (grow_to((void **)&pick, &cap, n + 1, sizeof(*pick), 64, GROW_NO_MAX)) {
			ret = -ENOMEM;
			goto out;
		}
		pick[n++] = e;
	}
	/* The newest that fit, kept in the order they came. */
	if (n)
		qsort(pick, n, sizeof(*pick), cmp_off);
	for (first = n; first > 0 && frames + pick[first - 1]->nr <= max_frames; first--)
		frames += pick[first - 1]->nr;
	for (size_t i = first; i < n && !ret; i++)
		ret = stackstore_add(&next, pick[i]->hash, s->frames + pick[i]->off, pick[i]->nr,
				     pick[i]->status);
out:
	free(pick);
	stackstore_free(s);
	if (ret) {
		stackstore_free(&next);
		stackstore_init(s);
		return ret;
	}
	*s = next;
	return 0;
}
