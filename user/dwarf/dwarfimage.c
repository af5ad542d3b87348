// SPDX-License-Identifier: MIT
/*
 * dwarfimage: see dwarfimage.h.
 *
 * Image layout: the ELF header, then each kept section (8-aligned) and
 * its DWARFIMAGE_PAD zero bytes, then the section name table, then the
 * section headers.  No program headers: libdw needs none, and for
 * executables and shared objects it applies no relocations either.
 */
#include <elf.h>
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "dwarf/dwarfimage.h"

/* .gnu_debugaltlink: a file name and a build ID. */
#define LINK_BYTES 4096u

/*
 * The sections lines and inlined calls read, by name after ".debug_" (or
 * ".zdebug_").  Left out: loc, loclists, frame (our unwinder has its own
 * CFI reader), pubnames, pubtypes, names, macinfo, macro: libc6-dbg's
 * .debug_loclists alone is 1.4 MB decompressed.
 */
static const char *const kept_names[] = {
	"info", "types", "abbrev", "addr", "aranges", "line", "line_str",
	"str", "str_offsets", "ranges", "rnglists",
};
#define NKEPT (sizeof(kept_names) / sizeof(kept_names[0]))

struct kept {
	bool present;
	struct elfsrc_data d;
};

static int kept_index(const char *name)
{
	const char *base;

	if (!strncmp(name, ".debug_", 7))
		base = name + 7;
	else if (!strncmp(name, ".zdebug_", 8))
		base = name + 8;
	else
		return -1;
	for (size_t i = 0; i < NKEPT; i++)
		if (!strcmp(base, kept_names[i]))
			return (int)i;
	return -1;
}

/* "name\0" then the build ID. */
static int read_altlink(const struct elfsrc *s, const GElf_Shdr *sh,
			struct dwarfimage_scan *out, struct errbuf *err)
{
	char buf[LINK_BYTES];
	const char *nul;
	size_t len = (size_t)sh->sh_size, idlen;

	if (sh->sh_size > sizeof(buf) || elfsrc_read(s, sh->sh_offset, buf, len))
		return errf(err, -ENOEXEC, ".gnu_debugaltlink: over %u bytes or unreadable",
			    LINK_BYTES);
	nul = memchr(buf, 0, len);
	idlen = nul ? len - (size_t)(nul + 1 - buf) : 0;
	if (!idlen || idlen > sizeof(out->alt_id))
		return errf(err, -ENOEXEC, ".gnu_debugaltlink: no build ID");
	memcpy(out->alt_id, nul + 1, idlen);
	out->alt_id_len = idlen;
	return 0;
}

/* The kept sections of @e, first of each name, as libdw would pick them. */
static int scan(Elf *e, const struct elfsrc *s, struct kept k[NKEPT],
		struct dwarfimage_scan *out, struct errbuf *err)
{
	struct elfsrc_walk w;
	struct elfsrc_scn c;
	bool altlink = false;

	memset(out, 0, sizeof(*out));
	memset(k, 0, NKEPT * sizeof(k[0]));
	elfsrc_walk_init(&w, e, s);
	if (!w.names)
		return errf(err, -ENOEXEC, "no section name table");
	while (elfsrc_walk_next(&w, &c)) {
		int i, rc;

		/* libdw skips sections in groups (and NOBITS) outside group reads. */
		if (c.sh.sh_type == SHT_NOBITS || (c.sh.sh_flags & SHF_GROUP) || !c.name[0])
			continue;
		if (!altlink && !strcmp(c.name, ".gnu_debugaltlink")) {
			altlink = true;
			rc = read_altlink(s, &c.sh, out, err);
			if (rc)
				return rc;
			continue;
		}
		i = kept_index(c.name);
		if (i < 0 || k[i].present)
			continue;
		rc = elfsrc_data(s, &c, &k[i].d, err);
		/* Another algorithm (zstd): libdw would skip the section too. */
		if (rc == -ENOTSUP)
			continue;
		if (rc)
			return rc;
		k[i].present = true;
		if (k[i].d.size > DWARFIMAGE_MAX_BYTES - out->bytes)
			return errf(err, -ENOEXEC, "debug sections claim over %llu MB",
				    (unsigned long long)(DWARFIMAGE_MAX_BYTES >> 20));
		out->bytes += k[i].d.size;
	}
	out->has_info = k[0].present && k[0].d.size > 0;
	return 0;
}

/* The file open at @fd as a source; what is not a regular file is no ELF file we read. */
static int fd_source(struct elfsrc *s, int fd, struct errbuf *err)
{
	if (elfsrc_from_fd(s, fd))
		return errf(err, -ENOEXEC, "not a regular file");
	return 0;
}

int dwarfimage_scan(Elf *e, int fd, struct dwarfimage_scan *out, struct errbuf *err)
{
	struct kept k[NKEPT];
	struct elfsrc s;
	int rc;

	rc = fd_source(&s, fd, err);
	return rc ? rc : scan(e, &s, k, out, err);
}

static const char *section_name(int i, char *buf, size_t len)
{
	size_t n = strlen(kept_names[i]);

	if (n + 8 > len)
		return "";
	memcpy(buf, ".debug_", 7);
	memcpy(buf + 7, kept_names[i], n + 1);
	return buf;
}

int dwarfimage_build(Elf *e, int fd, uint64_t max_bytes, struct dwarfimage *img,
		     struct errbuf *err)
{
	struct kept k[NKEPT];
	struct elfsrc s;
	char shstr[256], name[32];
	uint64_t data_off[NKEPT] = { 0 }, pos = sizeof(Elf64_Ehdr), shstr_off, sh_off;
	size_t shstr_len = 1, nsec = 1;
	Elf64_Shdr *shdr;
	Elf64_Ehdr eh = { 0 };
	GElf_Ehdr oeh;
	uint8_t *buf;
	int rc;

	memset(img, 0, sizeof(*img));
	rc = fd_source(&s, fd, err);
	if (rc)
		return rc;
	rc = scan(e, &s, k, &img->scan, err);
	if (rc)
		return rc;
	if (img->scan.bytes > max_bytes)
		return errf(err, -EFBIG, "DWARF of %.1f MB, over the %.1f MB allowed",
			    img->scan.bytes / 1048576.0, max_bytes / 1048576.0);
	if (!gelf_getehdr(e, &oeh))
		return errf(err, -ENOEXEC, "no ELF header");
	shstr[0] = '\0';
	for (size_t i = 0; i < NKEPT; i++) {
		if (!k[i].present)
			continue;
		pos = (pos + 7) & ~7ull;
		data_off[i] = pos;
		pos += k[i].d.size + DWARFIMAGE_PAD;
		nsec++;
	}
	shstr_off = pos;
	/* Names: every kept section's and ".shstrtab" fit 256 bytes. */
	for (size_t i = 0; i < NKEPT; i++) {
		if (k[i].present) {
			size_t n = strlen(section_name((int)i, name, sizeof(name))) + 1;

			memcpy(shstr + shstr_len, name, n);
			shstr_len += n;
		}
	}
	memcpy(shstr + shstr_len, ".shstrtab", sizeof(".shstrtab"));
	shstr_len += sizeof(".shstrtab");
	pos += shstr_len;
	sh_off = (pos + 7) & ~7ull;
	img->len = (size_t)(sh_off + (nsec + 1) * sizeof(Elf64_Shdr));
	/* calloc: the pads are zero, and untouched pages cost nothing. */
	buf = calloc(1, img->len);
	if (!buf)
		return errf(err, -ENOMEM, "out of memory for %.1f MB of DWARF",
			    img->scan.bytes / 1048576.0);
	shdr = (Elf64_Shdr *)(buf + sh_off);
	shstr_len = 1;
	nsec = 1;
	for (size_t i = 0; i < NKEPT; i++) {
		if (!k[i].present)
			continue;
		section_name((int)i, name, sizeof(name));
		rc = elfsrc_data_read(&s, &k[i].d, name, buf + data_off[i], err);
		if (rc) {
			free(buf);
			memset(img, 0, sizeof(*img));
			return rc;
		}
		shdr[nsec++] = (Elf64_Shdr){
			.sh_name = (uint32_t)shstr_len,
			.sh_type = SHT_PROGBITS,
			.sh_offset = data_off[i],
			.sh_size = k[i].d.size,
			.sh_addralign = 1,
		};
		shstr_len += strlen(name) + 1;
	}
	shdr[nsec] = (Elf64_Shdr){
		.sh_name = (uint32_t)shstr_len,
		.sh_type = SHT_STRTAB,
		.sh_offset = shstr_off,
		.sh_size = shstr_len + sizeof(".shstrtab"),
		.sh_addralign = 1,
	};
	memcpy(buf + shstr_off, shstr, shstr_len + sizeof(".shstrtab"));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = oeh.e_ident[EI_DATA];
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = oeh.e_type;
	eh.e_machine = oeh.e_machine;
	eh.e_version = EV_CURRENT;
	eh.e_shoff = sh_off;
	eh.e_ehsize = sizeof(eh);
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = (uint16_t)(nsec + 1);
	eh.e_shstrndx = (uint16_t)nsec;
	memcpy(buf, &eh, sizeof(eh));
	img->buf = buf;
	return 0;
}

int dwarfimage_read(struct dwarfimage *img, int fd, uint64_t max_bytes, struct errbuf *err)
{
	struct elfsrc s;
	Elf *e;
	int rc;

	memset(img, 0, sizeof(*img));
	if (elfsrc_from_fd(&s, fd))
		return errf(err, -ENOEXEC, "not a regular file");
	rc = elfsrc_begin(&s, EM_NONE, ELFSRC_SECTIONS, &e, err);
	if (rc)
		return rc;
	rc = dwarfimage_build(e, fd, max_bytes, img, err);
	elf_end(e);
	if (rc)
		return rc;
	img->elf = elf_memory((char *)img->buf, img->len);
	if (!img->elf) {
		dwarfimage_free(img);
		return errf(err, -ENOEXEC, "libelf: %s", elf_errmsg(-1));
	}
	return 0;
}

void dwarfimage_free(struct dwarfimage *img)
{
	if (img->elf)
		elf_end(img->elf);
	free(img->buf);
	memset(img, 0, sizeof(*img));
}
