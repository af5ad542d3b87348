/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * defer.bpf.h: a sample whose user walk met a frame in a file whose table
 * is still to be built (unwind.bpf.h's note_defer()) is sent, instead of
 * being counted, to be walked again from that frame once the table is
 * there (struct cprof_deferred; the loader's user/deferred.c).  Included
 * by cprof.bpf.c after unwind.bpf.h.
 */
#ifndef CPROF_DEFER_BPF_H
#define CPROF_DEFER_BPF_H

/*
 * Reads the stack at @sp into @rec: up to @top (the main thread's
 * mm->start_stack: no frame lies above it) when that is nearer than a
 * record holds, else a record's worth.  A read that runs past the end of
 * the stack's mapping fails whole: then half as much, down to the end of
 * @sp's page.
 */
static __always_inline void defer_read_stack(struct cprof_deferred *rec, __u64 sp, __u64 top)
{
	/* 64-bit: a 32-bit size is zero-extended into another register than the one bounded */
	__u64 size = CPROF_DEFER_STACK, page_left = 4096 - (sp & 4095);

	if (top > sp && top - sp < CPROF_DEFER_STACK)
		size = ((top - sp) + 7) & ~7ull;
	rec->stack_lo = sp;
	rec->stack_len = 0;
	for (int i = 0; i < 4; i++) { /* 16, 8, 4 KiB, the page */
		if (size < page_left)
			size = page_left;
		if (size > CPROF_DEFER_STACK)
			size = CPROF_DEFER_STACK;
		if (!bpf_probe_read_user(rec->stack, size, (const void *)sp)) {
			rec->stack_len = size;
			return;
		}
		if (size <= page_left)
			return;
		size /= 2;
	}
}

/*
 * Sends the sample counted under @key (its stacks in @epoch's pair) to be
 * walked again from where this CPU's last walk noted (defer_notes).  1:
 * sent, the caller does not count it; 0: count it as walked (over this
 * CPU's budget, or no room in the ring).  A global function: verified
 * once, and off the path of the samples that do not need it.
 */
__noinline int defer_send(const struct cprof_sample_key *key, __u64 epoch)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 zero = 0;
	struct defer_note *d = bpf_map_lookup_elem(&defer_notes, &zero);
	struct rate_budget *b = bpf_map_lookup_elem(&defer_budget, &zero);
	struct cprof_stats *s = bpf_map_lookup_elem(&stats, &zero);
	struct cprof_deferred *rec;
	__u64 top = 0;

	if (!key || !d || !b || !s)
		return 0;
	if (!budget_take(b, bpf_ktime_get_ns(), CPROF_DEFER_RATE)) {
		s->defer_refused++;
		return 0;
	}
	rec = bpf_ringbuf_reserve(&deferred, sizeof(*rec), 0);
	if (!rec) {
		s->defer_refused++;
		return 0;
	}
	rec->type = CPROF_EV_DEFERRED;
	rec->file = d->file;
	rec->nr = d->nr;
	rec->exact = d->exact;
	rec->key = *key;
	rec->epoch = epoch;
	rec->pc = d->pc;
	rec->sp = d->sp;
	rec->bp = d->bp;
	rec->chain_end = d->chain_end;
	rec->status = d->status;
	rec->pid = key->pid;
	rec->pad = 0;
	for (__u32 i = 0; i < CPROF_DEFER_FRAMES; i++)
		rec->ip[i] = i < d->nr ? d->ip[i] : 0;
	if (task->mm)
		top = task->mm->start_stack;
	defer_read_stack(rec, d->sp, top);
	bpf_ringbuf_submit(rec, 0);
	s->defer_sent++;
	return 1;
}

#endif
