/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * framestep.bpf.h: the state of a user-stack walk, and one frame of it:
 * the caller's registers by frame pointers, a signal frame or a CFI row,
 * read through the stack window (window.bpf.h).  The walk itself is
 * unwind.bpf.h's; compiled as plain C with it for the unit tests
 * (user/unwind/bpfunwind.c).
 */
#ifndef CPROF_FRAMESTEP_BPF_H
#define CPROF_FRAMESTEP_BPF_H

#include "base.bpf.h"
#include "window.bpf.h"

/*
 * The last rule found and the table offset it was found for: a recursive
 * call returns to the same pc frame after frame.
 */
struct row_memo {
	__u64 key; /* row_key() of the lookup; 0: none */
	struct cprof_unwind_rule rule;
};

/* A mapping and its table, as a walk uses them. */
struct cur_map {
	__u64 start, end;       /* [start, end); end 0: none */
	__u64 bias;             /* runtime pc - ELF virtual address */
	struct cprof_table tab; /* its file's table, copied; nrows 0: none */
	__u32 added;            /* CPROF_MAP_ADDED: not in the loader's snapshot */
	__u32 waiting;          /* its file's number + 1 when its table is to come; 0: not */
};

/*
 * The walk's state, in a per-CPU map value rather than on the stack: the
 * verifier then sees its fields as plain numbers at every entry to the
 * bpf_loop callback, not constants and ranges to tell states apart by.  On
 * the stack, the callback was verified again for each mix of them that a
 * frame could leave (436 entries, 420k instructions and ~1 s of verifier
 * time here, 15-38 s on a loaded host, against 100 entries on main before
 * the compact tables); as a map value it is verified once (issue 11).
 */
struct unwind_ctx {
	__u64 hash;    /* of the frames so far */
	__u64 pc, sp, bp;
	__u32 pid;
	__u32 status;
	struct cur_map cur;      /* the mapping of the previous frame */
	struct cur_map found;    /* the one bpf_find_vma found this walk; end 0: none */
	struct row_memo memo;
	__u8 exact;    /* pc is not a return address: the leaf, or a signal's */
	__u8 reported; /* NEW_CODE sent for this walk */
	__u8 by_file;  /* no entry, but a frame walked by its file's table */
	__u8 unknown_file; /* a frame in a file not numbered: cprof_stats.unwind_unknown_file */
	__u8 defer;    /* a frame waits for its file's table: this CPU's defer_notes says where */
	__u8 no_v8;    /* the process runs no V8 the loader knows (v8.bpf.h): asked once a walk */
	__u8 pad[2];
	__u64 chain_end; /* sp of a frame whose saved rbp, read by step_fp, was 0 */
	__u64 gen;       /* the process image walked (cprof_event.gen): a JVM's entry must be its */
};

/*
 * What the bpf_loop callback is given (a loop's context must be on the
 * stack): pointers only, set before the loop and never changed in it.
 */
struct unwind_loop {
	struct unwind_ctx *c;
	struct cprof_stack *st;
	struct stack_window *win;
	struct cprof_proc_maps *pm; /* the process's entry (maybe a kernel entry); NULL: none */
};

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
