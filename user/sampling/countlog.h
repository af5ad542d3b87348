/* SPDX-License-Identifier: MIT */
/*
 * countlog: the loader's side of BPF's count logs (struct
 * cprof_count_slot in cprof.h): how many slots a CPU gets, and reading
 * and emptying one pair's log.
 */
#ifndef CPROF_COUNTLOG_H
#define CPROF_COUNTLOG_H

#include <stdint.h>

#include <linux/types.h>

#include "cprof.h"

/*
 * Slots of a CPU's part of a count log at @hz samples a second on
 * @ncpus CPUs: a power of two over twice a second's samples (a pair is
 * live a second or more, and the key of every sample may be new), within
 * CPROF_COUNT_LOG_MIN and _MAX and, with both pairs, CPROF_COUNT_LOG_BYTES.
 * @counts_max (--counts-max; 0: not given) bounds the slots of all CPUs'
 * parts too, as it does the counts map's keys: 0, no log, when a part
 * would have fewer than CPROF_COUNT_LOG_MIN.
 */
uint32_t countlog_slots(unsigned int hz, int ncpus, uint32_t counts_max);

/*
 * Hands every counted slot of @log (@ncpus parts of @slots) to @fn, and
 * empties each part first: what a part says it holds is read, bounded by
 * its size, before it is set to none.  A non-zero return of @fn stops
 * the reading and is returned; the parts are empty all the same.
 */
int countlog_drain(struct cprof_count_slot *log, int ncpus, uint32_t slots,
		   int (*fn)(void *ctx, const struct cprof_sample_key *key, uint64_t n),
		   void *ctx);

#endif
