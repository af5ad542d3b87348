/* SPDX-License-Identifier: MIT */
/*
 * v8_bpf: a process's V8 as BPF's walk sees it (bpf/v8.bpf.h): the few
 * constants of its layout a frame's check needs, told to BPF, and the
 * frames BPF recorded with them (bpf/runtimes.h, "V8") read back and
 * named.
 */
#ifndef CPROF_V8_BPF_H_USER
#define CPROF_V8_BPF_H_USER

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cprof.h"
#include "node/v8_layout.h"
#include "node/v8_names.h"

/* A run's V8s and what their frames came out as, for its summary. */
struct node_stats {
	size_t v8s;     /* found and told to BPF */
	size_t refused; /* not: a layout this reader does not know */
	bool told;      /* the first refusal was said */
	struct v8_names_stats names;
};

/*
 * What BPF's walk needs of @vp, for image @gen.  0, or -ENOTSUP: a
 * constant beyond what the record's fields hold.
 */
int v8proc_bpf(const struct v8proc *vp, uint64_t gen, struct cprof_v8_proc *out);

/*
 * The function and bytecode offset (-1: none) of frame @tagged
 * (CPROF_V8_FRAME set), as BPF recorded it for @vp: the offset slot holds
 * the offset from the BytecodeArray's tagged address, header included.
 */
void v8proc_decode(const struct v8proc *vp, uint64_t tagged, uint64_t *sfi, int32_t *offset);

/*
 * Frame @tagged of @vp named (v8_frame_name()): read at the drain, while
 * the process lives.  NULL when it was not kept (over the bounds).
 */
const struct v8_frame *v8proc_frame(struct v8proc *vp, uint64_t tagged);

/* Frame @tagged of @vp as it was named, not read again; NULL: never named. */
const struct v8_frame *v8proc_frame_kept(const struct v8proc *vp, uint64_t tagged);

#endif
