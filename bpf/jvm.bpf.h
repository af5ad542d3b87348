/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * jvm.bpf.h: a HotSpot JVM's frames, met by the unwinder at a pc without
 * CFI: which code of the JVM's code cache holds it (its segment maps, as
 * CodeHeap::find_block_for reads them), how its frame is stepped (a rule,
 * run as CFI rows are), and what names it later (cprof.h, "HotSpot JVMs").
 * The loader found the JVM and its layout (user/java/); here every read is
 * of memory the process controls, so each is bounded and a frame that does
 * not fit is left to frame pointers.  Also compiled as plain C for the
 * unwinder's other uses (user/unwind/bpfunwind.c), where the map is empty.
 */
#ifndef CPROF_JVM_BPF_H
#define CPROF_JVM_BPF_H

#include "base.bpf.h"
#include "framestep.bpf.h"

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

/* Interpreted: the method and bci in the frame's slots below rbp. */
static __always_inline int jvm_interpreted(const struct cprof_jvm_proc *p, __u64 bp,
					   struct cprof_unwind_rule *out, __u64 *tagged)
{
	__u64 method = 0, bcp = 0, cm = 0, bci = CPROF_JAVA_NO_BCI;

	if (!bp || bp % 8 || jvm_read(&method, 8, bp + (__s64)p->interp_method * 8) ||
	    !method || method % 8 || method >= (1ULL << 47))
		return -1;
	if (!jvm_read(&bcp, 8, bp + (__s64)p->interp_bcp * 8) &&
	    !jvm_read(&cm, 8, method + p->method_const) && cm &&
	    bcp >= cm + p->const_size && bcp - (cm + p->const_size) < CPROF_JAVA_NO_BCI)
		bci = bcp - (cm + p->const_size);
	*tagged = CPROF_JAVA_FRAME | CPROF_JAVA_INTERP | bci << 44 | method >> 3;
	out->cfa_off = (__s32)p->interp_sender_sp * 8;
	out->rules = CPROF_ROW_RULES(CPROF_CFA_JVM_INTERP, CPROF_RBP_INVALID);
	out->rbp_off = 0;
	out->pad = 0;
	return 0;
}

/*
 * The row of walk @c's frame (@lookup: its pc, or a return address less
 * one; @exact: the pc itself) when the pc is in the process's JVM's code
 * cache: 0, the row in c->memo.rule and what the frame is recorded as in
 * c->jtag; -1 otherwise.  A global function: checked once
 * by the verifier, off the path of pcs that have CFI.
 */
__noinline int jvm_row(struct unwind_ctx *c, __u64 lookup, __u32 exact)
{
	const struct cprof_jvm_proc *p;
	const struct cprof_jvm_heap *h = NULL;
	struct cprof_unwind_rule *out;
	__u64 blob, code = 0, pc, *tagged;
	__s32 frame_size = 0, complete = -1, cid = 0;
	__u32 pid;

	if (!c)
		return -1;
	pid = c->pid;
	pc = c->pc;
	out = &c->memo.rule;
	tagged = &c->jtag;
	p = bpf_map_lookup_elem(&jvm_procs, &pid);
	if (!p || lookup < p->lo || lookup >= p->hi || pc >= (1ULL << 47))
		return -1;
	if (lookup >= p->interp_lo && lookup < p->interp_hi)
		return jvm_interpreted(p, c->bp, out, tagged);
	for (int i = 0; i < CPROF_JVM_HEAPS; i++)
		if ((__u32)i < p->nheaps && lookup >= p->heap[i].low && lookup < p->heap[i].high)
			h = &p->heap[i];
	if (!h || !(blob = jvm_blob_at(p, h, lookup)))
		return -1;
	if (jvm_read(&frame_size, 4, blob + p->blob_frame_size))
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
	/* what it is the loader tells by the blob it finds at the pc; the id is its check */
	jvm_read(&cid, 4, blob + p->nm_compile_id);
	*tagged = CPROF_JAVA_FRAME | ((__u64)cid & 0x7fff) << 47 | pc;
	out->pad = 0;
	out->rbp_off = -2;
	if (code <= blob || lookup < code || frame_size < 0 || frame_size > (__s32)(JVM_FRAME_MAX / 8))
		return -1;
	if (exact && complete >= 0 && lookup < code + complete) {
		/* its frame not set up yet: the return address is at sp, mostly */
		out->cfa_off = 8;
		out->rules = CPROF_ROW_RULES(CPROF_CFA_RSP, CPROF_RBP_SAME);
	} else if (frame_size >= 2) {
		/* return address and saved rbp at the top of a frame of known size */
		out->cfa_off = frame_size * 8;
		out->rules = CPROF_ROW_RULES(CPROF_CFA_RSP, CPROF_RBP_OFFSET);
	} else {
		/* stubs without a size keep rbp (the call stub, where C calls Java) */
		out->cfa_off = 16;
		out->rules = CPROF_ROW_RULES(CPROF_CFA_RBP, CPROF_RBP_OFFSET);
	}
	return 0;
}

#endif
