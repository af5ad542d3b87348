/* SPDX-License-Identifier: MIT */
/*
 * cfiasm: CFI assembled by hand, one construct at a time, into a minimal
 * ELF image, for the unwind table tests.
 */
#ifndef CPROF_CFIASM_H
#define CPROF_CFIASM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unwind/unwind.h"

/* Where the image puts its sections. */
#define TEXT_VADDR 0x1000u
#define TEXT_SIZE 0x1000u
#define CFI_VADDR 0x3000u

/* One CFI section being written. */
struct cfiasm {
	uint8_t b[4096];
	size_t n;
	bool debug;   /* .debug_frame rules */
	bool dwarf64; /* 64-bit lengths (and ids) for the next entries */
	int version;  /* of the next CIE: 0 for the default (1, or 4 for debug) */
};

/* def_cfa rsp+8; return address at CFA-8. */
static const uint8_t STD[] = { 0x0c, 0x07, 0x08, 0x90, 0x01 };

/* Raw values, for entries a test damages by hand. */
void c_u32(struct cfiasm *c, uint32_t v);
void c_u64(struct cfiasm *c, uint64_t v);

/*
 * A CIE with augmentation @aug ('z' forms get R = @enc, P = an indirect
 * pcrel personality, L = pcrel LSDAs), code alignment 1, @data_align, the
 * initial instructions @ins.  Returns its offset, for its FDEs.
 */
size_t c_cie(struct cfiasm *c, const char *aug, int64_t data_align, uint8_t enc,
	     const uint8_t *ins, size_t nins);

/* An FDE of the CIE at @cie (whose FDE encoding is @enc; @lsda: it has 'L'). */
size_t c_fde(struct cfiasm *c, size_t cie, uint8_t enc, bool lsda, uint64_t start,
	     uint64_t len, const uint8_t *ins, size_t nins);

/* An FDE of a "zR" CIE with pcrel sdata4 pointers; the instructions end in a dummy 0. */
#define FDE(c, cie, start, len, ...)                                          \
	do {                                                                  \
		static const uint8_t _ins[] = { __VA_ARGS__ };                \
		c_fde((c), (cie), 0x1b, false, (start), (len), _ins,          \
		      sizeof(_ins) - 1); /* the trailing dummy 0 */           \
	} while (0)

/*
 * A minimal x86-64 ET_DYN image (malloc'd): .text at TEXT_VADDR (TEXT_SIZE
 * bytes), @eh as .eh_frame at CFI_VADDR, @dbg as .debug_frame (either may
 * be NULL: that section is then an empty ".data") and .shstrtab.
 */
uint8_t *c_image(const struct cfiasm *eh, const struct cfiasm *dbg, size_t *len);

/* The table of c_image(@eh, @dbg), built with build_mem(); says why it failed. */
int c_build2(const struct cfiasm *eh, const struct cfiasm *dbg, struct unwind_table *t);

/* The same for one section: .debug_frame if @c->debug, else .eh_frame. */
int c_build(const struct cfiasm *c, struct unwind_table *t);

#endif
