/* SPDX-License-Identifier: MIT */
/*
 * objcache: one parsed elfobj per distinct file on the host, shared by every
 * process that maps it, so that libc is parsed once, not once per process.
 *
 * Objects are found by (device, inode, mtime, size) of the open file and by
 * GNU build ID (two paths to the same bytes, e.g. a container's copy of a
 * library, share one object).  Objects are reference counted and freed when
 * the last process using them is done.
 */
#ifndef CPROF_OBJCACHE_H
#define CPROF_OBJCACHE_H

#include <stddef.h>

#include "elfobj.h"
#include "errbuf.h"

struct objcache;

struct objcache *objcache_new(void);
void objcache_free(struct objcache *c);

/*
 * Returns (with a new reference) the object for the file open at @fd.
 * Takes ownership of @fd: kept by a newly parsed object, closed otherwise.
 */
int objcache_get(struct objcache *c, int fd, struct elfobj **out,
		 struct errbuf *err);

/* Takes a reference on an object already returned by objcache_get(). */
void objcache_ref(struct objcache *c, struct elfobj *o);

/* Drops a reference; the object is freed with its last one. */
void objcache_put(struct objcache *c, struct elfobj *o);

/* Distinct objects held right now. */
size_t objcache_count(const struct objcache *c);

#endif
