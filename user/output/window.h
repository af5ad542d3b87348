/* SPDX-License-Identifier: MIT */
/*
 * window: writes the profiles of one sampling window — every process with
 * samples in it — after naming the kernel frames of all of them at once
 * (from the functions earlier windows named, else one pass over
 * /proc/kallsyms).
 *
 * One-shot runs have a single window and name files <comm>-<pid>.pb.gz;
 * continuous runs prefix the window's UTC start time (sortable), so windows
 * never overwrite each other.  Two images of one pid in a window (an exec)
 * with the same name get a -2, -3... suffix.
 */
#ifndef CPROF_WINDOW_H
#define CPROF_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "process/proctab.h"
#include "util/stackstore.h"
#include "symbols/symbolize.h"

struct outdir;
struct dwarfworker_sched;
struct ksymcache;

struct window_opts {
	struct outdir *out;    /* where the profiles go (a new window of it) */
	bool stamped;          /* prefix file names with the start time */
	unsigned int frequency;
	bool off_cpu;          /* files carry off-CPU time too */
	const char *debug_root;
	bool addresses_only;   /* --symbolize=none: see struct symbolizer */
	uint64_t dwarf_max_bytes; /* see struct symbolizer */
	bool reader_exec_self;    /* see struct symbolizer */
	const struct dwarfworker_sched *reader_sched; /* see struct symbolizer */
	struct dwarfworker **reader; /* kept across windows: see struct symbolizer */
	struct ksymcache *ksyms; /* kernel functions kept across windows (NULL: none) */
	uint64_t symbol_max_bytes; /* see struct symbolizer */
	/* where per-file problems are told (may be NULL) */
	void (*report)(void *ctx, const char *msg);
	void *report_ctx;
	bool verbose;          /* also report processes without mappings */
};

/* The hottest processes of a window, for the summary. */
#define WINDOW_TOP 10
#define WINDOW_FILE_LEN 96

struct window_proc {
	uint32_t pid;
	uint64_t samples;                         /* written to its file */
	char comm[CPROF_COMM_LEN];
	char container_id[CONTAINER_ID_LEN + 1]; /* "" when none */
	char file[WINDOW_FILE_LEN];              /* in the output directory */
};

struct window_result {
	size_t files, failed;
	size_t ntop;
	struct window_proc top[WINDOW_TOP]; /* most samples first */
	struct symbolizer_stats sym; /* objects without lines or names: bounds hit, reader failed */
	uint64_t samples, lost;
};

/* Formats a window start (Unix ns) as the file-name stamp "YYYYmmddTHHMMSSZ". */
void window_stamp(int64_t unix_ns, char *buf, size_t len);

void window_write(struct proctab *procs, const struct stackstore *stacks,
		  const struct window_opts *o, int64_t start_ns, int64_t duration_ns,
		  struct window_result *res);

#endif
