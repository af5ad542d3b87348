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
 *
 * Every phase a user waits for is covered, from exec to exit (bench/RESULTS.md,
 * "overload", has each one's time under load): the raise is main()'s first
 * act, since among 2000 busy threads each 1.5 ms slice of CPU the agent used
 * before it cost it a second and more of waiting; the thread that waits for
 * the kernel's grace periods takes steps of its own (priority_thread()), as
 * woken at nice -20 among the load it waited up to a second for a CPU each
 * time; and the end of a run (freeing, closing the BPF objects, exit) is a
 * step that lasts until the process is gone.
 */
#ifndef CPROF_PRIORITY_H
#define CPROF_PRIORITY_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <sys/types.h>

#include "util/errbuf.h"

/* The nice value the agent raises itself to. */
#define PRIORITY_NICE (-20)
/* Real-time budgets, in ms of the agent's CPU time (the BPF verifier runs in ours). */
#define PRIORITY_START_MS 2000
#define PRIORITY_DRAIN_MS 200
#define PRIORITY_WRITE_MS 1000
/* The end of a run: the teardown and the exit, which no later step follows. */
#define PRIORITY_EXIT_MS 500
/* A waiting thread's step: one blocking call and the wakeups around it. */
#define PRIORITY_WAIT_MS 50

struct priority {
	bool rt;        /* real-time steps are possible (the timer exists) */
	timer_t budget; /* ends a real-time step on the agent's CPU clock */
};

/*
 * Raises the calling process's priority: sets up real-time steps and
 * begins the first, of @first_ms (as priority_step(); 0: none), then nice
 * PRIORITY_NICE.  Returns 0, or a negative errno with a one-line message
 * in @err when either could not be had (without CAP_SYS_NICE, as under a
 * systemd unit that does not grant it): the agent goes on as it was, and
 * what could be had is kept.
 */
int priority_raise(struct priority *p, unsigned int first_ms, struct errbuf *err);

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
 * The timer released, the class left as it is: for a thread about to end
 * that the agent waits for (back in the normal class among the load, the
 * grace worker took a third of a second to exit).  What it runs after
 * this, its own end, is not bounded by a budget.
 */
void priority_release(struct priority *p);

/*
 * For a thread of the agent's that only waits on the kernel and wakes the
 * agent (the grace worker): called in that thread, gives it real-time
 * steps of its own in @t when @agent has them, each bounded by the
 * thread's own CPU clock (its budget signal is unblocked in the thread).
 * priority_step(@t, PRIORITY_WAIT_MS) before each wait keeps it in the
 * real-time class while it sleeps, so that it runs as soon as the kernel
 * wakes it.  0, or a negative errno (then @t has no steps, as when @agent
 * has none); priority_release(@t) in the thread before it ends.
 */
int priority_thread(struct priority *t, const struct priority *agent);

/*
 * Whether the command line @argv may ask for the boost: false when one of
 * its arguments spells --no-priority-boost (or a prefix getopt_long would
 * take for it), read before the options are parsed so that the boost is
 * main()'s first act.  An argument that only looks like it (the value of
 * another option) costs the early raise, not the boost: main() raises the
 * priority after parsing then.
 */
bool priority_wanted(int argc, char *const *argv);

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
 * When this process was started (its fork), in ns of CLOCK_BOOTTIME, from
 * /proc/self/stat, at the resolution of the clock tick: what "after
 * launch" counts from.  0 when unknown.
 */
uint64_t priority_launch_ns(void);

/* CLOCK_BOOTTIME now, in ns: a phase's end, to compare with the launch. */
uint64_t priority_now_ns(void);

/* Milliseconds from the launch to @ns of CLOCK_BOOTTIME; -1 when the launch is unknown. */
int64_t priority_since_launch_ms(uint64_t launch_ns, uint64_t ns);

#endif
