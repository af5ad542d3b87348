// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fs/rootfs.h"

#define OPEN_FLAGS (O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)

bool rootfs_ident_matches(const struct rootfs_want *want, const struct stat *st, int fd)
{
	struct statfs sfs;

	if (!want || !want->have_ident)
		return true;
	if ((uint64_t)st->st_ino != want->ino)
		return false;
	if (major(st->st_dev) == want->dev_major && minor(st->st_dev) == want->dev_minor)
		return true;
	/*
	 * btrfs gives each subvolume its own st_dev while maps shows the
	 * filesystem's: there the inode alone has to do.
	 */
	return fstatfs(fd, &sfs) == 0 && sfs.f_type == BTRFS_SUPER_MAGIC;
}

/*
 * Takes the O_PATH descriptor @pfd: when it is a regular file as wanted,
 * opens that very file for reading (through /proc/self/fd, which reopens
 * the inode @pfd holds, not a path that could have changed).
 */
static int open_checked(int pfd, const struct rootfs_want *want, struct stat *out)
{
	char self[64];
	struct stat st;
	int fd;

	if (pfd < 0)
		return -errno;
	if (fstat(pfd, &st)) {
		fd = -errno;
	} else if (!S_ISREG(st.st_mode)) {
		fd = -EINVAL;
	} else if (!rootfs_ident_matches(want, &st, pfd)) {
		fd = -ESTALE;
	} else {
		snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
		fd = open(self, OPEN_FLAGS);
		if (fd < 0)
			fd = -errno;
		else if (out)
			*out = st;
	}
	close(pfd);
	return fd;
}

int rootfs_open_in(int root_fd, const char *path, const struct rootfs_want *want,
		   struct stat *st)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};

	if (root_fd <= 0) /* 0: unset options (see elfobj_debug_opts), never a root */
		return -EBADF;
	if (want && want->no_symlinks)
		how.resolve |= RESOLVE_NO_SYMLINKS;
	while (*path == '/')
		path++;
	if (!*path)
		return -EINVAL; /* the root itself is no file */
	/* No openat2 (< 5.6): nothing else keeps symlinks inside the root. */
	return open_checked((int)syscall(SYS_openat2, root_fd, path, &how, sizeof(how)), want,
			    st);
}

int rootfs_openat(int root_fd, const char *path)
{
	return rootfs_open_in(root_fd, path, NULL, NULL);
}

int rootfs_open_magic(const char *path, const struct rootfs_want *want, struct stat *st)
{
	return open_checked(open(path, O_PATH | O_CLOEXEC), want, st);
}

int rootfs_open_host(const char *path)
{
	return open_checked(open(path, O_PATH | O_CLOEXEC), NULL, NULL);
}

FILE *rootfs_fopen_host(const char *path)
{
	int fd = rootfs_open_host(path), e;
	FILE *f;

	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	f = fdopen(fd, "r");
	if (!f) {
		e = errno;
		close(fd);
		errno = e;
	}
	return f;
}

int rootfs_path_from_leaf(const char *comps, size_t len, char *out, size_t outlen)
{
	size_t end = len, w = 0;

	if (!len || comps[len - 1] != '\0')
		return -EINVAL;
	/* from the last component (the top) down: each ends at end - 1 */
	while (end) {
		size_t start = end - 1, n;

		while (start && comps[start - 1] != '\0')
			start--;
		n = end - 1 - start;
		if (!n || memchr(comps + start, '/', n) || (n == 1 && comps[start] == '.') ||
		    (n == 2 && comps[start] == '.' && comps[start + 1] == '.'))
			return -EINVAL;
		if (w + 1 + n + 1 > outlen)
			return -ENAMETOOLONG;
		out[w++] = '/';
		memcpy(out + w, comps + start, n);
		w += n;
		end = start;
	}
	out[w] = '\0';
	return 0;
}

/* --- process roots -------------------------------------------------------- */

struct rootfs_root {
	struct rootfs_root *next;
	int fd;
	uint64_t mnt_id, dev, ino;
	size_t refs;
};

struct rootfs_roots {
	struct rootfs_root *list;
	struct rootfs_roots_stats st;
};

int rootfs_roots_new(struct rootfs_roots **out, size_t max)
{
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	(*out)->st.max = max;
	return 0;
}

void rootfs_roots_free(struct rootfs_roots *r)
{
	if (!r)
		return;
	while (r->list) {
		struct rootfs_root *next = r->list->next;

		close(r->list->fd);
		free(r->list);
		r->list = next;
	}
	free(r);
}

int rootfs_root_get(struct rootfs_roots *r, int piddir, struct rootfs_root **out,
		    struct errbuf *err)
{
	struct rootfs_root *root;
	struct statx sx;
	int fd;

	*out = NULL;
	/* "root" is a magic link: it names the process's root, wherever that is. */
	fd = openat(piddir, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return errf(err, -errno, "root: %s", strerror(errno));
	/*
	 * The same directory on the same mount is the same root.  A mount
	 * id is not reused while we hold a descriptor on that mount.
	 */
	if (statx(fd, "", AT_EMPTY_PATH, STATX_INO | STATX_MNT_ID, &sx)) {
		int e = errno;

		close(fd);
		return errf(err, -e, "root: statx: %s", strerror(e));
	}
	for (root = r->list; root; root = root->next) {
		if (root->mnt_id == sx.stx_mnt_id && root->ino == sx.stx_ino &&
		    root->dev == makedev(sx.stx_dev_major, sx.stx_dev_minor)) {
			close(fd);
			root->refs++;
			*out = root;
			return 0;
		}
	}
	if (r->st.held >= r->st.max) {
		close(fd);
		r->st.refused++;
		return errf(err, -EMFILE, "root: %zu distinct process roots held already",
			    r->st.max);
	}
	root = calloc(1, sizeof(*root));
	if (!root) {
		close(fd);
		return errf(err, -ENOMEM, "root: out of memory");
	}
	*root = (struct rootfs_root){
		.next = r->list,
		.fd = fd,
		.mnt_id = sx.stx_mnt_id,
		.dev = makedev(sx.stx_dev_major, sx.stx_dev_minor),
		.ino = sx.stx_ino,
		.refs = 1,
	};
	r->list = root;
	if (++r->st.held > r->st.peak)
		r->st.peak = r->st.held;
	*out = root;
	return 0;
}

void rootfs_root_ref(struct rootfs_root *root)
{
	if (root)
		root->refs++;
}

void rootfs_root_put(struct rootfs_roots *r, struct rootfs_root *root)
{
	if (!root || --root->refs)
		return;
	for (struct rootfs_root **p = &r->list; *p; p = &(*p)->next) {
		if (*p == root) {
			*p = root->next;
			break;
		}
	}
	close(root->fd);
	free(root);
	r->st.held--;
}

int rootfs_root_fd(const struct rootfs_root *root)
{
	return root ? root->fd : -1;
}

bool rootfs_root_is(const struct rootfs_root *root, uint64_t mnt_id, uint64_t dev, uint64_t ino)
{
	return root && root->mnt_id == mnt_id && root->dev == dev && root->ino == ino;
}

void rootfs_roots_stats(const struct rootfs_roots *r, struct rootfs_roots_stats *st)
{
	*st = r->st;
}
