// SPDX-License-Identifier: MIT
/*
 * gzfile: gzip files that appear whole or not at all (see gzfile.h).
 *
 * The agent runs as root and the output directory may be writable by
 * others, so every file operation is relative to the directory fd and
 * never follows a symlink: the temporary file is created with
 * O_CREAT|O_EXCL|O_NOFOLLOW (a planted file or link makes it fail, it is
 * never opened), and renameat() replaces whatever is at the final name
 * (a symlink there is replaced itself; its target is not touched).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output/gzfile_internal.h"

/* zlib counts input in uInt: feed it at most this much at a time. */
#define Z_IN_MAX (1u << 30)
/* Attempts at a fresh temporary name before giving up. */
#define TMP_TRIES 64

/*
 * Makes temporary names unique within this process; the pid makes them
 * unique between processes.  Retries cover names left by a crashed run.
 */
static unsigned int tmp_counter;

static unsigned int next_counter(void)
{
	return __atomic_fetch_add(&tmp_counter, 1, __ATOMIC_RELAXED);
}

int gzfile_set_error(struct gzfile *f, int r, const char *op)
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
		return gzfile_set_error(f, r, "write");
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

void gzfile_free(struct gzfile *f)
{
	if (f->fd >= 0)
		close(f->fd);
	if (f->zinit)
		deflateEnd(&f->zs);
	free(f);
}

int gzfile_create_owned(struct gzfile **out, int dirfd, const char *name, unsigned int mode,
			struct gzfile_owner *owner, struct errbuf *err)
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
	f->owner = owner;
	snprintf(f->name, sizeof(f->name), "%s", name);

	/* windowBits 15 + 16: a gzip header and trailer, not raw zlib. */
	if (deflateInit2(&f->zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK) {
		gzfile_free(f);
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
		gzfile_free(f);
		return r;
	}
	*out = f;
	return 0;
}

int gzfile_create(struct gzfile **out, int dirfd, const char *name, struct errbuf *err)
{
	return gzfile_create_owned(out, dirfd, name, GZFILE_MODE, NULL, err);
}

int gzfile_close_tmp(struct gzfile *f)
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
				return gzfile_set_error(f, -EIO, "deflate");
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

int gzfile_finish(struct gzfile *f)
{
	int zr;

	do {
		zr = deflate(&f->zs, Z_FINISH);
		if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR)
			return gzfile_set_error(f, -EIO, "deflate");
		if (!f->zs.avail_out || zr == Z_STREAM_END)
			drain(f);
	} while (zr != Z_STREAM_END && !f->err);
	return f->err;
}

int gzfile_fail(struct gzfile *f, struct errbuf *err)
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
	if (f->err || gzfile_finish(f))
		goto fail;
	/* The data must be on disk before the name points at it. */
	if (fsync(f->fd) < 0) {
		gzfile_set_error(f, -errno, "fsync");
		goto fail;
	}
	if (gzfile_close_tmp(f) < 0) {
		gzfile_set_error(f, -errno, "close");
		goto fail;
	}
	if (renameat(f->dirfd, f->tmp, f->dirfd, f->name) < 0) {
		gzfile_set_error(f, -errno, "rename");
		goto fail;
	}
	gzfile_tell_owner(f->owner, f->name, f->dev, f->ino);
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
		gzfile_free(f);
		return r;
	}
	gzfile_free(f);
	return 0;

fail:
	return gzfile_fail(f, err);
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
	gzfile_free(f);
}
