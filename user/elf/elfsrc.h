/* SPDX-License-Identifier: MIT */
/*
 * elfsrc: the one way cprof reads an ELF file, for symbols (elfobj,
 * elfsyms, python's interpreter symbols), debug files (debugfile), unwind
 * tables (unwind_elf) and DWARF (dwarfinfo, dwarfimage).  Not read here,
 * being the host's own: the agent's BPF object and the kernel's BTF,
 * which libbpf parses (sampler, kernel_btf).
 *
 * Every file is untrusted (a container can hand us any file, and change
 * or truncate it while we read), so:
 *
 *  - bytes come through elfsrc_read(), which checks every range against
 *    the size the source had when opened and preads an fd (never mmap: a
 *    file truncated under us gives -EIO, not SIGBUS) or copies from a
 *    memory image (the vDSO);
 *  - libelf sees a file only after elfsrc_check() has bounded what it
 *    would allocate for, and only for the ELF, program and section
 *    headers (ELF_C_READ): section names and data are read here, bounded;
 *  - nothing of the file stays in memory after a call returns, only what
 *    the caller extracted.
 *
 * Errors are negative errno values, the same for the same fault in every
 * caller; functions that take an errbuf leave a message without the
 * file's name (callers know what they were reading):
 *
 *   -ENOEXEC  not an ELF object we read (not 64-bit, another byte order,
 *             machine or type), or headers that lie: counts over our
 *             bounds, a section past the end of the file, a compression
 *             header that cannot be read, data that does not inflate to
 *             the size it claims
 *   -ENOENT   what was asked for is absent (no section header table)
 *   -ERANGE   elfsrc_read() of a range outside the source
 *   -EIO      the file shrank since it was opened
 *   -EFBIG    over a size bound (ours, or the caller's)
 *   -ENOTSUP  a compression we do not read (zstd)
 *   -ENOMEM, and other -errno from the system
 */
#ifndef CPROF_ELFSRC_H
#define CPROF_ELFSRC_H

#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/errbuf.h"

/* Longest build ID we keep (bytes); GNU uses 20, some linkers 16 or 8. */
#define ELFSRC_BUILD_ID_MAX 64

/* Section headers libelf may be made to load (extended numbering included). */
#define ELFSRC_MAX_SECTIONS 65536u

/* Bytes of a section name read; longer names are no name we look for. */
#define ELFSRC_NAME_MAX 64

/* A byte source: an open file or a memory image, with its size. */
struct elfsrc {
	int fd;             /* -1 for a memory image */
	const uint8_t *mem; /* NULL for a file */
	uint64_t size;
};

/*
 * The source of the file open at @fd (not taken): -EINVAL when it is not
 * a regular file (a FIFO or device a process planted), else fstat's error.
 */
int elfsrc_from_fd(struct elfsrc *s, int fd);

static inline struct elfsrc elfsrc_from_mem(const void *image, size_t len)
{
	return (struct elfsrc){ .fd = -1, .mem = image, .size = len };
}

/* Reads exactly @len bytes at @off: -ERANGE outside the source, -EIO if it shrank. */
int elfsrc_read(const struct elfsrc *s, uint64_t off, void *buf, size_t len);

/* How many of the @len bytes at @off the source holds (0 if @off is past its end). */
uint64_t elfsrc_avail(const struct elfsrc *s, uint64_t off, uint64_t len);

/* What elfsrc_check() requires beyond a sound 64-bit ELF header of the host's byte order. */
#define ELFSRC_LOADABLE 1u /* an executable or shared object (ET_EXEC, ET_DYN) */
#define ELFSRC_SECTIONS 2u /* a section header table: -ENOENT without one */

/*
 * Checks the ELF header before libelf sees the file: identity (64-bit,
 * the host's byte order), @machine (EM_NONE: any), what @need asks, and
 * the header counts and sizes.  libelf allocates per section when it
 * begins, and extended numbering makes the count a 64-bit field the file
 * controls, hence the bound.  Section headers past the end of the file (a
 * truncated or oddly stripped object still has segments and a build ID)
 * are refused only with ELFSRC_SECTIONS; libelf then finds no sections.
 */
int elfsrc_check(const struct elfsrc *s, unsigned machine, unsigned need, struct errbuf *err);

/* elfsrc_check(), then libelf on the headers; elf_end() the result. */
int elfsrc_begin(const struct elfsrc *s, unsigned machine, unsigned need, Elf **out,
		 struct errbuf *err);

/* --- sections ---------------------------------------------------------- */

struct elfsrc_scn {
	GElf_Shdr sh;
	size_t index;
	char name[ELFSRC_NAME_MAX]; /* "" when unnamed, unreadable or longer */
};

/* A walk over the section headers, with names read through the source. */
struct elfsrc_walk {
	Elf *e;
	const struct elfsrc *s;
	Elf_Scn *scn;
	uint64_t str_off, str_size;
	bool names; /* the section name table is a string table inside the file */
};

void elfsrc_walk_init(struct elfsrc_walk *w, Elf *e, const struct elfsrc *s);

/* The next section (in header order, from 1), or false at the end. */
bool elfsrc_walk_next(struct elfsrc_walk *w, struct elfsrc_scn *out);

/* How a section's bytes are stored. */
enum elfsrc_how { ELFSRC_PLAIN, ELFSRC_ZLIB };

struct elfsrc_data {
	enum elfsrc_how how;
	uint64_t off, len; /* the stored bytes (past any compression header) */
	uint64_t size;     /* bytes once inflated */
};

/*
 * Where section @c's bytes are and what they inflate to: SHF_COMPRESSED
 * with an ELF compression header (zlib; -ENOTSUP for another), or the GNU
 * ".zdebug_" form ("ZLIB" and a big-endian size).  -ENOEXEC when the
 * compression header cannot be read.  Nothing is read for a plain
 * section; its range is checked when it is read.
 */
int elfsrc_data(const struct elfsrc *s, const struct elfsrc_scn *c, struct elfsrc_data *d,
		struct errbuf *err);

/*
 * Reads the @d->size bytes of section @name into @dst, inflating them:
 * -ENOEXEC when they lie past the end of the file or do not inflate to
 * exactly the size claimed.
 */
int elfsrc_data_read(const struct elfsrc *s, const struct elfsrc_data *d, const char *name,
		     uint8_t *dst, struct errbuf *err);

/* A section's bytes: in the memory image, or in @owned (malloc'd). */
struct elfsrc_bytes {
	const uint8_t *p;
	size_t len;
	uint8_t *owned;
};

/*
 * The bytes of section @c, inflated, at most @max of them (-EFBIG); in
 * place for a plain section of a memory image.  Free @out->owned.
 */
int elfsrc_section_bytes(const struct elfsrc *s, const struct elfsrc_scn *c, uint64_t max,
			 struct elfsrc_bytes *out, struct errbuf *err);

/* --- notes ----------------------------------------------------------------- */

/*
 * The GNU build ID (NT_GNU_BUILD_ID), from PT_NOTE segments, else from
 * SHT_NOTE sections; @sections_first reverses that (in a separate debug
 * file the program headers describe the stripped original, the sections
 * are authoritative).  Reads a bounded number of note bytes however many
 * notes the headers claim.  Returns its length in @id, 0 when none.
 */
size_t elfsrc_build_id(Elf *e, const struct elfsrc *s, bool sections_first,
		       uint8_t id[ELFSRC_BUILD_ID_MAX]);

#endif
