// SPDX-License-Identifier: MIT
#include <errno.h>
#include <string.h>

#include "java/jvm_walk.h"

/* Stacks are far smaller: a frame claiming more is not one. */
#define FRAME_MAX (1u << 20)

static int word_at(const struct jvmproc *jp, uint64_t addr, uint64_t *v)
{
	return addr % 8 ? -EINVAL : memsrc_read(&jp->mem, addr, v, sizeof(*v)) ? -EFAULT : 0;
}

/* The caller whose frame starts at @caller_sp (its return address just below, saved rbp below that). */
static int by_frame_size(const struct jvmproc *jp, uint64_t caller_sp, struct jvm_regs *r)
{
	uint64_t pc, fp;

	if (word_at(jp, caller_sp - 8, &pc) || word_at(jp, caller_sp - 16, &fp))
		return -EFAULT;
	r->pc = pc;
	r->sp = caller_sp;
	r->fp = fp;
	return 0;
}

/* The caller of an rbp-based frame: return address above the saved rbp, its sp past both. */
static int by_fp(const struct jvmproc *jp, struct jvm_regs *r, uint64_t caller_sp)
{
	uint64_t pc, fp;

	if (r->fp < r->sp || r->fp - r->sp > FRAME_MAX || word_at(jp, r->fp, &fp) ||
	    word_at(jp, r->fp + 8, &pc))
		return -EINVAL;
	if (caller_sp < r->fp + 16 || caller_sp - r->fp > FRAME_MAX)
		return -EINVAL;
	r->pc = pc;
	r->sp = caller_sp;
	r->fp = fp;
	return 0;
}

static int step_interpreted(const struct jvmproc *jp, struct jvm_regs *r, struct jvm_frame *f)
{
	const struct jvm_layout *l = &jp->layout;
	uint64_t sender_sp;

	f->kind = JVM_FRAME_INTERPRETED;
	if (r->fp < r->sp || r->fp % 8 ||
	    word_at(jp, r->fp + (int64_t)l->interp_method * 8, &f->method) ||
	    word_at(jp, r->fp + (int64_t)l->interp_bcp * 8, &f->bcp) ||
	    word_at(jp, r->fp + (int64_t)l->interp_sender_sp * 8, &sender_sp))
		return -EINVAL;
	/* a compiled caller is stepped from its own sp, before the interpreter's locals */
	return by_fp(jp, r, sender_sp);
}

static int step_blob(const struct jvmproc *jp, struct jvm_regs *r, struct jvm_frame *f)
{
	struct jvm_blob *b = &f->blob;
	int e = jvm_blob_find(&jp->layout, &jp->mem, &jp->code, r->pc, b);
	uint64_t size;

	if (e)
		return e;
	f->kind = b->is_nmethod ? JVM_FRAME_COMPILED : JVM_FRAME_STUB;
	f->method = b->is_nmethod ? b->method : 0;
	f->compile_id = b->compile_id;
	if (b->frame_complete >= 0 && r->pc < b->code_begin + (uint64_t)b->frame_complete)
		return -EAGAIN;
	size = (uint64_t)b->frame_size * 8;
	if (size >= 16)
		return by_frame_size(jp, r->sp + size, r);
	if (b->is_nmethod)
		return -EINVAL;
	return by_fp(jp, r, r->fp + 16);
}

int jvm_step(const struct jvmproc *jp, struct jvm_regs *r, struct jvm_frame *f)
{
	memset(f, 0, sizeof(*f));
	f->pc = r->pc;
	f->sp = r->sp;
	if (!jvm_codecache_has(&jp->code, r->pc))
		return -ENOENT;
	if (jvm_codecache_interpreted(&jp->code, r->pc))
		return step_interpreted(jp, r, f);
	return step_blob(jp, r, f);
}
