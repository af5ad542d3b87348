// SPDX-License-Identifier: MIT
#include <errno.h>
#include <string.h>

#include "process/aggregate.h"

void aggregate_init(struct aggregate *a)
{
	memset(a, 0, sizeof(*a));
	hmap_init(&a->map, sizeof(struct aggregate_key), sizeof(struct aggregate_entry));
}

void aggregate_free(struct aggregate *a)
{
	hmap_free(&a->map);
}

/*
 * Adds @count samples and @ns of waiting to @k's thread and stacks; a user
 * stack stored apart from its leaf pc (cprof_sample_key.uleaf), or a
 * Python stack apart from its innermost position (pyleaf), is joined to
 * it in @stacks.
 */
static int add(struct aggregate *a, struct stackstore *stacks,
	       const struct cprof_sample_key *k, uint64_t count, uint64_t ns)
{
	struct aggregate_key key;
	struct aggregate_entry *e;

	memset(&key, 0, sizeof(key));
	key.tid = k->tid;
	key.ustack = k->ustack;
	if (k->uleaf && (k->ustack & CPROF_STACK_HASHED) &&
	    stackstore_leaf(stacks, k->ustack, 0, k->uleaf, &key.ustack))
		return -ENOMEM;
	key.kstack = k->kstack;
	key.pystack = k->pystack;
	/* a Python frame is two words: its code object, then its position */
	if (k->pyleaf && (k->pystack & CPROF_STACK_HASHED) &&
	    stackstore_leaf(stacks, k->pystack, 1, k->pyleaf, &key.pystack))
		return -ENOMEM;
	memcpy(key.comm, k->comm, sizeof(key.comm));
	key.comm[sizeof(key.comm) - 1] = '\0';
	e = hmap_insert(&a->map, &key, NULL);
	if (!e)
		return -ENOMEM;
	e->count += count;
	e->off_cpu_ns += ns;
	a->samples += count;
	a->off_cpu_ns += ns;
	return 0;
}

int aggregate_add(struct aggregate *a, struct stackstore *stacks,
		  const struct cprof_sample_key *k, uint64_t count)
{
	return add(a, stacks, k, count, 0);
}

int aggregate_add_off_cpu(struct aggregate *a, struct stackstore *stacks,
			  const struct cprof_sample_key *k, uint64_t ns)
{
	return add(a, stacks, k, 0, ns);
}

bool aggregate_empty(const struct aggregate *a)
{
	return !a->samples && !a->off_cpu_ns && !aggregate_lost_total(a);
}

void aggregate_add_lost(struct aggregate *a, const struct cprof_lost *l)
{
	for (int i = 0; i < CPROF_LOST_REASON_MAX; i++)
		a->lost[i] += l->n[i];
}

uint64_t aggregate_lost_total(const struct aggregate *a)
{
	uint64_t n = 0;

	for (int i = 0; i < CPROF_LOST_REASON_MAX; i++)
		n += a->lost[i];
	return n;
}

void aggregate_reset(struct aggregate *a)
{
	hmap_clear(&a->map);
	memset(a->lost, 0, sizeof(a->lost));
	a->samples = 0;
	a->off_cpu_ns = 0;
}
