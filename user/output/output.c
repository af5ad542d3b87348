// SPDX-License-Identifier: MIT
/*
 * output: the output directory and gzip files that appear whole or not at
 * all (see output.h).
 *
 * The agent runs as root and the output directory may be writable by
 * others, so every file operation is relative to the directory fd and
 * never follows a symlink: the temporary file is created with
 * O_CREAT|O_EXCL|O_NOFOLLOW (a planted file or link makes it fail, it is
 * never opened), and renameat() replaces whatever is at the final name
 * (a symlink there is replaced itself; its target is not touched).  A
 * directory where another user could remove or rename our files (writable
 * by others without the sticky bit, or owned by another user) is refused,
 * and only files this run published are ever removed (outdir_prune()).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "util/grow.h"
#include "output/output.h"

/* Compressed bytes collected before a write(). */
#define GZ_OUT_CAP (64 * 1024)
/* zlib counts input in uInt: feed it at most this much at a time. */
#define Z_IN_MAX (1u << 30)
/* Attempts at a fresh temporary name before giving up. */
#define TMP_TRIES 64

/* A file a run published, for outdir_prune(). */
struct outdir_file {
	char *name;
	uint64_t dev, ino;
	unsigned int window;
};

struct gzfile {
	int dirfd; /* borrowed: the caller keeps it open until commit/abort */
	int fd;    /* the temporary file, -1 once closed */
	struct outdir *dir; /* told of the file once published; may be NULL */
	uint64_t dev, ino;  /* of the temporary file, once closed */
	int err;   /* sticky: first error, negative errno */
	const char *err_op; /* what failed, for the commit message */
	bool zinit;
	z_stream zs;
	char name[NAME_MAX + 1];
	char tmp[NAME_MAX + 1];
	unsigned char out[GZ_OUT_CAP];
};

/*
 * Makes temporary names unique within this process; the pid makes them
 * unique between processes.  Retries cover names left by a crashed run.
 */
static unsigned int tmp_counter;

static unsigned int next_counter(void)
{
	return __atomic_fetch_add(&tmp_counter, 1, __ATOMIC_RELAXED);
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

/* Records the first error and what was being done. */
static int gz_fail(struct gzfile *f, int r, const char *op)
{
	if (!f->err) {
		f->err = r;
		f->err_op = op;
	}
	return f->err;
}

/* write() all of it: retries on EINTR and after short writes. */
static int write_all(int fd, const unsigned char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (w == 0)
			return -EIO; /* cannot happen on a file; do not spin */
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Writes the compressed bytes collected so far and empties the buffer. */
static int drain(struct gzfile *f)
{
	size_t n = sizeof(f->out) - f->zs.avail_out;
	int r;

	if (f->err)
		return f->err;
	r = write_all(f->fd, f->out, n);
	if (r < 0)
		return gz_fail(f, r, "write");
	f->zs.next_out = f->out;
	f->zs.avail_out = sizeof(f->out);
	return 0;
}

/* A name is one plain, visible directory entry. */
static int check_name(const char *name, struct errbuf *err)
{
	if (!name || !*name)
		return errf(err, -EINVAL, "output file: empty name");
	if (strchr(name, '/'))
		return errf(err, -EINVAL, "%s: output file name contains '/'",
			    name);
	/* Also rules out "." and "..", and hides nothing among temps. */
	if (name[0] == '.')
		return errf(err, -EINVAL, "%s: output file name starts with '.'",
			    name);
	if (strlen(name) > NAME_MAX)
		return errf(err, -ENAMETOOLONG, "%.64s...: %s", name,
			    strerror(ENAMETOOLONG));
	return 0;
}

static void gz_free(struct gzfile *f)
{
	if (f->fd >= 0)
		close(f->fd);
	if (f->zinit)
		deflateEnd(&f->zs);
	free(f);
}

static int gz_create(struct gzfile **out, int dirfd, const char *name, unsigned int mode,
		     struct outdir *dir, struct errbuf *err)
{
	struct gzfile *f;
	int r;

	if (!out)
		return errf(err, -EINVAL, "gzfile_create: no result pointer");
	*out = NULL;
	r = check_name(name, err);
	if (r < 0)
		return r;
	f = calloc(1, sizeof(*f));
	if (!f)
		return errf(err, -ENOMEM, "%s: %s", name, strerror(ENOMEM));
	f->dirfd = dirfd;
	f->fd = -1;
	f->dir = dir;
	snprintf(f->name, sizeof(f->name), "%s", name);

	/* windowBits 15 + 16: a gzip header and trailer, not raw zlib. */
	if (deflateInit2(&f->zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK) {
		gz_free(f);
		return errf(err, -ENOMEM, "%s: cannot start gzip: %s", name,
			    strerror(ENOMEM));
	}
	f->zinit = true;
	f->zs.next_out = f->out;
	f->zs.avail_out = sizeof(f->out);

	/*
	 * ".<name>.tmp.<pid>.<n>": hidden, so globbing readers skip it, and
	 * never a valid final name (those cannot start with '.').  The name
	 * part is cut so the whole fits in NAME_MAX.
	 */
	for (int i = 0; i < TMP_TRIES; i++) {
		char suffix[48];
		int slen = snprintf(suffix, sizeof(suffix), ".tmp.%ld.%u",
				    (long)getpid(), next_counter());

		snprintf(f->tmp, sizeof(f->tmp), ".%.*s%s",
			 NAME_MAX - 1 - slen, name, suffix);
		f->fd = openat(dirfd, f->tmp,
			       O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
				       O_CLOEXEC,
			       0644);
		if (f->fd >= 0 || errno != EEXIST)
			break;
	}
	/* Exactly @mode, whatever the umask. */
	if (f->fd < 0 || fchmod(f->fd, mode) < 0) {
		r = -errno;
		errf(err, r, "%s: cannot create temporary file %s: %s", name,
		     f->tmp, strerror(-r));
		if (f->fd >= 0)
			unlinkat(dirfd, f->tmp, 0);
		gz_free(f);
		return r;
	}
	*out = f;
	return 0;
}

int gzfile_create(struct gzfile **out, int dirfd, const char *name, struct errbuf *err)
{
	return gz_create(out, dirfd, name, GZFILE_MODE, NULL, err);
}

int outdir_create(struct outdir *d, const char *name, struct gzfile **out, struct errbuf *err)
{
	return gz_create(out, d->fd, name, d->mode, d, err);
}

/* Remembers a published file of @d (when tracking); failing forgets it, never removes it. */
static void outdir_record(struct outdir *d, const char *name, uint64_t dev, uint64_t ino)
{
	char *copy;

	if (!d || !d->track)
		return;
	if (grow((void **)&d->files, &d->cap, d->nfiles, sizeof(*d->files), 64, GROW_NO_MAX))
		return;
	if (!(copy = strdup(name)))
		return;
	d->files[d->nfiles++] = (struct outdir_file){ copy, dev, ino, d->window };
}

/* Closes the temporary file, noting which it was. */
static int close_tmp(struct gzfile *f)
{
	struct stat st;
	int r;

	if (fstat(f->fd, &st) == 0) {
		f->dev = st.st_dev;
		f->ino = st.st_ino;
	}
	r = close(f->fd);
	f->fd = -1;
	return r;
}

int gzfile_write(struct gzfile *f, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	if (!f)
		return -EINVAL;
	while (len && !f->err) {
		size_t n = len < Z_IN_MAX ? len : Z_IN_MAX;

		/* zlib's API takes non-const input; it does not write it. */
		f->zs.next_in = (unsigned char *)p;
		f->zs.avail_in = (uInt)n;
		while (f->zs.avail_in && !f->err) {
			if (deflate(&f->zs, Z_NO_FLUSH) == Z_STREAM_ERROR)
				return gz_fail(f, -EIO, "deflate");
			if (!f->zs.avail_out)
				drain(f);
		}
		p += n;
		len -= n;
	}
	f->zs.next_in = NULL;
	f->zs.avail_in = 0;
	return f->err;
}

int gzfile_sink_write(void *ctx, const void *buf, size_t len)
{
	return gzfile_write(ctx, buf, len);
}

/* Ends the gzip stream and writes its last bytes. */
static int finish_stream(struct gzfile *f)
{
	int zr;

	do {
		zr = deflate(&f->zs, Z_FINISH);
		if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR)
			return gz_fail(f, -EIO, "deflate");
		if (!f->zs.avail_out || zr == Z_STREAM_END)
			drain(f);
	} while (zr != Z_STREAM_END && !f->err);
	return f->err;
}

/* A commit that failed: says which step, and leaves no file behind. */
static int gzfile_fail(struct gzfile *f, struct errbuf *err)
{
	int r = f->err;

	errf(err, r, "%s: %s: %s", f->name, f->err_op, strerror(-r));
	gzfile_abort(f);
	return r;
}

int gzfile_commit(struct gzfile *f, struct errbuf *err)
{
	int r;

	if (!f)
		return errf(err, -EINVAL, "gzfile_commit: no file");
	/* An earlier write failed (ENOSPC...): nothing worth finishing. */
	if (f->err || finish_stream(f))
		goto fail;
	/* The data must be on disk before the name points at it. */
	if (fsync(f->fd) < 0) {
		gz_fail(f, -errno, "fsync");
		goto fail;
	}
	if (close_tmp(f) < 0) {
		gz_fail(f, -errno, "close");
		goto fail;
	}
	if (renameat(f->dirfd, f->tmp, f->dirfd, f->name) < 0) {
		gz_fail(f, -errno, "rename");
		goto fail;
	}
	outdir_record(f->dir, f->name, f->dev, f->ino);
	/*
	 * And the rename itself must reach the disk, or a crash could leave
	 * the directory without the file.  The file is complete and in
	 * place by now, so a failure here is reported but not undone.
	 * EINVAL: the filesystem cannot sync directories; nothing to do.
	 */
	if (fsync(f->dirfd) < 0 && errno != EINVAL) {
		r = -errno;
		errf(err, r, "%s: fsync of its directory: %s", f->name,
		     strerror(-r));
		gz_free(f);
		return r;
	}
	gz_free(f);
	return 0;

fail:
	return gzfile_fail(f, err);
}

struct gzbatch {
	int dirfd;
	size_t n, cap;
	struct {
		char name[NAME_MAX + 1];
		char tmp[NAME_MAX + 1];
		struct outdir *dir;
		uint64_t dev, ino;
	} *files;
};

int gzbatch_new(struct gzbatch **out, int dirfd)
{
	struct gzbatch *b = calloc(1, sizeof(*b));

	*out = b;
	if (!b)
		return -ENOMEM;
	b->dirfd = dirfd;
	return 0;
}

int gzbatch_add(struct gzbatch *b, struct gzfile *f, struct errbuf *err)
{
	if (!f || !b)
		return errf(err, -EINVAL, "gzbatch_add: no file or batch");
	if (f->err || finish_stream(f))
		goto fail;
	if (grow((void **)&b->files, &b->cap, b->n, sizeof(*b->files), 64, GROW_NO_MAX)) {
		gz_fail(f, -ENOMEM, "queueing");
		goto fail;
	}
	if (close_tmp(f) < 0) {
		gz_fail(f, -errno, "close");
		goto fail;
	}
	memcpy(b->files[b->n].name, f->name, sizeof(f->name));
	memcpy(b->files[b->n].tmp, f->tmp, sizeof(f->tmp));
	b->files[b->n].dir = f->dir;
	b->files[b->n].dev = f->dev;
	b->files[b->n].ino = f->ino;
	b->n++;
	gz_free(f);
	return 0;
fail:
	return gzfile_fail(f, err);
}

int gzbatch_publish(struct gzbatch *b, struct errbuf *err)
{
	int ret = 0, published = 0;

	if (!b)
		return 0;
	/* The data must be on disk before the names point at it. */
	if (b->n && syncfs(b->dirfd) < 0) {
		ret = errf(err, -errno, "syncing %zu new profiles: %s", b->n, strerror(errno));
		for (size_t i = 0; i < b->n; i++)
			unlinkat(b->dirfd, b->files[i].tmp, 0);
		goto out;
	}
	for (size_t i = 0; i < b->n; i++) {
		if (renameat(b->dirfd, b->files[i].tmp, b->dirfd, b->files[i].name) < 0) {
			if (!ret)
				ret = errf(err, -errno, "%s: rename: %s", b->files[i].name,
					   strerror(errno));
			unlinkat(b->dirfd, b->files[i].tmp, 0);
			continue;
		}
		outdir_record(b->files[i].dir, b->files[i].name, b->files[i].dev, b->files[i].ino);
		published++;
	}
	/* The renames too; EINVAL: the filesystem cannot sync directories. */
	if (published && fsync(b->dirfd) < 0 && errno != EINVAL && !ret)
		ret = errf(err, -errno, "fsync of the output directory: %s", strerror(errno));
out:
	free(b->files);
	free(b);
	return ret < 0 && !published ? ret : published;
}

void gzfile_abort(struct gzfile *f)
{
	if (!f)
		return;
	if (f->fd >= 0) {
		close(f->fd);
		f->fd = -1;
	}
	/* Only our temporary name: the final name is never touched here. */
	unlinkat(f->dirfd, f->tmp, 0);
	gz_free(f);
}

/* --- the output directory of a run --------------------------------------- */

int outdir_open(struct outdir *d, const char *path, unsigned int mode, bool track,
		struct errbuf *err)
{
	int fd;

	memset(d, 0, sizeof(*d));
	d->fd = -1;
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
