// SPDX-License-Identifier: MIT
/*
 * objcache: ref-counted elfobj cache.
 *
 * Three small chained hash tables index the entries:
 *   by_key: file identity (dev, inode, mtime, size) -> entry.  An entry may
 *           have several keys: a second file found to carry the same build
 *           ID gets its key added as an alias, so its next lookup is a
 *           fstat and a hash probe instead of an ELF parse.
 *   by_bid: GNU build ID -> entry (entries with a build ID only).
 *   by_obj: elfobj pointer -> entry, for objcache_ref/put.
 * The nodes are embedded in the entries (no allocation per index), and a
 * table that can't grow keeps working with longer chains, so inserting
 * never fails.  Not thread-safe: the loader is single-threaded.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "objcache.h"

#define container_of(p, type, member) ((type *)((char *)(p) - offsetof(type, member)))

struct hnode {
	struct hnode *next;
	uint64_t hash;
};

struct htab {
	struct hnode **b;
	size_t nb, n; /* nb: a power of two */
};

struct filekey {
	uint64_t dev, ino, size;
	int64_t mtime_sec, mtime_nsec;
};

struct entry;

struct key {
	struct hnode node; /* in by_key */
	struct filekey k;
	struct entry *ent;
	struct key *next; /* the entry's other keys */
};

struct entry {
	struct hnode by_obj, by_bid;
	struct elfobj *obj;
	size_t refs;
	bool has_bid;
	struct key *keys;
};

struct objcache {
	struct htab by_key, by_bid, by_obj;
};

/* --- hash tables ------------------------------------------------------- */

static uint64_t mix64(uint64_t x)
{
	/* splitmix64's finalizer: every input bit reaches every output bit. */
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint64_t hash_bytes(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return mix64(h);
}

static int htab_init(struct htab *t)
{
	t->nb = 16;
	t->n = 0;
	t->b = calloc(t->nb, sizeof(t->b[0]));
	return t->b ? 0 : -ENOMEM;
}

static void htab_grow(struct htab *t)
{
	size_t nb = t->nb * 2;
	struct hnode **b = calloc(nb, sizeof(*b));

	if (!b)
		return; /* longer chains, still correct */
	for (size_t i = 0; i < t->nb; i++) {
		struct hnode *n = t->b[i];

		while (n) {
			struct hnode *next = n->next;

			n->next = b[n->hash & (nb - 1)];
			b[n->hash & (nb - 1)] = n;
			n = next;
		}
	}
	free(t->b);
	t->b = b;
	t->nb = nb;
}

static void htab_insert(struct htab *t, struct hnode *n, uint64_t hash)
{
	if (t->n >= t->nb)
		htab_grow(t);
	n->hash = hash;
	n->next = t->b[hash & (t->nb - 1)];
	t->b[hash & (t->nb - 1)] = n;
	t->n++;
}

static void htab_remove(struct htab *t, struct hnode *n)
{
	for (struct hnode **p = &t->b[n->hash & (t->nb - 1)]; *p; p = &(*p)->next) {
		if (*p == n) {
			*p = n->next;
			t->n--;
			return;
		}
	}
}

/* First node of @hash's chain; walk with ->next and compare ->hash. */
static struct hnode *htab_chain(const struct htab *t, uint64_t hash)
{
	return t->b[hash & (t->nb - 1)];
}

/* --- keys ------------------------------------------------------------- */

static struct filekey filekey_of(const struct stat *st)
{
	return (struct filekey){
		.dev = st->st_dev,
		.ino = st->st_ino,
		.size = (uint64_t)st->st_size,
		.mtime_sec = st->st_mtim.tv_sec,
		.mtime_nsec = st->st_mtim.tv_nsec,
	};
}

static uint64_t filekey_hash(const struct filekey *k)
{
	return mix64(k->ino ^ mix64(k->dev ^ mix64((uint64_t)k->mtime_sec ^
						   mix64((uint64_t)k->mtime_nsec ^ k->size))));
}

static bool filekey_eq(const struct filekey *a, const struct filekey *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime_sec == b->mtime_sec && a->mtime_nsec == b->mtime_nsec;
}

static struct entry *find_by_key(const struct objcache *c, const struct filekey *k)
{
	uint64_t h = filekey_hash(k);

	for (struct hnode *n = htab_chain(&c->by_key, h); n; n = n->next) {
		struct key *x = container_of(n, struct key, node);

		if (n->hash == h && filekey_eq(&x->k, k))
			return x->ent;
	}
	return NULL;
}

static struct entry *find_by_bid(const struct objcache *c, const uint8_t *id, size_t len)
{
	uint64_t h = hash_bytes(id, len);

	for (struct hnode *n = htab_chain(&c->by_bid, h); n; n = n->next) {
		struct entry *e = container_of(n, struct entry, by_bid);
		size_t elen;
		const uint8_t *eid = elfobj_build_id_raw(e->obj, &elen);

		if (n->hash == h && elen == len && memcmp(eid, id, len) == 0)
			return e;
	}
	return NULL;
}

static struct entry *find_by_obj(const struct objcache *c, const struct elfobj *o)
{
	uint64_t h = mix64((uintptr_t)o);

	for (struct hnode *n = htab_chain(&c->by_obj, h); n; n = n->next) {
		struct entry *e = container_of(n, struct entry, by_obj);

		if (e->obj == o)
			return e;
	}
	return NULL;
}

static int add_key(struct objcache *c, struct entry *e, const struct filekey *k)
{
	struct key *x = malloc(sizeof(*x));

	if (!x)
		return -ENOMEM;
	x->k = *k;
	x->ent = e;
	x->next = e->keys;
	e->keys = x;
	htab_insert(&c->by_key, &x->node, filekey_hash(k));
	return 0;
}

/* --- API -------------------------------------------------------------- */

struct objcache *objcache_new(void)
{
	struct objcache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	if (htab_init(&c->by_key) || htab_init(&c->by_bid) || htab_init(&c->by_obj)) {
		free(c->by_key.b);
		free(c->by_bid.b);
		free(c->by_obj.b);
		free(c);
		return NULL;
	}
	return c;
}

static void entry_free(struct entry *e)
{
	struct key *k = e->keys;

	while (k) {
		struct key *next = k->next;

		free(k);
		k = next;
	}
	elfobj_free(e->obj);
	free(e);
}

void objcache_free(struct objcache *c)
{
	if (!c)
		return;
	/* Every entry is in by_obj exactly once. */
	for (size_t i = 0; i < c->by_obj.nb; i++) {
		struct hnode *n = c->by_obj.b[i];

		while (n) {
			struct hnode *next = n->next;

			entry_free(container_of(n, struct entry, by_obj));
			n = next;
		}
	}
	free(c->by_key.b);
	free(c->by_bid.b);
	free(c->by_obj.b);
	free(c);
}

int objcache_get(struct objcache *c, int fd, struct elfobj **out, struct errbuf *err)
{
	struct filekey k;
	struct entry *e;
	struct stat st;
	struct elfobj *o;
	const uint8_t *id;
	size_t idlen;
	int rc;

	*out = NULL;
	if (fstat(fd, &st)) {
		rc = errf(err, -errno, "fd %d: fstat: %s", fd, strerror(errno));
		close(fd);
		return rc;
	}
	k = filekey_of(&st);
	e = find_by_key(c, &k);
	if (e) {
		close(fd);
		goto found;
	}
	rc = elfobj_open(&o, fd, err); /* closes fd on error */
	if (rc)
		return rc;
	id = elfobj_build_id_raw(o, &idlen);
	if (idlen && (e = find_by_bid(c, id, idlen))) {
		/* The same bytes under another name: share, remember the name. */
		elfobj_free(o);
		add_key(c, e, &k); /* failing only costs a re-parse next time */
		goto found;
	}
	e = calloc(1, sizeof(*e));
	if (!e || add_key(c, e, &k)) {
		free(e);
		elfobj_free(o);
		return errf(err, -ENOMEM, "object cache: out of memory");
	}
	e->obj = o;
	htab_insert(&c->by_obj, &e->by_obj, mix64((uintptr_t)o));
	if (idlen) {
		e->has_bid = true;
		htab_insert(&c->by_bid, &e->by_bid, hash_bytes(id, idlen));
	}
found:
	e->refs++;
	*out = e->obj;
	return 0;
}

void objcache_ref(struct objcache *c, struct elfobj *o)
{
	struct entry *e = find_by_obj(c, o);

	if (e)
		e->refs++;
}

void objcache_put(struct objcache *c, struct elfobj *o)
{
	struct entry *e;

	if (!o || !(e = find_by_obj(c, o)) || --e->refs)
		return;
	htab_remove(&c->by_obj, &e->by_obj);
	if (e->has_bid)
		htab_remove(&c->by_bid, &e->by_bid);
	for (struct key *k = e->keys; k; k = k->next)
		htab_remove(&c->by_key, &k->node);
	entry_free(e);
}

size_t objcache_count(const struct objcache *c)
{
	return c->by_obj.n;
}
