// SPDX-License-Identifier: MIT
/*
 * Tests for user/output/outdir.c, gzfile.c and gzbatch.c: the output
 * directory (refused when others could replace files in it), atomic gzip
 * files with the mode asked for, published one by one or in a batch, and
 * --keep removing only what this run wrote.
 *
 * Root-only checks (a full filesystem, a read-only mount) run in a private
 * mount namespace, so nothing they mount outlives the test; without root
 * they print skip lines.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "output/gzbatch.h"
#include "output/gzfile.h"
#include "output/outdir.h"
#include "testlib.h"

static char tmpdir[1024];
static int have_private_mounts;

static void path_join(char *buf, size_t size, const char *a, const char *b)
{
	int n = snprintf(buf, size, "%s/%s", a, b);

	if (n < 0 || (size_t)n >= size)
		abort(); /* test paths are short; never test a cut one */
}

/* Reads a gzip file back with zlib; returns malloc'd bytes, or NULL. */
static unsigned char *gunzip_file(const char *path, size_t *len)
{
	gzFile gz = gzopen(path, "rb");
	size_t cap = 1 << 16, n = 0;
	unsigned char *buf = malloc(cap);
	int r;

	if (!gz || !buf) {
		if (gz)
			gzclose(gz);
		free(buf);
		return NULL;
	}
	gzbuffer(gz, 1 << 16);
	for (;;) {
		if (cap - n < (1 << 16)) {
			cap *= 2;
			buf = realloc(buf, cap);
			if (!buf)
				abort();
		}
		r = gzread(gz, buf + n, (unsigned)(cap - n));
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	/* gzclose_r reports a bad CRC/length trailer as Z_DATA_ERROR. */
	if (r < 0 || gzclose_r(gz) != Z_OK) {
		free(buf);
		return NULL;
	}
	*len = n;
	return buf;
}

static char *read_small(const char *path)
{
	static char buf[4096];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return NULL;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return NULL;
	buf[n] = '\0';
	return buf;
}

static int write_small(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

/*
 * The names in @dir, sorted and joined by ' ' ("" when empty); "." and
 * ".." left out.
 */
static const char *list_dir(const char *dir)
{
	static char out[4096];
	struct dirent **ents;
	int n = scandir(dir, &ents, NULL, alphasort);

	out[0] = '\0';
	if (n < 0)
		return "(unreadable)";
	for (int i = 0; i < n; i++) {
		const char *d = ents[i]->d_name;

		if (strcmp(d, ".") && strcmp(d, "..")) {
			if (out[0])
				strncat(out, " ", sizeof(out) - strlen(out) - 1);
			strncat(out, d, sizeof(out) - strlen(out) - 1);
		}
		free(ents[i]);
	}
	free(ents);
	return out;
}

/* Writes @len bytes in chunks of @chunk, then commits.  0 or -errno. */
static int gz_write_file(int dirfd, const char *name, const void *data,
			 size_t len, size_t chunk, struct errbuf *err)
{
	struct gzfile *f;
	int r = gzfile_create(&f, dirfd, name, err);

	if (r < 0)
		return r;
	for (size_t off = 0; off < len && r == 0; off += chunk)
		r = gzfile_write(f, (const char *)data + off,
				 len - off < chunk ? len - off : chunk);
	if (r < 0) {
		gzfile_abort(f);
		return r;
	}
	return gzfile_commit(f, err);
}

static void fill_random(unsigned char *p, size_t n, uint64_t seed)
{
	for (size_t i = 0; i < n; i++) {
		seed ^= seed << 13;
		seed ^= seed >> 7;
		seed ^= seed << 17;
		p[i] = (unsigned char)(seed >> 24);
	}
}

static void test_open_dir(void)
{
	struct errbuf err = { "" };
	char path[2048], file[2048];
	struct stat st;
	int fd;

	path_join(path, sizeof(path), tmpdir, "a/b//c/");
	fd = outdir_open_fd(path, &err);
	CHECK(fd >= 0 && stat(path, &st) == 0 && S_ISDIR(st.st_mode),
	      "outdir_open_fd: creates nested directories", "fd=%d: %s", fd,
	      err.msg);
	if (fd >= 0) {
		int fl = fcntl(fd, F_GETFD);
		int acc = fcntl(fd, F_GETFL);

		CHECK(fl >= 0 && (fl & FD_CLOEXEC) && (acc & O_DIRECTORY),
		      "outdir_open_fd: O_DIRECTORY|O_CLOEXEC fd", "fd flags %#x fl %#x", fl,
		      acc);
		CHECK_STR(list_dir(path), "",
			  "outdir_open_fd: write probe leaves nothing behind");
		close(fd);
	}
	fd = outdir_open_fd(path, &err);
	CHECK(fd >= 0, "outdir_open_fd: existing directory is fine", "%s",
	      err.msg);
	if (fd >= 0)
		close(fd);

	/* A regular file where a parent directory should be. */
	path_join(file, sizeof(file), tmpdir, "plainfile");
	write_small(file, "x");
	path_join(path, sizeof(path), tmpdir, "plainfile/sub/dir");
	err.msg[0] = '\0';
	fd = outdir_open_fd(path, &err);
	CHECK(fd == -ENOTDIR && strstr(err.msg, path) &&
		      strstr(err.msg, strerror(ENOTDIR)),
	      "outdir_open_fd: parent is a regular file", "fd=%d msg=\"%s\"", fd,
	      err.msg);

	err.msg[0] = '\0';
	fd = outdir_open_fd(file, &err);
	CHECK(fd == -ENOTDIR && strstr(err.msg, file) &&
		      strstr(err.msg, "not a directory"),
	      "outdir_open_fd: path is a regular file", "fd=%d msg=\"%s\"", fd,
	      err.msg);

	err.msg[0] = '\0';
	fd = outdir_open_fd("", &err);
	CHECK(fd == -EINVAL && err.msg[0], "outdir_open_fd: empty path",
	      "fd=%d msg=\"%s\"", fd, err.msg);
}

/*
 * Root passes access(W_OK) on any directory; the probe file must catch a
 * read-only mount.  Without root, a mode 0555 directory does the same.
 */
static void test_open_dir_readonly(void)
{
	struct errbuf err = { "" };
	char path[2048];
	int fd;

	path_join(path, sizeof(path), tmpdir, "ro");
	mkdir(path, 0755);
	if (geteuid() == 0) {
		if (!have_private_mounts ||
		    mount("tmpfs", path, "tmpfs", MS_RDONLY, "size=64k") < 0) {
			T_SKIP("outdir_open_fd: read-only directory is refused",
			       "cannot mount tmpfs: %s", strerror(errno));
			return;
		}
	} else {
		chmod(path, 0555);
	}
	fd = outdir_open_fd(path, &err);
	CHECK(fd < 0 && strstr(err.msg, path) && strstr(err.msg, "not writable"),
	      "outdir_open_fd: read-only directory is refused",
	      "fd=%d msg=\"%s\"", fd, err.msg);
	if (fd >= 0)
		close(fd);
	if (geteuid() == 0)
		umount2(path, MNT_DETACH);
	else
		chmod(path, 0755);
}

/* A directory others could write to, or owned by another user: refused. */
static void test_private_dir(void)
{
	struct errbuf err = { "" };
	char path[2048];
	struct stat st;
	int fd;

	path_join(path, sizeof(path), tmpdir, "world");
	mkdir(path, 0700);
	chmod(path, 0777);
	fd = outdir_open_fd(path, &err);
	CHECK(fd == -EPERM && strstr(err.msg, path) && strstr(err.msg, "sticky"),
	      "outdir_open_fd: writable by others without the sticky bit: refused",
	      "fd=%d msg=\"%s\"", fd, err.msg);
	chmod(path, 0775);
	fd = outdir_open_fd(path, &err);
	CHECK(fd == -EPERM, "outdir_open_fd: writable by the group: refused", "fd=%d", fd);
	chmod(path, 01777);
	fd = outdir_open_fd(path, &err);
	CHECK(fd >= 0, "outdir_open_fd: world-writable with the sticky bit (as /tmp): fine",
	      "fd=%d msg=\"%s\"", fd, err.msg);
	if (fd >= 0)
		close(fd);
	if (geteuid() == 0) {
		path_join(path, sizeof(path), tmpdir, "theirs");
		mkdir(path, 0755);
		if (chown(path, 65534, 65534) == 0) {
			fd = outdir_open_fd(path, &err);
			CHECK(fd == -EPERM && strstr(err.msg, "owned by uid 65534"),
			      "outdir_open_fd: another user's directory: refused",
			      "fd=%d msg=\"%s\"", fd, err.msg);
		}
	} else {
		T_SKIP("outdir_open_fd: another user's directory: refused", "needs root");
	}
	path_join(path, sizeof(path), tmpdir, "new/private");
	fd = outdir_open_fd(path, &err);
	CHECK(fd >= 0 && stat(path, &st) == 0 && (st.st_mode & 07777) == 0700,
	      "outdir_open_fd: directories made for 0600 profiles are 0700", "mode %04o",
	      (unsigned)(st.st_mode & 07777));
	if (fd >= 0)
		close(fd);
}

/* One profile named @name in window @d, through a batch when @batch. */
static int outdir_put(struct outdir *d, const char *name, bool batch)
{
	struct errbuf err = { "" };
	struct gzbatch *b = NULL;
	struct gzfile *f;
	int r = outdir_create(d, name, &f, &err);

	if (r < 0)
		return r;
	r = gzfile_write(f, name, strlen(name));
	if (r < 0) {
		gzfile_abort(f);
		return r;
	}
	if (!batch)
		return gzfile_commit(f, &err);
	if (gzbatch_new(&b, d->fd) || gzbatch_add(b, f, &err))
		return -EIO;
	return gzbatch_publish(b, &err) == 1 ? 0 : -EIO;
}

static bool exists(const char *dir, const char *name)
{
	char path[2048];

	path_join(path, sizeof(path), dir, name);
	return access(path, F_OK) == 0;
}

/* Modes, and --keep: only files this run wrote go, oldest windows first. */
static void test_outdir(void)
{
	static const char planted[] = "20991231T235959Z-evil-1.pb.gz";
	struct errbuf err = { "" };
	struct outdir d;
	char dir[2048], path[2048];
	struct stat st;
	mode_t old;
	int r;

	path_join(dir, sizeof(dir), tmpdir, "keep/out");
	r = outdir_open(&d, dir, 0666, true, &err);
	CHECK(r == -EINVAL && strstr(err.msg, "0666"), "outdir: a mode others may write is refused",
	      "r=%d msg=\"%s\"", r, err.msg);
	r = outdir_open(&d, dir, 0640, true, &err);
	CHECK(r == 0 && stat(dir, &st) == 0 && (st.st_mode & 07777) == 0750,
	      "outdir: directories made for 0640 profiles are 0750", "r=%d mode %04o", r,
	      (unsigned)(st.st_mode & 07777));
	if (r)
		return;
	old = umask(0077);
	outdir_next_window(&d);
	r = outdir_put(&d, "a.pb.gz", false);
	umask(old);
	path_join(path, sizeof(path), dir, "a.pb.gz");
	CHECK(r == 0 && stat(path, &st) == 0 && (st.st_mode & 07777) == 0640,
	      "outdir: profiles have the mode asked for, whatever the umask", "r=%d mode %04o", r,
	      (unsigned)(st.st_mode & 07777));
	/* Planted by someone else, and a window stamped in the future. */
	path_join(path, sizeof(path), dir, planted);
	write_small(path, "planted");
	path_join(path, sizeof(path), dir, "20000101T000000Z-old-1.pb.gz");
	write_small(path, "another's");
	outdir_next_window(&d);
	outdir_put(&d, "b.pb.gz", true);
	outdir_next_window(&d);
	outdir_put(&d, "c.pb.gz", true);
	r = outdir_prune(&d, 2, &err);
	CHECK(r == 1 && !exists(dir, "a.pb.gz") && exists(dir, "b.pb.gz") &&
	      exists(dir, "c.pb.gz") && exists(dir, planted) &&
	      exists(dir, "20000101T000000Z-old-1.pb.gz"),
	      "outdir: --keep 2 removes this run's oldest window only, nothing planted",
	      "r=%d, left: %s", r, list_dir(dir));
	/* b replaced by another file: no longer ours to remove. */
	path_join(path, sizeof(path), tmpdir, "keep/b.other");
	write_small(path, "not ours");
	path_join(dir, sizeof(dir), tmpdir, "keep/out/b.pb.gz");
	rename(path, dir);
	path_join(dir, sizeof(dir), tmpdir, "keep/out");
	outdir_next_window(&d);
	outdir_put(&d, "d.pb.gz", false);
	r = outdir_prune(&d, 2, &err);
	CHECK(r == 0 && exists(dir, "b.pb.gz") && exists(dir, "c.pb.gz") &&
	      exists(dir, "d.pb.gz") && d.nfiles == 2,
	      "outdir: a file replaced since is not removed, nor remembered",
	      "r=%d, left: %s, %zu tracked", r, list_dir(dir), d.nfiles);
	outdir_close(&d);
}

static void test_roundtrip(int dirfd, const char *dir)
{
	const size_t len = 3u << 20;
	unsigned char *data = malloc(len), *back;
	struct errbuf err = { "" };
	char path[2048];
	size_t blen = 0;
	int r;

	if (!data)
		abort();
	/* Half incompressible, half repetitive: both deflate paths. */
	fill_random(data, len / 2, 0x9e3779b97f4a7c15ULL);
	for (size_t i = len / 2; i < len; i++)
		data[i] = (unsigned char)("profile "[i % 8]);

	r = gz_write_file(dirfd, "round.pb.gz", data, len, 100000, &err);
	CHECK(r == 0, "gzfile: commit", "r=%d %s", r, err.msg);
	path_join(path, sizeof(path), dir, "round.pb.gz");
	back = gunzip_file(path, &blen);
	CHECK(back && blen == len && !memcmp(back, data, len),
	      "gzfile: gunzip gives back the input (3 MiB, chunked writes)",
	      "got %zu bytes of %zu", blen, len);
	free(back);
	CHECK_STR(list_dir(dir), "round.pb.gz",
		  "gzfile: no temporary file left after commit");

	/* One big write, bypassing any chunking on our side. */
	r = gz_write_file(dirfd, "round.pb.gz", data, len, len, &err);
	back = gunzip_file(path, &blen);
	CHECK(r == 0 && back && blen == len && !memcmp(back, data, len),
	      "gzfile: one large write; replaces the old file", "r=%d %zu", r,
	      blen);
	free(back);

	/* Empty content is still a valid gzip stream. */
	r = gz_write_file(dirfd, "empty.pb.gz", data, 0, 1, &err);
	path_join(path, sizeof(path), dir, "empty.pb.gz");
	back = gunzip_file(path, &blen);
	CHECK(r == 0 && back && blen == 0, "gzfile: empty file is valid gzip",
	      "r=%d back=%p len=%zu", r, (void *)back, blen);
	free(back);

	/* Sink adapter. */
	{
		struct gzfile *f;

		r = gzfile_create(&f, dirfd, "sink.pb.gz", &err);
		if (r == 0) {
			r = gzfile_sink_write(f, "hello ", 6);
			if (!r)
				r = gzfile_sink_write(f, "sink", 4);
			if (!r)
				r = gzfile_commit(f, &err);
			else
				gzfile_abort(f);
		}
		path_join(path, sizeof(path), dir, "sink.pb.gz");
		back = gunzip_file(path, &blen);
		CHECK(r == 0 && back && blen == 10 && !memcmp(back, "hello sink", 10),
		      "gzfile: gzfile_sink_write", "r=%d", r);
		free(back);
	}

	/* Abort: neither the temporary nor the final name remains. */
	{
		struct gzfile *f;

		r = gzfile_create(&f, dirfd, "aborted.pb.gz", &err);
		if (r == 0) {
			gzfile_write(f, data, 200000);
			gzfile_abort(f);
		}
		CHECK(r == 0 && !strcmp(list_dir(dir),
					"empty.pb.gz round.pb.gz sink.pb.gz"),
		      "gzfile: nothing left after abort", "r=%d dir: %s", r,
		      list_dir(dir));
	}
	free(data);
}

static void test_bad_names(int dirfd)
{
	static const char *const bad[] = { "", "a/b", "/abs", ".hidden", ".",
					   ".." };
	char longname[300];
	struct errbuf err;
	struct gzfile *f;
	int r;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char name[64];

		f = (void *)1;
		err.msg[0] = '\0';
		r = gzfile_create(&f, dirfd, bad[i], &err);
		snprintf(name, sizeof(name), "gzfile: name \"%s\" rejected", bad[i]);
		CHECK(r == -EINVAL && !f && err.msg[0], name, "r=%d msg=%s", r,
		      err.msg);
	}
	r = gzfile_create(&f, dirfd, NULL, &err);
	CHECK(r == -EINVAL, "gzfile: NULL name rejected", "r=%d", r);

	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	r = gzfile_create(&f, dirfd, longname, &err);
	CHECK(r == -ENAMETOOLONG, "gzfile: name longer than NAME_MAX rejected",
	      "r=%d", r);

	/* NAME_MAX exactly: the temporary name must still fit. */
	longname[255] = '\0';
	r = gzfile_create(&f, dirfd, longname, &err);
	if (r == 0) {
		gzfile_write(f, "x", 1);
		r = gzfile_commit(f, &err);
	}
	CHECK(r == 0 && unlinkat(dirfd, longname, 0) == 0,
	      "gzfile: 255-byte name works", "r=%d %s", r, err.msg);
}

/* A symlink at the final name is replaced, its target left alone. */
static void test_symlinks(int dirfd, const char *dir)
{
	char outside[2048], target[2048], dangling[2048], link[2048];
	char tmpname[512], path[2048];
	struct errbuf err = { "" };
	unsigned char *back;
	struct gzfile *f;
	struct stat st;
	size_t blen;
	long pid;
	unsigned cnt = 0;
	const char *s;
	int r;

	path_join(outside, sizeof(outside), tmpdir, "outside");
	mkdir(outside, 0755);
	path_join(target, sizeof(target), outside, "target");
	path_join(dangling, sizeof(dangling), outside, "dangling");
	write_small(target, "ORIGINAL");

	path_join(link, sizeof(link), dir, "final.pb.gz");
	r = symlink(target, link);
	if (r == 0)
		r = gz_write_file(dirfd, "final.pb.gz", "new", 3, 3, &err);
	s = read_small(target);
	CHECK(r == 0 && s && !strcmp(s, "ORIGINAL") && lstat(link, &st) == 0 &&
		      S_ISREG(st.st_mode),
	      "gzfile: symlink at the final name replaced, target untouched",
	      "r=%d target=\"%s\" %s", r, s ? s : "(gone)", err.msg);

	/*
	 * Symlinks at the temporary names: learn the pid.counter scheme from
	 * a live temp file, then plant links at the next two names.  Creating
	 * must skip them (O_EXCL|O_NOFOLLOW), never write through them.
	 */
	r = gzfile_create(&f, dirfd, "victim.pb.gz", &err);
	if (r == 0) {
		const char *names = list_dir(dir);
		const char *t = strstr(names, ".victim.pb.gz.tmp.");

		if (!t || sscanf(t, ".victim.pb.gz.tmp.%ld.%u", &pid, &cnt) != 2)
			r = -1;
		gzfile_abort(f);
	}
	if (r == 0) {
		snprintf(tmpname, sizeof(tmpname), ".victim.pb.gz.tmp.%ld.%u",
			 pid, cnt + 1);
		path_join(path, sizeof(path), dir, tmpname);
		r = symlink(target, path);
		snprintf(tmpname, sizeof(tmpname), ".victim.pb.gz.tmp.%ld.%u",
			 pid, cnt + 2);
		path_join(path, sizeof(path), dir, tmpname);
		if (r == 0)
			r = symlink(dangling, path);
	}
	if (r == 0)
		r = gz_write_file(dirfd, "victim.pb.gz", "payload", 7, 7, &err);
	s = read_small(target);
	path_join(path, sizeof(path), dir, "victim.pb.gz");
	back = gunzip_file(path, &blen);
	CHECK(r == 0 && s && !strcmp(s, "ORIGINAL") && access(dangling, F_OK) < 0 &&
		      back && blen == 7 && !memcmp(back, "payload", 7),
	      "gzfile: symlinks at temporary names not followed",
	      "r=%d target=\"%s\" dangling %s %s", r, s ? s : "(gone)",
	      access(dangling, F_OK) < 0 ? "absent" : "CREATED", err.msg);
	free(back);
	/* The planted links are the attacker's; they are left as they are. */
	CHECK(strstr(list_dir(dir), ".victim.pb.gz.tmp.") != NULL,
	      "gzfile: planted links left in place", "%s", list_dir(dir));
}

/*
 * ENOSPC: a 64 KiB tmpfs, a file that was committed before, then 1 MiB of
 * incompressible data.  The commit must fail with -ENOSPC and leave the
 * directory as it was.
 */
static void test_enospc(void)
{
	const size_t len = 1u << 20;
	struct errbuf err = { "" };
	char dir[2048], keep[2048];
	unsigned char *data, *back;
	size_t blen = 0;
	struct gzfile *f;
	int dirfd, r, wr = 0;

	if (geteuid() != 0) {
		T_SKIP("gzfile: disk full fails with ENOSPC, leaves nothing",
		       "needs root to mount a small tmpfs");
		return;
	}
	path_join(dir, sizeof(dir), tmpdir, "full");
	mkdir(dir, 0755);
	if (!have_private_mounts ||
	    mount("tmpfs", dir, "tmpfs", 0, "size=64k,mode=0755") < 0) {
		T_SKIP("gzfile: disk full fails with ENOSPC, leaves nothing",
		       "cannot mount tmpfs: %s", strerror(errno));
		return;
	}
	dirfd = outdir_open_fd(dir, &err);
	data = malloc(len);
	if (dirfd < 0 || !data) {
		CHECK(0, "gzfile: open the small tmpfs", "%s", err.msg);
		goto out;
	}
	r = gz_write_file(dirfd, "keep.pb.gz", "kept profile", 12, 12, &err);
	CHECK(r == 0, "gzfile: small file fits on the tmpfs", "%s", err.msg);

	fill_random(data, len, 42);
	r = gzfile_create(&f, dirfd, "big.pb.gz", &err);
	if (r == 0) {
		for (size_t off = 0; off < len && wr == 0; off += 4096)
			wr = gzfile_write(f, data + off, 4096);
		/* The error is sticky: more writes report it again. */
		if (wr)
			wr = gzfile_write(f, data, 4096) == wr ? wr : 1;
		err.msg[0] = '\0';
		r = gzfile_commit(f, &err);
	}
	CHECK(wr == -ENOSPC, "gzfile: write reports ENOSPC (sticky)", "wr=%d", wr);
	CHECK(r == -ENOSPC && strstr(err.msg, "big.pb.gz") &&
		      strstr(err.msg, strerror(ENOSPC)),
	      "gzfile: disk full fails with ENOSPC, naming the file",
	      "r=%d msg=\"%s\"", r, err.msg);
	CHECK_STR(list_dir(dir), "keep.pb.gz",
		  "gzfile: disk full leaves no temporary and no final file");
	path_join(keep, sizeof(keep), dir, "keep.pb.gz");
	back = gunzip_file(keep, &blen);
	CHECK(back && blen == 12 && !memcmp(back, "kept profile", 12),
	      "gzfile: disk full leaves earlier files intact", "blen=%zu", blen);
	free(back);

	/* A failure before any write: commit on a full disk. */
	r = gzfile_create(&f, dirfd, "late.pb.gz", &err);
	if (r == 0) {
		/* Fill the rest of the disk with another file first. */
		int fill = openat(dirfd, "filler", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

		while (fill >= 0 && write(fill, data, 4096) > 0)
			;
		if (fill >= 0)
			close(fill);
		gzfile_write(f, data, 65536);
		r = gzfile_commit(f, &err);
		unlinkat(dirfd, "filler", 0);
	}
	CHECK(r == -ENOSPC && !strcmp(list_dir(dir), "keep.pb.gz"),
	      "gzfile: ENOSPC at finish also cleans up", "r=%d dir: %s", r,
	      list_dir(dir));
out:
	free(data);
	if (dirfd >= 0)
		close(dirfd);
	umount2(dir, MNT_DETACH);
}

static int rm_entry(const char *path, const struct stat *sb, int flag,
		    struct FTW *ftw)
{
	return remove(path);
}

int main(void)
{
	const char *t = getenv("TMPDIR");
	struct errbuf err = { "" };
	char dir[2048];
	int dirfd;

	setvbuf(stdout, NULL, _IOLBF, 0);
	T_PLAN(44);
	snprintf(tmpdir, sizeof(tmpdir), "%s/test_output.XXXXXX",
		 t && *t ? t : "/tmp");
	if (!mkdtemp(tmpdir)) {
		printf("not ok - output: mkdtemp %s: %s\n", tmpdir, strerror(errno));
		return 1;
	}
	/*
	 * A private mount namespace: tmpfs mounted by the root-only checks
	 * disappear with this process even if it dies half way.
	 */
	if (geteuid() == 0 && unshare(CLONE_NEWNS) == 0 &&
	    mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) == 0)
		have_private_mounts = 1;

	test_open_dir();
	test_open_dir_readonly();
	test_private_dir();
	test_outdir();

	path_join(dir, sizeof(dir), tmpdir, "out");
	dirfd = outdir_open_fd(dir, &err);
	CHECK(dirfd >= 0, "outdir_open_fd: test directory", "%s", err.msg);
	if (dirfd >= 0) {
		test_roundtrip(dirfd, dir);
		test_bad_names(dirfd);
		test_symlinks(dirfd, dir);
		close(dirfd);
	}
	test_enospc();

	nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	return T_EXIT();
}
