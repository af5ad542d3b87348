/* SPDX-License-Identifier: MIT */
/*
 * bpfunwind: the BPF unwinder of bpf/unwind.bpf.h, built as plain C
 * (tests/bpfshim.h), for unit tests: the same find_mapping, row search,
 * row cache and frame steps that run in the kernel, over tables the
 * loader's code built and stacks a test recorded.
 */
#ifndef CPROF_BPFUNWIND_H
#define CPROF_BPFUNWIND_H

#include <stddef.h>
#include <stdint.h>

#include "cprof.h"

/*
 * The rows array (the unwind_rows map) is @n slots at @slots, the
 * caller's.  Advances rows_gen, as the loader does before it rewrites
 * rows: the row cache forgets what it found before.
 */
void bpfu_set_rows(const union cprof_table_slot *slots, uint32_t n);

/*
 * The last row at or below @rel (< 2^32, as find_row passes it) in @m's
 * table, by search_row alone (no cache); -1: none.
 */
int bpfu_search_row(const struct cprof_proc_map *m, uint64_t rel, struct cprof_unwind_row *out);

/* The same as the unwinder looks a row up (find_row: this CPU's row cache first). */
int bpfu_find_row(const struct cprof_proc_map *m, uint64_t rel, struct cprof_unwind_row *out);

/* The index in @pm of the mapping holding @pc (find_mapping, no previous frame); -1: none. */
int bpfu_find_mapping(const struct cprof_proc_maps *pm, uint64_t pc);

/*
 * Tells the walk of @pid that @t's pages hold CPython perf trampolines, as
 * the loader does (python_tramp.h).  -1: more than the shim holds.
 */
int bpfu_set_tramp(uint32_t pid, const struct cprof_py_tramp *t);

/* Registers where a walk starts: pc is exact (not a return address). */
struct bpfu_regs {
	uint64_t pc, sp, bp;
};

/* A process's stack memory, as the walk reads it: [lo, lo + len). */
struct bpfu_memory {
	uint64_t lo;
	const uint8_t *bytes;
	size_t len;
};

struct bpfu_walk {
	struct cprof_stack st;     /* frames, leaf first; status: CPROF_STACK_F_* */
	uint32_t status;           /* enum cprof_unwind_status */
	uint64_t hash;             /* of the frames, as the walk computes it */
	uint64_t sp;               /* where it stopped: the last frame's sp */
	size_t reads;              /* bpf_probe_read_user calls */
	size_t new_code;           /* CPROF_EV_NEW_CODE events sent (pcs in no mapping) */
	uint32_t new_code_pid;     /* ... the pid of the last one */
};

/*
 * Walks the user stack of process @pid, whose unwind_procs entry is @pm
 * (NULL: none, frame pointers only), from @regs over @mem, with the code of
 * user_stack() in bpf/cprof.bpf.c: unwind_begin(), the registers,
 * unwind_walk().  -1 when a map is missing.
 */
int bpfu_walk(uint32_t pid, const struct cprof_proc_maps *pm, const struct bpfu_regs *regs,
	      const struct bpfu_memory *mem, struct bpfu_walk *out);

#endif
