/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * kstack.bpf.h: the kernel stack of a sample or of a block, walked by the
 * kernel (bpf_get_stack) into the scratch stack and stored.
 */
#ifndef CPROF_KSTACK_BPF_H
#define CPROF_KSTACK_BPF_H

#include "base.bpf.h"
#include "stacks.bpf.h"

/* Kernel stacks are walked at all (not with --no-kernel). */
CPROF_SETTING bool kernel_stacks = true;

/* Frames at most between a stack's @skip and its wanted first (kernel_stack_from). */
#define KSTACK_SEEK 4

/*
 * The kernel stack, walked by the kernel, less its first @skip frames (the
 * caller's own) and, when @from_hi, any before the first of the next
 * KSTACK_SEEK in [@from_lo, @from_hi) (frames that come and go with what
 * else is attached, say); @mark: CPROF_STACK_F_* to set.
 */
static __always_inline __u64 kernel_stack_from(void *ctx, __u32 pair, __u64 epoch, __u32 skip,
					       __u32 mark, __u64 from_lo, __u64 from_hi)
{
	struct cprof_stack *st = get_scratch();
	long n;

	if (!st)
		return CPROF_STACK_ERR_READ;
	n = bpf_get_stack(ctx, st->ip, CPROF_MAX_KFRAMES * sizeof(__u64),
			  skip & BPF_F_SKIP_FIELD_MASK);
	/* (the usual: the first is already one) */
	if (from_hi && n > 0 && (st->ip[0] < from_lo || st->ip[0] >= from_hi)) {
		for (__u32 i = 1; i < KSTACK_SEEK && n >= (long)((i + 1) * sizeof(__u64)); i++) {
			if (st->ip[i] < from_lo || st->ip[i] >= from_hi)
				continue;
			/* walked again from there: no shifting of frames in place */
			n = bpf_get_stack(ctx, st->ip, CPROF_MAX_KFRAMES * sizeof(__u64),
					  (skip + i) & BPF_F_SKIP_FIELD_MASK);
			break;
		}
	}
	if (n < 0 && n != -EFAULT /* nothing to walk */)
		return CPROF_STACK_ERR_READ;
	st->nr = n > 0 ? n / sizeof(__u64) : 0;
	st->status = mark;
	if (st->nr == 0)
		return CPROF_STACK_NONE;
	return store_stack(st, pair, epoch, hash_frames(st, 0), NULL);
}

static __always_inline __u64 kernel_stack(void *ctx, __u32 pair, __u64 epoch, __u32 skip,
					  __u32 mark)
{
	return kernel_stack_from(ctx, pair, epoch, skip, mark, 0, 0);
}

#endif
