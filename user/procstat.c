// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "procstat.h"

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
