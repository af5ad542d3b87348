// SPDX-License-Identifier: MIT
/*
 * objcache: ref-counted elfobj cache.
 *
 * Three small chained hash tables index the entries:
 *   by_key: file identity (dev, inode, size, mtime, ctime) -> entry.  An
 *           entry may have several keys: a second file found to hold the
 *           same bytes gets its key added as an alias, so its next lookup
 *           is a fstat and a hash probe instead of an ELF parse and a
 *           comparison.
 *   by_bid: GNU build ID -> entries whose file may be shared by content
 *           (candidates to compare with, never trusted on their own).
 *   by_obj: elfobj pointer -> entry, for objcache_ref/put.
 * The nodes are embedded in the entries (no allocation per index), and a
 * table that can't grow keeps working with longer chains, so inserting
 * never fails.  Not hmap: entries never move, are removed one by one,
 * and one build ID holds several.  Not thread-safe: the loader is
 * single-threaded.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/hash.h"
#include "elf/objcache.h"

#define container_of(p, type, member) ((type *)((char *)(p) - offsetof(type, member)))

struct hnode {
	struct hnode *next;
	uint64_t hash;
};

struct htab {
	struct hnode **b;
	size_t nb, n; /* nb: a power of two */
};

/*
 * Not ctime: unlinking a file changes it, and a deleted file must still be
 * found again (through map_files).  A user who rewrites a file and sets its
 * mtime back misleads only the processes mapping that file: a file read for
 * others is one no user can write (see find_same_content()).
 */
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
	bool readable;    /* the object may read this file (see is_entry_file()) */
};

struct source {
	uint32_t pid;
	uint64_t start, end;
	struct rootfs_root *root;
	char *path;
};

struct entry {
	struct hnode by_obj, by_bid;
	struct objcache *cache;
	struct elfobj *obj;
	size_t refs;
	bool in_bid;       /* in by_bid: a candidate for sharing by content */
	uint64_t obj_size; /* of the file the object reads */
	struct key *keys;
	struct fdlru_node lru;
	struct source src[OBJCACHE_SOURCES];
	unsigned nsrc, next_src;
};

struct objcache {
	struct htab by_key, by_bid, by_obj;
	struct fdlru *lru;
	struct rootfs_roots *roots;
	struct objcache_stats st;
};

/* --- hash tables ------------------------------------------------------- */

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
	return hash_bytes(k, sizeof(*k));
}

static bool filekey_eq(const struct filekey *a, const struct filekey *b)
{
	return memcmp(a, b, sizeof(*a)) == 0;
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

static struct entry *find_by_obj(const struct objcache *c, const struct elfobj *o)
{
	uint64_t h = hash_u64((uintptr_t)o);

	for (struct hnode *n = htab_chain(&c->by_obj, h); n; n = n->next) {
		struct entry *e = container_of(n, struct entry, by_obj);

		if (e->obj == o)
			return e;
	}
	return NULL;
}

static int add_key(struct objcache *c, struct entry *e, const struct filekey *k, bool readable)
{
	struct key *x = malloc(sizeof(*x));

	if (!x)
		return -ENOMEM;
	x->k = *k;
	x->readable = readable;
	x->ent = e;
	x->next = e->keys;
	e->keys = x;
	htab_insert(&c->by_key, &x->node, filekey_hash(k));
	return 0;
}

/* --- descriptors ---------------------------------------------------------- */

static void entry_evict(struct fdlru_node *n)
{
	elfobj_close_file(container_of(n, struct entry, lru)->obj);
}

/*
 * A file the object may be read from again: its own (by its whole
 * identity), or a copy found identical that no user can change.  A copy
 * a user can write may be changed without its mtime saying so (set back,
 * or a dirty page of a shared writable mapping), so it is never read.
 */
static bool is_entry_file(const struct entry *e, int fd)
{
	struct stat st;
	struct filekey k;

	if (fstat(fd, &st))
		return false;
	k = filekey_of(&st);
	for (const struct key *x = e->keys; x; x = x->next)
		if (x->readable && filekey_eq(&x->k, &k))
			return true;
	return false;
}

/* Opens the file of @e again, from its most recent source that still leads to it. */
static int entry_reopen(void *ctx)
{
	struct entry *e = ctx;
	struct objcache *c = e->cache;

	for (unsigned i = 0; i < e->nsrc; i++) {
		const struct source *s =
			&e->src[(e->next_src + OBJCACHE_SOURCES - 1 - i) % OBJCACHE_SOURCES];
		int fd = -1;

		if (s->pid) {
			char path[96];

			snprintf(path, sizeof(path), "/proc/%" PRIu32 "/map_files/%" PRIx64 "-%" PRIx64,
				 s->pid, s->start, s->end);
			fd = rootfs_open_magic(path, NULL, NULL);
			if (fd >= 0 && !is_entry_file(e, fd)) {
				close(fd);
				fd = -1;
			}
		}
		if (fd < 0 && s->root && s->path) {
			fd = rootfs_open_in(rootfs_root_fd(s->root), s->path, NULL, NULL);
			if (fd >= 0 && !is_entry_file(e, fd)) {
				close(fd);
				fd = -1;
			}
		}
		if (fd >= 0) {
			c->st.reopened++;
			if (c->lru)
				fdlru_hold(c->lru, &e->lru);
			return fd;
		}
	}
	c->st.reopen_failed++;
	return -ENOENT;
}

static void entry_used(void *ctx)
{
	struct entry *e = ctx;

	if (e->cache->lru)
		fdlru_touch(e->cache->lru, &e->lru);
}

static const struct elfobj_file_ops entry_file_ops = {
	.reopen = entry_reopen,
	.used = entry_used,
};

static void source_clear(struct objcache *c, struct source *s)
{
	if (s->root && c->roots)
		rootfs_root_put(c->roots, s->root);
	free(s->path);
	memset(s, 0, sizeof(*s));
}

/* --- sharing by content ---------------------------------------------------- */

/* Bytes only root can change: a file shared by content is read from one of these. */
static bool immutable_to_users(const struct stat *st)
{
	return st->st_uid == 0 && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

static int pread_all(int fd, uint8_t *buf, size_t len, uint64_t off)
{
	while (len) {
		ssize_t n = pread(fd, buf, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

static bool same_bytes(int a, int b, uint64_t size)
{
	enum { CHUNK = 65536 };
	uint8_t *x = malloc(2 * CHUNK), *y = x + CHUNK;
	bool same = x != NULL;

	for (uint64_t off = 0; same && off < size; off += CHUNK) {
		size_t n = size - off < CHUNK ? (size_t)(size - off) : CHUNK;

		same = !pread_all(a, x, n, off) && !pread_all(b, y, n, off) && !memcmp(x, y, n);
	}
	free(x);
	return same;
}

/*
 * An entry whose file holds exactly the bytes of @o (just parsed from the
 * file with key @k), with the same build ID, and which may be shared.
 */
static struct entry *find_same_content(struct objcache *c, struct elfobj *o,
				       const struct filekey *k)
{
	size_t idlen;
	const uint8_t *id = elfobj_build_id_raw(o, &idlen);
	uint64_t h;

	if (!idlen || k->size > OBJCACHE_COMPARE_MAX)
		return NULL;
	h = hash_bytes(id, idlen);
	for (struct hnode *n = htab_chain(&c->by_bid, h); n; n = n->next) {
		struct entry *e = container_of(n, struct entry, by_bid);
		const uint8_t *eid;
		size_t elen;
		const void *img;
		size_t len;
		int efd, ofd;

		eid = elfobj_build_id_raw(e->obj, &elen);
		if (n->hash != h || elen != idlen || memcmp(eid, id, idlen) || e->obj_size != k->size)
			continue;
		elfobj_source(e->obj, &efd, &img, &len);
		elfobj_source(o, &ofd, &img, &len);
		if (efd < 0 || ofd < 0)
			continue;
		c->st.compared++;
		if (same_bytes(efd, ofd, k->size)) {
			c->st.shared++;
			return e;
		}
	}
	return NULL;
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

void objcache_set_lru(struct objcache *c, struct fdlru *lru, struct rootfs_roots *roots)
{
	c->lru = lru;
	c->roots = roots;
}

static void entry_free(struct objcache *c, struct entry *e)
{
	struct key *k = e->keys;

	while (k) {
		struct key *next = k->next;

		free(k);
		k = next;
	}
	for (unsigned i = 0; i < OBJCACHE_SOURCES; i++)
		source_clear(c, &e->src[i]);
	if (c->lru)
		fdlru_drop(c->lru, &e->lru);
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

			entry_free(c, container_of(n, struct entry, by_obj));
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
	e = find_same_content(c, o, &k);
	if (e) {
		/* The same bytes under another name: share, remember the name. */
		elfobj_free(o);
		/* failing only costs a re-parse next time */
		add_key(c, e, &k, immutable_to_users(&st));
		goto found;
	}
	e = calloc(1, sizeof(*e));
	if (!e || add_key(c, e, &k, true)) {
		free(e);
		elfobj_free(o);
		return errf(err, -ENOMEM, "object cache: out of memory");
	}
	e->cache = c;
	e->obj = o;
	e->obj_size = k.size;
	e->lru.evict = entry_evict;
	elfobj_set_file_ops(o, &entry_file_ops, e);
	htab_insert(&c->by_obj, &e->by_obj, hash_u64((uintptr_t)o));
	elfobj_build_id_raw(o, &idlen);
	if (idlen && immutable_to_users(&st)) {
		e->in_bid = true;
		htab_insert(&c->by_bid, &e->by_bid, hash_bytes(elfobj_build_id_raw(o, &idlen), idlen));
	}
	if (c->lru)
		fdlru_hold(c->lru, &e->lru);
found:
	e->refs++;
	*out = e->obj;
	return 0;
}

void objcache_add_source(struct objcache *c, struct elfobj *o, const struct objcache_source *src)
{
	struct entry *e = find_by_obj(c, o);
	struct source *s;

	if (!e)
		return;
	for (unsigned i = 0; i < e->nsrc; i++) {
		s = &e->src[i];
		if (s->pid == src->pid && s->start == src->start && s->end == src->end &&
		    s->root == src->root)
			return; /* known already */
	}
	s = &e->src[e->next_src];
	source_clear(c, s);
	*s = (struct source){ .pid = src->pid, .start = src->start, .end = src->end };
	if (src->root && src->path && (s->path = strdup(src->path))) {
		s->root = src->root;
		rootfs_root_ref(s->root);
	}
	e->next_src = (e->next_src + 1) % OBJCACHE_SOURCES;
	if (e->nsrc < OBJCACHE_SOURCES)
		e->nsrc++;
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
	if (e->in_bid)
		htab_remove(&c->by_bid, &e->by_bid);
	for (struct key *k = e->keys; k; k = k->next)
		htab_remove(&c->by_key, &k->node);
	entry_free(c, e);
}

size_t objcache_file_ids(const struct objcache *c, const struct elfobj *o,
			 struct objcache_file_id *out, size_t max)
{
	const struct entry *e = find_by_obj(c, o);
	size_t n = 0;

	for (const struct key *k = e ? e->keys : NULL; k; k = k->next, n++)
		if (n < max)
			out[n] = (struct objcache_file_id){ k->k.dev, k->k.ino, k->k.size,
							    k->k.mtime_sec, k->k.mtime_nsec };
	return n;
}

struct elfobj *objcache_find(struct objcache *c, const struct objcache_file_id *id)
{
	const struct filekey k = { id->dev, id->ino, id->size, id->mtime_sec, id->mtime_nsec };
	struct entry *e = find_by_key(c, &k);

	if (!e)
		return NULL;
	e->refs++;
	return e->obj;
}

size_t objcache_count(const struct objcache *c)
{
	return c->by_obj.n;
}

void objcache_get_stats(const struct objcache *c, struct objcache_stats *st)
{
	*st = c->st;
}
