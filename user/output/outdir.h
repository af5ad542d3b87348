/* SPDX-License-Identifier: MIT */
/*
 * outdir: the output directory of a run, which no other user can change,
 * and the files the run published in it.
 *
 * A directory where another user could remove or rename our files
 * (writable by others without the sticky bit, or owned by another user)
 * is refused, and only files this run published are ever removed
 * (outdir_prune()).  Its files are gzfiles (gzfile.h).
 */
#ifndef CPROF_OUTDIR_H
#define CPROF_OUTDIR_H

#include <stdbool.h>
#include <stddef.h>

#include "util/errbuf.h"
#include "output/gzfile.h"

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
	struct gzfile_owner owner;  /* told by its files as they are published */
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

#endif
