/* SPDX-License-Identifier: MIT */
/*
 * procstat: the one reader of a /proc/PID/stat line (the agent's own and
 * profiled processes' alike).
 */
#ifndef CPROF_PROCSTAT_H
#define CPROF_PROCSTAT_H

#include <stdint.h>

/*
 * The process's start (field 22, starttime) from its stat file open at
 * @fd, in clock ticks since boot (1/sysconf(_SC_CLK_TCK) s): 0, or -1
 * when unreadable or malformed.  Reads one bounded buffer; the command
 * name, which the process chooses, is skipped up to its last ')'.
 */
int procstat_start_ticks(int fd, unsigned long long *ticks);

/*
 * The same start in ns since boot (CLOCK_BOOTTIME's clock), from the
 * stat file @path opened relative to @dir (AT_FDCWD, or a /proc/PID
 * directory): 0, or -1 when it cannot be opened, read or scaled.
 */
int procstat_start_ns(int dir, const char *path, uint64_t *ns);

/*
 * The scheduler's account of a thread or process, from its schedstat file
 * @path opened relative to @dir: the CPU time it has run and the time it
 * has waited on a run queue, runnable but not running, in ns.  0, or -1
 * when the file cannot be read (a kernel without CONFIG_SCHED_INFO).
 */
int procstat_sched_ns(int dir, const char *path, uint64_t *cpu_ns, uint64_t *wait_ns);

#endif
