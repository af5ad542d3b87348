/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * budget.bpf.h: rates a CPU keeps to, for what costs too much to do at
 * every event that asks for it: off-CPU stack walks, deferred samples, VMA
 * walks (exit records, a new program's libraries).  Per CPU, so no lock.
 */
#ifndef CPROF_BUDGET_BPF_H
#define CPROF_BUDGET_BPF_H

#include "base.bpf.h"

/* What this CPU did of something it does at most so many times a second. */
struct rate_budget {
	__u64 second;
	__u64 used;
};

/* One more of at most @limit a second on this CPU, counted in @b: false when spent. */
static __always_inline bool budget_take(struct rate_budget *b, __u64 now, __u64 limit)
{
	__u64 second = now / 1000000000ULL;

	if (b->second != second) {
		b->second = second;
		b->used = 0;
	}
	if (b->used >= limit)
		return false;
	b->used++;
	return true;
}

/*
 * A VMA walk's budget: walks a second on this CPU, and the VMAs the walk
 * under way looked at (in the map, so that the verifier does not follow
 * the loop value by value).  exitmaps.bpf.h's and ldstate.bpf.h's.
 */
struct vma_walk {
	struct rate_budget walks;
	__u64 seen;
};

/* @map's (a vma_walk array) if this CPU may walk once more this second, else NULL. */
static __always_inline struct vma_walk *take_vma_walk(void *map, __u32 per_second)
{
	__u32 zero = 0;
	struct vma_walk *w = bpf_map_lookup_elem(map, &zero);

	if (!w || !budget_take(&w->walks, bpf_ktime_get_ns(), per_second))
		return NULL;
	w->seen = 0;
	return w;
}

#endif
