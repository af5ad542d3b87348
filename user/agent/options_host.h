/* SPDX-License-Identifier: MIT */
/*
 * options_host: what an option names, looked up on this host: a process,
 * a cgroup, the CPUs online.  options.c parses the arguments and reads
 * nothing else; it calls these as each option comes, so that the first bad
 * option is the one told.  Failures leave one line in @err.
 */
#ifndef CPROF_OPTIONS_HOST_H
#define CPROF_OPTIONS_HOST_H

#include <stdint.h>

#include "fs/cpulist.h"
#include "util/errbuf.h"

/* 0 if process @pid exists, else -ESRCH. */
int options_host_pid(uint32_t pid, struct errbuf *err);

/* The id of cgroup (v2) @path: its directory, or its path as in /proc/PID/cgroup. */
int options_host_cgroup(const char *path, uint64_t *id, struct errbuf *err);

/* The CPUs of @list ("0,2", "1-3,5"), every one of them online. */
int options_host_cpus(const char *list, struct cpulist *out, struct errbuf *err);

#endif
