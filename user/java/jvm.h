/* SPDX-License-Identifier: MIT */
/*
 * jvm: the HotSpot JVM of a process, found and read.
 *
 * A process runs a HotSpot this knows when one of its mappings is a
 * libjvm.so whose dynamic symbols give the serviceability tables
 * (jvm_structs.h) and those tables give every member the reader needs
 * (jvm_layout.h).  Found, it has its code heaps (jvm_code.h), so a pc
 * can be told to be Java code and its blob and method read.
 */
#ifndef CPROF_JVM_H
#define CPROF_JVM_H

#include <stdint.h>

#include "cprof.h"
#include "fs/procmem.h"
#include "java/jvm_code.h"
#include "java/jvm_layout.h"
#include "java/jvm_names.h"
#include "java/jvm_structs.h"
#include "util/errbuf.h"

struct elfobj;
struct vma_list;

struct jvmproc {
	uint32_t pid;
	struct memsrc mem;
	struct jvm_structs vm;
	struct jvm_layout layout;
	struct jvm_codecache code;
	struct jvm_names names; /* its methods, read once (jvm_names.h) */
	uint64_t reserved_lo, reserved_hi; /* all the code cache may hold, committed later or not */
};

/*
 * Finds the JVM in the mappings @maps (with their objects @objs, which may
 * hold NULLs) of process @pid.  0 and *@out set; -ENOENT: no libjvm.so
 * mapped with the tables' symbols; -EAGAIN: a JVM still starting (its
 * tables not filled in, or its code heaps or interpreter not there yet:
 * try again later); -ENOTSUP: a JVM whose tables lack what the reader needs, or do
 * not hold together (@err says what); -ENOMEM.
 */
int jvmproc_find(struct jvmproc **out, uint32_t pid, const struct vma_list *maps,
		 struct elfobj *const *objs, struct errbuf *err);

/* Reads the code heaps again (they are committed as they fill). */
int jvmproc_refresh(struct jvmproc *jp, struct errbuf *err);

/*
 * What BPF's walk needs of @jp (bpf/jvm.bpf.h), for image @gen: each heap
 * out to the next one's start (or the code cache's end), so that code
 * committed later is covered.  0, or -ENOTSUP: more heaps than BPF takes,
 * or members beyond what its fields hold.
 */
int jvmproc_bpf(const struct jvmproc *jp, uint64_t gen, struct cprof_jvm_proc *out);

void jvmproc_free(struct jvmproc *jp);

#endif
