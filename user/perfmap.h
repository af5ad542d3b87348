/* SPDX-License-Identifier: MIT */
/*
 * perfmap: names for JIT-compiled code from a process's perf map,
 * /tmp/perf-<pid>.map, as written by Node (--perf-basic-prof), the JVM
 * (perf-map-agent), Python 3.12 (-X perf), LuaJIT, .NET and others.  One
 * line per code region: "START SIZE NAME", START and SIZE in hex (an
 * optional 0x), NAME the rest of the line.
 *
 * The file belongs to the profiled process, so it is untrusted: any bytes,
 * any size, possibly growing while we read.  As for kallsyms the resolver
 * is driven by the queries (the addresses sampled in anonymous code), so
 * memory is bounded by them and not by the file, which on a long-running
 * Node process runs to hundreds of megabytes.
 *
 * Regions are reused as JITs free and recompile code, so when several lines
 * cover an address the last one written wins, as in perf.  The file is read
 * backwards from its end, each query settled by the first line that covers
 * it (a skip-list of unsettled queries makes every line cost one binary
 * search), and reading stops once all are settled.
 */
#ifndef CPROF_PERFMAP_H
#define CPROF_PERFMAP_H

#include <stddef.h>
#include <stdint.h>

#include "errbuf.h"

/* Bytes read at most, from the end of the file: the newest entries. */
#define PERFMAP_MAX_BYTES (256u << 20)
/* Longer lines are skipped; longer names are truncated. */
#define PERFMAP_LINE_MAX 4096
#define PERFMAP_NAME_MAX 1024

struct perfmap_sym {
	uint64_t addr;  /* the queried address */
	uint64_t start; /* start of the region found */
	const char *name; /* NULL when no line covers addr */
};

struct perfmap_table {
	struct perfmap_sym *syms; /* sorted by addr, unique */
	size_t n;
	char *strings;
};

/*
 * Opens the perf map of process @pid as the process itself sees it:
 * <proc_root>/<pid>/root/tmp/perf-<nspid>.map, with @nspid its pid in its
 * own pid namespace (the last field of NSpid: in its status file, see
 * cgroup_read_nspid()), the path resolved inside its root.  *@fd gets a
 * regular file opened read-only.  -ENOENT when there is no perf map.
 */
int perfmap_open(const char *proc_root, uint32_t pid, uint32_t nspid, int *fd,
		 struct errbuf *err);

/*
 * The same, from a directory descriptor of the process's root (opened while
 * it ran, so that its map can be read after it exits) and its namespace pid.
 */
int perfmap_open_at(int root_fd, uint32_t nspid, int *fd, struct errbuf *err);

/*
 * Resolves @addrs (any order, duplicates allowed) against the perf map open
 * at @fd (a regular file; its size is taken once, so lines appended while we
 * read are ignored).  On success @out holds one entry per distinct address.
 */
int perfmap_resolve(int fd, const uint64_t *addrs, size_t n,
		    struct perfmap_table *out, struct errbuf *err);

/* The entry for @addr in a resolved table, or NULL. */
const struct perfmap_sym *perfmap_find(const struct perfmap_table *t, uint64_t addr);

void perfmap_free(struct perfmap_table *t);

#endif
