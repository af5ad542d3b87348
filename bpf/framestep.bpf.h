/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * framestep.bpf.h: one frame of a user-stack walk: reading the stack
 * through the per-CPU window, and the caller's registers by frame pointers,
 * a signal frame or a CFI row.  Included by unwind.bpf.h, whose walk state
 * (struct unwind_ctx, struct unwind_loop) it works on; compiled as plain C
 * with it for the unit tests (user/unwind/bpfunwind.c).
 */
#ifndef CPROF_FRAMESTEP_BPF_H
#define CPROF_FRAMESTEP_BPF_H

/*
 * The stack window's two operations are global functions: the verifier
 * checks each once, where inlined at every read site they made too many
 * paths for it.
 */

/*
 * Fills the window from @addr on: up to w->top the first time when that
 * is above @addr and within a window, else w->next bytes; up to the end
 * of @addr's page when that fails (the top of a stack may be nearer).
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

static __always_inline int read_word(struct unwind_loop *l, __u64 addr, __u64 *out)
{
	struct stack_words v;
	int err = read_stack(l->win, addr, &v, 8);

	*out = v.w[0];
	return err;
}

/* Moves to the caller whose return address is @ra; 1 ends the walk. */
static __always_inline long step_to(struct unwind_ctx *c, __u64 ra, __u64 sp)
{
	if (sp <= c->sp) {
		c->status = CPROF_UNWIND_BAD_CFA; /* would loop */
		return 1;
	}
	c->sp = sp;
	c->pc = ra;
	if (ra == 0) { /* a zero return address marks the outermost frame */
		c->status = CPROF_UNWIND_OK;
		return 1;
	}
	return 0;
}

/* No CFI for this pc: follow the frame-pointer chain for one frame. */
static __always_inline long step_fp(struct unwind_loop *l, bool had_table)
{
	struct unwind_ctx *c = l->c;
	struct stack_words frame; /* saved rbp, return address */

	if (c->bp == 0 || c->bp < c->sp) {
		/*
		 * A saved rbp of 0 ends a frame-pointer chain (_start clears
		 * it).  An rbp of 0 otherwise (the sampled register, or one a
		 * CFI step left alone) is code that keeps none in rbp: a pc
		 * with no table yet, not the end.
		 */
		c->status = had_table ? CPROF_UNWIND_NO_ROW :
			    c->bp == 0 ? (c->chain_end == c->sp && c->sp ? CPROF_UNWIND_OK :
					  CPROF_UNWIND_NO_ROW) :
			    CPROF_UNWIND_BAD_CFA;
		return 1;
	}
	if (read_stack(l->win, c->bp, &frame, sizeof(frame))) {
		c->status = CPROF_UNWIND_READ;
		return 1;
	}
	l->st->status |= CPROF_STACK_F_FP;
	{
		__u64 sp = c->bp + 16;

		c->bp = frame.w[0];
		if (!c->bp)
			c->chain_end = sp;
		return step_to(c, frame.w[1], sp);
	}
}

/*
 * Signal trampoline: the interrupted registers are in the ucontext that
 * the stack pointer points at (struct rt_sigframe after its return
 * address was popped): uc_mcontext at 40, then rbp, rsp, rip of struct
 * sigcontext at 80, 120, 128.
 */
static __always_inline long step_signal(struct unwind_loop *l)
{
	struct unwind_ctx *c = l->c;
	__u64 pc, sp, bp;

	if (read_word(l, c->sp + 40 + 128, &pc) || read_word(l, c->sp + 40 + 120, &sp) ||
	    read_word(l, c->sp + 40 + 80, &bp)) {
		c->status = CPROF_UNWIND_READ;
		return 1;
	}
	c->bp = bp;
	c->exact = true;
	/* the interrupted code's stack lies above the signal frame */
	return step_to(c, pc, sp);
}

static __always_inline long step_dwarf(struct unwind_loop *l, const struct cprof_unwind_rule *row)
{
	struct unwind_ctx *c = l->c;
	__u64 cfa, ra, bp;

	switch (CPROF_ROW_CFA(row)) {
	case CPROF_CFA_RSP:
		cfa = c->sp + row->cfa_off;
		break;
	case CPROF_CFA_RBP:
		cfa = c->bp + row->cfa_off;
		break;
	case CPROF_CFA_PLT:
		cfa = c->sp + 8 + ((c->pc & 15) >= (__u64)row->cfa_off ? 8 : 0);
		break;
	case CPROF_CFA_SIGNAL:
		return step_signal(l);
	case CPROF_CFA_STOP:
		c->status = CPROF_UNWIND_OK;
		return 1;
	default:
		return step_fp(l, true);
	}
	if (CPROF_ROW_RBP(row) == CPROF_RBP_OFFSET && row->rbp_off == -2) {
		/* the usual prologue: rbp saved right below the return address */
		struct stack_words frame;

		if (read_stack(l->win, cfa - 16, &frame, sizeof(frame))) {
			c->status = CPROF_UNWIND_READ;
			return 1;
		}
		c->bp = frame.w[0];
		ra = frame.w[1];
	} else {
		if (read_word(l, cfa - 8, &ra)) {
			c->status = CPROF_UNWIND_READ;
			return 1;
		}
		if (CPROF_ROW_RBP(row) == CPROF_RBP_OFFSET) {
			if (read_word(l, cfa + (__s64)row->rbp_off * 8, &bp)) {
				c->status = CPROF_UNWIND_READ;
				return 1;
			}
			c->bp = bp;
		}
	}
	l->st->status |= CPROF_STACK_F_DWARF;
	return step_to(c, ra, cfa);
}

#endif
