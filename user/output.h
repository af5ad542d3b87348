/* SPDX-License-Identifier: MIT */
/*
 * output: gzip-compressed files that appear whole or not at all.
 *
 * A file is written under a temporary name inside the output directory
 * (opened with openat + O_CREAT|O_EXCL|O_NOFOLLOW relative to a directory
 * fd, so a symlink planted there is never followed), compressed on the fly,
 * fsync'd, and renamed to its final name.  Any error (ENOSPC mid-write,
 * EIO on fsync) unlinks the temporary file and leaves the other files as
 * they were: a reader never sees a truncated .pb.gz.
 */
#ifndef CPROF_OUTPUT_H
#define CPROF_OUTPUT_H

#include <stddef.h>

#include "errbuf.h"

/*
 * Creates @path (mode 0755) if missing, checks it is a writable directory,
 * and returns an O_DIRECTORY fd for it, or a negative errno with a message.
 */
int output_open_dir(const char *path, struct errbuf *err);

struct gzfile;

/* Starts writing @name (no '/') inside @dirfd, under a temporary name. */
int gzfile_create(struct gzfile **out, int dirfd, const char *name,
		  struct errbuf *err);

/* Compresses and writes @len bytes.  Returns 0 or a negative errno. */
int gzfile_write(struct gzfile *f, const void *buf, size_t len);

/*
 * Finishes the gzip stream, fsyncs, and renames to the final name.
 * On any failure the temporary file is removed.  Frees @f either way.
 */
int gzfile_commit(struct gzfile *f, struct errbuf *err);

/*
 * Many files at once (a window of a whole host: hundreds of processes):
 * an fsync per file would cost seconds, so a batch finishes and closes each
 * file under its temporary name, then makes them all durable with one
 * syncfs() of the filesystem, renames them, and syncs the directory once.
 */
struct gzbatch;

int gzbatch_new(struct gzbatch **out, int dirfd);

/*
 * Finishes the gzip stream and queues @f for gzbatch_publish().  On failure
 * the temporary file is removed.  Frees @f either way.
 */
int gzfile_commit_batch(struct gzfile *f, struct gzbatch *b, struct errbuf *err);

/*
 * Makes every queued file appear under its final name.  If they cannot be
 * made durable, none appears and all are removed.  Returns the number of
 * files published or a negative errno (with the first failure in @err).
 * Frees @b.
 */
int gzbatch_publish(struct gzbatch *b, struct errbuf *err);

/* Abandons the file: removes the temporary name and frees @f. */
void gzfile_abort(struct gzfile *f);

/*
 * Continuous mode: files of a window start with its stamp,
 * "YYYYmmddTHHMMSSZ-".  Removes the files of all but the @keep newest
 * windows found in @dirfd (nothing else is touched).  Returns the number of
 * files removed or a negative errno.
 */
int output_prune_windows(int dirfd, unsigned int keep, struct errbuf *err);

/* A pprof_sink write callback for a struct gzfile (ctx = the gzfile). */
int gzfile_sink_write(void *ctx, const void *buf, size_t len);

#endif
