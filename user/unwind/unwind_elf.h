/* SPDX-License-Identifier: MIT */
/*
 * unwind_elf: what the unwind table builder reads of an ELF object: where
 * its CFI sections and its code are, and the bytes of a CFI section, read
 * through elfsrc (bounded reads, never a mapping).
 */
#ifndef CPROF_UNWIND_ELF_H
#define CPROF_UNWIND_ELF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "elf/elfsrc.h"
#include "util/errbuf.h"
#include "util/ranges.h"

/* Bytes of one CFI section we read, after inflating. */
#define SECTION_MAX (512ull << 20)

struct secref {
	struct elfsrc_scn scn;
	uint64_t addr;
	bool found;
};

/* Where an object's CFI and code are. */
struct cfi_sections {
	struct secref eh, dbg;  /* .eh_frame, .debug_frame */
	uint64_t text, got;     /* bases of DW_EH_PE_textrel, _datarel */
	uint64_t entry;         /* e_entry: where the program starts */
	struct range *exec;     /* executable sections, sorted, disjoint (malloc'd) */
	size_t nexec;
};

/*
 * Checks the ELF header (x86-64, executable or shared object, with section
 * headers: -ENOENT without) and reads the section table into @out.
 * -ENOEXEC for what is not such an object.
 */
int unwind_elf_sections(const struct elfsrc *s, struct cfi_sections *out, struct errbuf *err);

/* The bytes of section @r, inflated if compressed (elfsrc_section_bytes()). */
int unwind_elf_load(const struct elfsrc *s, const struct secref *r, struct elfsrc_bytes *out,
		    struct errbuf *err);

#endif
