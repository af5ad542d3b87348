/* SPDX-License-Identifier: MIT */
/*
 * summary: what a run tells its user at the end, from the figures main.c
 * gathers into one struct (so this module reads no global state and no BPF
 * map).
 */
#ifndef CPROF_SUMMARY_H
#define CPROF_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cprof.h"
#include "objcache.h"
#include "options.h"
#include "proctab.h"
#include "rootfs.h"
#include "symbolize.h"
#include "tables.h"

/* The figures of a run, gathered when it ends. */
struct summary {
	double sampled_s;            /* sampling time */
	double write_s;              /* writing the last window */
	int ncpus;
	size_t processes;            /* process images seen */
	size_t windows, files, failed;
	uint64_t samples, lost;      /* in the files written */
	struct cprof_stats bpf;      /* the BPF side's counters */
	struct symbolizer_stats sym; /* of the last window */
	bool unwind_tables;          /* --unwind dwarf: @tables is filled */
	struct tables_stats tables;
	struct proctab_stats procs;
	struct rootfs_roots_stats roots;
	struct objcache_stats objs;
	size_t files_max, files_evicted; /* --max-files and what it closed */
	const char *drain_error;     /* NULL, or why draining the maps failed */
};

/* Prints the summary of @s, a run with options @o, to @f. */
void summary_print(FILE *f, const struct summary *s, const struct options *o);

#endif
