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
#include <unistd.h>
#include <zlib.h>

#include "dwarfimage.h"

/* .gnu_debugaltlink: a file name and a build ID. */
#define LINK_BYTES 4096u
#define CHUNK      65536u

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

enum { PLAIN, ELF_ZLIB, GNU_ZLIB };

struct kept {
	bool present;
	int how;          /* PLAIN, ELF_ZLIB, GNU_ZLIB */
	uint64_t off;     /* file offset of the (compressed) data */
	uint64_t raw;     /* bytes of it in the file */
	uint64_t size;    /* bytes once decompressed */
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

static bool pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = pread(fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return true;
}

/* Where a kept section's bytes are and what they decompress to. */
static int locate_kept(int fd, const char *name, const GElf_Shdr *sh, struct kept *k,
		       struct errbuf *err)
{
	*k = (struct kept){ .present = true, .off = sh->sh_offset, .raw = sh->sh_size,
			    .size = sh->sh_size };
	if (sh->sh_flags & SHF_COMPRESSED) {
		Elf64_Chdr ch;

		if (sh->sh_size < sizeof(ch) || !pread_all(fd, &ch, sizeof(ch), sh->sh_offset))
			return errf(err, -ENOEXEC, "%s: compression header unreadable", name);
		/* Another algorithm (zstd): libdw would skip the section too. */
		if (ch.ch_type != ELFCOMPRESS_ZLIB) {
			k->present = false;
			return 0;
		}
		k->how = ELF_ZLIB;
		k->off += sizeof(ch);
		k->raw -= sizeof(ch);
		k->size = ch.ch_size;
	} else if (name[1] == 'z') {
		uint8_t hdr[12];

		/* "ZLIB" and the size, big-endian. */
		if (sh->sh_size < sizeof(hdr) || !pread_all(fd, hdr, sizeof(hdr), sh->sh_offset) ||
		    memcmp(hdr, "ZLIB", 4))
			return errf(err, -ENOEXEC, "%s: compression header unreadable", name);
		k->how = GNU_ZLIB;
		k->size = 0;
		for (int i = 4; i < 12; i++)
			k->size = k->size << 8 | hdr[i];
		k->off += sizeof(hdr);
		k->raw -= sizeof(hdr);
	}
	return 0;
}

/* "name\0" then the build ID. */
static int read_altlink(int fd, const GElf_Shdr *sh, struct dwarfimage_scan *out,
			struct errbuf *err)
{
	char buf[LINK_BYTES];
	const char *nul;
	size_t len = (size_t)sh->sh_size, idlen;

	if (sh->sh_size > sizeof(buf) || !pread_all(fd, buf, len, sh->sh_offset))
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
static int scan(Elf *e, int fd, struct kept k[NKEPT], struct dwarfimage_scan *out,
		struct errbuf *err)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	bool altlink = false;

	memset(out, 0, sizeof(*out));
	memset(k, 0, NKEPT * sizeof(k[0]));
	if (elf_getshdrstrndx(e, &shstrndx))
		return errf(err, -ENOEXEC, "no section name table");
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *name;
		int i, rc;

		/* libdw skips sections in groups (and NOBITS) outside group reads. */
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS || (sh.sh_flags & SHF_GROUP) ||
		    !(name = elf_strptr(e, shstrndx, sh.sh_name)))
			continue;
		if (!altlink && !strcmp(name, ".gnu_debugaltlink")) {
			altlink = true;
			rc = read_altlink(fd, &sh, out, err);
			if (rc)
				return rc;
			continue;
		}
		i = kept_index(name);
		if (i < 0 || k[i].present)
			continue;
		rc = locate_kept(fd, name, &sh, &k[i], err);
		if (rc)
			return rc;
		if (!k[i].present)
			continue;
		if (k[i].size > DWARFIMAGE_MAX_BYTES - out->bytes)
			return errf(err, -ENOEXEC, "debug sections claim over %llu MB",
				    (unsigned long long)(DWARFIMAGE_MAX_BYTES >> 20));
		out->bytes += k[i].size;
	}
	out->has_info = k[0].present && k[0].size > 0;
	return 0;
}

int dwarfimage_scan(Elf *e, int fd, struct dwarfimage_scan *out, struct errbuf *err)
{
	struct kept k[NKEPT];

	return scan(e, fd, k, out, err);
}

/* Inflates exactly @size bytes into @dst from the zlib stream at [@off, +@len). */
static bool inflate_exact(int fd, uint64_t off, uint64_t len, uint8_t *dst, uint64_t size)
{
	uint8_t *in = malloc(CHUNK), spill;
	z_stream zs = { 0 };
	bool ok = false, probing = false;
	int rc;

	if (!in || size > UINT32_MAX || inflateInit(&zs) != Z_OK) {
		free(in);
		return false;
	}
	zs.next_out = dst;
	zs.avail_out = (uInt)size;
	for (;;) {
		if (!zs.avail_in && len) {
			size_t n = len < CHUNK ? (size_t)len : CHUNK;

			if (!pread_all(fd, in, n, off))
				break;
			off += n;
			len -= n;
			zs.next_in = in;
			zs.avail_in = (uInt)n;
		}
		/* Full: one byte more would mean the claimed size is a lie. */
		if (!zs.avail_out) {
			if (probing)
				break;
			probing = true;
			zs.next_out = &spill;
			zs.avail_out = 1;
		}
		rc = inflate(&zs, Z_NO_FLUSH);
		if (rc == Z_STREAM_END) {
			ok = zs.total_out == size;
			break;
		}
		/* Z_BUF_ERROR: no progress, the input ran out (we refill first). */
		if (rc != Z_OK)
			break;
	}
	inflateEnd(&zs);
	free(in);
	return ok;
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
	char shstr[256], name[32];
	uint64_t data_off[NKEPT] = { 0 }, pos = sizeof(Elf64_Ehdr), shstr_off, sh_off;
	size_t shstr_len = 1, nsec = 1;
	Elf64_Shdr *shdr;
	Elf64_Ehdr eh = { 0 };
	GElf_Ehdr oeh;
	uint8_t *buf;
	int rc;

	memset(img, 0, sizeof(*img));
	rc = scan(e, fd, k, &img->scan, err);
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
		pos += k[i].size + DWARFIMAGE_PAD;
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
		uint8_t *dst = buf + data_off[i];
		bool ok;

		if (!k[i].present)
			continue;
		if (k[i].how == PLAIN)
			ok = pread_all(fd, dst, (size_t)k[i].size, k[i].off);
		else
			ok = inflate_exact(fd, k[i].off, k[i].raw, dst, k[i].size);
		section_name((int)i, name, sizeof(name));
		if (!ok) {
			free(buf);
			memset(img, 0, sizeof(*img));
			return errf(err, -ENOEXEC, "%s: %s", name,
				    k[i].how == PLAIN ? "past the end of the file"
						      : "does not inflate to the size it claims");
		}
		shdr[nsec++] = (Elf64_Shdr){
			.sh_name = (uint32_t)shstr_len,
			.sh_type = SHT_PROGBITS,
			.sh_offset = data_off[i],
			.sh_size = k[i].size,
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

void dwarfimage_free(struct dwarfimage *img)
{
	free(img->buf);
	memset(img, 0, sizeof(*img));
}
