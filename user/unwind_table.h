/* SPDX-License-Identifier: MIT */
/*
 * unwind_table: rows as the CFA programs give them, in pc order, made into
 * the table the BPF unwinder searches: repeats merged, pcs relative to a
 * base, a page index, and both laid out in the rows array (bpf/cprof.h).
 *
 * Rows are appended into one array that grows by doubling: no per-row
 * malloc.
 */
#ifndef CPROF_UNWIND_TABLE_H
#define CPROF_UNWIND_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cprof.h"
#include "errbuf.h"
#include "unwind.h"

/* Rows of one table being made. */
struct rowbuf {
	struct cprof_unwind_row *rows; /* sorted by pc, unique pcs */
	size_t n, cap;
	uint64_t base;                 /* ELF virtual address of row pc 0 */
	struct errbuf *err;
};

/* Whether a row at @vaddr (>= base) fits the table's 32-bit pcs. */
static inline bool rows_reach(const struct rowbuf *b, uint64_t vaddr)
{
	return vaddr - b->base <= UINT32_MAX;
}

/*
 * Appends the row @r at @vaddr (>= every row's pc, and reachable): a row
 * equal to the last is dropped, and a second row at one pc replaces the
 * first.  < 0 only when there is no room.
 */
int rows_emit(struct rowbuf *b, uint64_t vaddr, struct cprof_unwind_row r);

/* Drops the rows at and after @vaddr: a later FDE overrides what they said. */
void rows_cut(struct rowbuf *b, uint64_t vaddr);

/* Moves the rows into @out and builds their page index; @b is left empty. */
int rows_finish(struct rowbuf *b, struct unwind_table *out);

void rows_free(struct rowbuf *b);

#endif
