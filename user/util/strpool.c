// SPDX-License-Identifier: MIT
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/hash.h"
#include "util/strpool.h"

#define BLOCK 16384

struct str_key {
	uint64_t hash, len;
};

struct str_entry {
	struct str_key key;
	const char *s;
};

void strpool_init(struct strpool *p, struct membudget *budget)
{
	memset(p, 0, sizeof(*p));
	arena_init(&p->arena, BLOCK, budget);
	hmap_init(&p->strs, sizeof(struct str_key), sizeof(struct str_entry));
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
	k = (struct str_key){ hash_bytes(s, n), n };
	e = hmap_insert(&p->strs, &k, &created);
	if (e && !created && e->s && !memcmp(e->s, s, n))
		return e->s;
	/* Out of memory, or a 64-bit collision: keep both. */
	if (!e || !created)
		return arena_strndup(&p->arena, s, n);
	e->s = arena_strndup(&p->arena, s, n);
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
	arena_free(&p->arena);
	hmap_free(&p->strs);
}
