/* SPDX-License-Identifier: MIT */
/*
 * gzfile: a gzip-compressed file that appears whole or not at all.
 *
 * A file is written under a temporary name inside the output directory
 * (opened with openat + O_CREAT|O_EXCL|O_NOFOLLOW relative to a directory
 * fd, so a symlink planted there is never followed), compressed on the fly,
 * fsync'd, and renamed to its final name.  Any error (ENOSPC mid-write,
 * EIO on fsync) unlinks the temporary file and leaves the other files as
 * they were: a reader never sees a truncated .pb.gz.
 */
#ifndef CPROF_GZFILE_H
#define CPROF_GZFILE_H

#include <stddef.h>
#include <stdint.h>

#include "util/errbuf.h"

/*
 * Profiles hold other users' function names, paths and command names:
 * readable by their owner only, unless told otherwise.
 */
#define GZFILE_MODE 0600

struct gzfile;

/*
 * Told of each file once it is under its final name, with the device and
 * inode it was written as: the output directory keeps the files its run
 * published, to remove those and nothing else (outdir.h).
 */
struct gzfile_owner {
	void (*published)(struct gzfile_owner *owner, const char *name, uint64_t dev,
			  uint64_t ino);
};

/* Starts writing @name (no '/') inside @dirfd, under a temporary name (GZFILE_MODE). */
int gzfile_create(struct gzfile **out, int dirfd, const char *name,
		  struct errbuf *err);

/* The same with the file's @mode, and @owner (may be NULL) told once it is published. */
int gzfile_create_owned(struct gzfile **out, int dirfd, const char *name, unsigned int mode,
			struct gzfile_owner *owner, struct errbuf *err);

/* Compresses and writes @len bytes.  Returns 0 or a negative errno. */
int gzfile_write(struct gzfile *f, const void *buf, size_t len);

/*
 * Finishes the gzip stream, fsyncs, and renames to the final name.
 * On any failure the temporary file is removed.  Frees @f either way.
 */
int gzfile_commit(struct gzfile *f, struct errbuf *err);

/* Abandons the file: removes the temporary name and frees @f. */
void gzfile_abort(struct gzfile *f);

/* A pprof_sink write callback for a struct gzfile (ctx = the gzfile). */
int gzfile_sink_write(void *ctx, const void *buf, size_t len);

#endif
