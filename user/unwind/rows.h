/* SPDX-License-Identifier: MIT */
/*
 * rows: the rows the CFA programs give, in pc order, made into
 * the table the BPF unwinder searches: repeats merged, pcs relative to a
 * base, each distinct rule kept once and rows naming it by number.
 *
 * Rows are appended into arrays that grow by doubling (no per-row malloc):
 * 6 bytes a row while building (a 32-bit pc and a 16-bit rule number).
 * The rules' set is its own, not hmap: every row looks its rule up
 * (millions in a big program), a 64-bit key hashed by one multiply into
 * 4-byte slots.
 * The layout for BPF (bpf/cprof.h) is made from them by unwind_layout.c.
 */
#ifndef CPROF_ROWS_H
#define CPROF_ROWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cprof.h"
#include "util/errbuf.h"
#include "unwind/unwind.h"

/* Rows of one table being made. */
struct rowbuf {
	uint32_t *pcs;                   /* from base; sorted, unique */
	uint16_t *ids;                   /* each row's rule number */
	size_t n, cap;
	struct cprof_unwind_rule *rules; /* distinct rules, in order of first use */
	size_t nrules, cap_rules;
	uint32_t *slots;                 /* open-addressed rule -> number + 1 */
	size_t nslots;                   /* a power of two, over twice nrules */
	uint64_t base;                   /* ELF virtual address of row pc 0 */
	size_t skipped;                  /* rows given INVALID: past CPROF_MAX_RULES */
	struct errbuf *err;
};

/* Whether a row at @vaddr (>= base) fits the table's 32-bit pcs. */
static inline bool rows_reach(const struct rowbuf *b, uint64_t vaddr)
{
	return vaddr - b->base <= UINT32_MAX;
}

/*
 * Appends a row of rule @r at @vaddr (>= every row's pc, and reachable): a
 * row with the last row's rule is dropped, and a second row at one pc
 * replaces the first.  < 0 only when there is no room.
 */
int rows_emit(struct rowbuf *b, uint64_t vaddr, struct cprof_unwind_rule r);

/* Drops the rows at and after @vaddr: a later FDE overrides what they said. */
void rows_cut(struct rowbuf *b, uint64_t vaddr);

/* Moves the rows and rules into @out; @b is left empty. */
void rows_finish(struct rowbuf *b, struct unwind_table *out);

void rows_free(struct rowbuf *b);

#endif
