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

struct aggregate_key {
	uint32_t tid;
	uint32_t pad; /* zero: keys are compared bytewise */
	uint64_t ustack, kstack;
	uint64_t pystack; /* Python frames (python.h), or why none */
	char comm[CPROF_COMM_LEN];
};

struct aggregate_entry {
	struct aggregate_key key;
	uint64_t count;      /* CPU samples */
	uint64_t off_cpu_ns; /* time waited (--off-cpu) */
};

struct aggregate {
	struct hmap map; /* aggregate_key -> aggregate_entry */
	uint64_t lost[CPROF_LOST_REASON_MAX];
	uint64_t samples; /* counted samples, lost ones excluded */
	uint64_t off_cpu_ns; /* time waited, all entries */
};

void aggregate_init(struct aggregate *a);
void aggregate_free(struct aggregate *a);

/*
 * Adds @count samples of the stacks in @k, whose frames are in @stacks
 * (drained before the counts that name them: a user stack stored without
 * its leaf pc is joined to it there).  0 or -ENOMEM.
 */
int aggregate_add(struct aggregate *a, struct stackstore *stacks,
		  const struct cprof_sample_key *k, uint64_t count);

/* Adds @ns of waiting to the stacks in @k, as aggregate_add() does samples. */
int aggregate_add_off_cpu(struct aggregate *a, struct stackstore *stacks,
			  const struct cprof_sample_key *k, uint64_t ns);

/* Nothing to write: no sample, no wait, nothing lost. */
bool aggregate_empty(const struct aggregate *a);

void aggregate_add_lost(struct aggregate *a, const struct cprof_lost *l);

/* Empties the table for the next window, keeping its allocation. */
void aggregate_reset(struct aggregate *a);

uint64_t aggregate_lost_total(const struct aggregate *a);

#endif
