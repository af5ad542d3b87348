// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs/cgroup.h"

#define PROC_FILE_MAX 16384 /* cgroup and status files are far smaller */

/* The line of @text starting at @pos: [*start, *end), returns the next pos. */
static size_t next_line(const char *text, size_t len, size_t pos, size_t *start, size_t *end)
{
	const char *nl = memchr(text + pos, '\n', len - pos);

	*start = pos;
	*end = nl ? (size_t)(nl - text) : len;
	return nl ? *end + 1 : len;
}

static void copy_cut(char *dst, size_t cap, const char *src, size_t n)
{
	if (n >= cap)
		n = cap - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

static bool all_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

int cgroup_container_id(const char *path, char *id)
{
	static const char *const prefixes[] = {
		"docker-", "cri-containerd-", "crio-", "libpod-", "containerd-",
	};
	const char *end = path + strlen(path);

	id[0] = '\0';
	while (end > path) {
		const char *start = end, *s;
		size_t n;

		while (start > path && start[-1] != '/')
			start--;
		s = start;
		n = (size_t)(end - start);
		if (n > 6 && !memcmp(end - 6, ".scope", 6))
			n -= 6;
		for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
			size_t pl = strlen(prefixes[i]);

			if (n > pl && !strncmp(s, prefixes[i], pl)) {
				s += pl;
				n -= pl;
				break;
			}
		}
		if (n == CONTAINER_ID_LEN && all_hex(s, n)) {
			memcpy(id, s, n);
			id[n] = '\0';
			return 0;
		}
		end = start > path ? start - 1 : path;
	}
	return -ENOENT;
}

int cgroup_parse(const char *text, size_t len, struct cgroup_info *out)
{
	size_t pos = 0, a, b;
	bool found = false;

	memset(out, 0, sizeof(*out));
	while (pos < len) {
		const char *line, *colon2;
		size_t n;

		pos = next_line(text, len, pos, &a, &b);
		line = text + a;
		n = b - a;
		/* "hierarchy-id:controllers:path" */
		if (n >= 3 && !memcmp(line, "0::", 3)) {
			copy_cut(out->path, sizeof(out->path), line + 3, n - 3);
			found = true;
			break; /* v2 wins */
		}
		colon2 = memchr(line, ':', n);
		if (!found && colon2 && (size_t)(colon2 - line) + 14 <= n &&
		    !memcmp(colon2 + 1, "name=systemd:", 13)) {
			size_t off = (size_t)(colon2 - line) + 14;

			copy_cut(out->path, sizeof(out->path), line + off, n - off);
			found = true;
		}
	}
	if (!found)
		return -ENOENT;
	/* a NUL inside the line would cut the path; that is all it can do */
	cgroup_container_id(out->path, out->container_id);
	return 0;
}

/* Reads a small /proc file whole.  Returns its length or a negative errno. */
static ssize_t read_small(const char *path, char *buf, size_t cap)
{
	size_t n = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	while (n < cap) {
		ssize_t r = read(fd, buf + n, cap - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = -errno;

			close(fd);
			return n ? (ssize_t)n : e;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	return (ssize_t)n;
}

typedef int (*parse_fn)(const char *text, size_t len, void *out);

/* Reads /proc/<pid>/<file> and hands its text to @parse. */
static int read_proc_file(const char *proc_root, uint32_t pid, const char *file,
			  parse_fn parse, void *out, struct errbuf *err)
{
	char path[64], *buf = malloc(PROC_FILE_MAX);
	ssize_t n;
	int ret;

	if (!buf)
		return errf(err, -ENOMEM, "out of memory");
	snprintf(path, sizeof(path), "%s/%u/%s", proc_root, pid, file);
	n = read_small(path, buf, PROC_FILE_MAX);
	if (n < 0) {
		free(buf);
		return errf(err, (int)n, "%s: %s", path, strerror((int)-n));
	}
	ret = parse(buf, (size_t)n, out);
	free(buf);
	return ret ? errf(err, ret, "%s: %s", path, ret == -ENOENT ? "no usable line" : "malformed")
		   : 0;
}

static int parse_cgroup_fn(const char *text, size_t len, void *out)
{
	return cgroup_parse(text, len, out);
}

static int parse_nspid_fn(const char *text, size_t len, void *out)
{
	return cgroup_parse_nspid(text, len, out);
}

int cgroup_read(const char *proc_root, uint32_t pid, struct cgroup_info *out,
		struct errbuf *err)
{
	memset(out, 0, sizeof(*out));
	return read_proc_file(proc_root, pid, "cgroup", parse_cgroup_fn, out, err);
}

int cgroup_read_nspid(const char *proc_root, uint32_t pid, uint32_t *nspid, struct errbuf *err)
{
	return read_proc_file(proc_root, pid, "status", parse_nspid_fn, nspid, err);
}

int cgroup_parse_nspid(const char *text, size_t len, uint32_t *nspid)
{
	size_t pos = 0, a, b;

	while (pos < len) {
		const char *p, *end;
		unsigned long last = 0;
		bool any = false;

		pos = next_line(text, len, pos, &a, &b);
		if (b - a < 6 || memcmp(text + a, "NSpid:", 6))
			continue;
		/* "NSpid:\t<host pid>\t...\t<innermost pid>" */
		for (p = text + a + 6, end = text + b; p < end;) {
			unsigned long v = 0;
			bool digits = false;

			while (p < end && (*p == ' ' || *p == '\t'))
				p++;
			while (p < end && *p >= '0' && *p <= '9' && v <= 0xffffffffUL) {
				v = v * 10 + (unsigned long)(*p++ - '0');
				digits = true;
			}
			if (!digits || v > 0xffffffffUL)
				break;
			last = v;
			any = true;
		}
		if (!any)
			return -EINVAL;
		*nspid = (uint32_t)last;
		return 0;
	}
	return -ENOENT;
}

int cgroup_v2_mount(char *buf, size_t len)
{
	char line[1024];
	FILE *f = fopen("/proc/self/mounts", "re");
	int ret = -ENOENT;

	if (!f)
		return -errno;
	/* "cgroup2 /sys/fs/cgroup cgroup2 rw,... 0 0" */
	while (fgets(line, sizeof(line), f)) {
		char *dev = strtok(line, " "), *dir = strtok(NULL, " "), *type = strtok(NULL, " ");

		if (dev && dir && type && !strcmp(type, "cgroup2")) {
			snprintf(buf, len, "%s", dir);
			ret = 0;
			break;
		}
	}
	fclose(f);
	return ret;
}

int cgroup_id_of(const char *path, uint64_t *id, struct errbuf *err)
{
	char full[PATH_MAX], root[PATH_MAX / 2];
	size_t rl;
	struct stat st;

	if (cgroup_v2_mount(root, sizeof(root)))
		return errf(err, -ENOENT, "no cgroup v2 hierarchy is mounted");
	rl = strlen(root);
	if (!strncmp(path, root, rl) && (path[rl] == '/' || path[rl] == '\0'))
		snprintf(full, sizeof(full), "%s", path);
	else
		snprintf(full, sizeof(full), "%s%s%s", root, path[0] == '/' ? "" : "/", path);
	if (stat(full, &st))
		return errf(err, -errno, "%s: %s", full, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return errf(err, -ENOTDIR, "%s: not a cgroup directory", full);
	*id = st.st_ino;
	return 0;
}

/* kernfs' file handle type: the handle is the node's 64-bit id */
#define CGROUP_FILEID_KERNFS 0xfe

int cgroup_path_of_id(uint64_t id, struct cgroup_info *out, struct errbuf *err)
{
	struct {
		struct file_handle fh;
		uint64_t id;
	} h = { .fh = { .handle_bytes = sizeof(uint64_t), .handle_type = CGROUP_FILEID_KERNFS },
		.id = id };
	char root[PATH_MAX / 2], link[64], path[PATH_MAX];
	size_t rl;
	ssize_t n;
	int mnt, fd;

	if (cgroup_v2_mount(root, sizeof(root)))
		return errf(err, -ENOENT, "no cgroup v2 hierarchy is mounted");
	mnt = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (mnt < 0)
		return errf(err, -errno, "%s: %s", root, strerror(errno));
	fd = open_by_handle_at(mnt, &h.fh, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	close(mnt);
	if (fd < 0)
		return errf(err, -errno, "cgroup %llu: %s", (unsigned long long)id, strerror(errno));
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	close(fd);
	if (n < 0)
		return errf(err, -errno, "cgroup %llu: %s", (unsigned long long)id, strerror(errno));
	path[n] = '\0';
	rl = strlen(root);
	if (strncmp(path, root, rl) || (path[rl] != '/' && path[rl] != '\0'))
		return errf(err, -EXDEV, "cgroup %llu: %s is not below %s", (unsigned long long)id,
			    path, root);
	snprintf(out->path, sizeof(out->path), "%s", path[rl] ? path + rl : "/");
	cgroup_container_id(out->path, out->container_id);
	return 0;
}
