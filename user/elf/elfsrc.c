// SPDX-License-Identifier: MIT
/*
 * elfsrc: bounded reads of an ELF file.  See elfsrc.h for the contract
 * and its errors.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "elf/elfsrc.h"

#define CHUNK       65536u     /* pread granularity for streamed data */
#define NOTE_BYTES  65536u     /* note data examined per note segment/section */
#define NOTE_BUDGET (1u << 20) /* ... and in all, however many notes claim to exist */

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HOST_DATA ELFDATA2LSB
#else
#define HOST_DATA ELFDATA2MSB
#endif

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static const char *machine_name(unsigned machine)
{
	switch (machine) {
	case EM_X86_64:
		return "x86-64";
	case EM_AARCH64:
		return "aarch64";
	default:
		return "the expected machine's";
	}
}

int elfsrc_from_fd(struct elfsrc *s, int fd)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	*s = (struct elfsrc){ .fd = fd, .size = (uint64_t)st.st_size };
	return 0;
}

int elfsrc_read(const struct elfsrc *s, uint64_t off, void *buf, size_t len)
{
	uint8_t *p = buf;

	if (off > s->size || len > s->size - off)
		return -ERANGE;
	if (s->mem) {
		memcpy(p, s->mem + off, len);
		return 0;
	}
	while (len) {
		ssize_t n = pread(s->fd, p, len, (off_t)off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO; /* the file shrank since we looked */
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

uint64_t elfsrc_avail(const struct elfsrc *s, uint64_t off, uint64_t len)
{
	if (off >= s->size)
		return 0;
	return min_u64(len, s->size - off);
}

int elfsrc_check(const struct elfsrc *s, unsigned machine, unsigned need, struct errbuf *err)
{
	Elf64_Ehdr eh;
	uint64_t n;

	if (elfsrc_read(s, 0, eh.e_ident, EI_NIDENT) || memcmp(eh.e_ident, ELFMAG, SELFMAG))
		return errf(err, -ENOEXEC, "not an ELF file");
	if (eh.e_ident[EI_CLASS] != ELFCLASS64)
		return errf(err, -ENOEXEC, "not a 64-bit ELF file (class %u)", eh.e_ident[EI_CLASS]);
	if (eh.e_ident[EI_DATA] != HOST_DATA)
		return errf(err, -ENOEXEC, "ELF byte order differs from the host's");
	if (elfsrc_read(s, 0, &eh, sizeof(eh)))
		return errf(err, -ENOEXEC, "truncated ELF header");
	if (machine != EM_NONE && eh.e_machine != machine)
		return errf(err, -ENOEXEC, "not an %s ELF file (machine %u)", machine_name(machine),
			    eh.e_machine);
	if ((need & ELFSRC_LOADABLE) && eh.e_type != ET_EXEC && eh.e_type != ET_DYN)
		return errf(err, -ENOEXEC, "not an executable or shared object (ELF type %u)",
			    eh.e_type);
	if (eh.e_phnum == PN_XNUM)
		return errf(err, -ENOEXEC, "extended program header numbering");
	if (eh.e_phnum && eh.e_phentsize != sizeof(Elf64_Phdr))
		return errf(err, -ENOEXEC, "bad program header size %u", eh.e_phentsize);
	if (!eh.e_shoff) {
		if (need & ELFSRC_SECTIONS)
			return errf(err, -ENOENT, "no section headers");
		return 0;
	}
	if (eh.e_shentsize != sizeof(Elf64_Shdr))
		return errf(err, -ENOEXEC, "bad section header size %u", eh.e_shentsize);
	n = eh.e_shnum;
	if (n == 0) { /* extended numbering: the count is in section 0 */
		Elf64_Shdr sh0;

		n = elfsrc_read(s, eh.e_shoff, &sh0, sizeof(sh0)) ? 0 : sh0.sh_size;
	}
	if (n > ELFSRC_MAX_SECTIONS)
		return errf(err, -ENOEXEC, "too many sections (%llu)", (unsigned long long)n);
	/*
	 * A section table cut off or pointing past the end (a stripped or
	 * truncated file) leaves the segments, build ID and .dynamic usable:
	 * only a caller that needs sections refuses it; libelf then finds none.
	 */
	if (elfsrc_avail(s, eh.e_shoff, (n ? n : 1) * sizeof(Elf64_Shdr)) !=
	    (n ? n : 1) * sizeof(Elf64_Shdr)) {
		if (need & ELFSRC_SECTIONS)
			return errf(err, -ENOEXEC, "section headers past the end of the file");
	}
	return 0;
}

int elfsrc_begin(const struct elfsrc *s, unsigned machine, unsigned need, Elf **out,
		 struct errbuf *err)
{
	Elf *e;
	int rc;

	*out = NULL;
	rc = elfsrc_check(s, machine, need, err);
	if (rc)
		return rc;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return errf(err, -ENOSYS, "libelf: %s", elf_errmsg(-1));
	/* elf_memory() wants a char *, but ELF_C_READ never writes. */
	e = s->mem ? elf_memory((char *)(uintptr_t)s->mem, s->size)
		   : elf_begin(s->fd, ELF_C_READ, NULL);
	if (!e)
		return errf(err, -ENOEXEC, "libelf: %s", elf_errmsg(-1));
	if (elf_kind(e) != ELF_K_ELF) {
		elf_end(e);
		return errf(err, -ENOEXEC, "not an ELF file");
	}
	*out = e;
	return 0;
}

/* --- sections ------------------------------------------------------------- */

void elfsrc_walk_init(struct elfsrc_walk *w, Elf *e, const struct elfsrc *s)
{
	size_t shstrndx;
	Elf_Scn *scn;
	GElf_Shdr sh;

	*w = (struct elfsrc_walk){ .e = e, .s = s };
	if (!elf_getshdrstrndx(e, &shstrndx) && (scn = elf_getscn(e, shstrndx)) &&
	    gelf_getshdr(scn, &sh) && sh.sh_type == SHT_STRTAB &&
	    elfsrc_avail(s, sh.sh_offset, sh.sh_size) == sh.sh_size) {
		w->str_off = sh.sh_offset;
		w->str_size = sh.sh_size;
		w->names = true;
	}
}

bool elfsrc_walk_next(struct elfsrc_walk *w, struct elfsrc_scn *out)
{
	uint64_t n;

	while ((w->scn = elf_nextscn(w->e, w->scn))) {
		if (!gelf_getshdr(w->scn, &out->sh))
			continue;
		out->index = elf_ndxscn(w->scn);
		out->name[0] = '\0';
		if (!w->names || out->sh.sh_name >= w->str_size)
			return true;
		/* One read per section; a name without its NUL in it is none we look for. */
		n = min_u64(sizeof(out->name), w->str_size - out->sh.sh_name);
		if (elfsrc_read(w->s, w->str_off + out->sh.sh_name, out->name, (size_t)n) ||
		    !memchr(out->name, 0, (size_t)n))
			out->name[0] = '\0';
		return true;
	}
	return false;
}

int elfsrc_data(const struct elfsrc *s, const struct elfsrc_scn *c, struct elfsrc_data *d,
		struct errbuf *err)
{
	const GElf_Shdr *sh = &c->sh;

	*d = (struct elfsrc_data){ .off = sh->sh_offset, .len = sh->sh_size, .size = sh->sh_size };
	if (sh->sh_flags & SHF_COMPRESSED) {
		Elf64_Chdr ch;

		if (sh->sh_size < sizeof(ch) || elfsrc_read(s, sh->sh_offset, &ch, sizeof(ch)))
			return errf(err, -ENOEXEC, "%s: compression header unreadable", c->name);
		if (ch.ch_type != ELFCOMPRESS_ZLIB)
			return errf(err, -ENOTSUP, "%s: compression type %u not supported", c->name,
				    ch.ch_type);
		d->how = ELFSRC_ZLIB;
		d->off += sizeof(ch);
		d->len -= sizeof(ch);
		d->size = ch.ch_size;
	} else if (!strncmp(c->name, ".zdebug_", 8)) {
		uint8_t hdr[12];

		/* "ZLIB" and the size, big-endian. */
		if (sh->sh_size < sizeof(hdr) || elfsrc_read(s, sh->sh_offset, hdr, sizeof(hdr)) ||
		    memcmp(hdr, "ZLIB", 4))
			return errf(err, -ENOEXEC, "%s: compression header unreadable", c->name);
		d->how = ELFSRC_ZLIB;
		d->size = 0;
		for (int i = 4; i < 12; i++)
			d->size = d->size << 8 | hdr[i];
		d->off += sizeof(hdr);
		d->len -= sizeof(hdr);
	}
	return 0;
}

/* Inflates exactly @size bytes into @dst from the zlib stream at [@off, +@len). */
static bool inflate_exact(const struct elfsrc *s, uint64_t off, uint64_t len, uint8_t *dst,
			  uint64_t size)
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
			size_t n = (size_t)min_u64(len, CHUNK);

			if (elfsrc_read(s, off, in, n))
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

int elfsrc_data_read(const struct elfsrc *s, const struct elfsrc_data *d, const char *name,
		     uint8_t *dst, struct errbuf *err)
{
	int rc;

	if (d->how == ELFSRC_ZLIB) {
		if (!inflate_exact(s, d->off, d->len, dst, d->size))
			return errf(err, -ENOEXEC, "%s: does not inflate to the size it claims",
				    name);
		return 0;
	}
	rc = elfsrc_read(s, d->off, dst, (size_t)d->size);
	if (rc == -ERANGE)
		return errf(err, -ENOEXEC, "%s: extends past the end of the file", name);
	if (rc)
		return errf(err, rc, "%s: read failed: %s", name, strerror(-rc));
	return 0;
}

int elfsrc_section_bytes(const struct elfsrc *s, const struct elfsrc_scn *c, uint64_t max,
			 struct elfsrc_bytes *out, struct errbuf *err)
{
	struct elfsrc_data d;
	int rc;

	*out = (struct elfsrc_bytes){ 0 };
	rc = elfsrc_data(s, c, &d, err);
	if (rc)
		return rc;
	if (d.len > max || d.size > max)
		return errf(err, -EFBIG, "%s: %llu bytes, more than we read", c->name,
			    (unsigned long long)(d.len > d.size ? d.len : d.size));
	if (elfsrc_avail(s, d.off, d.len) != d.len)
		return errf(err, -ENOEXEC, "%s: extends past the end of the file", c->name);
	if (s->mem && d.how == ELFSRC_PLAIN) {
		out->p = s->mem + d.off;
		out->len = (size_t)d.size;
		return 0;
	}
	out->owned = malloc(d.size ? (size_t)d.size : 1);
	if (!out->owned)
		return errf(err, -ENOMEM, "%s: out of memory", c->name);
	rc = elfsrc_data_read(s, &d, c->name, out->owned, err);
	if (rc) {
		free(out->owned);
		out->owned = NULL;
		return rc;
	}
	out->p = out->owned;
	out->len = (size_t)d.size;
	return 0;
}

/* --- notes ------------------------------------------------------------------ */

/* Advances *@off to the next multiple of @align, if that is within @len. */
static bool note_pad(size_t *off, size_t len, size_t align)
{
	size_t pad = (align - *off % align) % align;

	if (pad > len - *off)
		return false;
	*off += pad;
	return true;
}

/*
 * Finds NT_GNU_BUILD_ID (owner "GNU") in note data @p of @len bytes, whose
 * name and descriptor each end padded to @align from the start of the data
 * (4; 8 in notes aligned so, as .note.gnu.property).  Every size is checked
 * against what is left, never trusted.
 */
static size_t parse_notes(const uint8_t *p, size_t len, size_t align, uint8_t *id)
{
	size_t off = 0;

	while (len - off >= 3 * sizeof(uint32_t)) {
		uint32_t namesz, descsz, type;
		size_t name_off, desc_off;

		memcpy(&namesz, p + off, 4);
		memcpy(&descsz, p + off + 4, 4);
		memcpy(&type, p + off + 8, 4);
		off += 12;
		if (namesz > len - off)
			return 0;
		name_off = off;
		off += namesz;
		if (!note_pad(&off, len, align) || descsz > len - off)
			return 0;
		desc_off = off;
		if (type == NT_GNU_BUILD_ID && namesz == 4 &&
		    memcmp(p + name_off, "GNU", 4) == 0 && descsz > 0 &&
		    descsz <= ELFSRC_BUILD_ID_MAX) {
			memcpy(id, p + desc_off, descsz);
			return descsz;
		}
		off += descsz;
		if (!note_pad(&off, len, align))
			return 0;
	}
	return 0;
}

/*
 * Reads up to NOTE_BYTES of the note at [off, off + size) and looks for the
 * ID; @budget bounds the bytes read over all notes of a file, since 65535
 * program headers could each claim a note.
 */
static size_t note_build_id(const struct elfsrc *s, uint64_t off, uint64_t size,
			    uint64_t align, uint8_t *buf, uint64_t *budget, uint8_t *id)
{
	size_t n = (size_t)elfsrc_avail(s, off, min_u64(min_u64(size, NOTE_BYTES), *budget));

	*budget -= n;
	if (!n || elfsrc_read(s, off, buf, n))
		return 0;
	return parse_notes(buf, n, align == 8 ? 8 : 4, id);
}

size_t elfsrc_build_id(Elf *e, const struct elfsrc *s, bool sections_first,
		       uint8_t id[ELFSRC_BUILD_ID_MAX])
{
	uint8_t *buf = malloc(NOTE_BYTES);
	uint64_t budget = NOTE_BUDGET;
	size_t found = 0;

	if (!buf)
		return 0;
	for (int pass = 0; pass < 2 && !found; pass++) {
		if ((pass == 0) != sections_first) {
			size_t phnum = 0;

			if (elf_getphdrnum(e, &phnum))
				continue;
			for (size_t i = 0; i < phnum && !found && budget; i++) {
				GElf_Phdr ph;

				if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_NOTE)
					found = note_build_id(s, ph.p_offset, ph.p_filesz,
							      ph.p_align, buf, &budget, id);
			}
		} else {
			Elf_Scn *scn = NULL;

			while (!found && budget && (scn = elf_nextscn(e, scn))) {
				GElf_Shdr sh;

				if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_NOTE)
					found = note_build_id(s, sh.sh_offset, sh.sh_size,
							      sh.sh_addralign, buf, &budget, id);
			}
		}
	}
	free(buf);
	return found;
}
