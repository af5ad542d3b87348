/* SPDX-License-Identifier: MIT */
/*
 * tables: the unwind tables in the BPF maps.
 *
 * Every executable object a profiled process maps gets its CFI rows built
 * once (unwind.c) and copied into one range of the shared rows array; each
 * process gets an entry listing its mappings and the range each one uses.
 * The rows array is a fixed budget: when it is full, tables no process uses
 * any more are evicted, least recently used first; if that is not enough the
 * object goes without a table and its frames are walked by frame pointers.
 */
#ifndef CPROF_TABLES_H
#define CPROF_TABLES_H

#include <stddef.h>
#include <stdint.h>

#include "cprof.h"
#include "errbuf.h"
#include "objcache.h"
#include "proctab.h"

struct tables;

struct tables_maps {
	uint32_t capacity;             /* rows the rows array holds */
	/* writes a process's entry (unwind_procs); @pm NULL removes it */
	int (*set_proc)(void *ctx, uint32_t pid, const struct cprof_proc_maps *pm);
	/* copies a table's slots (index and rows) into the rows array at an index */
	int (*write_rows)(void *ctx, uint32_t first, const union cprof_table_slot *rows,
			  uint32_t n);
	/*
	 * before rows are freed for reuse: makes BPF forget rows it cached,
	 * and waits until no program can still read what was removed
	 */
	int (*retire)(void *ctx);
	void *ctx;                     /* for all three, which are required */
};

struct tables_stats {
	size_t objects;      /* tables loaded now */
	size_t built;        /* tables built during the run */
	size_t failed;       /* objects whose CFI could not be read */
	size_t no_room;      /* objects left without a table: budget full */
	size_t evicted;
	size_t processes;    /* processes with an entry now */
	size_t truncated;    /* entries cut at CPROF_MAX_PROC_MAPS executable mappings */
	uint64_t rows_used, rows_capacity, rows_peak; /* slots: rows and page indexes */
	double build_seconds; /* spent building tables */
};

int tables_new(struct tables **out, const struct tables_maps *maps,
	       struct objcache *objs);
void tables_free(struct tables *t);

/*
 * Gives @p's mappings their tables (building any not loaded yet) and
 * writes its entry for the BPF unwinder, replacing an older one of the same
 * pid.  Objects whose table cannot be had are left to frame pointers.
 */
int tables_add_process(struct tables *t, struct process *p, struct errbuf *err);

/* Removes the entry of @pid (the process exited) and releases its tables. */
void tables_remove_process(struct tables *t, uint32_t pid);

/*
 * Releases the tables no process uses any more (continuous mode, between
 * windows), with their objects, so memory follows the live processes.
 */
void tables_prune(struct tables *t);

void tables_get_stats(const struct tables *t, struct tables_stats *st);

#endif
