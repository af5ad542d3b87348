// SPDX-License-Identifier: MIT
/*
 * grace: waits run on the worker, a ticket is ended only by a wait that
 * began after it was given, the fd tells when one ends, a wait's error
 * comes back to whoever waited for it, and the worker takes no signals.
 * The "grace period" here is a read of a pipe the test writes to.  The
 * worker's hooks run where they should, and it starts in its caller's
 * scheduling class.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include "sampling/grace.h"
#include "testlib.h"

struct fake {
	int gate[2];       /* each byte written ends one wait */
	int started;       /* waits begun */
	int fail_at;       /* the wait (1-based) that returns -EIO */
	bool sigs_blocked; /* SIGINT, SIGALRM, SIGTERM blocked in every wait */
};

static int fake_wait(void *ctx)
{
	struct fake *f = ctx;
	sigset_t set;
	char c;
	int n = __atomic_add_fetch(&f->started, 1, __ATOMIC_SEQ_CST);

	pthread_sigmask(SIG_BLOCK, NULL, &set);
	if (!sigismember(&set, SIGINT) || !sigismember(&set, SIGALRM) ||
	    !sigismember(&set, SIGTERM))
		f->sigs_blocked = false;
	if (read(f->gate[0], &c, 1) != 1)
		return -EPIPE;
	return n == f->fail_at ? -EIO : 0;
}

/* What the hooks saw: each counts its calls; @policy is the worker's class at start. */
struct hooked {
	int start, before, end;
	int policy;
	int waits_at_before; /* waits begun when the last @before ran */
	struct fake *f;
};

static void on_start(void *ctx)
{
	struct hooked *h = ctx;

	h->policy = sched_getscheduler(0) & ~SCHED_RESET_ON_FORK;
	__atomic_add_fetch(&h->start, 1, __ATOMIC_SEQ_CST);
}

static void on_before(void *ctx)
{
	struct hooked *h = ctx;

	h->waits_at_before = __atomic_load_n(&h->f->started, __ATOMIC_SEQ_CST);
	__atomic_add_fetch(&h->before, 1, __ATOMIC_SEQ_CST);
}

static void on_end(void *ctx)
{
	struct hooked *h = ctx;

	__atomic_add_fetch(&h->end, 1, __ATOMIC_SEQ_CST);
}

/* Until the worker has begun @n waits (5 s at most). */
static bool started(struct fake *f, int n)
{
	for (int i = 0; i < 5000; i++) {
		if (__atomic_load_n(&f->started, __ATOMIC_SEQ_CST) >= n)
			return true;
		usleep(1000);
	}
	return false;
}

static void release(struct fake *f)
{
	char c = 1;

	if (write(f->gate[1], &c, 1) != 1)
		t_failed++;
}

static bool readable(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, ms) == 1;
}

int main(void)
{
	struct fake f = { .fail_at = 3, .sigs_blocked = true };
	struct grace g;
	uint64_t t1, t2, t3;

	T_PLAN(17);
	if (pipe(f.gate))
		return 1;
	CHECK(grace_start(&g, fake_wait, &f, NULL) == 0, "grace_start", "failed");

	t1 = grace_ask(&g);
	CHECK(t1 != 0 && started(&f, 1), "a wait asked for begins on the worker",
	      "ticket %llu, started %d", (unsigned long long)t1, f.started);
	CHECK(!grace_passed(&g, t1) && !readable(grace_fd(&g), 50),
	      "not passed while the wait runs", "passed %d", grace_passed(&g, t1));

	/* Asked during the first wait: that wait began before, so it cannot end it. */
	t2 = grace_ask(&g);
	release(&f);
	CHECK(readable(grace_fd(&g), 5000) && grace_passed(&g, t1),
	      "the end of a wait: fd readable, its ticket passed", "passed %d",
	      grace_passed(&g, t1));
	CHECK(!grace_passed(&g, t2) && started(&f, 2),
	      "a ticket given during a wait needs the next one", "passed %d started %d",
	      grace_passed(&g, t2), f.started);
	grace_ack(&g);
	CHECK(!readable(grace_fd(&g), 0), "grace_ack: the fd quiet again", "still readable");
	release(&f);
	CHECK(grace_wait(&g, t2) == 0 && grace_passed(&g, t2), "grace_wait blocks until it ends",
	      "passed %d", grace_passed(&g, t2));
	CHECK(grace_wait(&g, t1) == 0, "grace_wait on an old ticket returns at once", "failed");

	/* The third wait fails: whoever waits for it hears so. */
	t3 = grace_ask(&g);
	CHECK(started(&f, 3), "a third wait", "started %d", f.started);
	release(&f);
	CHECK(grace_wait(&g, t3) == -EIO, "a failed wait's error to its waiter", "no error");

	CHECK(f.sigs_blocked, "signals blocked in the worker", "a signal is deliverable there");
	grace_stop(&g);
	CHECK(f.started == 3, "grace_stop: an idle worker ends, no wait more", "started %d",
	      f.started);
	grace_stop(&g);
	T_OK("grace_stop twice");
	close(f.gate[0]);
	close(f.gate[1]);

	/* Hooks, from a real-time caller (root): the worker starts real-time too. */
	{
		struct fake f2 = { .sigs_blocked = true };
		struct hooked h = { .f = &f2, .policy = -1 };
		const struct grace_hooks hooks = { on_start, on_before, on_end, &h };
		struct sched_param sp = { .sched_priority = 1 };
		bool rt = sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &sp) == 0;

		if (pipe(f2.gate) || grace_start(&g, fake_wait, &f2, &hooks))
			return 1;
		sp.sched_priority = 0;
		if (rt)
			sched_setscheduler(0, SCHED_OTHER, &sp);
		t1 = grace_ask(&g);
		CHECK(started(&f2, 1) && h.start == 1 && h.before == 1 && h.waits_at_before == 0,
		      "hooks: start once, before ahead of each wait", "start %d before %d (waits %d)",
		      h.start, h.before, h.waits_at_before);
		release(&f2);
		grace_wait(&g, t1);
		t2 = grace_ask(&g);
		release(&f2);
		grace_wait(&g, t2);
		CHECK(h.before == 2 && h.end == 0, "hooks: before each wait, no end while it runs",
		      "before %d end %d", h.before, h.end);
		grace_stop(&g);
		CHECK(h.end == 1, "hooks: end once as the worker ends", "end %d", h.end);
		if (rt)
			CHECK(h.policy == SCHED_FIFO,
			      "a real-time caller's worker starts real-time, not as a new task"
			      " queued behind the load", "policy %d", h.policy);
		else
			T_SKIP("a real-time caller's worker starts real-time",
			       "no CAP_SYS_NICE here: the real-time class cannot be had");
		close(f2.gate[0]);
		close(f2.gate[1]);
	}
	return T_EXIT();
}
