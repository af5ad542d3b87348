/* SPDX-License-Identifier: MIT */
/*
 * run: the record of one run, which main.c holds (the only one there is)
 * and events.c fills in from what BPF sends.
 */
#ifndef CPROF_RUN_H
#define CPROF_RUN_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "unwind/deferred.h"
#include "dwarf/dwarfworker.h"
#include "util/errbuf.h"
#include "fs/fdlru.h"
#include "symbols/ksymcache.h"
#include "elf/objcache.h"
#include "agent/options.h"
#include "output/outdir.h"
#include "agent/priority.h"
#include "process/proctab.h"
#include "python/python_tramp.h"
#include "fs/rootfs.h"
#include "sampling/sampler.h"
#include "util/stackstore.h"
#include "agent/summary.h"
#include "sampling/bpftables.h"
#include "sampling/clockthreads.h"


/*
 * A stack of a V8's process image whose JavaScript frames a window named
 * already (struct run's js_read): a stack counted again is not read again.
 */
struct js_stack_key {
	uint32_t pid;
	uint32_t pad;
	uint64_t gen, hash;
};
#define JS_READ_MAX (1u << 18) /* past this, stacks are named at each count */

/* Everything one run accumulates. */
struct run {
	struct outdir out;
	struct fdlru lru;            /* objects' and perf maps' descriptors */
	struct rootfs_roots *roots;  /* processes' root directories */
	struct proctab procs;
	struct stackstore stacks;
	struct objcache *objs;
	struct bpftables *tables; /* NULL: frame pointers only */
	struct deferred deferred; /* samples waiting for a table (deferred.h) */
	struct sampler *sampler;
	bool python;                 /* Python frames wanted */
	bool java;                   /* Java frames wanted */
	struct java_stats java_st;   /* HotSpot JVMs found, and their frames */
	bool node;                   /* JavaScript frames wanted */
	struct node_stats node_st;   /* V8s found, and their frames */
	struct hmap js_read;         /* struct js_stack_key: named this window */
	struct py_stats py;
	struct py_tramps *tramps;    /* CPython's perf trampolines told to BPF */
	struct priority prio; /* the agent's own scheduling (priority.h) */
	struct priority waiter_prio; /* the grace worker's, set in that thread */
	/* CLOCK_BOOTTIME of the process's fork, main()'s start, the raise; 0: unknown */
	uint64_t launch_ns, main_ns, raised_ns;
	struct summary_phases phases; /* where the time went */
	const struct options *opts;
	const volatile sig_atomic_t *stop; /* main.c's signal flag: set, sampling is over */
	struct elfobj *vdso;   /* the host's vDSO, or NULL */
	bool out_open, procs_open; /* for run_free */
	uint64_t samples_drained;
	double birth_s;              /* CLOCK_MONOTONIC of the last new process or exec */
	struct cprof_stats bpf_before; /* the BPF counters when the window started */
	struct summary_told told;      /* what the last window's line told */
	struct dwarfworker *reader;    /* the DWARF reader, kept across windows */
	struct ksymcache ksyms;        /* the kernel functions named, kept across windows */
	struct clockthreads *clocks;   /* varying each CPU's sampling rate (sampling/clockthreads.h); NULL: steady */
	int drain_error;
	char drain_errmsg[ERRBUF_LEN];
};

#endif /* CPROF_RUN_H */
