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
 * (a symlink there is replaced itself; its target is not touched).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "output.h"

/* Compressed bytes collected before a write(). */
#define GZ_OUT_CAP (64 * 1024)
/* zlib counts input in uInt: feed it at most this much at a time. */
#define Z_IN_MAX (1u << 30)
/* Attempts at a fresh temporary name before giving up. */
#define TMP_TRIES 64

struct gzfile {
	int dirfd; /* borrowed: the caller keeps it open until commit/abort */
	int fd;    /* the temporary file, -1 once closed */
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

/* Creates each missing component of @path (mkdir -p). */
static int mkdir_p(const char *path, struct errbuf *err)
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
		if (mkdir(buf, 0755) < 0 && errno != EEXIST) {
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

int output_open_dir(const char *path, struct errbuf *err)
{
	int fd, r;

	if (!path || !*path)
		return errf(err, -EINVAL, "output directory: empty path");
	r = mkdir_p(path, err);
	if (r < 0)
		return r;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		return errf(err, r, "%s: %s", path,
			    r == -ENOTDIR ? "not a directory" : strerror(-r));
	}
	r = probe_writable(fd, path, err);
	if (r < 0) {
		close(fd);
		return r;
	}
	return fd;
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

int gzfile_create(struct gzfile **out, int dirfd, const char *name,
		  struct errbuf *err)
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
	if (f->fd < 0) {
		r = -errno;
		errf(err, r, "%s: cannot create temporary file %s: %s", name,
		     f->tmp, strerror(-r));
		gz_free(f);
		return r;
	}
	*out = f;
	return 0;
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
	r = close(f->fd);
	f->fd = -1;
	if (r < 0) {
		gz_fail(f, -errno, "close");
		goto fail;
	}
	if (renameat(f->dirfd, f->tmp, f->dirfd, f->name) < 0) {
		gz_fail(f, -errno, "rename");
		goto fail;
	}
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
	r = f->err;
	errf(err, r, "%s: %s: %s", f->name, f->err_op, strerror(-r));
	gzfile_abort(f);
	return r;
}

struct gzbatch {
	int dirfd;
	size_t n, cap;
	struct {
		char name[NAME_MAX + 1];
		char tmp[NAME_MAX + 1];
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

int gzfile_commit_batch(struct gzfile *f, struct gzbatch *b, struct errbuf *err)
{
	int r;

	if (!f || !b)
		return errf(err, -EINVAL, "gzfile_commit_batch: no file or batch");
	if (f->err || finish_stream(f))
		goto fail;
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 64;
		void *files = realloc(b->files, cap * sizeof(*b->files));

		if (!files) {
			gz_fail(f, -ENOMEM, "queueing");
			goto fail;
		}
		b->files = files;
		b->cap = cap;
	}
	r = close(f->fd);
	f->fd = -1;
	if (r < 0) {
		gz_fail(f, -errno, "close");
		goto fail;
	}
	memcpy(b->files[b->n].name, f->name, sizeof(f->name));
	memcpy(b->files[b->n].tmp, f->tmp, sizeof(f->tmp));
	b->n++;
	gz_free(f);
	return 0;
fail:
	r = f->err;
	errf(err, r, "%s: %s: %s", f->name, f->err_op, strerror(-r));
	gzfile_abort(f);
	return r;
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

/* "20261122T031500Z-...pb.gz": the stamp, or false for any other name. */
static bool window_stamp_of(const char *name, char stamp[17])
{
	size_t len = strlen(name);

	if (len < 17 + 6 || strcmp(name + len - 6, ".pb.gz") || name[8] != 'T' ||
	    name[15] != 'Z' || name[16] != '-')
		return false;
	for (int i = 0; i < 15; i++)
		if (i != 8 && (name[i] < '0' || name[i] > '9'))
			return false;
	memcpy(stamp, name, 16);
	stamp[16] = '\0';
	return true;
}

static int cmp_stamp(const void *a, const void *b)
{
	return strcmp(a, b);
}

int output_prune_windows(int dirfd, unsigned int keep, struct errbuf *err)
{
	char (*stamps)[17] = NULL, stamp[17];
	size_t n = 0, cap = 0, distinct = 0;
	struct dirent *de;
	int removed = 0, fd;
	DIR *d;

	fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || !(d = fdopendir(fd))) {
		int e = errno;

		if (fd >= 0)
			close(fd);
		return errf(err, -e, "listing the output directory: %s", strerror(e));
	}
	while ((de = readdir(d))) {
		if (!window_stamp_of(de->d_name, stamp))
			continue;
		if (n == cap) {
			size_t c = cap ? cap * 2 : 64;
			char(*s)[17] = realloc(stamps, c * sizeof(*s));

			if (!s) {
				closedir(d);
				free(stamps);
				return errf(err, -ENOMEM, "out of memory");
			}
			stamps = s;
			cap = c;
		}
		memcpy(stamps[n++], stamp, sizeof(stamp));
	}
	qsort(stamps, n, sizeof(*stamps), cmp_stamp);
	/* the oldest stamp still kept: the keep-th distinct one from the end */
	for (size_t i = n; i-- > 0;) {
		if (i + 1 < n && !strcmp(stamps[i], stamps[i + 1]))
			continue;
		if (++distinct == keep) {
			memcpy(stamp, stamps[i], sizeof(stamp));
			break;
		}
	}
	free(stamps);
	if (distinct < keep || keep == 0) {
		closedir(d);
		return 0;
	}
	rewinddir(d);
	while ((de = readdir(d))) {
		char s2[17];

		if (window_stamp_of(de->d_name, s2) && strcmp(s2, stamp) < 0 &&
		    unlinkat(dirfd, de->d_name, 0) == 0)
			removed++;
	}
	closedir(d);
	return removed;
}
