// SPDX-License-Identifier: MIT
#include "fs/fdlru.h"

void fdlru_init(struct fdlru *l, size_t max)
{
	l->head.prev = l->head.next = &l->head;
	l->head.evict = NULL;
	l->max = max;
	l->st = (struct fdlru_stats){ 0 };
}

static void unlink_node(struct fdlru_node *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->prev = n->next = NULL;
}

static void push_front(struct fdlru *l, struct fdlru_node *n)
{
	n->prev = &l->head;
	n->next = l->head.next;
	l->head.next->prev = n;
	l->head.next = n;
}

void fdlru_hold(struct fdlru *l, struct fdlru_node *n)
{
	if (fdlru_holds(n)) {
		fdlru_touch(l, n);
		return;
	}
	push_front(l, n);
	l->st.held++;
	/* @n is at the front: with max >= 1 it is never the one evicted. */
	while (l->max && l->st.held > l->max && l->head.prev != n) {
		struct fdlru_node *victim = l->head.prev;

		unlink_node(victim);
		l->st.held--;
		l->st.evicted++;
		victim->evict(victim);
	}
	if (l->st.held > l->st.peak)
		l->st.peak = l->st.held;
}

void fdlru_touch(struct fdlru *l, struct fdlru_node *n)
{
	if (!fdlru_holds(n) || l->head.next == n)
		return;
	unlink_node(n);
	push_front(l, n);
}

void fdlru_drop(struct fdlru *l, struct fdlru_node *n)
{
	if (!fdlru_holds(n))
		return;
	unlink_node(n);
	l->st.held--;
}
