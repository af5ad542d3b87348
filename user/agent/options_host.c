// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "agent/options_host.h"
#include "fs/cgroup.h"

int options_host_pid(uint32_t pid, struct errbuf *err)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%u", pid);
	if (access(path, F_OK))
		return errf(err, -ESRCH, "no process with pid %u", pid);
	return 0;
}

int options_host_cgroup(const char *path, uint64_t *id, struct errbuf *err)
{
	return cgroup_id_of(path, id, err);
}

int options_host_cpus(const char *list, struct cpulist *out, struct errbuf *err)
{
	struct cpulist online;
	int ret = cpulist_online(&online, err);

	return ret ? ret : cpulist_parse(list, &online, out, err);
}
