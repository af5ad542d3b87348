/* SPDX-License-Identifier: MIT */
/*
 * jitter: each CPU's sampling clock run at a rate drawn at random around
 * the nominal one, changed every few hundredths of a second, so that no
 * workload's own period can lock with it.  A program that sleeps and
 * spins in a loop close to the clock's period (a 10.1 ms loop at 99 Hz)
 * otherwise has its wakeups fired with the clock's ticks and its samples
 * land at one phase of its loop: a share off by a fifth, or nearly none,
 * run to run.
 *
 * A policy, with no I/O: the caller sets the periods (sampler.h).  Totals
 * stay right.  Rates are drawn in pairs, f(1 + d) and f(1 - d), for equal
 * spans, so a CPU's rate averages the nominal f.  A change restarts the
 * clock a full period from the change (the kernel's PERF_EVENT_IOC_PERIOD),
 * losing the part of a period since its last tick, and a change comes
 * later than due when the agent waits for a CPU: each CPU's ticks are
 * reckoned from the changes made (the kernel keeps the clock's grid, even
 * while the CPU idles), and what a span fell short of its rate's count
 * (or over) is made up in the next.
 */
#ifndef CPROF_JITTER_H
#define CPROF_JITTER_H

#include <stdbool.h>
#include <stdint.h>

/* Rates within this fraction of the nominal one, either way. */
#define JITTER_SPREAD 0.3
/* A rate holds for 1-3 times the longer of these: seconds, and nominal periods. */
#define JITTER_SPAN_S 0.05
#define JITTER_SPAN_TICKS 5

struct jitter_cpu {
	double set;         /* CLOCK_MONOTONIC seconds of its last change (or the start) */
	uint64_t period_ns; /* the period in force */
	double rate;        /* the rate drawn for the span in force, Hz */
	double debt;        /* ticks the spans before fell short of their rates' */
	double dev;         /* the last rate drawn, as a fraction off the nominal */
};

struct jitter_stats {
	uint64_t changes;          /* periods set */
	uint64_t failed;           /* ... that the kernel refused */
	double rate_min, rate_max; /* Hz, of the rates drawn; 0: none yet */
};

struct jitter {
	uint64_t rng;     /* xorshift64* state, never 0 */
	double freq;      /* nominal, Hz */
	int ncpus;
	struct jitter_cpu *cpu;
	struct jitter_cpu undo; /* the CPU jitter_next() changed last, as it was */
	int undo_cpu;
	/*
	 * The CPUs change together, each to a rate of its own: one wakeup of
	 * the agent a span, however many CPUs.  A span's second round takes
	 * each CPU's rate of the first to the other side of the nominal.
	 */
	double next_due;  /* CLOCK_MONOTONIC seconds of the next round */
	double span;      /* the rounds' span, drawn for a pair of them */
	bool second;      /* the next round is its pair's second */
	struct jitter_stats st;
};

/*
 * For @ncpus CPUs whose clocks were opened at @freq Hz at @now
 * (CLOCK_MONOTONIC seconds); the first round at a random time within a
 * span.  @seed: any value.  -ENOMEM, -EINVAL.
 */
int jitter_init(struct jitter *j, unsigned int freq, int ncpus, uint64_t seed, double now);
void jitter_free(struct jitter *j);

/* Whether a round is due at @now: the caller's cheap test each loop. */
static inline bool jitter_due(const struct jitter *j, double now)
{
	return j->cpu && now >= j->next_due;
}

/* The seconds from @now to the next change (0: due; a day: none to come). */
double jitter_wait(const struct jitter *j, double now);

/*
 * A round due at @now: jitter_next() for each CPU, then jitter_end_round().
 * The period in ns @cpu's clock is to take; 0: no round is due.
 */
uint64_t jitter_next(struct jitter *j, int cpu, double now);

/* The kernel refused the period jitter_next() gave last: its CPU as before. */
void jitter_failed(struct jitter *j);

/* The CPU jitter_next() gave a period last is not sampled: no change made, none counted. */
void jitter_not_sampled(struct jitter *j);

/* After a round's jitter_next() calls: the next round's time. */
void jitter_end_round(struct jitter *j, double now);

#endif
