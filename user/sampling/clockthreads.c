// SPDX-License-Identifier: MIT
/*
 * clockthreads: a thread a CPU that varies its sampling clock
 * (clockthreads.h).
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/sched_attr.h"
#include "sampling/clockthreads.h"

/* The longest timer slack: a wakeup later than its round by more would be a span of its own. */
#define CLOCKTHREADS_SLACK_MAX_NS 20000000ULL

struct clockthread {
	struct clockthreads *all;
	pthread_t thread;
	bool running;
	int cpu;
	struct jitter jitter; /* this CPU's, as CPU 0 of one: the thread's alone */
	pthread_mutex_t lock; /* over shown */
	struct jitter_stats shown; /* jitter.st as of the last round, for clockthreads_stats() */
};

struct clockthreads {
	clockthreads_set_fn set;
	void *ctx;
	int stop_fd; /* an eventfd: readable once the threads are to end */
	int nice;    /* the maker's: per thread, not inherited */
	uint64_t slack_ns;
	int n;
	struct clockthread t[];
};

/* Waits @s seconds, or until stopped: whether to go on. */
static bool sleep_unless_stopped(const struct clockthreads *c, double s)
{
	struct pollfd p = { .fd = c->stop_fd, .events = POLLIN };
	struct timespec ts = { .tv_sec = (time_t)s, .tv_nsec = (long)((s - (time_t)s) * 1e9) };

	return ppoll(&p, 1, &ts, NULL) == 0 || (p.revents & POLLIN) == 0;
}

static void *vary(void *arg)
{
	struct clockthread *t = arg;
	struct clockthreads *c = t->all;

	setpriority(PRIO_PROCESS, 0, c->nice);
	prctl(PR_SET_TIMERSLACK, (unsigned long)c->slack_ns);
	for (;;) {
		double now = clock_s(CLOCK_MONOTONIC), wait = jitter_wait(&t->jitter, now);
		uint64_t ns;
		int err;

		if (wait > 0) {
			if (!sleep_unless_stopped(c, wait))
				break;
			continue;
		}
		ns = jitter_next(&t->jitter, 0, now);
		err = ns ? c->set(c->ctx, t->cpu, ns) : 0;
		if (err == -ENOENT) {
			jitter_not_sampled(&t->jitter);
			break;
		}
		if (err)
			jitter_failed(&t->jitter);
		jitter_end_round(&t->jitter, now);
		pthread_mutex_lock(&t->lock);
		t->shown = t->jitter.st;
		pthread_mutex_unlock(&t->lock);
	}
	return NULL;
}

/* What @from did, into @to: counts added, the rates' range widened. */
static void add_stats(struct jitter_stats *to, const struct jitter_stats *from)
{
	to->changes += from->changes;
	to->failed += from->failed;
	if (from->rate_min && (!to->rate_min || from->rate_min < to->rate_min))
		to->rate_min = from->rate_min;
	if (from->rate_max > to->rate_max)
		to->rate_max = from->rate_max;
}

void clockthreads_stats(struct clockthreads *c, struct jitter_stats *st)
{
	*st = (struct jitter_stats){ 0 };
	for (int i = 0; c && i < c->n; i++) {
		pthread_mutex_lock(&c->t[i].lock);
		add_stats(st, &c->t[i].shown);
		pthread_mutex_unlock(&c->t[i].lock);
	}
}

void clockthreads_stop(struct clockthreads *c, struct jitter_stats *st)
{
	uint64_t one = 1;
	cpu_set_t any;

	if (!c)
		return;
	if (write(c->stop_fd, &one, sizeof(one)) < 0) {
		/* an eventfd takes a write until 2^64 - 2 are unread */
	}
	/*
	 * A thread's CPU may be held by a real-time task above the agent (a
	 * busy-polling thread): pinned there, it would not run to see the
	 * stop until that task let go, and the join would wait for it.  Let
	 * loose on the agent's CPUs, it ends on any other.
	 */
	if (sched_getaffinity(0, sizeof(any), &any))
		CPU_ZERO(&any);
	for (int i = 0; i < c->n; i++)
		if (c->t[i].running && CPU_COUNT(&any))
			pthread_setaffinity_np(c->t[i].thread, sizeof(any), &any);
	for (int i = 0; i < c->n; i++) {
		if (c->t[i].running)
			pthread_join(c->t[i].thread, NULL);
		if (st)
			add_stats(st, &c->t[i].jitter.st);
		jitter_free(&c->t[i].jitter);
		pthread_mutex_destroy(&c->t[i].lock);
	}
	close(c->stop_fd);
	free(c);
}

/* The thread for @t, in the caller's class with every signal blocked; 0 or an errno. */
static int start_one(struct clockthread *t)
{
	pthread_attr_t attr;
	sigset_t all, old;
	int ret;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = pthread_attr_init(&attr);
	if (!ret) {
		cpu_set_t one;

		/*
		 * Pinned from its start, not by itself once it runs: the stop
		 * may let it loose before it first ran (clockthreads_stop).
		 * Off its CPU (not in the agent's set) it still works, at the
		 * cost the thread is for.
		 */
		CPU_ZERO(&one);
		CPU_SET(t->cpu, &one);
		pthread_attr_setaffinity_np(&attr, sizeof(one), &one);
		sched_attr_like_caller(&attr);
		ret = pthread_create(&t->thread, &attr, vary, t);
		if (ret == EINVAL) { /* a CPU outside the agent's set */
			pthread_attr_destroy(&attr);
			pthread_attr_init(&attr);
			sched_attr_like_caller(&attr);
			ret = pthread_create(&t->thread, &attr, vary, t);
		}
		pthread_attr_destroy(&attr);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	t->running = !ret;
	return ret;
}

int clockthreads_start(struct clockthreads **out, int ncpus, unsigned int freq, uint64_t seed,
		       clockthreads_set_fn set, void *ctx, struct errbuf *err)
{
	double now = clock_s(CLOCK_MONOTONIC);
	struct clockthreads *c;
	int ret = 0;

	*out = NULL;
	if (ncpus <= 0 || !freq || !set)
		return errf(err, -EINVAL, "varying the sampling clocks: nothing to vary");
	c = calloc(1, sizeof(*c) + (size_t)ncpus * sizeof(c->t[0]));
	if (!c)
		return errf(err, -ENOMEM, "varying the sampling clocks: out of memory");
	c->set = set;
	c->ctx = ctx;
	c->n = ncpus;
	c->slack_ns = 1000000000ULL / freq;
	if (c->slack_ns > CLOCKTHREADS_SLACK_MAX_NS)
		c->slack_ns = CLOCKTHREADS_SLACK_MAX_NS;
	errno = 0;
	c->nice = getpriority(PRIO_PROCESS, 0);
	if (errno)
		c->nice = 0;
	c->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (c->stop_fd < 0) {
		ret = errf(err, -errno, "varying the sampling clocks: eventfd: %s", strerror(errno));
		free(c);
		return ret;
	}
	for (int i = 0; i < ncpus && !ret; i++) {
		struct clockthread *t = &c->t[i];

		t->all = c;
		t->cpu = i;
		pthread_mutex_init(&t->lock, NULL);
		/* a seed of each CPU's own: their rates drawn apart */
		ret = jitter_init(&t->jitter, freq, 1, seed ^ (0x9E3779B97F4A7C15ULL * (i + 1)), now);
		if (ret) {
			errf(err, ret, "varying the sampling clocks: out of memory");
			break;
		}
		ret = start_one(t);
		if (ret)
			ret = errf(err, -ret, "varying the sampling clocks: a thread for CPU %d: %s", i,
				   strerror(ret));
	}
	if (ret) {
		clockthreads_stop(c, NULL);
		return ret;
	}
	*out = c;
	return 0;
}
