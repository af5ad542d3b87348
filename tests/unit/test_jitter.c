// SPDX-License-Identifier: MIT
/*
 * sampling/jitter.c against a simulated clock: a CPU's clock ticks every
 * period; a change restarts it from the moment it is made (as the
 * kernel's PERF_EVENT_IOC_PERIOD does), so the time since its last tick is
 * lost; the loop that makes the changes looks every 20-100 ms.  Over a
 * minute the ticks must be the nominal rate's (the mean rate right, the
 * restarts made up for), the rates drawn within the spread and spread
 * over it, in pairs about the nominal one, and no change made before due.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "sampling/jitter.h"
#include "testlib.h"

/*
 * A CPU busy 2-4 ms then idle 5-9 ms, in turn (a program that sleeps
 * and spins); its clock keeps its grid through the idle stretches, but
 * only the busy ones' ticks reach BPF, as on a guest where an idle CPU's
 * ticks are not seen.
 */
struct sim {
	double t;        /* now, seconds */
	double grid;     /* the clock's last tick */
	double seen;     /* ... the last one BPF saw */
	double period;   /* seconds */
	uint64_t ticks, busy_ticks;
	double busy_s;   /* time busy */
	double turn_end; /* the end of the busy or idle stretch */
	bool busy;
	unsigned int r;
};

/* The clock's ticks and the CPU's stretches up to @until. */
static void run_to(struct sim *c, double until)
{
	for (;;) {
		double next_tick = c->grid + c->period;
		double next = next_tick < c->turn_end ? next_tick : c->turn_end;

		if (next > until)
			break;
		if (c->busy)
			c->busy_s += next - c->t;
		c->t = next;
		if (next == next_tick) {
			c->grid = next;
			c->ticks++;
			if (c->busy) {
				c->busy_ticks++;
				c->seen = next;
			}
		} else {
			c->busy = !c->busy;
			c->turn_end = next + (c->busy ? 2 + rand_r(&c->r) % 2000 / 1000.0 :
							5 + rand_r(&c->r) % 4000 / 1000.0) / 1e3;
		}
	}
	if (c->busy)
		c->busy_s += until - c->t;
	c->t = until;
}

/* @secs at @freq; the deviations of the rates set, into @devs (up to @max). */
static void simulate(unsigned int freq, double secs, struct sim *c, double *devs, size_t max,
		     size_t *ndev, int *early, double *span_min, double *span_max)
{
	struct jitter j;
	double prev_change = 0;
	unsigned int r = 12345;

	*c = (struct sim){ .period = (uint64_t)(1000000000 / freq) / 1e9, .r = 77 };
	*ndev = 0;
	*early = 0;
	*span_min = 1e9;
	*span_max = 0;
	if (jitter_init(&j, freq, 1, 99, 0)) /* opened at 0 */
		return;
	while (c->t < secs) {
		double step = 0.02 + (rand_r(&r) % 80) / 1000.0;
		double now = c->t + step > secs ? secs : c->t + step;
		double due = j.next_due;
		uint64_t ns;

		run_to(c, now);
		ns = jitter_next(&j, 0, now);
		if (!ns)
			continue;
		jitter_end_round(&j, now);
		if (now < due)
			(*early)++;
		if (prev_change > 0) {
			double span = j.next_due - now;

			if (span < *span_min)
				*span_min = span;
			if (span > *span_max)
				*span_max = span;
		}
		prev_change = now;
		if (*ndev < max)
			devs[(*ndev)++] = j.cpu[0].dev;
		/* the restart: the next tick a period from now */
		c->period = ns / 1e9;
		c->grid = now;
	}
	jitter_free(&j);
}

int main(void)
{
	static const unsigned int rates[] = { 99, 999, 19 };
	struct jitter j;
	static double devs[65536];

	T_PLAN(18);
	CHECK(jitter_init(&j, 0, 2, 1, 0) == -EINVAL && jitter_init(&j, 99, 0, 1, 0) == -EINVAL,
	      "no rate or no CPU refused", "accepted");

	for (size_t k = 0; k < sizeof(rates) / sizeof(rates[0]); k++) {
		unsigned int f = rates[k];
		double secs = f < 99 ? 6000 : 600, lo = 1, hi = -1, span_min, span_max, expect = f * secs;
		size_t n, pairs_ok = 0, pos = 0;
		int early;
		struct sim c;
		char name[160];

		simulate(f, secs, &c, devs, sizeof(devs) / sizeof(devs[0]), &n, &early, &span_min,
			 &span_max);

		for (size_t i = 0; i < n; i++) {
			if (devs[i] < lo)
				lo = devs[i];
			if (devs[i] > hi)
				hi = devs[i];
			pos += devs[i] > 0;
			if (i % 2 == 1 && devs[i] == -devs[i - 1])
				pairs_ok++;
		}
		snprintf(name, sizeof(name), "%u Hz: ten minutes' ticks or more are the nominal rate's, within 0.5%%",
			 f);
		CHECK(fabs(c.ticks - expect) <= expect * 0.005, name, "%llu ticks, %.0f expected",
		      (unsigned long long)c.ticks, expect);
		snprintf(name, sizeof(name),
			 "%u Hz: a CPU busy a third of the time gets its busy time's ticks, within 2%%",
			 f);
		CHECK(fabs(c.busy_ticks - c.busy_s * f) <= c.busy_s * f * 0.02, name,
		      "%llu ticks, %.0f expected", (unsigned long long)c.busy_ticks, c.busy_s * f);
		snprintf(name, sizeof(name), "%u Hz: rates within +-%.0f%%, spread over it", f,
			 JITTER_SPREAD * 100);
		CHECK(n > 20 && lo >= -JITTER_SPREAD && hi <= JITTER_SPREAD &&
			      lo < -JITTER_SPREAD * 0.7 && hi > JITTER_SPREAD * 0.7,
		      name, "%zu changes, deviations %.3f to %.3f", n, lo, hi);
		snprintf(name, sizeof(name), "%u Hz: rates in pairs about the nominal one", f);
		CHECK(pairs_ok == n / 2 && pos * 2 >= n - 1 && pos * 2 <= n + 1, name,
		      "%zu of %zu pairs, %zu above", pairs_ok, n / 2, pos);
		snprintf(name, sizeof(name),
			 "%u Hz: no change before due; each rate held 1-3 times max(%.2f s, %d periods)",
			 f, JITTER_SPAN_S, JITTER_SPAN_TICKS);
		{
			double base = (double)JITTER_SPAN_TICKS / f > JITTER_SPAN_S ?
					      (double)JITTER_SPAN_TICKS / f :
					      JITTER_SPAN_S;

			CHECK(early == 0 && span_min >= base && span_max <= 3 * base, name,
			      "%d early, spans %.3f-%.3f s, base %.3f", early, span_min, span_max,
			      base);
		}
	}

	/* CPUs change together (one wakeup a span), each at a rate of its own */
	if (jitter_init(&j, 99, 8, 7, 100) == 0) {
		uint64_t p[8];
		int distinct = 0, zero = 0;
		double first = j.next_due;

		zero = jitter_next(&j, 0, first - 0.001) != 0;
		for (int i = 0; i < 8; i++)
			p[i] = jitter_next(&j, i, first);
		jitter_end_round(&j, first);
		for (int i = 1; i < 8; i++)
			distinct += p[i] != p[0];
		CHECK(!zero && p[0] && distinct >= 6 && !jitter_due(&j, first) &&
			      jitter_next(&j, 0, first + 0.001) == 0,
		      "CPUs change together, each at a rate of its own, none before due",
		      "%d distinct, early %d", distinct, zero);

		/* a refused period: the CPU reckoned as it was, counted */
		{
			double next = j.next_due;
			uint64_t before = j.cpu[3].period_ns, changes = j.st.changes;

			jitter_next(&j, 3, next);
			jitter_failed(&j);
			CHECK(j.cpu[3].period_ns == before && j.st.failed == 1 &&
				      j.st.changes == changes,
			      "a period the kernel refused: the CPU as it was, counted",
			      "period %llu (was %llu), %llu failed",
			      (unsigned long long)j.cpu[3].period_ns, (unsigned long long)before,
			      (unsigned long long)j.st.failed);
		}
		jitter_free(&j);
	}
	return T_EXIT();
}
