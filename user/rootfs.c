// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rootfs.h"

#define OPEN_FLAGS (O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)

int rootfs_open_host(const char *path)
{
	return open(path, OPEN_FLAGS);
}

int rootfs_openat(int root_fd, const char *path)
{
	struct open_how how = {
		.flags = OPEN_FLAGS,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	int fd;

	while (*path == '/')
		path++;
	fd = (int)syscall(SYS_openat2, root_fd, path, &how, sizeof(how));
	if (fd < 0 && errno == ENOSYS)
		fd = openat(root_fd, path, OPEN_FLAGS);
	return fd;
}

int rootfs_open(const char *root, const char *path)
{
	int dfd, fd, e;

	if (!root || !*root)
		return rootfs_open_host(path);
	dfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -1;
	fd = rootfs_openat(dfd, path);
	e = errno;
	close(dfd);
	errno = e;
	return fd;
}
