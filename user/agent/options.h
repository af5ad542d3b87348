/* SPDX-License-Identifier: MIT */
/*
 * options: the command line of cprof-bpf, parsed and checked (--help says
 * what each option does).  Bad options are told on stderr, one line each.
 */
#ifndef CPROF_OPTIONS_H
#define CPROF_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fs/cpulist.h"

#define PROG "cprof-bpf"
#define MAX_PIDS 1024
#define MAX_COMMS 64
#define MAX_CGROUPS 64
/* Descriptors held for processes' files by default (--max-files). */
#define DEFAULT_MAX_FILES 4096
/*
 * Most DWARF one object may load for source lines by default
 * (--dwarf-memory): libc6-dbg's libc (8.6 MB) fits, so a default Debian
 * host gets libc's lines.  The sandboxed worker, not the agent, holds it.
 */
#define DEFAULT_DWARF_KB (16 * 1024)

struct options {
	unsigned int duration; /* seconds; 0: until a signal (with --interval) */
	unsigned int interval; /* seconds per window; 0: one window */
	unsigned int keep;     /* windows kept on disk; 0: all */
	const char *comms[MAX_COMMS];
	size_t n_comms;
	const char *cgroups[MAX_CGROUPS];
	uint64_t cgroup_ids[MAX_CGROUPS];
	size_t n_cgroups;
	unsigned int frequency;
	const char *output_dir;
	struct cpulist cpus;      /* --cpu: sample only on these */
	bool cpus_set;            /* given; else every online CPU */
	uint32_t pids[MAX_PIDS];
	size_t n_pids;
	bool kernel;
	bool python;              /* Python frames in CPython processes */
	bool java;                /* Java frames in HotSpot JVMs */
	bool node;                /* JavaScript frames in Node.js (V8) */
	bool symbolize;           /* name user frames here (--symbolize=host) */
	bool verbose;
	bool quiet;               /* errors only */
	const char *json_summary; /* where the figures go as JSON, or NULL */
	bool dwarf;               /* unwind user stacks with CFI tables */
	unsigned long unwind_kb;  /* budget of the rows array */
	unsigned long dwarf_kb;   /* most DWARF one object may load for lines */
	unsigned long symbol_kb;  /* symbol tables and names held at once */
	unsigned int counts_max;  /* entries per counts map (0: default) */
	unsigned long max_files;  /* descriptors held for processes' files */
	unsigned int file_mode;   /* of the profiles */
	bool priority_boost;      /* raise the agent's scheduling priority */
	bool jitter;              /* vary each CPU's sampling rate (sampling/jitter.h); --no-jitter clears */
	bool ld_probe;            /* uprobe on ld.so for new programs' libraries */
	bool off_cpu;             /* charge waits to their stacks too */
	uint64_t off_cpu_min_ns;  /* shorter waits are only counted */
	bool off_cpu_min_set;     /* given on the command line */
};

/*
 * "5" (ms), "250us", "2ms", "1s", "1500ns" -> ns, up to 60 s.  0 or
 * -EINVAL.
 */
int options_parse_time_ns(const char *s, uint64_t *ns);

/* Returns 0 to run, 1 to exit successfully (--help, --version), -1 on a bad option. */
int options_parse(int argc, char **argv, struct options *o);

#endif
