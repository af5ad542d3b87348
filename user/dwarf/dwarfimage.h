/* SPDX-License-Identifier: MIT */
/*
 * dwarfimage: the copy of one ELF file's DWARF that libdw is given.
 *
 * libdw trusts the sections it reads in places that matter: strings of
 * .debug_str and .debug_line_str, and inline strings (DW_FORM_string) in
 * .debug_info and .debug_line, are handed out as pointers into the section
 * and measured with strlen, and memchr scans for their end are bounded by a
 * unit's length rather than by what is left of it.  A .debug_line_str
 * without a final NUL made dwarf_getsrclines() read past the heap block.
 *
 * So libdw never sees the file itself.  It sees an ELF image in memory
 * made here: only the debug sections that source lines and inlined calls
 * need, decompressed by us (the size a compressed section claims is
 * checked against what inflating it gives), each followed by
 * DWARFIMAGE_PAD zero bytes, so that any string or small read starting
 * inside a section ends inside the image.  Sections for variable
 * locations, CFI, name indexes and macros are left out.
 */
#ifndef CPROF_DWARFIMAGE_H
#define CPROF_DWARFIMAGE_H

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "elf/elfsrc.h"
#include "util/errbuf.h"

/* Zero bytes after each section in the image. */
#define DWARFIMAGE_PAD 16

/* Debug sections (decompressed) no file may claim more of, whatever the budget. */
#define DWARFIMAGE_MAX_BYTES (512ull << 20)

/* What the headers say, before anything is read. */
struct dwarfimage_scan {
	uint64_t bytes;   /* the kept sections, decompressed */
	bool has_info;    /* a non-empty .debug_info */
	/* .gnu_debugaltlink: the build ID of the dwz file; 0 bytes: none */
	uint8_t alt_id[ELFSRC_BUILD_ID_MAX];
	size_t alt_id_len;
};

struct dwarfimage {
	uint8_t *buf;   /* the ELF image */
	size_t len;
	struct dwarfimage_scan scan; /* of the file, when the image was made */
	Elf *elf;       /* libelf's handle on the image, for libdw (dwarfimage_read) */
};

/*
 * Sizes the debug sections of @e (the file open at @fd, already checked
 * by the caller: 64-bit, native byte order, a bounded section count) and
 * reads its .gnu_debugaltlink.  0, or -ENOEXEC for headers that lie or
 * can't be used (an unreadable compression header, sizes over
 * DWARFIMAGE_MAX_BYTES, a link section without a build ID), with @err
 * saying which.  Budgets are the caller's: compare @out->bytes.
 */
int dwarfimage_scan(Elf *e, int fd, struct dwarfimage_scan *out, struct errbuf *err);

/*
 * Builds the image of @e's kept debug sections (read from @fd), refusing
 * more than @max_bytes of them (-EFBIG) and sections whose contents
 * disagree with their headers (-ENOEXEC): a compressed one that inflates
 * to another size, one past the end of the file.
 */
int dwarfimage_build(Elf *e, int fd, uint64_t max_bytes, struct dwarfimage *img,
		     struct errbuf *err);

/*
 * Reads the ELF file open at @fd (through elfsrc) into @img, as
 * dwarfimage_build() does, and opens the image with libelf (@img->elf):
 * libdw is handed that handle, never one on the file.  The DWARF reader
 * opens libelf here only.
 */
int dwarfimage_read(struct dwarfimage *img, int fd, uint64_t max_bytes, struct errbuf *err);

/* Frees the image and its libelf handle; @img may be zeroed or freed already. */
void dwarfimage_free(struct dwarfimage *img);

#endif
