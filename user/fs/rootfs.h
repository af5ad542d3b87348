/* SPDX-License-Identifier: MIT */
/*
 * rootfs: opening files that another process (or a container) chose, as
 * root, without being led astray.
 *
 *  - Resolution of a process's path stays inside that process's root
 *    directory (openat2 RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS relative to
 *    a descriptor of it): an absolute symlink planted in a container can
 *    never name a host file.  Kernels without openat2 (< 5.6) get no
 *    fallback that would follow symlinks: such opens fail with -ENOSYS.
 *  - A path is first opened O_PATH, which opens nothing: only a regular
 *    file is then opened for reading, so a FIFO can't block us and a
 *    terminal can't become our controlling terminal (and O_NONBLOCK |
 *    O_NOCTTY stay on as well).
 *  - A mapping's file is checked against the device and inode its maps
 *    line gave, so a path swapped since is refused.
 *
 * Every function returns a file descriptor opened O_RDONLY | O_NONBLOCK |
 * O_NOCTTY | O_CLOEXEC, or a negative errno: -EINVAL not a regular file,
 * -ESTALE not the file expected, -ENOSYS no openat2, -ELOOP a symlink where
 * none may be, or what the kernel said.
 */
#ifndef CPROF_ROOTFS_H
#define CPROF_ROOTFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>

#include "util/errbuf.h"

/* What a file must be, beyond regular (fields left 0 are not checked). */
struct rootfs_want {
	bool no_symlinks;     /* no symlink in any component, even inside the root */
	bool have_ident;      /* dev and ino below are checked */
	uint32_t dev_major, dev_minor;
	uint64_t ino;
};

/*
 * Opens @path inside the directory tree at @root_fd (an O_PATH directory,
 * e.g. a process's root held by rootfs_root_get()), absolute or not.
 * @want may be NULL; @st (may be NULL) receives the file's stat.
 */
int rootfs_open_in(int root_fd, const char *path, const struct rootfs_want *want,
		   struct stat *st);

/* The same, with no other requirement: for debug files named by an object. */
int rootfs_openat(int root_fd, const char *path);

/*
 * Opens the file a /proc magic link names (/proc/PID/map_files/RANGE),
 * following it on purpose: the kernel, not a path, says which file it is.
 */
int rootfs_open_magic(const char *path, const struct rootfs_want *want, struct stat *st);

/* Opens a host file (debug files, /proc): regular files only. */
int rootfs_open_host(const char *path);

/* The same, for stdio: NULL with errno set when it cannot be opened. */
FILE *rootfs_fopen_host(const char *path);

/*
 * Writes into @out (@outlen bytes) the absolute path whose components
 * @comps gives leaf first, each NUL-terminated, in @len bytes (as BPF
 * walks a dentry up: bpf/cprof.h, struct cprof_exit_file): "c\0b\0a\0"
 * is "/a/b/c".  -EINVAL for no component, an empty one, ".", "..", one
 * with a '/' or an unterminated last one; -ENAMETOOLONG when @out is short.
 */
int rootfs_path_from_leaf(const char *comps, size_t len, char *out, size_t outlen);

/* Does @st match the device and inode of @want (see rootfs_want)? */
bool rootfs_ident_matches(const struct rootfs_want *want, const struct stat *st,
			  int fd);

/*
 * Roots of processes, held open from a process's first sight so that a
 * reused pid never resolves into another container.  Processes sharing a
 * root (the same directory on the same mount: every host process) share
 * one descriptor; at most @max distinct roots are held, beyond which a
 * process gets none (its files are then reached only through map_files).
 */
struct rootfs_root;
struct rootfs_roots;

int rootfs_roots_new(struct rootfs_roots **out, size_t max);
void rootfs_roots_free(struct rootfs_roots *r);

/*
 * A new reference to the root of the process whose /proc directory is
 * open at @piddir.  -EMFILE beyond the bound (counted), or what opening
 * <piddir>/root said.
 */
int rootfs_root_get(struct rootfs_roots *r, int piddir, struct rootfs_root **out,
		    struct errbuf *err);
void rootfs_root_ref(struct rootfs_root *root);
void rootfs_root_put(struct rootfs_roots *r, struct rootfs_root *root);
int rootfs_root_fd(const struct rootfs_root *root);

/*
 * Whether @root is the directory with inode @ino on device @dev (dev_t)
 * on the mount @mnt_id (statx's STATX_MNT_ID).
 */
bool rootfs_root_is(const struct rootfs_root *root, uint64_t mnt_id, uint64_t dev, uint64_t ino);

struct rootfs_roots_stats {
	size_t held, peak, max;
	size_t refused; /* roots not held: over the bound */
};
void rootfs_roots_stats(const struct rootfs_roots *r, struct rootfs_roots_stats *st);

#endif
