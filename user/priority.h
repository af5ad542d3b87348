/* SPDX-License-Identifier: MIT */
/*
 * priority: keeps the agent ahead of the load it measures.
 *
 * A whole-host profiler is run when the host is overloaded.  At the
 * priority it was started with, the agent then gets a thread's share of the
 * CPUs: 2000 busy threads in its session left it 1/2000 of one, so its BPF
 * program attached only once the load had gone.  So the agent raises
 * itself: nice -20 for all of its work, and the real-time class SCHED_FIFO
 * for its steps (start-up, each drain and the work until the next, each
 * write), each step bounded by a budget of CPU time.  A step that runs over
 * its budget is put back at nice -20 by a CPU-time timer, so a looping agent
 * holds a CPU in the real-time class for at most a budget per step (a drain
 * step a second: at most a fifth of one CPU).
 * Children never inherit the real-time class; the sandboxed DWARF reader is
 * given the agent's priority by priority_child_started() and _ready().
 */
#ifndef CPROF_PRIORITY_H
#define CPROF_PRIORITY_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <sys/types.h>

#include "errbuf.h"

/* The nice value the agent raises itself to. */
#define PRIORITY_NICE (-20)
/* Real-time budgets, in ms of the agent's CPU time (the BPF verifier runs in ours). */
#define PRIORITY_START_MS 2000
#define PRIORITY_DRAIN_MS 200
#define PRIORITY_WRITE_MS 1000

struct priority {
	bool rt;        /* real-time steps are possible (the timer exists) */
	timer_t budget; /* ends a real-time step on the agent's CPU clock */
};

/*
 * Raises the calling process's priority: nice PRIORITY_NICE, and sets up
 * real-time steps.  Returns 0, or a negative errno with a one-line message
 * in @err when either could not be had (without CAP_SYS_NICE, as under a
 * systemd unit that does not grant it): the agent goes on as it was, and
 * what could be had is kept.
 */
int priority_raise(struct priority *p, struct errbuf *err);

/*
 * Runs what follows in the real-time class until priority_normal() or until
 * it has used @budget_ms of CPU, whichever comes first.  Calling it again
 * starts a new step with a new budget.  A no-op when priority_raise() did
 * not make real-time steps possible.  Two system calls: safe in a signal
 * handler.
 */
void priority_step(struct priority *p, unsigned int budget_ms);

/* Ends the current real-time step (back to the raised nice value). */
void priority_normal(struct priority *p);

/* Back to normal scheduling, the timer released. */
void priority_free(struct priority *p);

/*
 * For a helper process the agent waits for (the sandboxed DWARF reader):
 * it starts in the normal class at nice 0 (real-time class and negative
 * nice are reset on fork), a thread's share among the load.
 *
 * priority_child_started(), in the parent right after fork(): the child
 * gets the caller's scheduling, real-time class included, for its start
 * (our own code, before it reads any input).
 *
 * priority_child_ready(), once it serves requests: the caller's nice only,
 * never the real-time class.  A child in a session of its own is also
 * alone in its autogroup, which the scheduler weighs against the others
 * (the load's among them) by the autogroup's nice: that is given the
 * caller's nice too.  Never our own session's: that would raise the load
 * beside us.
 */
void priority_child_started(pid_t child);
void priority_child_ready(pid_t child);

/*
 * Milliseconds since this process was started (its exec), from
 * /proc/self/stat, at the resolution of the clock tick: for the report of
 * a late start.  -1 when unknown.
 */
int64_t priority_launch_age_ms(void);

#endif
