/* SPDX-License-Identifier: MIT */
/*
 * jvm_walk: one step of a thread's stack through HotSpot's code, from
 * outside, as the BPF walk will take it: the frame at a pc in the code
 * cache, recorded, and its caller's registers.
 *
 * x86-64 HotSpot keeps no CFI for what it generates; each kind of frame
 * is stepped by what the JVM knows of it:
 *  - interpreted (a pc in the interpreter's code): rbp-based; the frame
 *    holds its Method* and bytecode pointer at fixed slots below rbp, and
 *    the caller's sp as it was before the interpreter extended it;
 *  - compiled (an nmethod past its prologue): no frame pointer; the blob's
 *    frame size (words, return address and saved rbp at its top) steps sp;
 *  - stubs and adapters: by their frame size when they have one, else by
 *    rbp (the call stub, which enters Java from C, keeps one).
 * Every value read is checked: a caller's frame must lie above its
 * callee's, pointers aligned.
 */
#ifndef CPROF_JVM_WALK_H
#define CPROF_JVM_WALK_H

#include <stdint.h>

#include "java/jvm.h"

struct jvm_regs {
	uint64_t pc, sp, fp;
};

enum jvm_frame_kind {
	JVM_FRAME_INTERPRETED, /* method, bcp */
	JVM_FRAME_COMPILED,    /* method, compile_id, blob (its scopes by jvm_scopes_at) */
	JVM_FRAME_STUB,        /* other code of the code cache: named by its blob */
};

struct jvm_frame {
	enum jvm_frame_kind kind;
	uint64_t pc, sp;
	uint64_t method;    /* interpreted, compiled */
	uint64_t bcp;       /* interpreted */
	int32_t compile_id; /* compiled */
	struct jvm_blob blob; /* compiled, stub */
};

/*
 * The frame at @r's pc, into @f, and its caller's registers into @r.  0;
 * -ENOENT: the pc is not in the code cache (native code: CFI's); -EAGAIN:
 * a frame not set up yet (a compiled method's prologue), which the caller
 * may step otherwise; -EFAULT: a read failed; -EINVAL: what was read does
 * not make a frame.
 */
int jvm_step(const struct jvmproc *jp, struct jvm_regs *r, struct jvm_frame *f);

#endif
