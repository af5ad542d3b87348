/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * defer.bpf.h: a sample whose user walk met a frame in a file whose table
 * is still to be built (unwind.bpf.h's note_defer()) is sent, instead of
 * being counted, to be walked again from that frame once the table is
 * there (struct cprof_deferred; the loader's user/unwind/deferred.c).
 */
#ifndef CPROF_DEFER_BPF_H
#define CPROF_DEFER_BPF_H

#include "base.bpf.h"
#include "budget.bpf.h"
#include "state.bpf.h"
#include "unwind.bpf.h"

/* Samples to be walked again once a table is built (struct cprof_deferred). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, CPROF_DEFER_BYTES);
} deferred SEC(".maps");

/* A deferred sample's record being made: its header, and a page of stack at a time. */
struct defer_buf {
	__u8 chunk[4096];
	struct cprof_deferred h; /* (last: its stack[] has no room here) */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct defer_buf);
} defer_bufs SEC(".maps");

/* Deferred samples this CPU sent in the current second (CPROF_DEFER_RATE). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rate_budget);
} defer_budget SEC(".maps");

/*
 * Sends the sample counted under @key (its stacks in @epoch's pair) to be
 * walked again from where this CPU's last walk noted (defer_notes), with
 * the stack from the noted sp: up to the main thread's mm->start_stack
 * (no frame lies above it) when that is near enough, else
 * CPROF_DEFER_THREAD_STACK; read a page at a time, as a read that runs
 * past the end of the stack's mapping fails whole, into a record of that
 * size.  1: sent, the caller does not count it; 0: count it as walked
 * (over this CPU's budget, or no room in the ring).  A global function:
 * verified once, and off the path of the samples that do not need it.
 */
__noinline int defer_send(const struct cprof_sample_key *key, __u64 epoch)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 zero = 0;
	struct defer_note *d = bpf_map_lookup_elem(&defer_notes, &zero);
	struct defer_buf *b = bpf_map_lookup_elem(&defer_bufs, &zero);
	struct rate_budget *rb = bpf_map_lookup_elem(&defer_budget, &zero);
	struct cprof_stats *s = bpf_map_lookup_elem(&stats, &zero);
	/* 64-bit sizes: a 32-bit one is zero-extended into another register than the one bounded */
	__u64 top = 0, len = CPROF_DEFER_THREAD_STACK, off = 0, sp;
	struct cprof_deferred *h;
	struct bpf_dynptr dp;

	if (!key || !d || !b || !rb || !s)
		return 0;
	if (!budget_take(rb, bpf_ktime_get_ns(), CPROF_DEFER_RATE)) {
		s->defer_refused++;
		return 0;
	}
	sp = d->sp;
	if (task->mm)
		top = task->mm->start_stack;
	if (top > sp && top - sp <= CPROF_DEFER_STACK)
		len = (top - sp + 7) & ~7ull;
	if (len > CPROF_DEFER_STACK)
		len = CPROF_DEFER_STACK;
	if (bpf_ringbuf_reserve_dynptr(&deferred, sizeof(*h) + len, 0, &dp)) {
		bpf_ringbuf_discard_dynptr(&dp, 0);
		s->defer_refused++;
		return 0;
	}
	for (int i = 0; i < CPROF_DEFER_STACK / 4096 + 1; i++) {
		__u64 n = 4096 - ((sp + off) & 4095); /* to the end of the page */

		if (off >= len)
			break;
		if (n > len - off)
			n = len - off;
		if (n > sizeof(b->chunk))
			n = sizeof(b->chunk);
		if (bpf_probe_read_user(b->chunk, n, (const void *)(sp + off)) ||
		    bpf_dynptr_write(&dp, sizeof(*h) + off, b->chunk, n, 0))
			break;
		off += n;
	}
	h = &b->h;
	h->type = CPROF_EV_DEFERRED;
	h->file = d->file;
	h->nr = d->nr;
	h->exact = d->exact;
	h->key = *key;
	h->epoch = epoch;
	h->pc = d->pc;
	h->sp = sp;
	h->bp = d->bp;
	h->chain_end = d->chain_end;
	h->stack_lo = sp;
	h->stack_len = off;
	h->status = d->status;
	h->pid = key->pid;
	h->pad = 0;
	for (__u32 i = 0; i < CPROF_DEFER_FRAMES; i++)
		h->ip[i] = i < d->nr ? d->ip[i] : 0;
	bpf_dynptr_write(&dp, 0, h, sizeof(*h), 0);
	bpf_ringbuf_submit_dynptr(&dp, 0);
	s->defer_sent++;
	return 1;
}

#endif
