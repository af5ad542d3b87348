/* SPDX-License-Identifier: MIT */
/*
 * summary: what a run tells its user, from the figures main.c gathers into
 * one struct (this module reads no global state and no BPF map).
 *
 * By default: the start line (what is sampled, for how long); at the end
 * where the files are, the hottest processes, the command to open the
 * hottest, and one line per problem that cost the user something (zero
 * counters say nothing); in continuous mode one line per window instead.
 * -v adds every counter, --quiet leaves errors only, and --json-summary
 * writes every counter for scripts.
 */
#ifndef CPROF_SUMMARY_H
#define CPROF_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cprof.h"
#include "fs/cpulist.h"
#include "unwind/deferred.h"
#include "util/errbuf.h"
#include "symbols/ksymcache.h"
#include "elf/objcache.h"
#include "agent/options.h"
#include "process/proctab.h"
#include "java/jvm_names.h"
#include "node/v8_bpf.h"
#include "python/python.h"
#include "fs/rootfs.h"
#include "symbols/symbolize.h"
#include "sampling/bpftables.h"
#include "output/window.h"
#include "sampling/jitter.h"

/*
 * Where a run's time went, for -v and --json-summary (bench/overload.sh
 * reads it): on a loaded host each phase the agent is not ahead of the
 * load in shows here.  Times after launch are from the process's fork.
 * -1 (or 0 drains): unknown, or not reached.
 */
struct summary_phases {
	int64_t main_ms;     /* main() entered, after launch: exec and the dynamic loader */
	int64_t raised_ms;   /* the priority raised, after launch (-1: not raised) */
	/*
	 * Until the raise: CPU time used, and time spent runnable waiting for a
	 * CPU (the kernel's schedstat; -1: unknown).  On a loaded host the
	 * wait is mostly the kernel's, before our first instruction: a new
	 * process queued behind the load (bench/RESULTS.md, "overload").
	 */
	double raise_cpu_ms, raise_wait_ms;
	double load_ms;      /* BPF objects loaded, verified and attached */
	size_t drains;       /* map pairs drained */
	double drain_max_ms; /* the longest drain, a wait for its grace period included */
	double teardown_ms;  /* freeing, closing the BPF objects: what is left before exit */
};

/* The figures of a run (or of one window: see summary_window). */
struct summary {
	double sampled_s;            /* sampling time */
	double write_s;              /* writing the last window */
	int64_t start_ms;            /* sampling began this long after launch; -1: unknown */
	struct summary_phases phases;
	int ncpus;                   /* CPUs sampled: @cpus */
	struct cpulist cpus;
	size_t processes;            /* process images seen */
	size_t windows, files, failed;
	uint64_t samples, lost;      /* in the files written */
	struct cprof_stats bpf;      /* the BPF side's counters */
	struct symbolizer_stats sym; /* of the last window */
	struct ksymcache_stats ksyms; /* kernel functions kept across windows */
	struct window_result last;   /* the last window: its hottest processes */
	bool unwind_tables;          /* --unwind dwarf: @tables is filled */
	struct bpftables_stats tables;
	struct deferred_stats deferred; /* samples walked again once a table was there */
	struct proctab_stats procs;
	struct rootfs_roots_stats roots;
	struct objcache_stats objs;
	size_t files_max, files_evicted; /* --max-files and what it closed */
	const char *drain_error;     /* NULL, or why draining the maps failed */
	struct py_stats py;          /* Python frames (python.h) */
	struct java_stats java;      /* Java frames (java/jvm_names.h) */
	struct node_stats node;      /* JavaScript frames (node/v8_bpf.h) */
	struct jitter_stats jitter;  /* the sampling clocks' periods set */
};

/* A start later than this after launch is a problem worth a line. */
#define SUMMARY_LATE_START_MS 1000

/* The line that starts a run: what is sampled, how often, how long. */
void summary_start(FILE *f, const struct options *o);

/*
 * The problems the last window's line told: a standing condition (an
 * object whose DWARF is over --dwarf-memory, say) is told once, and again
 * only when its line changes or after a window without it.  Zeroed by
 * its owner before the first window.
 */
#define SUMMARY_TOLD_MAX 16
#define SUMMARY_TOLD_LEN 256
struct summary_told {
	size_t nprev, ncur;
	char prev[SUMMARY_TOLD_MAX][SUMMARY_TOLD_LEN];
	char cur[SUMMARY_TOLD_MAX][SUMMARY_TOLD_LEN];
};

/*
 * Continuous mode's line for a window that started at @stamp: files,
 * samples and its problems, less those @told (when not NULL) says the
 * window before told already.  @w holds the window's figures (its BPF
 * counters as differences from the window before).
 */
void summary_window(FILE *f, const char *stamp, const struct summary *w,
		    const struct options *o, struct summary_told *told);

/* The end of a run: files, hottest processes, problems (all counters with -v). */
void summary_print(FILE *f, const struct summary *s, const struct options *o);

/* Writes every figure to @path as JSON: 0 or -errno with @err set. */
int summary_json(const char *path, const struct summary *s, const struct options *o,
		 struct errbuf *err);

/* The share of @part in @whole, in percent (0 when @whole is 0). */
double summary_pct(uint64_t part, uint64_t whole);

#endif
