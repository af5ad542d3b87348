/* SPDX-License-Identifier: MIT */
/*
 * deferred: samples whose walk waits for a table (bpf/defer.bpf.h, struct
 * cprof_deferred).  Each is parked with a copy of its process's unwind
 * entry as it was then (a short-lived program is gone by the time its
 * table is built); once its pair of maps is drained (the stacks its key
 * names are in the stack store) and the table it waits for is built, it
 * is walked on from where BPF stopped, by the same code (bpfunwind.h),
 * and counted with the stack so found.  A table that does not come in
 * DEFERRED_TIMEOUT_S, no room to park it, or the end of a window: the
 * sample counts as BPF walked it, nothing lost.
 */
#ifndef CPROF_DEFERRED_H
#define CPROF_DEFERRED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cprof.h"

#define DEFERRED_TIMEOUT_S 3.0
#define DEFERRED_MAX 8192          /* records parked at once (64 a second a CPU for
				      DEFERRED_TIMEOUT_S: 42 CPUs' worth) */
#define DEFERRED_BYTES (1u << 20)  /* their stack copies and entries, at most */

struct deferred_stats {
	uint64_t parked;     /* records taken */
	uint64_t bad;        /* ... malformed: not counted */
	uint64_t dropped;    /* ... not: DEFERRED_MAX parked already (not counted) */
	uint64_t unstacked;  /* ... kept without their stack (over DEFERRED_BYTES): as sampled */
	uint64_t walked;     /* walked on once their table was there */
	uint64_t complete;   /* ... to the outermost frame */
	uint64_t kept_bpf;   /* ... not, where BPF's walk was: counted as BPF walked it */
	uint64_t timed_out;  /* counted as sampled: no table in time, or a window's end */
	uint64_t no_table;   /* counted as sampled: their file has none to be had */
	uint64_t bytes_peak; /* parked bytes, at most */
};

/* What deferred_run() needs of the run: the sampler's maps, the tables, the store. */
struct deferred_ops {
	void *ctx;
	/*
	 * The entry of @pid (image @gen) now: its unwind_procs entry, else the
	 * one its mappings as the loader knows them make; -1: none (none
	 * either once the pid runs another image)
	 */
	int (*entry)(void *ctx, uint32_t pid, uint64_t gen, struct cprof_proc_maps *out);
	/* file @file's unwind_files entry now */
	int (*file)(void *ctx, uint32_t file, struct cprof_file *out);
	/* asks for file @file's table, as a sample landing there does */
	void (*want)(void *ctx, uint32_t file);
	/* slot @idx of the rows array (of @nrows), into @out */
	int (*slot)(void *ctx, uint32_t idx, union cprof_table_slot *out);
	uint32_t nrows;
	/* the status of a stored stack (cprof_stack.status); -1: not stored */
	int (*stack_status)(void *ctx, uint64_t hash);
	/* stores a stack under @hash */
	int (*stack)(void *ctx, uint64_t hash, const struct cprof_stack *st);
	/* counts one sample of @k */
	int (*count)(void *ctx, const struct cprof_sample_key *k);
};

struct deferred_rec;

struct deferred {
	struct deferred_rec **v;
	size_t n, cap;
	size_t bytes;                 /* of the records parked */
	struct cprof_proc_maps *pm;   /* scratch for a walk's entry */
	struct cprof_proc_maps *walk; /* the entry a walk goes by, when merged */
	const struct deferred_ops *ops;   /* of the walks under way (their reads of rows) */
	union cprof_table_slot slots[4];  /* the rows they read last */
	unsigned next_slot;
	struct deferred_stats st;
};

void deferred_init(struct deferred *d);
void deferred_free(struct deferred *d);

/*
 * Parks ring record @data (@size bytes) with its process's entry now, and
 * asks for the table it waits for.  -ENOMEM: not parked, nor counted.
 */
int deferred_park(struct deferred *d, const void *data, size_t size,
		  const struct deferred_ops *ops);

/*
 * Image @gen of process @pid is gone (it exits, or exec'd another): the
 * records of it parked without the loader's entry (read before the loader
 * had read the process) take it now, before the loader lets it go.
 * -ENOMEM: they are kept as they were.
 */
int deferred_image_gone(struct deferred *d, uint32_t pid, uint64_t gen,
			const struct deferred_ops *ops);

/*
 * Counts the records whose samples' epoch is below @drained_below (their
 * pair of maps drained): walked on where their table is there, as sampled
 * where it is not and will not be, or where they waited DEFERRED_TIMEOUT_S
 * (@now, CLOCK_MONOTONIC seconds) or @flush.  The first error of
 * ops->count or ops->stack; the record is counted as far as it went.
 */
int deferred_run(struct deferred *d, const struct deferred_ops *ops, uint64_t drained_below,
		 double now, bool flush);

/* Whether records wait for a table (and so for the loader to build it). */
static inline bool deferred_waiting(const struct deferred *d)
{
	return d->n > 0;
}

#endif
