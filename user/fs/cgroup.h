/* SPDX-License-Identifier: MIT */
/*
 * cgroup: which cgroup and container a process runs in, and its pid as its
 * own pid namespace sees it, for the profile's labels.
 *
 * The container id is found in the cgroup v2 path the way the runtimes
 * write it: docker-<id>.scope, /docker/<id>, cri-containerd-<id>.scope,
 * crio-<id>.scope, libpod-<id>.scope (podman), kubepods .../<id>: the last
 * path component that is (after those prefixes and ".scope") 64 hex digits.
 * systemd services and slices have no container id.
 */
#ifndef CPROF_CGROUP_H
#define CPROF_CGROUP_H

#include <stddef.h>
#include <stdint.h>

#include "util/errbuf.h"

#define CGROUP_PATH_MAX 256
#define CONTAINER_ID_LEN 64

struct cgroup_info {
	char path[CGROUP_PATH_MAX];               /* "" when unknown */
	char container_id[CONTAINER_ID_LEN + 1];  /* "" when none */
};

/*
 * Parses /proc/PID/cgroup text (untrusted, need not be NUL-terminated):
 * the cgroup v2 line "0::PATH", else on a v1 host the "name=systemd" one.
 * A path longer than CGROUP_PATH_MAX - 1 is cut.  0 or -ENOENT.
 */
int cgroup_parse(const char *text, size_t len, struct cgroup_info *out);

/* The container id in a cgroup path, into @id (CONTAINER_ID_LEN + 1). */
int cgroup_container_id(const char *path, char *id);

int cgroup_read(const char *proc_root, uint32_t pid, struct cgroup_info *out,
		struct errbuf *err);

/* The pid in the process's own pid namespace (last NSpid field of status). */
int cgroup_read_nspid(const char *proc_root, uint32_t pid, uint32_t *nspid,
		      struct errbuf *err);

/*
 * Where the cgroup v2 hierarchy is mounted: /sys/fs/cgroup on unified
 * hosts, /sys/fs/cgroup/unified on hybrid ones.  Parsed from
 * /proc/self/mounts; 0 or -ENOENT (no cgroup2 mount).
 */
int cgroup_v2_mount(char *buf, size_t len);

/*
 * The id of a cgroup v2 directory, its inode number: @path is the
 * directory itself or its path below the cgroup2 mount, as
 * /proc/PID/cgroup shows it.  -ENOENT without a cgroup2 mount.
 */
int cgroup_id_of(const char *path, uint64_t *id, struct errbuf *err);

/*
 * The path of cgroup v2 @id below the cgroup2 mount ("/a/b", as
 * /proc/PID/cgroup shows it) and its container id, into @out: for a process
 * gone from /proc.  The cgroup is opened by its handle, so it must still
 * exist.  0, or a negative errno.
 */
int cgroup_path_of_id(uint64_t id, struct cgroup_info *out, struct errbuf *err);

/* Parses status text for the NSpid line. */
int cgroup_parse_nspid(const char *text, size_t len, uint32_t *nspid);

#endif
