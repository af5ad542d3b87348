// SPDX-License-Identifier: MIT
/*
 * fuzz_cgroup: any bytes as /proc/<pid>/cgroup and /proc/<pid>/status text
 * (both come from inside the process's namespaces: a container names its
 * own cgroups) and as a cgroup path handed to the container-id finder.
 *
 * Checked: the path fits its buffer, the container id is empty or 64
 * lowercase hex digits and is what cgroup_container_id() finds in the path.
 */
#include <errno.h>
#include <stdint.h>

#include "fs/cgroup.h"
#include "fuzz_common.h"

static void check_id(const char *id)
{
	size_t n = strlen(id);

	FUZZ_ASSERT(n == 0 || n == CONTAINER_ID_LEN);
	for (size_t i = 0; i < n; i++)
		FUZZ_ASSERT((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f'));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cgroup_info info;
	char id[CONTAINER_ID_LEN + 1], *path;
	uint32_t nspid = 0;

	if (cgroup_parse((const char *)data, size, &info) == 0) {
		FUZZ_ASSERT(strlen(info.path) < CGROUP_PATH_MAX);
		check_id(info.container_id);
		FUZZ_ASSERT(cgroup_container_id(info.path, id) == (id[0] ? 0 : -ENOENT));
		FUZZ_ASSERT(strcmp(id, info.container_id) == 0);
	}
	(void)cgroup_parse_nspid((const char *)data, size, &nspid);

	/* The whole input as one path (up to its first NUL). */
	path = malloc(size + 1);
	if (!path)
		return 0;
	memcpy(path, data, size);
	path[size] = '\0';
	FUZZ_ASSERT(cgroup_container_id(path, id) == (id[0] ? 0 : -ENOENT));
	check_id(id);
	free(path);
	return 0;
}
