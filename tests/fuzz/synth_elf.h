/* SPDX-License-Identifier: MIT */
/*
 * synth_elf: builds a minimal x86-64 ELF image around section contents the
 * fuzzer supplies, so that a structured target spends its time in the
 * parser of those contents (.eh_frame rows, symbol tables, notes) rather
 * than on the mutator stumbling into valid ELF and section headers.
 *
 * Layout: ELF header and room for SYNTH_MAX_PHDRS program headers, then
 * the blobs in the order added (each aligned as asked), then the section
 * name table, then the section headers.  Offsets, sizes and links of the
 * headers are whatever the caller says: the harness may lie in them on
 * purpose.
 */
#ifndef CPROF_SYNTH_ELF_H
#define CPROF_SYNTH_ELF_H

#include <elf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SYNTH_MAX_PHDRS 8
#define SYNTH_MAX_SECTIONS 16
#define SYNTH_SHSTR_MAX 512
#define SYNTH_HDR_BYTES (sizeof(Elf64_Ehdr) + SYNTH_MAX_PHDRS * sizeof(Elf64_Phdr))

struct synth {
	uint8_t *buf;
	size_t len, cap;
	bool oom;
	uint16_t type; /* ET_EXEC or ET_DYN */
	Elf64_Phdr ph[SYNTH_MAX_PHDRS];
	size_t nph;
	Elf64_Shdr sh[SYNTH_MAX_SECTIONS];
	size_t nsh;
	char shstr[SYNTH_SHSTR_MAX];
	size_t shstr_len;
};

static inline void synth_reserve(struct synth *s, size_t extra)
{
	size_t cap = s->cap ? s->cap : 4096;
	uint8_t *b;

	if (s->oom || s->len + extra <= s->cap)
		return;
	while (cap < s->len + extra)
		cap *= 2;
	b = realloc(s->buf, cap);
	if (!b) {
		s->oom = true;
		return;
	}
	memset(b + s->cap, 0, cap - s->cap);
	s->buf = b;
	s->cap = cap;
}

static inline void synth_init(struct synth *s, uint16_t type)
{
	memset(s, 0, sizeof(*s));
	s->type = type;
	synth_reserve(s, SYNTH_HDR_BYTES);
	s->len = SYNTH_HDR_BYTES;
	/* Section 0 is the null section; name offset 0 is "". */
	s->nsh = 1;
	s->shstr_len = 1;
}

/* Appends @len bytes aligned to @align (a power of two); returns their offset. */
static inline uint64_t synth_blob(struct synth *s, const void *data, size_t len, size_t align)
{
	size_t off;

	if (align > 1)
		synth_reserve(s, align);
	if (s->oom)
		return 0;
	off = align > 1 ? (s->len + align - 1) & ~(align - 1) : s->len;
	s->len = off;
	synth_reserve(s, len);
	if (s->oom)
		return 0;
	if (len)
		memcpy(s->buf + off, data, len);
	s->len = off + len;
	return off;
}

/* Adds a section header; returns its index (0 when the table is full). */
static inline uint32_t synth_section(struct synth *s, const char *name, const Elf64_Shdr *h)
{
	size_t n = strlen(name) + 1;

	if (s->nsh >= SYNTH_MAX_SECTIONS - 1 || s->shstr_len + n > SYNTH_SHSTR_MAX)
		return 0; /* the last slot is kept for .shstrtab */
	s->sh[s->nsh] = *h;
	s->sh[s->nsh].sh_name = (uint32_t)s->shstr_len;
	memcpy(s->shstr + s->shstr_len, name, n);
	s->shstr_len += n;
	return (uint32_t)s->nsh++;
}

static inline void synth_phdr(struct synth *s, const Elf64_Phdr *p)
{
	if (s->nph < SYNTH_MAX_PHDRS)
		s->ph[s->nph++] = *p;
}

/*
 * Appends .shstrtab and the section headers, fills in the ELF and program
 * headers, and returns the image (the caller frees it) or NULL.
 */
static inline uint8_t *synth_finish(struct synth *s, size_t *len)
{
	Elf64_Ehdr eh = { 0 };
	uint64_t shoff;
	uint32_t shstrndx;

	shstrndx = synth_section(s, ".shstrtab",
				 &(Elf64_Shdr){ .sh_type = SHT_STRTAB, .sh_addralign = 1 });
	if (shstrndx) {
		s->sh[shstrndx].sh_offset = synth_blob(s, s->shstr, s->shstr_len, 1);
		s->sh[shstrndx].sh_size = s->shstr_len;
	}
	shoff = synth_blob(s, s->sh, s->nsh * sizeof(Elf64_Shdr), 8);
	if (s->oom) {
		free(s->buf);
		return NULL;
	}
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = s->type;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_phoff = s->nph ? sizeof(Elf64_Ehdr) : 0;
	eh.e_shoff = shoff;
	eh.e_ehsize = sizeof(Elf64_Ehdr);
	eh.e_phentsize = sizeof(Elf64_Phdr);
	eh.e_phnum = (uint16_t)s->nph;
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = (uint16_t)s->nsh;
	eh.e_shstrndx = (uint16_t)shstrndx;
	memcpy(s->buf, &eh, sizeof(eh));
	memcpy(s->buf + sizeof(eh), s->ph, s->nph * sizeof(Elf64_Phdr));
	*len = s->len;
	return s->buf;
}

#endif
