/* SPDX-License-Identifier: MIT */
/*
 * unwind_elf: what the unwind table builder reads of an ELF object: where
 * its CFI sections and its code are, and the bytes of a CFI section.
 *
 * Section headers come through libelf (headers only).  Section bytes are
 * read with pread, every range checked against the file size, never
 * mmapped: a file truncated under us gives an error, not a SIGBUS.  A
 * memory image (the vDSO) is used in place, bounds-checked the same way.
 */
#ifndef CPROF_UNWIND_ELF_H
#define CPROF_UNWIND_ELF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "errbuf.h"
#include "ranges.h"

/* Bytes of one CFI section we read, after inflating. */
#define SECTION_MAX (512ull << 20)

/* A byte source: an open file or a memory image, with its size. */
struct objsrc {
	int fd;             /* -1 for a memory image */
	const uint8_t *mem;
	uint64_t size;
};

struct secref {
	uint64_t off, size, addr, flags;
	bool found;
};

/* Where an object's CFI and code are. */
struct cfi_sections {
	struct secref eh, dbg;  /* .eh_frame, .debug_frame */
	uint64_t text, got;     /* bases of DW_EH_PE_textrel, _datarel */
	struct range *exec;     /* executable sections, sorted, disjoint (malloc'd) */
	size_t nexec;
};

/* A section's bytes: in the image, or in @owned (malloc'd). */
struct secbytes {
	const uint8_t *p;
	size_t len;
	uint8_t *owned;
};

/*
 * Checks the ELF header (x86-64, executable or shared object) and reads
 * the section table into @out.  -ENOEXEC for what is not such an object.
 */
int unwind_elf_sections(const struct objsrc *s, struct cfi_sections *out, struct errbuf *err);

/* The bytes of section @r (called @name in messages), inflated if compressed. */
int unwind_elf_load(const struct objsrc *s, const struct secref *r, const char *name,
		    struct secbytes *out, struct errbuf *err);

#endif
