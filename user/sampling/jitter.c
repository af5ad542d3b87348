// SPDX-License-Identifier: MIT
/*
 * jitter: the sampling clocks' rates drawn at random, their ticks
 * reckoned (jitter.h).
 */
#include <errno.h>
#include <stdlib.h>

#include "sampling/jitter.h"

/* xorshift64*: fast, and good enough to pick a rate. */
static uint64_t next_u64(struct jitter *j)
{
	uint64_t x = j->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	j->rng = x;
	return x * 0x2545F4914F6CDD1DULL;
}

/* Uniform in [0, 1). */
static double uniform(struct jitter *j)
{
	return (next_u64(j) >> 11) * (1.0 / 9007199254740992.0);
}

/* Ticks owed (or over) that the next span makes up, at most. */
#define JITTER_DEBT_MAX 4.0

static double draw_span(struct jitter *j)
{
	double base = JITTER_SPAN_TICKS / j->freq;

	if (base < JITTER_SPAN_S)
		base = JITTER_SPAN_S;
	return base * (1 + 2 * uniform(j));
}

int jitter_init(struct jitter *j, unsigned int freq, int ncpus, uint64_t seed, double now)
{
	*j = (struct jitter){ 0 };
	if (!freq || ncpus <= 0)
		return -EINVAL;
	j->cpu = calloc(ncpus, sizeof(*j->cpu));
	if (!j->cpu)
		return -ENOMEM;
	j->ncpus = ncpus;
	j->freq = freq;
	j->rng = seed ? seed : 0x9E3779B97F4A7C15ULL;
	j->undo_cpu = -1;
	for (int i = 0; i < ncpus; i++) {
		struct jitter_cpu *c = &j->cpu[i];

		c->set = now;
		c->period_ns = 1000000000 / freq; /* as the kernel makes a rate a period */
		c->rate = freq;
	}
	j->next_due = now + draw_span(j) * uniform(j);
	j->span = draw_span(j);
	return 0;
}

void jitter_free(struct jitter *j)
{
	free(j->cpu);
	*j = (struct jitter){ 0 };
}

double jitter_wait(const struct jitter *j, double now)
{
	if (!j->cpu)
		return 86400;
	return j->next_due > now ? j->next_due - now : 0;
}

uint64_t jitter_next(struct jitter *j, int cpu, double now)
{
	struct jitter_cpu *c;
	double elapsed, ticks, want, span;

	if (!j->cpu || cpu < 0 || cpu >= j->ncpus || now < j->next_due)
		return 0;
	span = j->span;
	c = &j->cpu[cpu];
	j->undo = *c;
	j->undo_cpu = cpu;
	/* the span that ends: the clock's ticks on its grid, against its rate's */
	elapsed = now > c->set ? now - c->set : 0;
	c->debt += elapsed * c->rate - (double)((uint64_t)(elapsed * 1e9) / c->period_ns);
	/* a round held up for long (the agent starved) is not made up for at length */
	if (c->debt > JITTER_DEBT_MAX)
		c->debt = JITTER_DEBT_MAX;
	if (c->debt < -JITTER_DEBT_MAX)
		c->debt = -JITTER_DEBT_MAX;
	c->dev = j->second ? -c->dev : JITTER_SPREAD * (2 * uniform(j) - 1);
	c->rate = j->freq * (1 + c->dev);
	/* the next span's: its rate's count and the debt, within half and twice the count */
	want = span * c->rate;
	ticks = want + c->debt;
	if (ticks < want / 2)
		ticks = want / 2;
	if (ticks > want * 2)
		ticks = want * 2;
	c->period_ns = (uint64_t)(span / ticks * 1e9);
	if (c->period_ns < 10000) /* the kernel's floor for a clock's period */
		c->period_ns = 10000;
	c->set = now;
	if (!j->st.changes || c->rate < j->st.rate_min)
		j->st.rate_min = c->rate;
	if (!j->st.changes || c->rate > j->st.rate_max)
		j->st.rate_max = c->rate;
	j->st.changes++;
	return c->period_ns;
}

void jitter_end_round(struct jitter *j, double now)
{
	if (!j->cpu || now < j->next_due)
		return;
	/* the rates set hold for the span; a pair done, the next pair's is drawn */
	j->next_due = now + j->span;
	if (j->second)
		j->span = draw_span(j);
	j->second = !j->second;
	j->undo_cpu = -1;
}

/* The change jitter_next() gave last undone: its CPU as before, and not counted. */
static void undo(struct jitter *j)
{
	if (j->undo_cpu < 0 || j->undo_cpu >= j->ncpus)
		return;
	/* its clock goes on as it was, and is reckoned so */
	j->cpu[j->undo_cpu] = j->undo;
	j->undo_cpu = -1;
	j->st.changes--;
}

void jitter_failed(struct jitter *j)
{
	if (j->undo_cpu >= 0 && j->undo_cpu < j->ncpus)
		j->st.failed++;
	undo(j);
}

void jitter_not_sampled(struct jitter *j)
{
	undo(j);
}
