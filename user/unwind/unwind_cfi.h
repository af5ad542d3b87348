/* SPDX-License-Identifier: MIT */
/*
 * unwind_cfi: DWARF call frame information decoded: the CIEs and FDEs of
 * .eh_frame or .debug_frame, and each FDE's CFA program run into rows.
 *
 * The section bytes come from files any process can hand us: every read is
 * bounds-checked; a malformed CIE/FDE is skipped and counted, never
 * trusted.  DWARF64 entries (length 0xffffffff) have 8-byte CIE
 * ids/pointers in .eh_frame too, as binutils and gdb read them.
 */
#ifndef CPROF_UNWIND_CFI_H
#define CPROF_UNWIND_CFI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/errbuf.h"
#include "util/ranges.h"
#include "elf/secread.h"
#include "unwind/rows.h"

/* One CFI section: its bytes and where they are loaded. */
struct cfisec {
	const uint8_t *p;
	size_t len;
	uint64_t vaddr;      /* of byte 0: the base of DW_EH_PE_pcrel */
	uint64_t text, data; /* DW_EH_PE_textrel, _datarel bases (.text, .got) */
	bool debug;          /* .debug_frame: CIE id ~0, CIE pointers are offsets */
	struct secread *again; /* p NULL after cfi_collect(): the bytes read again */
};

struct cie;
struct fde;

/* The CIEs and FDEs of an object's CFI sections. */
struct cfi {
	struct cie *cies;
	size_t ncies, cap_cies;
	struct fde *fdes;
	size_t nfdes, cap_fdes;
	const struct range *exec; /* executable sections, sorted, disjoint */
	size_t nexec;
	const struct range *claimed; /* pc ranges .debug_frame must not override */
	size_t nclaimed;
	uint64_t entry;           /* ELF entry point, 0 for none: see cfi_run() */
	size_t used, skipped;     /* FDEs run; entries skipped as malformed */
	unsigned nsecs;           /* cfi_collect() calls so far */
	struct errbuf *err;
};

/*
 * Adds the CIEs and FDEs of one section, which must stay in place until
 * cfi_run().  FDEs outside executable sections (discarded functions at 0,
 * or tombstones) are skipped and counted; FDEs that meet the claimed
 * ranges are dropped.  < 0 only when out of room.
 */
int cfi_collect(struct cfi *b, const struct cfisec *s);

/*
 * The union of the FDE ranges collected so far (malloc'd, sorted,
 * disjoint: @*n of them, @*covered bytes), or NULL when out of memory.
 */
struct range *cfi_fde_ranges(const struct cfi *b, size_t *n, uint64_t *covered);

/*
 * Runs every FDE's CFA program, in start order, into @rows (whose base
 * becomes the lowest FDE start).  An FDE that starts inside an earlier
 * one truncates it there; past the later FDE's end the pc range is
 * INVALID (or whatever FDE starts next), never a stale rule.  An entry
 * point no FDE describes (ld.so's _start) gets a STOP row, up to the next
 * FDE or 256 bytes: a walk that reaches it has reached the outermost frame.
 */
int cfi_run(struct cfi *b, struct rowbuf *rows);

void cfi_free(struct cfi *b);

#endif
