/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * window.bpf.h: this CPU's window of the user stack a walk reads, filled
 * once for many frames: the native walk's (framestep.bpf.h, unwind.bpf.h),
 * then the Python walk's, from what the native walk left (python.bpf.h).
 * Compiled as plain C with the unwinder (user/unwind/bpfunwind.c).
 */
#ifndef CPROF_WINDOW_BPF_H
#define CPROF_WINDOW_BPF_H

#include "base.bpf.h"

/*
 * A window of the user stack being unwound.  Reading the stack costs a
 * bpf_probe_read_user a frame otherwise, and that helper is most of the
 * cost of a frame (~80 ns measured here, for 8 or 16 bytes): one read
 * serves the frames of a whole shallow stack.  The first read goes from
 * the sampled sp up to where the thread's last walk here ended (its
 * outermost frame's CFA, above which no walk reads), else 512 bytes, and
 * each refill doubles.  A read that runs past the end of the stack's
 * mapping faults and is made again up to the end of the page: ~1.3 us
 * here, where a sized read of 2.7 KiB costs ~0.1 us; sized by bytes from
 * the last sp instead, the reads of an interpreter whose leaf sp moves by
 * a few hundred bytes missed the top and refilled past the mapping's end
 * in 40% of its samples, in the runs whose stack top lay near a page end.
 */
#define STACK_WINDOW 4096
#define WINDOW_FIRST 512
#define WINDOW_AHEAD 128 /* refilled when less than this is left above sp, */
			 /* unless the window reaches the last walk's top */
#define SPAN_SLOTS 8
_Static_assert((STACK_WINDOW & (STACK_WINDOW - 1)) == 0 && (SPAN_SLOTS & (SPAN_SLOTS - 1)) == 0,
	       "window offsets and span slots are masked");
struct stack_window {
	__u64 lo;   /* user address of b[0] */
	__u32 len;  /* bytes of b read, 0: none */
	__u32 next;  /* bytes the next fill asks for */
	__u32 ahead; /* refilled when less than this is left above sp */
	__u32 pad;
	__u64 top;   /* the first fill reads up to here, if above its start; 0: none */
	/*
	 * Where the last walks of a few threads on this CPU ended (the
	 * outermost CFA), direct-mapped by tid: a thread's outermost frames
	 * stay put, so the next sample's frames lie between its sp and there,
	 * and one read of that size costs less than a small read and a refill
	 * (the cost of a read is mostly per call).  By pid, the two threads of
	 * a program took each other's: half its samples read 512 bytes and
	 * then a word alone.
	 */
	struct window_span {
		__u32 tid, pad;
		__u64 top;
	} span[SPAN_SLOTS];
	__u8 b[STACK_WINDOW + 16]; /* + room for a read at the last offset */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct stack_window);
} stack_window SEC(".maps");

/*
 * Fills the window from @addr on: up to w->top the first time when that
 * is above @addr and within a window, else w->next bytes; up to the end
 * of @addr's page when that fails (the top of a stack may be nearer).  A
 * global function: the verifier checks it once, where inlined at every
 * read site it made too many paths for it.
 */
__noinline int fill_window(struct stack_window *w, __u64 addr)
{
	__u32 size, page_left = 4096 - (addr & 4095);

	if (!w)
		return -1;
	size = w->next;
	if (size > STACK_WINDOW)
		size = STACK_WINDOW;
	if (size < WINDOW_FIRST)
		size = WINDOW_FIRST;
	w->next = size * 2;
	w->ahead = WINDOW_AHEAD;
	if (w->top > addr && w->top - addr <= STACK_WINDOW) {
		/* the frames end there: only a deeper walk goes past it */
		size = w->top - addr;
		w->ahead = 0;
	}
	w->top = 0;
	w->lo = addr;
	w->len = size;
	if (!bpf_probe_read_user(w->b, size, (const void *)addr))
		return 0;
	if (page_left >= size || bpf_probe_read_user(w->b, page_left, (const void *)addr))
		page_left = 0;
	w->len = page_left;
	return 0;
}

struct stack_words {
	__u64 w[2];
};

/*
 * The 8 bytes at @p, in a byte buffer: one load.  Dereferenced as it is,
 * clang keeps the byte alignment of the array @p points into and loads
 * the word byte by byte (22 instructions a word, 44 for a frame's saved
 * rbp and return address, a third of a frame's walk); through an integer
 * it takes the word's own.  The kernel allows unaligned loads from map
 * values on x86; as plain C (the unit tests, under UBSan) it copies.
 */
static __always_inline __u64 load_word(const __u8 *p)
{
#ifdef __bpf__
	return *(const __u64 *)(unsigned long)p;
#else
	__u64 v;

	__builtin_memcpy(&v, p, sizeof(v));
	return v;
#endif
}

/* load_word()'s store. */
static __always_inline void store_word(__u8 *p, __u64 v)
{
#ifdef __bpf__
	*(__u64 *)(unsigned long)p = v;
#else
	__builtin_memcpy(p, &v, sizeof(v));
#endif
}

/* @size (8 or 16) bytes of the user stack at @addr: from the window, else read alone. */
static __always_inline int read_stack(struct stack_window *w, __u64 addr, struct stack_words *out, __u32 size)
{
	__u64 off;

	if (!w || !out)
		return -1;
	size = size > 8 ? 16 : 8;
	off = addr - w->lo;
	if (addr < w->lo || off + size > w->len) {
		if (size > 8)
			return bpf_probe_read_user(out, 16, (const void *)addr);
		return bpf_probe_read_user(out, 8, (const void *)addr);
	}
	off &= STACK_WINDOW - 1;
	out->w[0] = load_word(&w->b[off]);
	if (size > 8)
		out->w[1] = load_word(&w->b[off + 8]);
	return 0;
}

#endif
