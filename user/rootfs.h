/* SPDX-License-Identifier: MIT */
/*
 * rootfs: opening files that another process (or a container) chose, as
 * root, without being led astray: resolution stays inside that process's
 * root directory, and a FIFO or terminal planted in place of a file can
 * neither hang us nor become our controlling terminal.
 */
#ifndef CPROF_ROOTFS_H
#define CPROF_ROOTFS_H

/* Opens @path read-only on the host, non-blocking; -1 with errno set. */
int rootfs_open_host(const char *path);

/*
 * Opens @path (absolute or not) inside the directory tree at @root_fd
 * (an O_PATH directory, e.g. /proc/<pid>/root): symlinks and ".." stay
 * inside it, magic links are refused.  Kernels without openat2 (< 5.6)
 * get a plain openat.  -1 with errno set.
 */
int rootfs_openat(int root_fd, const char *path);

/* The same with the root given by name; NULL or "": the host's. */
int rootfs_open(const char *root, const char *path);

#endif
