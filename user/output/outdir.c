// SPDX-License-Identifier: MIT
/*
 * outdir: the output directory of a run (see outdir.h).
 *
 * The agent runs as root and the output directory may be writable by
 * others: every file in it is made relative to its fd, never following a
 * symlink (gzfile.c), and a file is removed only if it is still the one
 * this run published (same device and inode).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/grow.h"
#include "output/outdir.h"

/* Attempts at a fresh probe name before giving up. */
#define TMP_TRIES 64

/* A file a run published, for outdir_prune(). */
struct outdir_file {
	char *name;
	uint64_t dev, ino;
	unsigned int window;
};

/*
 * Makes probe names unique within this process; the pid makes them
 * unique between processes.  Retries cover names left by a crashed run.
 */
static unsigned int probe_counter;

static unsigned int next_counter(void)
{
	return __atomic_fetch_add(&probe_counter, 1, __ATOMIC_RELAXED);
}

/* Creates each missing component of @path (mkdir -p) with @mode. */
static int mkdir_p(const char *path, unsigned int mode, struct errbuf *err)
{
	char buf[PATH_MAX];
	size_t len = strlen(path);
	struct stat st;

	if (len >= sizeof(buf))
		return errf(err, -ENAMETOOLONG, "%s: %s", path,
			    strerror(ENAMETOOLONG));
	memcpy(buf, path, len + 1);
	/* Each prefix that ends just before a '/', then the whole path. */
	for (size_t i = 1; i <= len; i++) {
		char c = buf[i];
		int r;

		if ((i < len && c != '/') || buf[i - 1] == '/')
			continue;
		buf[i] = '\0';
		if (mkdir(buf, mode) < 0 && errno != EEXIST) {
			r = -errno;
			/* Not ours to create, but already there: fine. */
			if (stat(buf, &st) < 0 || !S_ISDIR(st.st_mode))
				return errf(err, r,
					    "%s: cannot create directory %s: %s",
					    path, buf, strerror(-r));
		}
		buf[i] = c;
	}
	return 0;
}

/*
 * access(W_OK) says yes to root on any directory, read-only mounts aside,
 * and says nothing of ACLs or LSMs: the only reliable test is to create a
 * file, the way the real files will be created.
 */
static int probe_writable(int dirfd, const char *path, struct errbuf *err)
{
	char probe[64];
	int fd = -1, r = 0;

	for (int i = 0; i < TMP_TRIES; i++) {
		snprintf(probe, sizeof(probe), ".cprof-probe.%ld.%u",
			 (long)getpid(), next_counter());
		fd = openat(dirfd, probe,
			    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    0600);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	if (fd < 0) {
		r = -errno;
		return errf(err, r, "%s: directory is not writable: %s", path,
			    strerror(-r));
	}
	close(fd);
	if (unlinkat(dirfd, probe, 0) < 0) {
		r = -errno;
		return errf(err, r, "%s/%s: cannot remove: %s", path, probe,
			    strerror(-r));
	}
	return 0;
}

/* Another user could remove, rename or replace files in the directory at @fd. */
static int check_private(int fd, const char *path, struct errbuf *err)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return errf(err, -errno, "%s: %s", path, strerror(errno));
	if (st.st_uid != geteuid() && st.st_uid != 0)
		return errf(err, -EPERM,
			    "%s: owned by uid %u, who could replace the profiles: choose another"
			    " output directory", path, (unsigned)st.st_uid);
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))
		return errf(err, -EPERM,
			    "%s: writable by other users without the sticky bit (mode %04o): they"
			    " could replace the profiles; chmod o-w,g-w or +t, or choose another",
			    path, (unsigned)(st.st_mode & 07777));
	return 0;
}

/* The mode of missing directories for files of @file_mode: search where read. */
static unsigned int dir_mode_of(unsigned int file_mode)
{
	return file_mode | (file_mode & 0444) >> 2 | 0700;
}

static int open_dir(const char *path, unsigned int dir_mode, struct errbuf *err)
{
	int fd, r;

	if (!path || !*path)
		return errf(err, -EINVAL, "output directory: empty path");
	r = mkdir_p(path, dir_mode, err);
	if (r < 0)
		return r;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		return errf(err, r, "%s: %s", path,
			    r == -ENOTDIR ? "not a directory" : strerror(-r));
	}
	r = check_private(fd, path, err);
	if (r == 0)
		r = probe_writable(fd, path, err);
	if (r < 0) {
		close(fd);
		return r;
	}
	return fd;
}

int outdir_open_fd(const char *path, struct errbuf *err)
{
	return open_dir(path, dir_mode_of(GZFILE_MODE), err);
}

/* Remembers a file published in @owner's outdir (when tracking); failing forgets it. */
static void outdir_published(struct gzfile_owner *owner, const char *name, uint64_t dev,
			     uint64_t ino)
{
	struct outdir *d = (struct outdir *)((char *)owner - offsetof(struct outdir, owner));
	char *copy;

	if (!d->track)
		return;
	if (grow((void **)&d->files, &d->cap, d->nfiles, sizeof(*d->files), 64, GROW_NO_MAX))
		return;
	if (!(copy = strdup(name)))
		return;
	d->files[d->nfiles++] = (struct outdir_file){ copy, dev, ino, d->window };
}

int outdir_create(struct outdir *d, const char *name, struct gzfile **out, struct errbuf *err)
{
	return gzfile_create_owned(out, d->fd, name, d->mode, &d->owner, err);
}

int outdir_open(struct outdir *d, const char *path, unsigned int mode, bool track,
		struct errbuf *err)
{
	int fd;

	memset(d, 0, sizeof(*d));
	d->fd = -1;
	d->owner.published = outdir_published;
	if (mode & ~OUTDIR_MODE_MASK)
		return errf(err, -EINVAL, "file mode %04o: only read by others and read-write by"
			    " the owner are allowed (at most %04o)", mode, OUTDIR_MODE_MASK);
	fd = open_dir(path, dir_mode_of(mode), err);
	if (fd < 0)
		return fd;
	d->fd = fd;
	d->mode = mode;
	d->track = track;
	return 0;
}

void outdir_close(struct outdir *d)
{
	for (size_t i = 0; i < d->nfiles; i++)
		free(d->files[i].name);
	free(d->files);
	if (d->fd >= 0)
		close(d->fd);
	memset(d, 0, sizeof(*d));
	d->fd = -1;
}

void outdir_next_window(struct outdir *d)
{
	d->window++;
}

int outdir_prune(struct outdir *d, unsigned int keep, struct errbuf *err)
{
	unsigned int oldest_kept;
	size_t w = 0;
	int removed = 0, ret = 0;

	if (!keep || d->window < keep)
		return 0;
	oldest_kept = d->window + 1 - keep;
	for (size_t i = 0; i < d->nfiles; i++) {
		struct outdir_file *f = &d->files[i];
		struct stat st;

		if (f->window >= oldest_kept) {
			d->files[w++] = *f;
			continue;
		}
		/* Still the file we wrote?  Anything else there is not ours to remove. */
		if (fstatat(d->fd, f->name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    (uint64_t)st.st_dev == f->dev && (uint64_t)st.st_ino == f->ino) {
			if (unlinkat(d->fd, f->name, 0) == 0)
				removed++;
			else if (!ret)
				ret = errf(err, -errno, "%s: %s", f->name, strerror(errno));
		}
		free(f->name);
	}
	d->nfiles = w;
	return ret ? ret : removed;
}
