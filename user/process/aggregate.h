/* SPDX-License-Identifier: MIT */
/*
 * aggregate: one process's samples — a count per (thread, thread name,
 * user stack, kernel stack, Python stack), plus the samples that could not be counted,
 * by reason.  Stacks are named by their hash (see stackstore.h) or by a
 * cprof_stack_status saying why there is none.
 */
#ifndef CPROF_AGGREGATE_H
#define CPROF_AGGREGATE_H

#include <stdbool.h>
#include <stdint.h>

#include "cprof.h"
#include "util/hmap.h"
#include "util/stackstore.h"

struct agg_key {
	uint32_t tid;
	uint32_t pad; /* zero: keys are compared bytewise */
	uint64_t ustack, kstack;
	uint64_t pystack; /* Python frames (python.h), or why none */
	char comm[CPROF_COMM_LEN];
};

struct agg_entry {
	struct agg_key key;
	uint64_t count;      /* CPU samples */
	uint64_t off_cpu_ns; /* time waited (--off-cpu) */
};

struct agg {
	struct hmap map; /* agg_key -> agg_entry */
	uint64_t lost[CPROF_LOST_REASON_MAX];
	uint64_t samples; /* counted samples, lost ones excluded */
	uint64_t off_cpu_ns; /* time waited, all entries */
};

void agg_init(struct agg *a);
void agg_free(struct agg *a);

/*
 * Adds @count samples of the stacks in @k, whose frames are in @stacks
 * (drained before the counts that name them: a user stack stored without
 * its leaf pc is joined to it there).  0 or -ENOMEM.
 */
int agg_add(struct agg *a, struct stackstore *stacks, const struct cprof_sample_key *k,
	    uint64_t count);

/* Adds @ns of waiting to the stacks in @k, as agg_add() does samples. */
int agg_add_off_cpu(struct agg *a, struct stackstore *stacks, const struct cprof_sample_key *k,
		    uint64_t ns);

/* Nothing to write: no sample, no wait, nothing lost. */
bool agg_empty(const struct agg *a);

void agg_add_lost(struct agg *a, const struct cprof_lost *l);

/* Empties the table for the next window, keeping its allocation. */
void agg_reset(struct agg *a);

uint64_t agg_lost_total(const struct agg *a);

#endif
