/* SPDX-License-Identifier: MIT */
/*
 * unwind: an object's DWARF call frame information (.eh_frame, else
 * .debug_frame) compiled into compact rows (struct cprof_unwind_row in
 * bpf/cprof.h) that the BPF unwinder binary-searches by pc.
 *
 * Built by unwind.c from unwind_elf (the sections), unwind_cfi (CIEs, FDEs,
 * CFA programs), unwind_x86 (the registers that matter, made into rows) and
 * unwind_table (rows merged, indexed and laid out for BPF).
 */
#ifndef CPROF_UNWIND_H
#define CPROF_UNWIND_H

#include <stddef.h>
#include <stdint.h>

#include "cprof.h"
#include "errbuf.h"

struct unwind_table {
	struct cprof_unwind_row *rows; /* sorted by pc, unique pcs */
	size_t n;
	uint32_t *index;      /* page index, npages + 1 entries (see cprof.h) */
	uint32_t npages;
	uint32_t index_shift;
	uint64_t base;   /* ELF virtual address that row pc 0 stands for */
	size_t fdes;     /* FDEs used */
	size_t skipped;  /* CIEs/FDEs/instructions skipped as malformed or unsupported */
};

/* Builds the table of the ELF file open at @fd (not closed, not moved). */
int unwind_build_fd(int fd, struct unwind_table *out, struct errbuf *err);

/* The same for an ELF image in memory (the vDSO). */
int unwind_build_mem(const void *image, size_t len, struct unwind_table *out,
		     struct errbuf *err);

/* Slots the table takes in the BPF rows array: its page index, then its rows. */
size_t unwind_slots(const struct unwind_table *t);

/* Lays the table out as the BPF unwinder reads it, into unwind_slots(t) slots. */
void unwind_layout(const struct unwind_table *t, union cprof_table_slot *out);

void unwind_table_free(struct unwind_table *t);

#endif
