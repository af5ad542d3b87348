/* SPDX-License-Identifier: MIT */
/*
 * jvm_code: HotSpot's code cache read from outside, and the code blob
 * (compiled method, interpreter, stub) that holds a pc.
 *
 * The code cache is one to three code heaps; each is cut into segments
 * (64 or 128 bytes), and a byte map, the segment map, says for each how
 * far back its block starts, in hops of at most 254 segments (0xff: not
 * in use).  A block is a small header (length, used) and the blob.  This
 * is the JVM's own CodeHeap::find_block_for(), done with bounded reads
 * of the process: the hops are counted, and the blob found must hold the
 * pc and lie within its heap.
 */
#ifndef CPROF_JVM_CODE_H
#define CPROF_JVM_CODE_H

#include <stdbool.h>
#include <stdint.h>

#include "fs/procmem.h"
#include "java/jvm_layout.h"

#define JVM_HEAPS_MAX 8
#define JVM_BLOB_NAME_MAX 48

struct jvm_heap {
	uint64_t low, high; /* the committed part */
	uint64_t segmap;    /* the map's first byte */
	unsigned log2_segment;
};

struct jvm_codecache {
	struct jvm_heap heap[JVM_HEAPS_MAX];
	unsigned n;
	uint64_t interp_lo, interp_hi; /* the interpreter's code, within a heap */
};

/* The code heaps of the JVM: 0, or a negative errno with @err saying what did not read. */
int jvm_codecache_read(const struct jvm_layout *l, const struct memsrc *m,
		       struct jvm_codecache *cc, struct errbuf *err);

/* Whether @pc lies in the interpreter's code. */
static inline bool jvm_codecache_interpreted(const struct jvm_codecache *cc, uint64_t pc)
{
	return pc >= cc->interp_lo && pc < cc->interp_hi;
}

/* Whether @pc lies in one of the code heaps. */
bool jvm_codecache_has(const struct jvm_codecache *cc, uint64_t pc);

struct jvm_blob {
	uint64_t addr;        /* the CodeBlob */
	uint64_t code_begin;  /* its instructions */
	uint32_t size;        /* bytes from addr */
	int32_t frame_size;   /* in words, return address included */
	int32_t frame_complete; /* bytes from code_begin to where the frame is set up; -1 none */
	char name[JVM_BLOB_NAME_MAX]; /* "nmethod", "Interpreter", "StubRoutines (1)" */
	bool is_nmethod;
	/* an nmethod's */
	uint64_t method;      /* its Method* */
	int32_t compile_id, entry_bci;
};

/*
 * The blob that holds @pc: 0; -ENOENT when @pc is in no blob in use
 * (outside the heaps, a free block); -EFAULT when a read failed;
 * -EINVAL when what was read does not hold together.
 */
int jvm_blob_find(const struct jvm_layout *l, const struct memsrc *m,
		  const struct jvm_codecache *cc, uint64_t pc, struct jvm_blob *out);

#endif
