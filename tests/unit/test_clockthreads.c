// SPDX-License-Identifier: MIT
/*
 * sampling/clockthreads.c with a recording setter in place of the
 * kernel's: every CPU's period is set by a thread on that CPU (the point
 * of the module: no cross-CPU call), at rates within the spread, none
 * before the first span; a CPU not sampled (-ENOENT) ends its thread
 * alone; a refusal is counted; stop joins at once and sums what was done,
 * even with a CPU held by a real-time spinner above the agent.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"
#include "sampling/clockthreads.h"
#include "testlib.h"

#define FREQ 1000
#define MAXCPU 64

struct record {
	pthread_mutex_t lock;
	int ncpus;
	unsigned long calls[MAXCPU], off_cpu[MAXCPU];
	uint64_t lo[MAXCPU], hi[MAXCPU];
	int enoent_cpu;  /* this CPU is "not sampled" */
	int refuse_cpu;  /* the kernel refuses this CPU's first period */
	unsigned long refused;
	double first;    /* CLOCK_MONOTONIC of the first call */
};

static int record_set(void *ctx, int cpu, uint64_t ns)
{
	struct record *r = ctx;
	int ret = 0;

	pthread_mutex_lock(&r->lock);
	if (!r->first)
		r->first = clock_s(CLOCK_MONOTONIC);
	if (cpu >= 0 && cpu < MAXCPU) {
		r->calls[cpu]++;
		if (sched_getcpu() != cpu)
			r->off_cpu[cpu]++;
		if (!r->lo[cpu] || ns < r->lo[cpu])
			r->lo[cpu] = ns;
		if (ns > r->hi[cpu])
			r->hi[cpu] = ns;
	}
	if (cpu == r->enoent_cpu)
		ret = -ENOENT;
	else if (cpu == r->refuse_cpu && r->calls[cpu] == 1)
		ret = -EINVAL, r->refused++;
	pthread_mutex_unlock(&r->lock);
	return ret;
}

/* The CPUs this process may run on, as the agent would see them (all, here). */
static int online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > MAXCPU ? MAXCPU : (int)n;
}

/* A SCHED_FIFO 50 thread spinning on one CPU until told, as a busy-polling one does. */
struct spinner {
	int cpu;
	volatile bool stop;
};

static void *spin(void *arg)
{
	struct spinner *sp = arg;
	double end = clock_s(CLOCK_MONOTONIC) + 5;

	while (!sp->stop && clock_s(CLOCK_MONOTONIC) < end)
		;
	return NULL;
}

/* Stop with the last CPU held by a real-time spinner: it lets that CPU's thread loose. */
static void stop_beside_spinner(int n)
{
	struct record r = { .lock = PTHREAD_MUTEX_INITIALIZER, .enoent_cpu = -1, .refuse_cpu = -1 };
	struct sched_param prio = { .sched_priority = 50 };
	struct spinner sp = { .cpu = n - 1 };
	struct clockthreads *c = NULL;
	struct errbuf err = { "" };
	pthread_attr_t attr;
	pthread_t th;
	cpu_set_t one;
	double t;

	if (n < 2) {
		T_SKIP("stop beside a real-time spinner", "needs 2 CPUs");
		return;
	}
	CPU_ZERO(&one);
	CPU_SET(sp.cpu, &one);
	pthread_attr_init(&attr);
	pthread_attr_setaffinity_np(&attr, sizeof(one), &one);
	pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
	pthread_attr_setschedparam(&attr, &prio);
	if (pthread_create(&th, &attr, spin, &sp)) {
		pthread_attr_destroy(&attr);
		T_SKIP("stop beside a real-time spinner", "no real-time threads here (CAP_SYS_NICE)");
		return;
	}
	pthread_attr_destroy(&attr);
	usleep(100000);
	/*
	 * The agent's threads in the real-time class below the spinner, as
	 * when it has raised itself: nothing lets them onto its CPU.
	 */
	prio.sched_priority = 1;
	pthread_setschedparam(pthread_self(), SCHED_FIFO, &prio);
	CHECK(clockthreads_start(&c, n, FREQ, 7, record_set, &r, &err) == 0, "start beside a spinner",
	      "%s", err.msg);
	usleep(300000);
	t = clock_s(CLOCK_MONOTONIC);
	clockthreads_stop(c, NULL);
	t = clock_s(CLOCK_MONOTONIC) - t;
	prio.sched_priority = 0;
	pthread_setschedparam(pthread_self(), SCHED_OTHER, &prio);
	sp.stop = true;
	pthread_join(th, NULL);
	CHECK(t < 1, "stop beside a real-time spinner holding a CPU: at once, not when it is done (5 s)",
	      "%.3f s", t);
}

int main(void)
{
	struct record r = { .lock = PTHREAD_MUTEX_INITIALIZER, .enoent_cpu = -1, .refuse_cpu = 0 };
	struct clockthreads *c = NULL;
	struct jitter_stats st = { 0 }, live;
	struct errbuf err = { "" };
	double t0 = clock_s(CLOCK_MONOTONIC), stop_s;
	unsigned long total = 0, off = 0, nominal = 1000000000UL / FREQ;
	bool in_spread = true;
	int n = online_cpus(), ret;

	T_PLAN(15);
	r.ncpus = n;
	if (n > 1)
		r.enoent_cpu = n - 1;
	ret = clockthreads_start(&c, n, FREQ, 42, record_set, &r, &err);
	CHECK(ret == 0 && c, "clockthreads_start", "%d: %s", ret, err.msg);
	if (ret)
		return T_EXIT();
	/* 0.05-0.15 s spans at 1000 Hz: several rounds a CPU in 1.2 s */
	usleep(1200000);
	clockthreads_stats(c, &live);
	stop_s = clock_s(CLOCK_MONOTONIC);
	clockthreads_stop(c, &st);
	stop_s = clock_s(CLOCK_MONOTONIC) - stop_s;

	for (int i = 0; i < n; i++) {
		total += r.calls[i];
		off += r.off_cpu[i];
		if (r.calls[i] && (r.lo[i] < nominal / 1.3 - 1000 || r.hi[i] > nominal / 0.7 + 1000))
			in_spread = false;
	}
	CHECK(off == 0, "every period set from a thread on its own CPU",
	      "%lu of %lu calls ran elsewhere", off, total);
	for (int i = 0; i < n; i++) {
		if (i == r.enoent_cpu)
			CHECK(r.calls[i] == 1, "a CPU not sampled (-ENOENT): its thread asks once and ends",
			      "CPU %d asked %lu times", i, r.calls[i]);
		else
			CHECK(r.calls[i] >= 4, "each sampled CPU's period changed every 0.05-0.15 s",
			      "CPU %d: %lu changes in 1.2 s", i, r.calls[i]);
	}
	CHECK(in_spread, "periods within 30% of the nominal rate's", "a period out of range");
	CHECK(r.first - t0 < 0.15 + 0.05, "the first change within a span of the start",
	      "after %.3f s", r.first - t0);
	CHECK(st.failed == r.refused && r.refused == 1, "a refused period counted",
	      "%llu counted, %lu refused", (unsigned long long)st.failed, r.refused);
	CHECK(st.changes + st.failed == total - (r.enoent_cpu >= 0),
	      "stop sums every thread's changes", "%llu + %llu of %lu calls",
	      (unsigned long long)st.changes, (unsigned long long)st.failed, total);
	CHECK(live.changes > 0 && live.changes <= st.changes,
	      "the running total is what was done so far", "%llu then %llu",
	      (unsigned long long)live.changes, (unsigned long long)st.changes);
	CHECK(st.rate_min >= FREQ * 0.7 - 1 && st.rate_max <= FREQ * 1.3 + 1 &&
		      st.rate_min < st.rate_max,
	      "the rates' range summed over the threads", "%.1f-%.1f Hz", st.rate_min, st.rate_max);
	CHECK(stop_s < 0.1, "stop wakes the sleeping threads at once", "%.3f s", stop_s);
	CHECK(clockthreads_start(&c, 0, FREQ, 1, record_set, &r, &err) == -EINVAL && !c,
	      "no CPUs: -EINVAL, nothing started", "started");
	clockthreads_stop(NULL, NULL);
	T_OK("stop of none");
	stop_beside_spinner(n);
	return T_EXIT();
}
