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

#include <stdbool.h>
#include <stddef.h>

#include "util/errbuf.h"

/*
 * Profiles hold other users' function names, paths and command names:
 * readable by their owner only, unless told otherwise.
 */
#define GZFILE_MODE 0600
/* The bits a profile's mode may have: no execution, no writing by others. */
#define OUTDIR_MODE_MASK 0644

/*
 * Creates @path if missing, checks it is a directory we can write and that
 * no other user can (owned by us or root, and not writable by group or
 * others unless sticky, as /tmp: there nobody else can remove or replace
 * our files), and returns an O_DIRECTORY fd for it, or a negative errno
 * with a message.
 */
int outdir_open_fd(const char *path, struct errbuf *err);

struct gzfile;

/*
 * The output directory of a run.  Its profiles are created with @mode;
 * missing directories with the same access plus search (0600: 0700).
 * With @track, the files published in it are remembered by window, so that
 * outdir_prune() removes files this run wrote and nothing else.
 */
struct outdir_file;

struct outdir {
	int fd;
	unsigned int mode;
	bool track;
	unsigned int window;        /* stamp of the files published now */
	struct outdir_file *files;  /* tracked, in publishing order */
	size_t nfiles, cap;
};

int outdir_open(struct outdir *d, const char *path, unsigned int mode, bool track,
		struct errbuf *err);
void outdir_close(struct outdir *d);

/* Files published from now on belong to a new window. */
void outdir_next_window(struct outdir *d);

/* Starts writing @name in @d (see gzfile_create()). */
int outdir_create(struct outdir *d, const char *name, struct gzfile **out,
		  struct errbuf *err);

/*
 * Removes the files this run published in all but its @keep newest windows
 * (each checked, before it goes, to be still the file we wrote).  Returns
 * the number removed or a negative errno.
 */
int outdir_prune(struct outdir *d, unsigned int keep, struct errbuf *err);

/* Starts writing @name (no '/') inside @dirfd, under a temporary name (GZFILE_MODE). */
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
int gzbatch_add(struct gzbatch *b, struct gzfile *f, struct errbuf *err);

/*
 * Makes every queued file appear under its final name.  If they cannot be
 * made durable, none appears and all are removed.  Returns the number of
 * files published or a negative errno (with the first failure in @err).
 * Frees @b.
 */
int gzbatch_publish(struct gzbatch *b, struct errbuf *err);

/* Abandons the file: removes the temporary name and frees @f. */
void gzfile_abort(struct gzfile *f);

/* A pprof_sink write callback for a struct gzfile (ctx = the gzfile). */
int gzfile_sink_write(void *ctx, const void *buf, size_t len);

#endif
