/* SPDX-License-Identifier: MIT */
/*
 * clock.h: a clock's time in seconds, as a double: what the loop's
 * deadlines, the processes' ages and the tables' build times are in.
 */
#ifndef CPROF_CLOCK_H
#define CPROF_CLOCK_H

#include <time.h>

static inline double clock_s(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

#endif
