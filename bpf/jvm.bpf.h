/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * jvm.bpf.h: a HotSpot JVM's frames, met by the unwinder at a pc without
 * CFI: which code of the JVM's code cache holds it (its segment maps, as
 * CodeHeap::find_block_for reads them), how its frame is stepped, and
 * what names it later (cprof.h, "HotSpot JVMs").
 * The loader found the JVM and its layout (user/java/); here every read is
 * of memory the process controls, so each is bounded and a frame that does
 * not fit is left to frame pointers.  Also compiled as plain C for the
 * unwinder's other uses (user/unwind/bpfunwind.c), where the map is empty.
 */
#ifndef CPROF_JVM_BPF_H
#define CPROF_JVM_BPF_H

#include "base.bpf.h"
#include "framestep.bpf.h"
#include "stacks.bpf.h"

#define CPROF_JVM_PROCS 1024

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CPROF_JVM_PROCS);
	__type(key, __u32);
	__type(value, struct cprof_jvm_proc);
} jvm_procs SEC(".maps");

/*
 * Hops back through a segment map to a block's start: each byte says how
 * many segments back to go (at most 254; 0 is the start, 0xff free).  32
 * hops are 8128 segments, 508 KiB of 64-byte segments: no compiled
 * method of a real program is near that.
 */
#define JVM_SEG_HOPS 32
/* A frame larger than this is not one. */
#define JVM_FRAME_MAX (1u << 20)

static __always_inline int jvm_read(void *dst, __u32 size, __u64 addr)
{
	return bpf_probe_read_user(dst, size, (const void *)addr) ? -1 : 0;
}

/* The CodeBlob holding @pc in heap @h of @p: its address, or 0. */
static __always_inline __u64 jvm_blob_at(const struct cprof_jvm_proc *p,
					 const struct cprof_jvm_heap *h, __u64 pc)
{
	__u32 shift = h->log2_segment & 31;
	__u64 seg = (pc - h->low) >> shift;
	__u8 hop;

	for (int i = 0; i < JVM_SEG_HOPS; i++) {
		if (jvm_read(&hop, 1, h->segmap + seg) || hop == 0xff || hop > seg)
			return 0;
		if (!hop)
			/* the block's header (HeapBlock), then the blob */
			return h->low + (seg << shift) + p->heapblock;
		seg -= hop;
	}
	return 0;
}

/*
 * Moves walk @c to the caller whose return address and saved rbp are at
 * @at and @at + 8 (read from the process: a Java frame's reads are few),
 * its sp @sp.  0: go on; 1: the walk ends (step_to's status).
 */
static __always_inline int jvm_step_to(struct unwind_ctx *c, __u64 at, __u64 sp)
{
	__u64 w[2] = { 0, 0 }; /* saved rbp, return address */

	if (jvm_read(w, sizeof(w), at)) {
		c->status = CPROF_UNWIND_READ;
		return 1;
	}
	c->bp = w[0];
	return (int)step_to(c, w[1], sp);
}

/*
 * Interpreted: rbp-based, the method and bcp in the slots below rbp; the
 * caller's sp the sender sp saved there, as it was before the interpreter
 * extended the stack for locals: a compiled caller is stepped from it.
 */
static __always_inline int jvm_interpreted(struct unwind_ctx *c, const struct cprof_jvm_proc *p,
					   __u64 *tagged)
{
	__u64 method = 0, bcp = 0, cm = 0, sender = 0, bci = CPROF_JAVA_NO_BCI, bp = c->bp;

	if (!bp || bp % 8 || bp < c->sp || jvm_read(&method, 8, bp + (__s64)p->interp_method * 8) ||
	    !method || method % 8 || method >= (1ULL << 47) ||
	    jvm_read(&sender, 8, bp + (__s64)p->interp_sender_sp * 8) || sender < bp + 16)
		return -1;
	if (!jvm_read(&bcp, 8, bp + (__s64)p->interp_bcp * 8) &&
	    !jvm_read(&cm, 8, method + p->method_const) && cm &&
	    bcp >= cm + p->const_size && bcp - (cm + p->const_size) < CPROF_JAVA_NO_BCI)
		bci = bcp - (cm + p->const_size);
	*tagged = CPROF_JAVA_FRAME | CPROF_JAVA_INTERP | bci << 44 | method >> 3;
	return jvm_step_to(c, bp, sender);
}

/* A blob's frame: compiled code and stubs. */
static __always_inline int jvm_blob(struct unwind_ctx *c, const struct cprof_jvm_proc *p,
				    __u64 lookup, __u64 *tagged)
{
	const struct cprof_jvm_heap *h = NULL;
	__u64 blob, code = 0;
	__s32 frame_size = 0, complete = -1, cid = 0;

	for (int i = 0; i < CPROF_JVM_HEAPS; i++)
		if ((__u32)i < p->nheaps && lookup >= p->heap[i].low && lookup < p->heap[i].high)
			h = &p->heap[i];
	if (!h || !(blob = jvm_blob_at(p, h, lookup)) ||
	    jvm_read(&frame_size, 4, blob + p->blob_frame_size))
		return -1;
	if (p->flags & CPROF_JVM_COMPLETE_U16) {
		__s16 c16 = -1;

		jvm_read(&c16, 2, blob + p->blob_frame_complete);
		complete = c16;
	} else {
		jvm_read(&complete, 4, blob + p->blob_frame_complete);
	}
	if (p->flags & CPROF_JVM_CODE_OFFSET) {
		__s32 off = 0;

		jvm_read(&off, 4, blob + p->blob_code);
		code = blob + off;
	} else {
		jvm_read(&code, 8, blob + p->blob_code);
	}
	if (code <= blob || lookup < code || frame_size < 0 ||
	    frame_size > (__s32)(JVM_FRAME_MAX / 8))
		return -1;
	/* what it is the loader tells by the blob it finds at the pc; the id is its check */
	jvm_read(&cid, 4, blob + p->nm_compile_id);
	*tagged = CPROF_JAVA_FRAME | ((__u64)cid & 0x7fff) << 47 | c->pc;
	/* its frame not set up yet (a leaf at the entry): the return address at sp */
	if (lookup == c->pc && complete >= 0 && lookup < code + complete) {
		__u64 ra = 0;

		if (jvm_read(&ra, 8, c->sp)) {
			c->status = CPROF_UNWIND_READ;
			return 1;
		}
		return (int)step_to(c, ra, c->sp + 8);
	}
	/* return address and saved rbp at the top of a frame of known size */
	if (frame_size >= 2)
		return jvm_step_to(c, c->sp + (__u64)frame_size * 8 - 16, c->sp + (__u64)frame_size * 8);
	/* stubs without a size keep rbp (the call stub, where C calls Java) */
	if (c->bp < c->sp)
		return -1;
	return jvm_step_to(c, c->bp, c->bp + 16);
}

/*
 * Steps walk @c's frame @n (recorded in @st; @lookup its pc, or a return
 * address less one) when the pc is in the process's JVM's code cache:
 * records the frame as what names it (cprof.h) in its pc's place, and
 * moves to the caller.  0: the walk goes on; 1: it ends (c->status says
 * how); -1: no Java frame, nothing changed.  A global function: checked
 * once by the verifier, off the path of pcs that have CFI, and the frame
 * stepped here rather than by a row, so that the unwinder's loop, which
 * the verifier walks for each kind of frame, gains only this call.
 */
__noinline int jvm_row(struct unwind_ctx *c, struct cprof_stack *st, __u32 n, __u64 lookup)
{
	const struct cprof_jvm_proc *p;
	__u64 tagged = 0;
	__u32 pid;
	int ret;

	if (!c || !st)
		return -1;
	pid = c->pid;
	p = bpf_map_lookup_elem(&jvm_procs, &pid);
	/* an entry of the pid's image before an exec is not this one's */
	if (!p || p->gen != c->gen || lookup < p->lo || lookup >= p->hi || c->pc >= (1ULL << 47))
		return -1;
	if (lookup >= p->interp_lo && lookup < p->interp_hi)
		ret = jvm_interpreted(c, p, &tagged);
	else
		ret = jvm_blob(c, p, lookup, &tagged);
	if (ret < 0)
		return ret;
	st->ip[n & (CPROF_MAX_FRAMES - 1)] = tagged;
	/* the leaf is kept apart (walk_user_stack); the rest make the hash */
	if (n)
		c->hash = hash_mix(c->hash, tagged);
	st->status |= CPROF_STACK_F_DWARF;
	return ret;
}

#endif
