// SPDX-License-Identifier: MIT
#include <stdlib.h>
#include <string.h>

#include "util/hash.h"
#include "util/hmap.h"

void hmap_init(struct hmap *m, size_t key_size, size_t entry_size)
{
	memset(m, 0, sizeof(*m));
	m->key_size = key_size;
	m->entry_size = entry_size;
}

void hmap_free(struct hmap *m)
{
	free(m->used);
	free(m->slots);
	m->used = m->slots = NULL;
	m->cap = m->n = 0;
}

static void *slot(const struct hmap *m, size_t i)
{
	return m->slots + i * m->entry_size;
}

/* Index of @key's slot, or of the empty slot where it would go. */
static size_t probe(const struct hmap *m, const void *key)
{
	size_t mask = m->cap - 1;
	size_t i = hash_bytes(key, m->key_size) & mask;

	while (m->used[i] && memcmp(slot(m, i), key, m->key_size))
		i = (i + 1) & mask;
	return i;
}

void *hmap_find(const struct hmap *m, const void *key)
{
	size_t i;

	if (!m->n)
		return NULL;
	i = probe(m, key);
	return m->used[i] ? slot(m, i) : NULL;
}

/*
 * Moves the entries of @m that @dead does not reject (all when NULL) into
 * a fresh table of @cap slots, which replaces @m.
 */
static int rehash(struct hmap *m, size_t cap, bool (*dead)(const void *entry))
{
	struct hmap fresh = *m;

	fresh.cap = cap;
	fresh.n = 0;
	fresh.used = calloc(cap, 1);
	fresh.slots = malloc(cap * m->entry_size);
	if (!fresh.used || !fresh.slots) {
		free(fresh.used);
		free(fresh.slots);
		return -1;
	}
	for (size_t i = 0; i < m->cap; i++) {
		size_t j;

		if (!m->used[i] || (dead && dead(slot(m, i))))
			continue;
		j = probe(&fresh, slot(m, i));
		fresh.used[j] = 1;
		memcpy(slot(&fresh, j), slot(m, i), m->entry_size);
		fresh.n++;
	}
	hmap_free(m);
	*m = fresh;
	return 0;
}

static int grow(struct hmap *m)
{
	return rehash(m, m->cap ? m->cap * 2 : 16, NULL);
}

void *hmap_insert(struct hmap *m, const void *key, bool *created)
{
	size_t i;
	void *e;

	/* Keep the load factor under 3/4 so probe sequences stay short. */
	if ((m->n + 1) * 4 > m->cap * 3 && grow(m))
		return NULL;
	i = probe(m, key);
	e = slot(m, i);
	if (m->used[i]) {
		if (created)
			*created = false;
		return e;
	}
	m->used[i] = 1;
	m->n++;
	memset(e, 0, m->entry_size);
	memcpy(e, key, m->key_size);
	if (created)
		*created = true;
	return e;
}

int hmap_compact(struct hmap *m, bool (*dead)(const void *entry))
{
	size_t live = 0, cap = 16;

	for (size_t i = 0; i < m->cap; i++)
		if (m->used[i] && !dead(slot(m, i)))
			live++;
	while (live * 8 > cap * 3) /* at most 3/8 full: room to double first */
		cap *= 2;
	return rehash(m, cap, dead);
}

void hmap_clear(struct hmap *m)
{
	if (m->used)
		memset(m->used, 0, m->cap);
	m->n = 0;
}

void *hmap_next(const struct hmap *m, size_t *iter)
{
	while (*iter < m->cap) {
		size_t i = (*iter)++;

		if (m->used[i])
			return slot(m, i);
	}
	return NULL;
}

size_t hmap_bytes(const struct hmap *m)
{
	return m->cap * (m->entry_size + 1);
}
