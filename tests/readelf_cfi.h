/* SPDX-License-Identifier: MIT */
/*
 * readelf_cfi: an object's CFI as binutils reads it (`readelf
 * --debug-dump=frames-interp`, an implementation independent of ours),
 * and the check of one of our tables against it; with the few facts of a
 * trusted ELF file (ours, libc) the unwind tests need besides.
 */
#ifndef CPROF_READELF_CFI_H
#define CPROF_READELF_CFI_H

#include <elf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unwind/unwind.h"

struct rf_fde {
	uint64_t start, end;
	size_t row0, nrows; /* its rows in rf.rows */
	bool debug, signal, skip;
};

struct rf_row;
struct rf_cie;

/* What readelf says about an object's FDEs and CIEs. */
struct rf {
	struct rf_fde *fdes;
	size_t nfdes, cap_fdes;
	struct rf_row *rows;
	size_t nrows, cap_rows;
	struct rf_cie *cies;
	size_t ncies, cap_cies;
};

/*
 * Runs readelf on @path; the FDEs starting in [@plt_lo, @plt_hi) are the
 * PLT's.  False when readelf gives no FDE.
 */
bool readelf_frames(const char *path, uint64_t plt_lo, uint64_t plt_hi, struct rf *rf);
void rf_free(struct rf *rf);

/*
 * Checks (CHECK lines named after @label) that every readelf row and FDE
 * end of @path gives the same rules from @t, the table of @path, as the
 * BPF unwinder looks them up, and that each of our rows starts at a
 * readelf row or an FDE boundary.
 */
void compare_file(const char *label, const char *path, const struct unwind_table *t);

/* The section called @name of the ELF image @img, or NULL. */
const Elf64_Shdr *shdr_by_name(const uint8_t *img, size_t len, const char *name);

struct addr_range {
	uint64_t lo, hi;
};

/* The executable sections: FDEs elsewhere are not code (discarded functions). */
size_t exec_ranges(const uint8_t *img, size_t len, struct addr_range *r, size_t max);

#endif
