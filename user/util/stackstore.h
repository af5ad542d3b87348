/* SPDX-License-Identifier: MIT */
/*
 * stackstore: the frames of every stack drained from BPF, by the 64-bit
 * hash the BPF program named them with.  A stack seen in many drains, or by
 * many threads, is stored once.
 */
#ifndef CPROF_STACKSTORE_H
#define CPROF_STACKSTORE_H

#include <stddef.h>
#include <stdint.h>

#include "util/hmap.h"

struct stackstore {
	struct hmap map;  /* hash -> {nr, offset into frames} */
	uint64_t *frames; /* all frames, leaf first per stack */
	size_t nframes, cap;
};

void stackstore_init(struct stackstore *s);
void stackstore_free(struct stackstore *s);

/*
 * Stores @nr frames and how the walk went (cprof_stack.status) under @hash
 * unless already there.  0 or -ENOMEM.
 */
int stackstore_add(struct stackstore *s, uint64_t hash, const uint64_t *ip,
		   uint32_t nr, uint32_t status);

/*
 * The hash of the stack stored under @hash with @leaf as its frame @at
 * instead (a sample's user stack, stored by BPF without its leaf pc, @at
 * 0; its Python stack without its innermost position, @at 1: see
 * cprof_sample_key.uleaf and pyleaf), which this stores unless already
 * there; a hash of nothing stored when @hash is not, or has no frame @at
 * (the profile then says the stack is unknown), or -ENOMEM.
 */
int stackstore_leaf(struct stackstore *s, uint64_t hash, uint32_t at, uint64_t leaf,
		    uint64_t *out);

/* The frames stored under @hash (leaf first), or NULL; *@status may be NULL. */
const uint64_t *stackstore_get(const struct stackstore *s, uint64_t hash,
			       uint32_t *nr, uint32_t *status);

/*
 * Empties @s for a new window but for the stacks whose status has a bit
 * of @keep, the newest of them up to @max_frames frames in all (on
 * failure, none).  0 or -ENOMEM.
 */
int stackstore_carry(struct stackstore *s, uint32_t keep, size_t max_frames);

size_t stackstore_bytes(const struct stackstore *s);

#endif
