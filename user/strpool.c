// SPDX-License-Identifier: MIT
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strpool.h"

#define BLOCK 16384

struct strblock {
	struct strblock *next;
	size_t used, cap;
	char data[];
};

struct str_key {
	uint64_t hash, len;
};

struct str_entry {
	struct str_key key;
	const char *s;
};

bool membudget_take(struct membudget *b, uint64_t n)
{
	if (n > b->max || b->used > b->max - n) {
		b->refused++;
		return false;
	}
	b->used += n;
	if (b->used > b->peak)
		b->peak = b->used;
	return true;
}

void membudget_give(struct membudget *b, uint64_t n)
{
	b->used -= n < b->used ? n : b->used;
}

static uint64_t hash_str(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ULL;
	}
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	return h ^ (h >> 33);
}

void strpool_init(struct strpool *p, struct membudget *budget)
{
	memset(p, 0, sizeof(*p));
	p->budget = budget;
	hmap_init(&p->strs, sizeof(struct str_key), sizeof(struct str_entry));
}

static char *copy(struct strpool *p, const char *s, size_t n)
{
	struct strblock *b = p->blocks;

	if (!b || b->cap - b->used < n + 1) {
		size_t cap = n + 1 > BLOCK ? n + 1 : BLOCK;

		if (!membudget_take(p->budget, sizeof(*b) + cap))
			return NULL;
		b = malloc(sizeof(*b) + cap);
		if (!b) {
			membudget_give(p->budget, sizeof(*b) + cap);
			return NULL;
		}
		b->next = p->blocks;
		b->used = 0;
		b->cap = cap;
		p->blocks = b;
		p->bytes += sizeof(*b) + cap;
	}
	memcpy(b->data + b->used, s, n);
	b->data[b->used + n] = '\0';
	b->used += n + 1;
	return b->data + b->used - n - 1;
}

const char *strpool_intern(struct strpool *p, const char *s)
{
	struct str_key k;
	struct str_entry *e;
	bool created;
	size_t n;

	if (!s)
		return NULL;
	n = strlen(s);
	k = (struct str_key){ hash_str(s, n), n };
	e = hmap_insert(&p->strs, &k, &created);
	if (e && !created && e->s && !memcmp(e->s, s, n))
		return e->s;
	if (!e || !created)
		return copy(p, s, n); /* out of memory, or a 64-bit collision: keep both */
	e->s = copy(p, s, n);
	return e->s;
}

const char *strpool_intern_path(struct strpool *p, const char *dir, const char *file)
{
	char buf[PATH_MAX];

	if (!file || !dir || !*dir || file[0] == '/' ||
	    (size_t)snprintf(buf, sizeof(buf), "%s/%s", dir, file) >= sizeof(buf))
		return strpool_intern(p, file);
	return strpool_intern(p, buf);
}

void strpool_free(struct strpool *p)
{
	struct strblock *b = p->blocks;

	while (b) {
		struct strblock *next = b->next;

		free(b);
		b = next;
	}
	if (p->budget)
		membudget_give(p->budget, p->bytes);
	hmap_free(&p->strs);
	p->blocks = NULL;
	p->bytes = 0;
}
