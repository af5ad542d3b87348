/* SPDX-License-Identifier: MIT */
/*
 * jvm_scopes: the Java frames a pc inside a compiled method stands for,
 * its own and those of the methods inlined into it, read from the
 * method's debug info.
 *
 * An nmethod keeps an array of PcDescs (scopes_pcs: a code offset and
 * where its scope starts in the scopes stream) for each point it records
 * debug info at: calls, safepoint polls, traps.  A scope in the stream
 * (scopes_data, numbers in UNSIGNED5) is its sender scope's offset (0:
 * none, the outermost), its method (an index into the nmethod's metadata
 * array, 1-based) and its bci (stored + 1), then offsets of what only
 * deoptimization needs.  The innermost scope is the PcDesc's; its sender
 * is the method it was inlined into, and so on out to the compiled
 * method itself.  Everything read is the process's word: the sections
 * must lie within the blob or their allocation, offsets within their
 * section, the chain must end within JVM_SCOPES_MAX scopes and not loop,
 * and its outermost scope must be the nmethod's own method.
 */
#ifndef CPROF_JVM_SCOPES_H
#define CPROF_JVM_SCOPES_H

#include <stddef.h>
#include <stdint.h>

#include "fs/procmem.h"
#include "java/jvm_code.h"
#include "java/jvm_layout.h"

/* Scopes of one pc at most: C2 inlines 15 deep by default (MaxInlineLevel). */
#define JVM_SCOPES_MAX 64

/* The bci of a scope that names its method only (the method's entry). */
#define JVM_BCI_ENTRY (-1)

struct jvm_scope {
	uint64_t method; /* the Method* */
	int32_t bci;     /* JVM_BCI_ENTRY, or the VM's other negative marks, or a bci */
};

/*
 * The scopes at @pc, in the nmethod @b (from jvm_blob_find): the innermost
 * first, the compiled method itself last, into @out (@max).  For a pc
 * between two PcDescs, the scope is the next one's (see jvm_scopes.c).
 * The number of scopes, or: -ENOTSUP when the JVM's debug info layout is
 * not known (jvm_layout's scopes_ok); -ENOENT when @b is no nmethod or
 * none of its debug info covers @pc (a native method's wrapper has none:
 * its one scope is its method at bci 0, as the VM gives it); -ENOSPC
 * when more than @max scopes; -ELOOP when the sender chain loops or runs
 * past JVM_SCOPES_MAX; -EFAULT when a read failed; -EINVAL when what was
 * read does not hold together.
 */
int jvm_scopes_at(const struct jvm_layout *l, const struct memsrc *m, const struct jvm_blob *b,
		  uint64_t pc, struct jvm_scope *out, size_t max);

/*
 * The code offsets of @b's PcDescs (from its code begin, in order, the
 * sentinels at either end included) into @out (@max): how many there
 * are, or a negative errno as above.  For a caller that wants another
 * rule than jvm_scopes_at's, such as a debugger's.
 */
int jvm_scopes_pc_offsets(const struct jvm_layout *l, const struct memsrc *m,
			  const struct jvm_blob *b, int32_t *out, size_t max);

#endif
