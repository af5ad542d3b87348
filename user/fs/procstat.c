// SPDX-License-Identifier: MIT
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fs/procstat.h"

int procstat_start_ticks(int fd, unsigned long long *ticks)
{
	char buf[1024], *p;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);

	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* The command name may hold anything: fields are counted after its ')'. */
	p = strrchr(buf, ')');
	/* Field 22, starttime: the 20th after the name (state is the 1st). */
	if (!p || sscanf(p + 1, "%*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s"
			 " %*s %*s %*s %*s %llu", ticks) != 1)
		return -1;
	return 0;
}

int procstat_start_ns(int dir, const char *path, uint64_t *ns)
{
	long hz = sysconf(_SC_CLK_TCK);
	unsigned long long ticks;
	int fd = openat(dir, path, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return -1;
	ret = procstat_start_ticks(fd, &ticks);
	close(fd);
	if (ret || hz <= 0 || ticks > UINT64_MAX / 1000000000u)
		return -1;
	*ns = ticks * 1000000000u / (unsigned long)hz;
	return 0;
}

int procstat_sched_ns(int dir, const char *path, uint64_t *cpu_ns, uint64_t *wait_ns)
{
	char buf[128];
	unsigned long long cpu, wait;
	int fd = openat(dir, path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	if (sscanf(buf, "%llu %llu", &cpu, &wait) != 2)
		return -1;
	*cpu_ns = cpu;
	*wait_ns = wait;
	return 0;
}
