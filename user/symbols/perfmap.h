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
#include <sys/stat.h>
#include <time.h>

#include "util/errbuf.h"
#include "fs/fdlru.h"

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
 * Opens the perf map of a process, /tmp/perf-<nspid>.map as the process
 * itself sees it, from a directory descriptor of its root: @nspid is its pid
 * in its own pid namespace (the last field of NSpid: in its status file,
 * see cgroup_read_nspid()).  The map is the process's to write, so it is
 * untrusted in where it leads too: no symlink is followed (not even one
 * inside the root), and it must be a regular file owned by @uid (the
 * process's) or root.  It must also have been written since @born (may be
 * NULL: no such check), the process's start on CLOCK_REALTIME: a process
 * writes its perf map after it starts, so an older one was left by an
 * earlier process of the same pid (CPython's -X perf never removes its
 * own) and names another program's code; only the granularity of file
 * times is allowed for (perfmap.c).  *@fd gets it opened read-only,
 * *@st (may be NULL) its stat.  -ENOENT when there is no perf map, -ELOOP
 * a symlink, -EINVAL not a regular file, -EPERM another owner, -ESTALE
 * older than @born.
 */
int perfmap_open_at(int root_fd, uint32_t nspid, uint32_t uid, const struct timespec *born,
		    int *fd, struct stat *st, struct errbuf *err);

/*
 * A process's perf map held open from when it is first found, so that its
 * names outlive the process (and its removing the file), within the global
 * bound on descriptors (@lru): evicted, it is opened again by its path.
 */
struct perfmap_file {
	struct fdlru_node node;
	struct fdlru *lru;  /* may be NULL: unbounded */
	int fd;             /* -1: none held */
	uint64_t dev, ino;  /* of the file last held */
};

void perfmap_file_init(struct perfmap_file *f, struct fdlru *lru);

/*
 * Looks at the process's perf map again (see perfmap_open_at()): a file
 * other than the one held replaces it; none (or one refused, such as a
 * stale one) keeps the one held.  0 when a file is held afterwards, else
 * why none is.  A stale map refused at one look is taken at a later one
 * once the process has written to it (its mtime then passes @born).
 */
int perfmap_file_update(struct perfmap_file *f, int root_fd, uint32_t nspid, uint32_t uid,
			const struct timespec *born, struct errbuf *err);

/* The descriptor held (borrowed), or -1. */
int perfmap_file_fd(struct perfmap_file *f);

void perfmap_file_close(struct perfmap_file *f);

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
