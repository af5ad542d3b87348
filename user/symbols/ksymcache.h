/* SPDX-License-Identifier: MIT */
/*
 * ksymcache: the kernel functions a run has named, kept from one window to
 * the next, so that a window whose kernel frames all lie in functions met
 * before reads no /proc/kallsyms: the kernel formats all of its ~120k
 * lines for each read (30-40 ms of system time a window here, most of what
 * a window of --interval cost beyond its profiles).
 *
 * What a pass over kallsyms names is kept as [start, end) with its name and
 * module, within KSYMCACHE_BYTES (past it, the next window starts afresh).
 * Not kept: the pseudo-modules' symbols ([bpf] programs, ftrace and kprobe
 * trampolines: made and freed at any time) and a span over KSYMCACHE_SPAN
 * (a query in a gap between functions, named after the one below it as
 * kallsyms_resolve() does, is not a function to keep).  A change in
 * /proc/modules drops the modules' symbols.
 *
 * Almost every window still meets some core kernel function no window
 * before it named (interrupt and scheduler paths turn up at random), so the
 * first pass of a run of several windows also builds a catalog of all the
 * core kernel's functions (kcatalog.h), within its own bound: from then on
 * only addresses it cannot answer (modules, the pseudo-modules, addresses
 * past the core's text) are read.  The names it gives are kept as a pass's.
 */
#ifndef CPROF_KSYMCACHE_H
#define CPROF_KSYMCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/arena.h"
#include "util/membudget.h"
#include "util/errbuf.h"
#include "symbols/kallsyms.h"
#include "symbols/kcatalog.h"

#define KSYMCACHE_BYTES (2u << 20)
#define KSYMCACHE_SPAN (1u << 20)
/* The catalog's bound: about 1.3 MB for this host's 122k functions. */
#define KSYMCACHE_CATALOG_BYTES (4u << 20)

struct ksymcache_entry {
	uint64_t start, end;
	const char *name, *module; /* in the cache's arena; module NULL: the core kernel */
};

struct ksymcache_stats {
	size_t reads;             /* passes over /proc/kallsyms */
	size_t resolves;          /* windows with kernel frames to name */
	size_t kept;              /* functions kept now */
	size_t resets;            /* times it was full and started afresh */
	size_t catalog_functions; /* core kernel functions in the catalog; 0: none */
	uint64_t catalog_bytes;   /* its memory now */
	size_t catalog_answers;   /* addresses named from it, with no read */
	const char *catalog_none; /* why a pass built no catalog (NULL: one, or none tried) */
};

struct ksymcache {
	struct ksymcache_entry *v; /* sorted by start, none overlapping */
	size_t n, cap;
	struct arena strings;
	struct membudget budget;
	bool full;             /* a function was left out for the bound */
	uint64_t modules_hash; /* of /proc/modules as last read; 0: none read */
	struct kcatalog catalog;
	uint64_t catalog_max;  /* its bound; 0: none to build */
	bool catalog_tried;    /* a complete pass built it, or said why not */
	struct arena spill;    /* the window's names from the catalog not kept (no room) */
	struct ksymcache_stats st;
};

/*
 * @catalog_bytes: the catalog's bound; 0 for none (a run of one window,
 * which would pay for it and never use it).  @c must stay put until
 * ksymcache_free().
 */
void ksymcache_init(struct ksymcache *c, uint64_t catalog_bytes);
void ksymcache_free(struct ksymcache *c);

/*
 * Names @addrs (any order, duplicates allowed) into @out, as
 * kallsyms_resolve() would from the kallsyms text: from the functions kept
 * and the catalog, and for the rest from one pass over the text @kallsyms
 * opens (called only then; NULL with errno set when it cannot).  @modules: /proc/modules as it
 * is now (NULL: none), checked first.  @out's names may point into the
 * cache: it must outlive @out, and not be resolved into again before
 * kallsyms_free(@out).
 */
int ksymcache_resolve(struct ksymcache *c, FILE *(*kallsyms)(void), FILE *modules,
		      const uint64_t *addrs, size_t n, struct ksym_table *out, struct errbuf *err);

#endif
