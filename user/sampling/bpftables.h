/* SPDX-License-Identifier: MIT */
/*
 * bpftables: the unwind tables in the BPF maps.
 *
 * Tables belong to files.  Every object a profiled process maps gets a
 * number (its entry in the unwind_files array) when the process's entry is
 * written; its table is built only when a sample lands in it and the BPF
 * unwinder asks for it (bpftables_want), queued and built once, and from then
 * on serves every process mapping the file, a new one from its first
 * sample: BPF finds the number from the file's identity in the kernel
 * before the process has an entry.  The rows array is a fixed budget: when it is full, tables of
 * objects no process maps any more are evicted, least recently used first;
 * if that is not enough the object goes without a table and its frames are
 * walked by frame pointers.
 */
#ifndef CPROF_BPFTABLES_H
#define CPROF_BPFTABLES_H

#include <stddef.h>
#include <stdint.h>

#include "cprof.h"
#include "util/errbuf.h"
#include "elf/objcache.h"
#include "process/proctab.h"

struct bpftables;

struct bpftables_maps {
	uint32_t capacity;             /* slots the rows array holds */
	/* writes a process's entry (unwind_procs); @pm NULL removes it */
	int (*set_proc)(void *ctx, uint32_t pid, const struct cprof_proc_maps *pm);
	/* reads it as BPF has it now: 0, or -ENOENT; optional */
	int (*get_proc)(void *ctx, uint32_t pid, struct cprof_proc_maps *pm);
	/* copies @n slots of a table into the rows array at slot @first; @n 0: done with it */
	int (*write_rows)(void *ctx, uint32_t first, const union cprof_table_slot *slots,
			  uint32_t n);
	/* writes file @file's entry (unwind_files): where its table is, if anywhere */
	int (*set_file)(void *ctx, uint32_t file, const struct cprof_file *f);
	/* names a file by its identity (unwind_file_keys); @ref NULL forgets it */
	int (*set_file_key)(void *ctx, const struct cprof_file_key *k,
			    const struct cprof_file_ref *ref);
	/*
	 * before rows are freed for reuse: makes BPF forget rows it cached,
	 * and waits until no program can still read what was removed
	 */
	int (*retire)(void *ctx);
	void *ctx;                     /* for all of them, required but get_proc */
};

struct bpftables_stats {
	size_t files;        /* objects with a number now */
	size_t objects;      /* tables loaded now */
	size_t asked;        /* tables the BPF unwinder asked for */
	size_t asked_with;   /* ... of them queued with another of a young process's */
	size_t along_dropped; /* queued so, then dropped: no process mapped them any more */
	size_t built;        /* tables built during the run */
	size_t failed;       /* objects whose CFI could not be read */
	size_t no_room;      /* objects left without a table: budget full */
	size_t no_number;    /* mappings left without a file number: all taken */
	size_t evicted;
	size_t processes;    /* processes with an entry now */
	size_t truncated;    /* entries cut at CPROF_MAX_PROC_MAPS executable mappings */
	uint64_t rows;       /* rows of the tables loaded now */
	uint64_t rows_used, rows_capacity, rows_peak; /* slots */
	double build_seconds; /* spent building tables */
};

int bpftables_new(struct bpftables **out, const struct bpftables_maps *maps,
	       struct objcache *objs);
void bpftables_free(struct bpftables *t);

/*
 * Writes @p's entry for the BPF unwinder (its mappings and the numbers of
 * their files), replacing an older one of the same pid.  Builds nothing.
 * BPFTABLES_RACED: mappings BPF had added to the older one (an mmap since)
 * that @p's snapshot lacks were kept, as read while ld.so was mapping a
 * new program's libraries; the snapshot is to be read again (once: what a
 * later one lacks too was unmapped, and goes).
 */
#define BPFTABLES_RACED 1
int bpftables_add_process(struct bpftables *t, struct process *p, struct errbuf *err);

/*
 * Numbers the files of @p's mappings, writing no entry: for a process that
 * is gone (named from its exit record), so that the next to map its files
 * finds them by their identity from its first sample (none counts as its
 * user: the files go at the next prune unless a process maps them by then).
 */
void bpftables_add_files(struct bpftables *t, struct process *p);

/*
 * The entry bpftables_add_process() would write for @p, into @pm, written
 * nowhere and holding no file (numbers are given as there): for a deferred
 * sample of a process gone (deferred.h), named from its exit record.
 * -ENOENT: no mappings known.
 */
int bpftables_entry_of(struct bpftables *t, struct process *p, struct cprof_proc_maps *pm);

/* Removes the entry of @pid (the process exited) and releases its files. */
void bpftables_remove_process(struct bpftables *t, uint32_t pid);

/* The BPF unwinder asked for the table of file @file: it is queued. */
void bpftables_want(struct bpftables *t, uint32_t file);

/*
 * Queues the table of the file @p maps at @addr, as a walk that landed
 * there asks for it: for the pc of a process's first sample or block,
 * walked before the process's files had numbers to ask by.
 */
void bpftables_want_at(struct bpftables *t, const struct process *p, uint64_t addr);

/*
 * Queues the tables of every file @p maps executable that has none: a
 * young program's (exec'd while sampling, under a second ago), when it
 * maps files no process of the run mapped before (at its start), or when
 * one of its samples asks for one of its tables: its walks stop at the
 * first file without a table, and each file asked for by itself is a round
 * trip to the loader of tens of ms of its first samples.  Queued "along":
 * built after those samples ask for, the largest code first, and dropped
 * if no process maps the file by its turn (a program that lived a few ms).
 */
void bpftables_want_process(struct bpftables *t, const struct process *p);

/* Whether tables are queued. */
bool bpftables_pending(const struct bpftables *t);

/*
 * Builds and loads the queued tables: all asked for by samples, and one of
 * those queued along with a young program's (bpftables_want_process); while
 * bpftables_pending(), the caller calls again soon.
 */
void bpftables_build_pending(struct bpftables *t);

/*
 * Releases the files no process uses any more (continuous mode, between
 * windows), with their tables and objects, so memory follows the live
 * processes.
 */
void bpftables_prune(struct bpftables *t);

void bpftables_get_stats(const struct bpftables *t, struct bpftables_stats *st);

#endif
