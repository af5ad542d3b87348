/* SPDX-License-Identifier: MIT */
/*
 * sandbox: what a forked child of the agent gives up before it parses
 * anything a profiled process controls (dwarfworker.c runs libdw so).
 *
 * In order: it dies with its parent (PDEATHSIG) and leaves the agent's
 * session, so a terminal's Ctrl-C or the agent's SIGTERM reach it only
 * through the parent; every descriptor but the one it serves on and
 * stderr is closed (stdin and stdout become /dev/null); memory, CPU time,
 * open files and file writes are capped by rlimits; it becomes a user of
 * its own (an id no account or container range uses, else nobody) with
 * no groups and no capabilities left in any set, and is not dumpable (no
 * ptrace, no /proc/PID/mem) -- or, for a root agent that may not change
 * user (no CAP_SETUID), keeps uid 0 without any capability; no_new_privs;
 * and a seccomp filter allows only reading and writing descriptors it
 * holds, memory management, signalling itself and exiting.  Anything else the filter refuses with EPERM (libdw's attempts
 * to open split-DWARF files or realpath() a descriptor fail harmlessly);
 * a different syscall architecture kills it.
 */
#ifndef CPROF_SANDBOX_H
#define CPROF_SANDBOX_H

#include <stdint.h>
#include <sys/types.h>

#include "util/errbuf.h"

/* The unprivileged identity taken, when the agent is root; nobody if unmapped. */
#define SANDBOX_ID      2147483630u
#define SANDBOX_ID_ALT  65534u

struct sandbox_opts {
	int serve_fd;       /* kept, read and written: the request socket */
	uint64_t mem_bytes; /* address space allowed beyond what the child has at fork */
	unsigned cpu_secs;  /* CPU time over its whole life */
	unsigned nofile;    /* descriptors it may hold at once */
};

/*
 * Enters the sandbox in the calling (freshly forked, single-threaded)
 * process; serve_fd is moved to descriptor 3.  Returns 0, or a negative
 * errno with @err saying which step failed: the caller must then exit,
 * never go on unconfined.
 */
int sandbox_enter(const struct sandbox_opts *o, pid_t parent, struct errbuf *err);

/* The descriptor serve_fd ends up as. */
#define SANDBOX_SERVE_FD 3

#endif
