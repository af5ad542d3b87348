// SPDX-License-Identifier: MIT
/*
 * grace.c: blocking waits on a worker thread (see grace.h).
 */
#include <assert.h>
#include <sched.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

#include "sampling/grace.h"
#include "util/sched_attr.h"

static_assert(sizeof(((struct grace *)0)->done) == 8, "done is read without the lock");

static void hook(void (*fn)(void *), void *ctx)
{
	if (fn)
		fn(ctx);
}

static void *worker(void *arg)
{
	struct grace *g = arg;
	uint64_t one = 1;

	/* A negative nice value is per thread, and not inherited here. */
	setpriority(PRIO_PROCESS, 0, g->nice);
	hook(g->hooks.start, g->hooks.ctx);
	pthread_mutex_lock(&g->lock);
	for (;;) {
		uint64_t target;
		int ret;

		while (!g->quit && g->done == g->asked)
			pthread_cond_wait(&g->asked_cv, &g->lock);
		if (g->quit)
			break;
		/* Every ticket given so far: this wait starts after each of them. */
		target = g->asked;
		pthread_mutex_unlock(&g->lock);
		hook(g->hooks.before, g->hooks.ctx);
		ret = g->wait(g->ctx);
		pthread_mutex_lock(&g->lock);
		g->err = ret;
		__atomic_store_n(&g->done, target, __ATOMIC_RELEASE);
		pthread_cond_broadcast(&g->done_cv);
		if (write(g->fd, &one, sizeof(one)) < 0) {
			/* cannot fill: it would take 2^64 writes unread */
		}
	}
	pthread_mutex_unlock(&g->lock);
	hook(g->hooks.end, g->hooks.ctx);
	return NULL;
}

int grace_start(struct grace *g, int (*wait)(void *ctx), void *ctx,
		const struct grace_hooks *hooks)
{
	pthread_attr_t attr;
	sigset_t all, old;
	int ret;

	*g = (struct grace){ .wait = wait, .ctx = ctx, .fd = -1 };
	if (hooks)
		g->hooks = *hooks;
	g->fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (g->fd < 0)
		return -errno;
	errno = 0;
	g->nice = getpriority(PRIO_PROCESS, 0);
	if (errno)
		g->nice = 0;
	pthread_mutex_init(&g->lock, NULL);
	pthread_cond_init(&g->asked_cv, NULL);
	pthread_cond_init(&g->done_cv, NULL);
	/* The worker inherits this mask: every signal is for the caller's thread. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = -pthread_attr_init(&attr);
	if (!ret) {
		sched_attr_like_caller(&attr);
		ret = -pthread_create(&g->worker, &attr, worker, g);
		pthread_attr_destroy(&attr);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		pthread_cond_destroy(&g->done_cv);
		pthread_cond_destroy(&g->asked_cv);
		pthread_mutex_destroy(&g->lock);
		close(g->fd);
		g->fd = -1;
		return ret;
	}
	g->started = true;
	return 0;
}

uint64_t grace_ask(struct grace *g)
{
	uint64_t ticket;

	pthread_mutex_lock(&g->lock);
	ticket = ++g->asked;
	pthread_cond_signal(&g->asked_cv);
	pthread_mutex_unlock(&g->lock);
	return ticket;
}

bool grace_passed(struct grace *g, uint64_t ticket)
{
	return __atomic_load_n(&g->done, __ATOMIC_ACQUIRE) >= ticket;
}

int grace_wait(struct grace *g, uint64_t ticket)
{
	int ret;

	pthread_mutex_lock(&g->lock);
	while (g->done < ticket)
		pthread_cond_wait(&g->done_cv, &g->lock);
	ret = g->err;
	pthread_mutex_unlock(&g->lock);
	return ret;
}

int grace_fd(const struct grace *g)
{
	return g->fd;
}

void grace_ack(struct grace *g)
{
	uint64_t n;

	if (read(g->fd, &n, sizeof(n)) < 0) {
		/* EAGAIN: already quiet */
	}
}

void grace_stop(struct grace *g)
{
	if (!g->started)
		return;
	pthread_mutex_lock(&g->lock);
	g->quit = true;
	pthread_cond_signal(&g->asked_cv);
	pthread_mutex_unlock(&g->lock);
	pthread_join(g->worker, NULL);
	pthread_cond_destroy(&g->done_cv);
	pthread_cond_destroy(&g->asked_cv);
	pthread_mutex_destroy(&g->lock);
	close(g->fd);
	g->fd = -1;
	g->started = false;
}
