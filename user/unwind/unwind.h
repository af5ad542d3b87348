/* SPDX-License-Identifier: MIT */
/*
 * unwind: an object's DWARF call frame information (.eh_frame, else
 * .debug_frame) compiled into rows: from which pc on which rule holds (struct
 * cprof_unwind_rule in bpf/cprof.h), laid out for the BPF unwinder to
 * binary-search by pc.
 *
 * Built by unwind.c from unwind_elf (the sections), unwind_cfi (CIEs, FDEs,
 * CFA programs), unwind_x86 (the registers that matter, made into rows),
 * rows (rows merged, their rules numbered) and unwind_layout (the
 * table as BPF reads it).
 */
#ifndef CPROF_UNWIND_H
#define CPROF_UNWIND_H

#include <stddef.h>
#include <stdint.h>

#include "cprof.h"
#include "util/errbuf.h"

struct unwind_table {
	uint32_t *pcs;   /* row i holds from base + pcs[i] to the next row; sorted, unique */
	uint16_t *ids;   /* row i's rule: rules[ids[i]] */
	size_t n;
	struct cprof_unwind_rule *rules; /* each distinct rule once */
	size_t nrules;
	uint64_t base;   /* ELF virtual address that row pc 0 stands for */
	size_t fdes;     /* FDEs used */
	size_t skipped;  /* CIEs/FDEs/instructions skipped as malformed or unsupported */
};

/* The rule of row @i. */
static inline const struct cprof_unwind_rule *unwind_rule(const struct unwind_table *t, size_t i)
{
	return &t->rules[t->ids[i]];
}

/* Builds the table of the ELF file open at @fd (not closed, not moved). */
int unwind_build_fd(int fd, struct unwind_table *out, struct errbuf *err);

/* The same for an ELF image in memory (the vDSO). */
int unwind_build_mem(const void *image, size_t len, struct unwind_table *out,
		     struct errbuf *err);

void unwind_table_free(struct unwind_table *t);

/*
 * A table laid out as the BPF unwinder reads it (bpf/cprof.h): planned
 * first, for its size, then written a run of slots at a time, so that the
 * slots never need to be all in memory at once.
 */
struct unwind_layout {
	struct cprof_table desc; /* desc.first is 0: the caller places it */
	uint32_t nslots;
	uint16_t *number;        /* rule i's number in the layout: the most used first */
	uint16_t *rule_of;       /* number -> rule */
};

/* Plans the layout of @t (nonempty). */
int unwind_plan(const struct unwind_table *t, struct unwind_layout *lay);

/* Takes @n slots, the table's slots from @off on. */
typedef int (*unwind_sink_fn)(void *ctx, uint32_t off, const union cprof_table_slot *slots,
			      uint32_t n);

/* Writes the table's slots in order, through @sink; stops at its first error. */
int unwind_emit(const struct unwind_table *t, const struct unwind_layout *lay,
		unwind_sink_fn sink, void *ctx);

void unwind_layout_free(struct unwind_layout *lay);

#endif
