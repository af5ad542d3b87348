/* SPDX-License-Identifier: MIT */
/*
 * grace: a blocking wait done on a worker thread, so that its caller goes
 * on with its work meanwhile.
 *
 * The sampler waits for an RCU grace period (sync_outer in cprof.bpf.c)
 * before it reads the map pair BPF programs no longer write: a
 * synchronize_rcu() in the kernel, which on a loaded host takes 10 ms to
 * over half a second.  Done on the loader's thread, it held up the events
 * of new processes that long.  Here a worker does the waits: the caller
 * asks for one (grace_ask() gives a ticket), learns that it has ended
 * through a file descriptor it can poll with its other ones, or blocks for
 * it (grace_wait()).  A wait asked for while another runs is a new one: a
 * ticket is only ended by a wait that started after it was given.
 *
 * Only the worker calls @wait; the rest is called from one thread.
 */
#ifndef CPROF_GRACE_H
#define CPROF_GRACE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * What the worker does around its waits, for its own scheduling (main.c
 * gives it real-time steps: priority.h): @start once in the worker before
 * its first wait, @before before each wait, @end before it ends.  Any may
 * be NULL.
 */
struct grace_hooks {
	void (*start)(void *ctx);
	void (*before)(void *ctx);
	void (*end)(void *ctx);
	void *ctx;
};

struct grace {
	int (*wait)(void *ctx); /* the blocking wait: 0 or a negative errno */
	void *ctx;
	pthread_t worker;
	pthread_mutex_t lock;
	pthread_cond_t asked_cv, done_cv;
	uint64_t asked, done; /* tickets given, and the last one a wait ended */
	int err;              /* of the last wait ended */
	bool quit;
	bool started;
	int nice; /* the caller's, for the worker: it wakes the caller no later */
	struct grace_hooks hooks;
	int fd;   /* eventfd: readable once a wait has ended */
};

/*
 * Starts the worker, which calls @wait(@ctx) for each wait asked for, and
 * @hooks (may be NULL) around them.  Signals are blocked in it, so they
 * all come to the caller's thread (but those its hooks unblock).
 * 0 or a negative errno.
 */
int grace_start(struct grace *g, int (*wait)(void *ctx), void *ctx,
		const struct grace_hooks *hooks);

/* Asks for a wait that starts from now; returns its ticket (never 0). */
uint64_t grace_ask(struct grace *g);

/* Whether the wait of @ticket has ended (successfully or not). */
bool grace_passed(struct grace *g, uint64_t ticket);

/* Blocks until the wait of @ticket has ended: 0 or its negative errno. */
int grace_wait(struct grace *g, uint64_t ticket);

/* Readable (EPOLLIN) when a wait has ended; grace_ack() makes it quiet again. */
int grace_fd(const struct grace *g);
void grace_ack(struct grace *g);

/* Ends the worker (after the wait it is in, if any); safe on a zeroed struct. */
void grace_stop(struct grace *g);

#endif
