// SPDX-License-Identifier: MIT
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "unwind_elf.h"

/* Bounds on what an object may make libelf allocate. */
#define SHSTRTAB_MAX (16ull << 20) /* section name table libelf may read */
#define SECTIONS_MAX 65536u        /* section headers libelf may load */

static int src_read(const struct objsrc *s, uint64_t off, void *buf, size_t n)
{
	size_t done = 0;

	if (off > s->size || n > s->size - off)
		return -EIO;
	if (s->mem) {
		memcpy(buf, s->mem + off, n);
		return 0;
	}
	while (done < n) {
		ssize_t r = pread(s->fd, (char *)buf + done, n - done, (off_t)(off + done));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -EIO; /* the file shrank under us */
		done += (size_t)r;
	}
	return 0;
}

/* Checks what libelf will allocate for before letting it see the object. */
static int check_ehdr(const struct objsrc *s, struct errbuf *err)
{
	Elf64_Ehdr eh;
	uint64_t n;

	if (src_read(s, 0, &eh, sizeof(eh)) || memcmp(eh.e_ident, ELFMAG, SELFMAG))
		return errf(err, -ENOEXEC, "not an ELF file");
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh.e_machine != EM_X86_64)
		return errf(err, -ENOEXEC, "not an x86-64 ELF file");
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)
		return errf(err, -ENOEXEC, "not an executable or shared object (ELF type %u)",
			    eh.e_type);
	if (!eh.e_shoff)
		return errf(err, -ENOENT, "no section headers, so no .eh_frame to find");
	if (eh.e_shentsize != sizeof(Elf64_Shdr))
		return errf(err, -ENOEXEC, "bad section header size %u", eh.e_shentsize);
	n = eh.e_shnum;
	if (n == 0) { /* extended numbering: the count is in section 0 */
		Elf64_Shdr sh0;

		if (src_read(s, eh.e_shoff, &sh0, sizeof(sh0)))
			return errf(err, -ENOEXEC, "section headers past the end of the file");
		n = sh0.sh_size;
	}
	if (n > SECTIONS_MAX)
		return errf(err, -ENOEXEC, "too many sections (%llu)", (unsigned long long)n);
	if (eh.e_shoff > s->size || n * sizeof(Elf64_Shdr) > s->size - eh.e_shoff)
		return errf(err, -ENOEXEC, "section headers past the end of the file");
	return 0;
}

static void note_section(struct secref *r, const GElf_Shdr *sh)
{
	r->off = sh->sh_offset;
	r->size = sh->sh_size;
	r->addr = sh->sh_addr;
	r->flags = sh->sh_flags;
	r->found = true;
}

static int read_layout(Elf *e, const struct objsrc *s, struct cfi_sections *lay,
		       struct errbuf *err)
{
	size_t shstrndx, nsec = 0;
	GElf_Shdr sh;
	Elf_Scn *scn;

	if (elf_getshdrstrndx(e, &shstrndx) || elf_getshdrnum(e, &nsec) ||
	    !(scn = elf_getscn(e, shstrndx)) || !gelf_getshdr(scn, &sh))
		return errf(err, -ENOEXEC, "no section name table: %s", elf_errmsg(-1));
	/* libelf reads the whole name table: bound it first. */
	if (sh.sh_type == SHT_NOBITS || sh.sh_size > SHSTRTAB_MAX || sh.sh_offset > s->size ||
	    sh.sh_size > s->size - sh.sh_offset)
		return errf(err, -ENOEXEC, "bad section name table");
	lay->exec = calloc(nsec ? nsec : 1, sizeof(*lay->exec));
	if (!lay->exec)
		return errf(err, -ENOMEM, "out of memory");
	scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		if ((sh.sh_flags & (SHF_ALLOC | SHF_EXECINSTR)) == (SHF_ALLOC | SHF_EXECINSTR) &&
		    sh.sh_size && sh.sh_addr + sh.sh_size > sh.sh_addr && lay->nexec < nsec)
			lay->exec[lay->nexec++] = (struct range){ sh.sh_addr, sh.sh_addr + sh.sh_size };
		name = elf_strptr(e, shstrndx, sh.sh_name);
		if (!name)
			continue;
		if (strcmp(name, ".eh_frame") == 0)
			note_section(&lay->eh, &sh);
		else if (strcmp(name, ".debug_frame") == 0)
			note_section(&lay->dbg, &sh);
		else if (strcmp(name, ".text") == 0)
			lay->text = sh.sh_addr;
		else if (strcmp(name, ".got") == 0)
			lay->got = sh.sh_addr;
	}
	lay->nexec = range_normalize(lay->exec, lay->nexec);
	return 0;
}

int unwind_elf_sections(const struct objsrc *s, struct cfi_sections *out, struct errbuf *err)
{
	Elf *e;
	int rc;

	rc = check_ehdr(s, err);
	if (rc)
		return rc;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return errf(err, -ENOTSUP, "libelf: %s", elf_errmsg(-1));
	/* ELF_C_READ: libelf preads the headers, nothing is mapped. */
	e = s->mem ? elf_memory((char *)(uintptr_t)s->mem, s->size)
		   : elf_begin(s->fd, ELF_C_READ, NULL);
	if (!e)
		return errf(err, -ENOEXEC, "libelf: %s", elf_errmsg(-1));
	rc = read_layout(e, s, out, err);
	elf_end(e);
	return rc;
}

static int inflate_section(const uint8_t *z, size_t zlen, const char *name, struct secbytes *out,
			   struct errbuf *err)
{
	Elf64_Chdr ch;
	uLongf dlen;

	if (zlen < sizeof(ch))
		return errf(err, -ENOEXEC, "%s: truncated compression header", name);
	memcpy(&ch, z, sizeof(ch));
	if (ch.ch_type != ELFCOMPRESS_ZLIB)
		return errf(err, -ENOTSUP, "%s: compression type %u not supported", name,
			    ch.ch_type);
	if (ch.ch_size > SECTION_MAX)
		return errf(err, -EFBIG, "%s: %llu bytes inflated, more than we read", name,
			    (unsigned long long)ch.ch_size);
	out->owned = malloc(ch.ch_size ? ch.ch_size : 1);
	if (!out->owned)
		return errf(err, -ENOMEM, "%s: out of memory", name);
	dlen = ch.ch_size;
	if (uncompress(out->owned, &dlen, z + sizeof(ch), zlen - sizeof(ch)) != Z_OK ||
	    dlen != ch.ch_size)
		return errf(err, -ENOEXEC, "%s: corrupt compressed data", name);
	out->p = out->owned;
	out->len = dlen;
	return 0;
}

int unwind_elf_load(const struct objsrc *s, const struct secref *r, const char *name,
		    struct secbytes *out, struct errbuf *err)
{
	uint8_t *raw;
	int rc;

	if (r->size > SECTION_MAX)
		return errf(err, -EFBIG, "%s: %llu bytes, more than we read", name,
			    (unsigned long long)r->size);
	if (r->off > s->size || r->size > s->size - r->off)
		return errf(err, -ENOEXEC, "%s: extends past the end of the file", name);
	if (s->mem && !(r->flags & SHF_COMPRESSED)) {
		out->p = s->mem + r->off;
		out->len = r->size;
		return 0;
	}
	if (s->mem)
		return inflate_section(s->mem + r->off, r->size, name, out, err);
	raw = malloc(r->size ? r->size : 1);
	if (!raw)
		return errf(err, -ENOMEM, "%s: out of memory", name);
	rc = src_read(s, r->off, raw, r->size);
	if (rc) {
		free(raw);
		return errf(err, rc, "%s: read failed: %s", name, strerror(-rc));
	}
	if (r->flags & SHF_COMPRESSED) {
		rc = inflate_section(raw, r->size, name, out, err);
		free(raw);
		return rc;
	}
	out->p = out->owned = raw;
	out->len = r->size;
	return 0;
}
