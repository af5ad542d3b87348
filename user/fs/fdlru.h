/* SPDX-License-Identifier: MIT */
/*
 * fdlru: one global bound on the descriptors the agent keeps open for
 * processes (their objects' files, their perf maps), so that a process
 * mapping 20,000 files can't starve everything else of descriptors.
 *
 * An owner embeds a node and tells the list when it holds a descriptor and
 * when it uses it; beyond the bound, the least recently used is closed
 * through the node's evict callback, and its owner reopens it when it needs
 * it again.  The list knows nothing of files: only of nodes.
 */
#ifndef CPROF_FDLRU_H
#define CPROF_FDLRU_H

#include <stdbool.h>
#include <stddef.h>

struct fdlru_node {
	struct fdlru_node *prev, *next; /* both NULL while nothing is held */
	/* Closes the owner's descriptor; called on eviction only. */
	void (*evict)(struct fdlru_node *n);
};

struct fdlru_stats {
	size_t held, peak;
	size_t evicted; /* descriptors closed for the bound */
};

struct fdlru {
	struct fdlru_node head; /* circular: head.next most recent */
	size_t max;             /* 0: no bound */
	struct fdlru_stats st;
};

void fdlru_init(struct fdlru *l, size_t max);

/*
 * @n now holds a descriptor (most recently used).  Beyond the bound the
 * least recently used other nodes are evicted.
 */
void fdlru_hold(struct fdlru *l, struct fdlru_node *n);

/* @n's descriptor was just used. */
void fdlru_touch(struct fdlru *l, struct fdlru_node *n);

/* @n's owner closed its descriptor itself (or never held one). */
void fdlru_drop(struct fdlru *l, struct fdlru_node *n);

static inline bool fdlru_holds(const struct fdlru_node *n)
{
	return n->next != NULL;
}

#endif
