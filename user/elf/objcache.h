/* SPDX-License-Identifier: MIT */
/*
 * objcache: one parsed elfobj per distinct file on the host, shared by every
 * process that maps it, so that libc is parsed once, not once per process.
 *
 * Identity is the file's: (device, inode, size, mtime) of the open
 * descriptor.  A build ID is only a label (anyone can stamp any build ID on
 * a binary), so two files with the same build ID share an object only when
 * their bytes are the same (a container's copy of a library) and the one
 * read from can't be changed by an unprivileged user: owned by root and not
 * writable by group or others.
 *
 * Objects are reference counted and freed when the last process using them
 * is done.  Their descriptors may be bounded (objcache_set_lru()): the least
 * recently used are closed and reopened, when next read, through the
 * sources recorded for them (the mapping's /proc/PID/map_files entry, or
 * its path inside the process's root), checked to be the same file.
 */
#ifndef CPROF_OBJCACHE_H
#define CPROF_OBJCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "elf/elfobj.h"
#include "util/errbuf.h"
#include "fs/fdlru.h"
#include "fs/rootfs.h"

/* Larger files are never compared byte for byte: their copies are not shared. */
#define OBJCACHE_COMPARE_MAX (256ull << 20)
/* Where to reopen an object: the latest few of its mappings seen. */
#define OBJCACHE_SOURCES 4

struct objcache;

struct objcache *objcache_new(void);
void objcache_free(struct objcache *c);

/*
 * Bounds the descriptors objects hold with @lru (shared with other users of
 * descriptors); @roots is where the roots given in sources are released.
 * Without this, every object keeps its file open.
 */
void objcache_set_lru(struct objcache *c, struct fdlru *lru, struct rootfs_roots *roots);

/*
 * Returns (with a new reference) the object for the file open at @fd.
 * Takes ownership of @fd: kept by a newly parsed object, closed otherwise.
 */
int objcache_get(struct objcache *c, int fd, struct elfobj **out,
		 struct errbuf *err);

/* Where the file of an object can be opened again. */
struct objcache_source {
	uint32_t pid;          /* /proc/PID/map_files/START-END; 0: none */
	uint64_t start, end;
	struct rootfs_root *root; /* with @path: the path inside this root (a reference is taken) */
	const char *path;      /* NULL: none (a deleted file) */
};

/* Records where @o was found (the latest OBJCACHE_SOURCES are kept). */
void objcache_add_source(struct objcache *c, struct elfobj *o, const struct objcache_source *src);

/* Takes a reference on an object already returned by objcache_get(). */
void objcache_ref(struct objcache *c, struct elfobj *o);

/* Drops a reference; the object is freed with its last one. */
void objcache_put(struct objcache *c, struct elfobj *o);

/* A file's identity, as fstat gives it: one @o was found as. */
struct objcache_file_id {
	uint64_t dev, ino, size;
	int64_t mtime_sec, mtime_nsec;
};

/*
 * The identities of the files @o was found as (the first, then copies of
 * the same bytes), up to @max into @out; returns how many there are.
 */
size_t objcache_file_ids(const struct objcache *c, const struct elfobj *o,
			 struct objcache_file_id *out, size_t max);

/*
 * The object held for the file of identity @id, with a new reference;
 * NULL when none is.  Opens nothing: for a file the process that mapped
 * it can no longer show (it exited), known only by its identity.
 */
struct elfobj *objcache_find(struct objcache *c, const struct objcache_file_id *id);

/* Distinct objects held right now. */
size_t objcache_count(const struct objcache *c);

struct objcache_stats {
	size_t compared;      /* files compared with another of the same build ID */
	size_t shared;        /* ... found identical and shared */
	size_t reopened;      /* files reopened after their descriptor was closed */
	size_t reopen_failed; /* ... that could not be */
};

void objcache_get_stats(const struct objcache *c, struct objcache_stats *st);

#endif
