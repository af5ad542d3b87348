/* SPDX-License-Identifier: MIT */
/*
 * gzfile_internal: what gzbatch.c needs of a gzfile to queue it finished
 * and closed under its temporary name; not for other modules.
 */
#ifndef CPROF_GZFILE_INTERNAL_H
#define CPROF_GZFILE_INTERNAL_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <zlib.h>

#include "output/gzfile.h"

/* Compressed bytes collected before a write(). */
#define GZ_OUT_CAP (64 * 1024)

struct gzfile {
	int dirfd; /* borrowed: the caller keeps it open until commit/abort */
	int fd;    /* the temporary file, -1 once closed */
	struct gzfile_owner *owner; /* told of the file once published; may be NULL */
	uint64_t dev, ino;  /* of the temporary file, once closed */
	int err;   /* sticky: first error, negative errno */
	const char *err_op; /* what failed, for the commit message */
	bool zinit;
	z_stream zs;
	char name[NAME_MAX + 1];
	char tmp[NAME_MAX + 1];
	unsigned char out[GZ_OUT_CAP];
};

/* Records the first error and what was being done; returns the first. */
int gzfile_set_error(struct gzfile *f, int r, const char *op);

/* Ends the gzip stream and writes its last bytes. */
int gzfile_finish(struct gzfile *f);

/* Closes the temporary file, noting which it was. */
int gzfile_close_tmp(struct gzfile *f);

/* A commit that failed: says which step, and leaves no file behind. */
int gzfile_fail(struct gzfile *f, struct errbuf *err);

/* Frees @f, closing what is open; removes nothing. */
void gzfile_free(struct gzfile *f);

/* Tells @owner, if any, that @name is published. */
static inline void gzfile_tell_owner(struct gzfile_owner *owner, const char *name, uint64_t dev,
				     uint64_t ino)
{
	if (owner && owner->published)
		owner->published(owner, name, dev, ino);
}

#endif
