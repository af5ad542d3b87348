/* SPDX-License-Identifier: MIT */
/*
 * procstat: the one reader of a /proc/PID/stat line (the agent's own and
 * profiled processes' alike).
 */
#ifndef CPROF_PROCSTAT_H
#define CPROF_PROCSTAT_H

/*
 * The process's start (field 22, starttime) from its stat file open at
 * @fd, in clock ticks since boot (1/sysconf(_SC_CLK_TCK) s): 0, or -1
 * when unreadable or malformed.  Reads one bounded buffer; the command
 * name, which the process chooses, is skipped up to its last ')'.
 */
int procstat_start_ticks(int fd, unsigned long long *ticks);

#endif
