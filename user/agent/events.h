/* SPDX-License-Identifier: MIT */
/*
 * events: what BPF sends the run, turned into its records: the ring's
 * process events (new images, execs, exits, tables asked for) and the
 * drained counts, each charged to the process image it is of.
 */
#ifndef CPROF_EVENTS_H
#define CPROF_EVENTS_H

#include <stddef.h>

#include "agent/run.h"
#include "sampling/sampler.h"

/* sampler_poll()'s handler of one ring event; @ctx is the struct run. */
int events_on_event(void *ctx, const void *data, size_t size);

/* sampler_drain_flipped()'s handlers; their ctx is the struct run. */
extern const struct sampler_drain_ops events_drain_ops;

/* An image gone: BPF no longer reads its CPython, JVM or V8. */
void events_forget_runtimes(struct run *r, struct process *p);

/* Before a window is written: the refreshes the backoff deferred. */
void events_refresh_deferred(struct run *r);

/*
 * Counts the deferred samples that can be (deferred.h): their pair
 * drained, their table built or not to come in time; all that can be
 * when @flush (a window's end).
 */
void events_deferred(struct run *r, bool flush);

#endif /* CPROF_EVENTS_H */
