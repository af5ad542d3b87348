/* SPDX-License-Identifier: MIT */
/*
 * proctab: every process sampled during a run, by pid, with what is needed
 * to write its profile after it may have exited: its name, a snapshot of its
 * executable mappings taken while it ran, and references to the parsed
 * objects behind them (which keep the files open).
 *
 * A pid that is reused, or a process that execs, gets a new record; the old
 * one is retired, not freed, so its samples are still written.
 */
#ifndef CPROF_PROCTAB_H
#define CPROF_PROCTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "aggregate.h"
#include "cgroup.h"
#include "elfobj.h"
#include "errbuf.h"
#include "hmap.h"
#include "objcache.h"
#include "procmaps.h"

struct process {
	uint32_t pid;
	uint64_t gen;        /* image generation, from BPF */
	uint64_t start_time; /* ns since boot, from BPF; 0 when unknown */
	char comm[CPROF_COMM_LEN];
	struct vma_list maps;   /* executable mappings only */
	struct elfobj **objs;   /* per maps.v[i]; NULL where none could be read */
	bool have_maps;
	bool exited;
	int maps_error;         /* negative errno of the snapshot, 0 if fine */
	char maps_errmsg[ERRBUF_LEN];
	size_t obj_errors;      /* mappings whose object could not be read */
	size_t refreshes;       /* snapshots retaken (new code mapped) */
	struct cgroup_info cgroup; /* path and container id ("" if unknown) */
	uint32_t ns_pid;        /* pid in its own namespace; 0 if unknown */
	struct agg samples;
};

struct proctab {
	struct hmap by_pid;       /* pid -> struct process * (live records) */
	struct process **retired; /* replaced records whose samples remain */
	size_t nretired, retired_cap;
	struct objcache *objs;
	struct elfobj *vdso;      /* the host's vDSO image, or NULL */
	const char *proc_root;    /* "/proc" */
	size_t created;           /* records made during the run */
};

/* @vdso (may be NULL) is borrowed and must outlive the table. */
int proctab_init(struct proctab *t, struct objcache *objs, struct elfobj *vdso,
		 const char *proc_root);
void proctab_free(struct proctab *t);

/* The live record of @pid, or NULL. */
struct process *proctab_find(struct proctab *t, uint32_t pid);

/*
 * The record of image @gen of process @pid (see cprof_event.gen), made on
 * first use: a snapshot of its mappings is taken and its objects opened.
 * A newer generation retires the live record of the pid (exec, pid reuse);
 * its samples stay and are written.  Snapshot failures (the process already
 * exited) are kept in the record, not returned: its samples still count.
 * *@created (may be NULL) tells whether a new live record was made.
 */
struct process *proctab_get(struct proctab *t, uint32_t pid, uint64_t gen,
			    const char *comm, bool *created);

/*
 * Retakes the snapshot of a running process that mapped new code (dlopen):
 * the new mappings replace the old.  On failure (the process is gone) the
 * old snapshot stays.
 */
int proctab_refresh(struct proctab *t, struct process *p);

/* Marks the live record of image @gen of @pid as exited (kept until written). */
void proctab_exited(struct proctab *t, uint32_t pid, uint64_t gen);

/*
 * After a window's profiles are written: frees retired and exited records,
 * and empties the samples of the others.
 */
void proctab_end_window(struct proctab *t);

/* All records, live and retired; *@n set.  The caller frees the array. */
struct process **proctab_list(struct proctab *t, size_t *n);

#endif
