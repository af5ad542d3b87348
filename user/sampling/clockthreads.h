/* SPDX-License-Identifier: MIT */
/*
 * clockthreads: each CPU's sampling clock varied (jitter.h) by a thread of
 * the agent on that CPU.
 *
 * PERF_EVENT_IOC_PERIOD runs on the event's CPU: asked from another, the
 * caller waits for that CPU to take a cross-CPU call, and an idle vCPU
 * takes about 1 ms to wake for it (half of an idle agent's CPU time when
 * one thread set every CPU's period).  A thread pinned to the CPU sets it
 * there, and sleeps with a timer slack of a sampling period, so that its
 * wakeup comes with the clock's own tick rather than waking the CPU once
 * more.  Each thread draws its CPU's rates with a jitter of its own; they
 * share nothing until clockthreads_stop() sums what they did.
 */
#ifndef CPROF_CLOCKTHREADS_H
#define CPROF_CLOCKTHREADS_H

#include <stdint.h>

#include "util/errbuf.h"
#include "sampling/jitter.h"

/* Sets @cpu's sampling period to @ns: 0, -ENOENT (a CPU not sampled: its thread ends), -errno. */
typedef int (*clockthreads_set_fn)(void *ctx, int cpu, uint64_t ns);

struct clockthreads;

/*
 * Starts a thread for each of @ncpus CPUs whose clocks were opened at
 * @freq Hz, in the caller's scheduling class, signals blocked.  @seed:
 * any value.  -ENOMEM, -EINVAL, or pthread_create's error, with @err set
 * and nothing left running.
 */
int clockthreads_start(struct clockthreads **out, int ncpus, unsigned int freq, uint64_t seed,
		       clockthreads_set_fn set, void *ctx, struct errbuf *err);

/* What the threads did so far, summed into @st (c NULL: nothing). */
void clockthreads_stats(struct clockthreads *c, struct jitter_stats *st);

/* Stops and joins the threads, adds what they did to @st (may be NULL), frees @c (NULL: none). */
void clockthreads_stop(struct clockthreads *c, struct jitter_stats *st);

#endif
