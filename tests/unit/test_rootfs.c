// SPDX-License-Identifier: MIT
/*
 * Tests for rootfs: what a hostile process can put where we look (an
 * absolute symlink to a host file, "..", a magic link, a FIFO, its pty's
 * slave, a file swapped under its mapping) and what it gets: nothing
 * outside its root, no blocking, no controlling terminal, no other file
 * than the one mapped.  Without openat2 there is no fallback (checked in a
 * child whose seccomp filter makes openat2 ENOSYS).  And the process roots
 * held: shared by processes with one root, bounded.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fs/rootfs.h"
#include "testlib.h"
#include "testutil.h"

static char root[PATH_MAX - 64], host[PATH_MAX];

static void put(const char *path, const char *text)
{
	spit(path, text, strlen(text));
}

/* What the file open at @fd holds (its first line). */
static const char *content(int fd)
{
	static char buf[64];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

static void test_in_root(int rfd)
{
	struct stat st;
	int fd, fl;

	fd = rootfs_open_in(rfd, "/lib/x.so", NULL, &st);
	CHECK(fd >= 0 && !strcmp(content(fd), "inside") && S_ISREG(st.st_mode),
	      "in root: a file by its absolute path", "fd %d", fd);
	if (fd >= 0) {
		fl = fcntl(fd, F_GETFL);
		CHECK((fl & O_ACCMODE) == O_RDONLY && (fl & O_NONBLOCK) &&
		      (fcntl(fd, F_GETFD) & FD_CLOEXEC),
		      "in root: read-only, non-blocking, close-on-exec", "flags %#x", fl);
		close(fd);
	}
	fd = rootfs_open_in(rfd, "lib/abs", NULL, NULL);
	CHECK(fd >= 0 && !strcmp(content(fd), "inside"),
	      "in root: an absolute symlink resolves inside the root, not to the host file",
	      "fd %d: %s", fd, fd >= 0 ? content(fd) : "");
	if (fd >= 0)
		close(fd);
	fd = rootfs_open_in(rfd, "lib/up", NULL, NULL);
	CHECK(fd >= 0 && !strcmp(content(fd), "inside"),
	      "in root: \"..\" past the root stays at the root", "fd %d: %s", fd,
	      fd >= 0 ? content(fd) : "");
	if (fd >= 0)
		close(fd);
	fd = rootfs_open_in(rfd, "lib/abs", &(struct rootfs_want){ .no_symlinks = true }, NULL);
	CHECK(fd == -ELOOP, "in root: no symlinks when told so", "fd %d", fd);
	{
		/* In a root that has /proc, as a process's has: its magic links lead anywhere. */
		int slash = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);

		fd = rootfs_open_in(slash, fmt("proc/self/root%s", host), NULL, NULL);
		CHECK(fd == -ELOOP, "in root: a magic link (/proc/self/root/...) is refused",
		      "fd %d", fd);
		close(slash);
	}
	fd = rootfs_open_in(rfd, "fifo", NULL, NULL);
	CHECK(fd == -EINVAL, "in root: a FIFO is refused, without blocking", "fd %d", fd);
	fd = rootfs_open_in(rfd, "lib", NULL, NULL);
	CHECK(fd == -EINVAL, "in root: a directory is refused", "fd %d", fd);
	fd = rootfs_open_in(rfd, "/", NULL, NULL);
	CHECK(fd == -EINVAL, "in root: the root itself is no file", "fd %d", fd);
	fd = rootfs_open_in(-1, "lib/x.so", NULL, NULL);
	CHECK(fd == -EBADF, "in root: no root, nothing opened", "fd %d", fd);
	fd = rootfs_open_in(0, "lib/x.so", NULL, NULL);
	CHECK(fd == -EBADF, "in root: descriptor 0 (unset options) is no root", "fd %d", fd);
}

static void test_ident(int rfd)
{
	struct stat st;
	struct rootfs_want want;
	int fd;

	if (stat(fmt("%s/lib/x.so", root), &st)) {
		CHECK(false, "ident: fixture", "%s", strerror(errno));
		return;
	}
	want = (struct rootfs_want){ .have_ident = true, .dev_major = major(st.st_dev),
				     .dev_minor = minor(st.st_dev), .ino = st.st_ino };
	fd = rootfs_open_in(rfd, "lib/x.so", &want, NULL);
	CHECK(fd >= 0, "ident: the mapped file is opened", "fd %d", fd);
	if (fd >= 0)
		close(fd);
	want.ino++;
	fd = rootfs_open_in(rfd, "lib/x.so", &want, NULL);
	CHECK(fd == -ESTALE, "ident: another inode is not the mapped file", "fd %d", fd);
	want.ino--;
	want.dev_minor++;
	fd = rootfs_open_in(rfd, "lib/x.so", &want, NULL);
	CHECK(fd == -ESTALE, "ident: another device is not the mapped file", "fd %d", fd);
}

/* A pty's slave at a path: refused, and never our controlling terminal. */
static void test_pty(int rfd)
{
	int master = posix_openpt(O_RDWR | O_NOCTTY), fd;
	pid_t pid;
	int status;
	char *slave;

	if (master < 0 || grantpt(master) || unlockpt(master) || !(slave = ptsname(master))) {
		T_SKIP("pty: a terminal at the path is refused", "no pty: %s", strerror(errno));
		return;
	}
	unlink(fmt("%s/tty", root));
	if (symlink(slave, fmt("%s/tty", root))) {
		T_SKIP("pty: a terminal at the path is refused", "symlink: %s", strerror(errno));
		return;
	}
	/* In a new session, which any terminal opened without O_NOCTTY would join. */
	pid = fork();
	if (pid == 0) {
		int f;

		setsid();
		f = rootfs_open_host(slave);
		_exit(f == -EINVAL && open("/dev/tty", O_RDONLY) < 0 ? 0 : 1);
	}
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "pty: a pty slave is refused and is no controlling terminal", "status %#x", status);
	/* The symlink in a root points at the root's /dev, not ours. */
	fd = rootfs_open_in(rfd, "tty", NULL, NULL);
	CHECK(fd == -ENOENT, "pty: a symlink to /dev/pts/N resolves inside the root", "fd %d", fd);
	close(master);
}

static void test_host(void)
{
	int fd = rootfs_open_host(host);

	CHECK(fd >= 0 && !strcmp(content(fd), "host-only"), "host: a host file is opened",
	      "fd %d", fd);
	if (fd >= 0)
		close(fd);
	fd = rootfs_open_host(fmt("%s/fifo", root));
	CHECK(fd == -EINVAL, "host: a FIFO is refused, without blocking", "fd %d", fd);
	fd = rootfs_open_host("/dev/null");
	CHECK(fd == -EINVAL, "host: a device is refused", "fd %d", fd);
}

/*
 * A child that cannot use openat2 (seccomp: ENOSYS, as kernels before 5.6)
 * gets no file, not an open that would follow the symlink out.
 */
static void test_no_openat2(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat2, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		int rfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);

		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
		    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog))
			_exit(2);
		_exit(rootfs_open_in(rfd, "lib/abs", NULL, NULL) == -ENOSYS ? 0 : 1);
	}
	waitpid(pid, &status, 0);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 2)
		T_SKIP("no openat2: refused, no fallback", "seccomp unavailable");
	else
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "no openat2: refused, no fallback that follows symlinks", "status %#x",
		      status);
}

/* The root of a child that chroot()ed into @root: another root. */
static void test_roots(void)
{
	struct rootfs_roots *roots = NULL;
	struct rootfs_root *a = NULL, *b = NULL, *c = NULL;
	struct rootfs_roots_stats st;
	int self, child_dir = -1, ready[2], go[2], rc;
	pid_t pid = -1;
	char c1;

	self = open("/proc/self", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfs_roots_new(&roots, 1) || self < 0) {
		CHECK(false, "roots: setup", "%s", strerror(errno));
		return;
	}
	rc = rootfs_root_get(roots, self, &a, NULL) | rootfs_root_get(roots, self, &b, NULL);
	rootfs_roots_stats(roots, &st);
	CHECK(rc == 0 && a && a == b && st.held == 1, "roots: one root, one descriptor",
	      "rc %d, %p %p, held %zu", rc, (void *)a, (void *)b, st.held);
	if (geteuid() == 0 && pipe(ready) == 0 && pipe(go) == 0) {
		pid = fork();
		if (pid == 0) {
			if (chroot(root) || chdir("/"))
				_exit(1);
			if (write(ready[1], "x", 1) != 1 || read(go[0], &c1, 1) != 1)
				_exit(1);
			_exit(0);
		}
		close(ready[1]);
		close(go[0]);
		if (read(ready[0], &c1, 1) == 1)
			child_dir = open(fmt("/proc/%d", pid), O_PATH | O_DIRECTORY | O_CLOEXEC);
		rc = rootfs_root_get(roots, child_dir, &c, NULL);
		rootfs_roots_stats(roots, &st);
		CHECK(rc == -EMFILE && !c && st.refused == 1,
		      "roots: beyond the bound, a new root is refused and counted", "rc %d", rc);
		rootfs_root_put(roots, a);
		rootfs_root_put(roots, b);
		rc = rootfs_root_get(roots, child_dir, &c, NULL);
		rc = rc ? rc : rootfs_open_in(rootfs_root_fd(c), "/lib/x.so", NULL, NULL);
		CHECK(rc >= 0 && !strcmp(content(rc), "inside"),
		      "roots: a chroot()ed process's root is its directory", "rc %d", rc);
		if (rc >= 0)
			close(rc);
		if (write(go[1], "x", 1) != 1)
			perror("write");
		close(ready[0]);
		close(go[1]);
		waitpid(pid, NULL, 0);
		/* Held: still usable once the process is gone. */
		rc = c ? rootfs_open_in(rootfs_root_fd(c), "/lib/x.so", NULL, NULL) : -1;
		CHECK(rc >= 0, "roots: a held root outlives its process", "rc %d", rc);
		if (rc >= 0)
			close(rc);
		if (child_dir >= 0)
			close(child_dir);
		rootfs_root_put(roots, c);
		rootfs_roots_stats(roots, &st);
		CHECK(st.held == 0 && st.peak == 1, "roots: released with their last reference",
		      "held %zu, peak %zu", st.held, st.peak);
	} else {
		T_SKIP("roots: another process's root", "needs root to chroot");
		rootfs_root_put(roots, a);
		rootfs_root_put(roots, b);
	}
	rootfs_roots_free(roots);
	close(self);
}

/* rootfs_path_from_leaf(): BPF's components, leaf first, into a path. */
static void test_path_from_leaf(void)
{
	static const struct {
		const char *comps;
		size_t len;
		int rc;
		const char *path;
	} cases[] = {
		{ "as\0bin\0usr", 11, 0, "/usr/bin/as" },
		{ "x.so", 5, 0, "/x.so" },
		{ "..\0lib", 7, -EINVAL, NULL },     /* ".." climbs */
		{ "x\0.\0lib", 8, -EINVAL, NULL },   /* "." */
		{ "x\0\0lib", 7, -EINVAL, NULL },    /* an empty component */
		{ "a/b\0lib", 8, -EINVAL, NULL },    /* a '/' inside one */
		{ "as\0bin", 6, -EINVAL, NULL },     /* the last unterminated */
		{ "", 0, -EINVAL, NULL },             /* none */
		{ "\0", 1, -EINVAL, NULL },
	};
	char out[64], small[8];
	char name[96];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = rootfs_path_from_leaf(cases[i].comps, cases[i].len, out, sizeof(out));

		snprintf(name, sizeof(name), "path from leaf: case %zu (%s)", i,
			 cases[i].path ? cases[i].path : "refused");
		CHECK(rc == cases[i].rc && (rc || !strcmp(out, cases[i].path)), name,
		      "rc %d, \"%s\"", rc, rc ? "" : out);
	}
	CHECK(rootfs_path_from_leaf("as\0bin\0usr", 11, small, sizeof(small)) == -ENAMETOOLONG,
	      "path from leaf: a short buffer is refused", "not refused");
	CHECK(rootfs_path_from_leaf("as\0bin\0usr", 11, out, 12) == 0 && !strcmp(out, "/usr/bin/as"),
	      "path from leaf: an exact buffer is enough", "\"%s\"", out);
}

int main(void)
{
	static char tmpl[PATH_MAX - 128];
	int rfd;

	setvbuf(stdout, NULL, _IOLBF, 0);
	T_PLAN(36);
	if (!temp_dir(tmpl, sizeof(tmpl), "rootfs")) {
		CHECK(false, "rootfs: temp dir", "see above");
		return T_EXIT();
	}
	snprintf(root, sizeof(root), "%s/root", tmpl);
	snprintf(host, sizeof(host), "%s/host-secret", tmpl);
	/* The root: lib/x.so, and links that try to leave it. */
	mkdir(root, 0755);
	mkdir(fmt("%s/lib", root), 0755);
	put(fmt("%s/lib/x.so", root), "inside\n");
	put(host, "host-only\n");
	/* The same absolute path inside the root names the root's copy. */
	sh(fmt("mkdir -p '%s%s' && cp '%s/lib/x.so' '%s%s'", root, tmpl, root, root, host));
	if (symlink(host, fmt("%s/lib/abs", root)) ||
	    symlink("../../../../../../../../lib/x.so", fmt("%s/lib/up", root)) ||
	    mkfifo(fmt("%s/fifo", root), 0600)) {
		CHECK(false, "rootfs: fixtures", "%s", strerror(errno));
		return T_EXIT();
	}
	rfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	test_in_root(rfd);
	test_ident(rfd);
	test_pty(rfd);
	test_host();
	test_no_openat2();
	test_roots();
	test_path_from_leaf();
	close(rfd);
	sh(fmt("rm -rf '%s'", tmpl));
	return T_EXIT();
}
