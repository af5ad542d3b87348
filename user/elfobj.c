// SPDX-License-Identifier: MIT
/*
 * elfobj: build ID, PT_LOAD segments and function symbols of one ELF object.
 *
 * How bytes are read.  Every object is untrusted (a container can hand us
 * any file), the agent is long-lived and RSS matters, so:
 *
 *  - libelf opens files with ELF_C_READ, never mmap: a file truncated under
 *    us by its owner then gives a read error instead of a SIGBUS.  libelf
 *    is used for the ELF, program and section headers only; before it sees
 *    a file, check_ehdr() rejects header counts that would make it allocate
 *    more than a small, fixed amount.
 *  - the bulk data (notes, symbol tables, string tables, whole debug files
 *    for their CRC) is read with pread in bounded chunks through src_read(),
 *    which checks every range against the file size; nothing of the file
 *    stays in memory after a call returns, only what we extracted.
 *  - no libelf handle is kept between calls: an object costs its struct,
 *    its symbols and its open fd.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "elfobj.h"
#include "rootfs.h"
#include "symsel.h"

/* Bounds on what an object may make us keep or read; see the comments where used. */
#define MAX_SEGS       64
#define MAX_SECTIONS   65536u
#define MAX_SYMS       (4u << 20)
#define NAME_BYTES     4096u   /* longest symbol name kept, NUL included */
#define NOTE_BYTES     65536u  /* note data examined per note segment/section */
#define NOTE_BUDGET    (1u << 20) /* ... and in all, however many notes claim to exist */
#define LINK_BYTES     4096u   /* .gnu_debuglink section examined */
#define CHUNK          65536u  /* pread granularity for streamed data */
#define DEBUG_FILE_MAX (4ull << 30)

/* A byte source: an open file or an owned memory image, with its size. */
struct src {
	int fd;       /* -1 for a memory image */
	uint8_t *mem; /* non-const: elf_memory() wants a char * */
	uint64_t size;
};

struct seg {
	uint64_t off, vaddr, filesz, memsz;
	uint32_t flags;
};

/* Name storage: blocks never move, so names can point straight into them. */
struct ablock {
	struct ablock *next;
	size_t used, cap;
	char data[];
};

struct elfobj {
	struct src src;  /* src.fd -1: closed for the descriptor bound (or an image) */
	const struct elfobj_file_ops *ops;
	void *ops_ctx;
	char *label;     /* for messages: the file's path, or "ELF image in memory" */
	uint64_t pagesz; /* mapping granularity, for elfobj_file_to_vaddr() */

	uint8_t build_id[ELFOBJ_BUILD_ID_MAX];
	size_t build_id_len;
	char build_id_hex[2 * ELFOBJ_BUILD_ID_MAX + 1];

	bool syms_loaded, syms_debug;
	int syms_rc;
	char *syms_err; /* first load's message when it failed */
	struct elfobj_sym *syms;
	size_t nsyms;
	struct ablock *arena;
	uint64_t syms_bytes; /* what syms and arena take */

	size_t nsegs;
	struct seg segs[]; /* PT_LOAD, in program header order */
};

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* --- reading ---------------------------------------------------------- */

/* Reads exactly @len bytes at @off, or fails: never past the known size. */
static int src_read(const struct src *s, uint64_t off, void *buf, size_t len)
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

/* The clamp of [off, off + len) to the source: its length (0 if outside). */
static uint64_t src_avail(const struct src *s, uint64_t off, uint64_t len)
{
	if (off >= s->size)
		return 0;
	return min_u64(len, s->size - off);
}

/*
 * Checks the ELF header by hand before libelf sees the file: identity
 * (64-bit, native byte order; anything else is an error, not a guess),
 * type, and header counts.  libelf allocates per section at elf_begin()
 * time, and with extended numbering the count is a 64-bit field a hostile
 * file controls, so cap it here.
 */
static int check_ehdr(const struct src *s, const char *label, struct errbuf *err)
{
	unsigned char ident[EI_NIDENT];
	Elf64_Ehdr eh;

	if (src_read(s, 0, ident, sizeof(ident)) || memcmp(ident, ELFMAG, SELFMAG))
		return errf(err, -ENOEXEC, "%s: not an ELF file", label);
	if (ident[EI_CLASS] != ELFCLASS64)
		return errf(err, -ENOEXEC, "%s: not a 64-bit ELF file (class %u)",
			    label, ident[EI_CLASS]);
	if (ident[EI_DATA] != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB
									 : ELFDATA2MSB))
		return errf(err, -ENOEXEC, "%s: ELF byte order differs from the host's",
			    label);
	if (src_read(s, 0, &eh, sizeof(eh)))
		return errf(err, -ENOEXEC, "%s: truncated ELF header", label);
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)
		return errf(err, -ENOEXEC,
			    "%s: not an executable or shared object (ELF type %u)", label,
			    eh.e_type);
	if (eh.e_phnum == PN_XNUM)
		return errf(err, -ENOEXEC, "%s: extended program header numbering", label);
	if (eh.e_phnum && eh.e_phentsize != sizeof(Elf64_Phdr))
		return errf(err, -ENOEXEC, "%s: bad program header size %u", label,
			    eh.e_phentsize);
	if (eh.e_shoff) {
		uint64_t n = eh.e_shnum;
		Elf64_Shdr sh0;

		if (eh.e_shentsize != sizeof(Elf64_Shdr))
			return errf(err, -ENOEXEC, "%s: bad section header size %u", label,
				    eh.e_shentsize);
		if (n == 0 && !src_read(s, eh.e_shoff, &sh0, sizeof(sh0)))
			n = sh0.sh_size; /* extended section numbering */
		if (n > MAX_SECTIONS)
			return errf(err, -ENOEXEC, "%s: too many sections (%llu)", label,
				    (unsigned long long)n);
	}
	return 0;
}

/* Opens @s with libelf after check_ehdr(). */
static int elf_open_src(const struct src *s, const char *label, Elf **out,
			struct errbuf *err)
{
	GElf_Ehdr eh;
	Elf *e;
	int rc;

	rc = check_ehdr(s, label, err);
	if (rc)
		return rc;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return errf(err, -ENOSYS, "%s: libelf: %s", label, elf_errmsg(-1));
	e = s->mem ? elf_memory((char *)s->mem, s->size) : elf_begin(s->fd, ELF_C_READ, NULL);
	if (!e)
		return errf(err, -ENOEXEC, "%s: %s", label, elf_errmsg(-1));
	if (elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh)) {
		elf_end(e);
		return errf(err, -ENOEXEC, "%s: not an ELF file", label);
	}
	*out = e;
	return 0;
}

/* --- build ID ----------------------------------------------------------- */

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
static bool parse_notes(const uint8_t *p, size_t len, size_t align, uint8_t *id,
			size_t *idlen)
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
			return false;
		name_off = off;
		off += namesz;
		if (!note_pad(&off, len, align) || descsz > len - off)
			return false;
		desc_off = off;
		if (type == NT_GNU_BUILD_ID && namesz == 4 &&
		    memcmp(p + name_off, "GNU", 4) == 0 && descsz > 0 &&
		    descsz <= ELFOBJ_BUILD_ID_MAX) {
			memcpy(id, p + desc_off, descsz);
			*idlen = descsz;
			return true;
		}
		off += descsz;
		if (!note_pad(&off, len, align))
			return false;
	}
	return false;
}

/*
 * Reads up to NOTE_BYTES of the note at [off, off + size) and looks for the
 * ID; @budget bounds the bytes read over all notes of a file, since 65535
 * program headers could each claim a note.
 */
static bool note_build_id(const struct src *s, uint64_t off, uint64_t size,
			  uint64_t align, uint8_t *buf, uint64_t *budget, uint8_t *id,
			  size_t *idlen)
{
	size_t n = (size_t)src_avail(s, off, min_u64(min_u64(size, NOTE_BYTES), *budget));

	*budget -= n;
	if (!n || src_read(s, off, buf, n))
		return false;
	return parse_notes(buf, n, align == 8 ? 8 : 4, id, idlen);
}

/*
 * The GNU build ID from PT_NOTE segments, else from SHT_NOTE sections
 * (@sections_first reverses that: in a separate debug file the program
 * headers describe the stripped original, the sections are authoritative).
 */
static bool read_build_id(Elf *e, const struct src *s, bool sections_first,
			  uint8_t *id, size_t *idlen)
{
	uint8_t *buf = malloc(NOTE_BYTES);
	uint64_t budget = NOTE_BUDGET;
	bool found = false;

	if (!buf)
		return false;
	for (int pass = 0; pass < 2 && !found; pass++) {
		if ((pass == 0) != sections_first) {
			size_t phnum = 0;

			if (elf_getphdrnum(e, &phnum))
				continue;
			for (size_t i = 0; i < phnum && !found && budget; i++) {
				GElf_Phdr ph;

				if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_NOTE)
					found = note_build_id(s, ph.p_offset, ph.p_filesz,
							      ph.p_align, buf, &budget, id,
							      idlen);
			}
		} else {
			Elf_Scn *scn = NULL;

			while (!found && budget && (scn = elf_nextscn(e, scn))) {
				GElf_Shdr sh;

				if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_NOTE)
					found = note_build_id(s, sh.sh_offset, sh.sh_size,
							      sh.sh_addralign, buf, &budget, id,
							      idlen);
			}
		}
	}
	free(buf);
	return found;
}

/* --- open / free -------------------------------------------------------- */

/* Program headers, build ID: everything elfobj_open promises. */
static int parse_headers(struct elfobj **out, const struct src *s, const char *label,
			 struct errbuf *err)
{
	long pg = sysconf(_SC_PAGESIZE);
	struct elfobj *o;
	size_t phnum = 0, nload = 0;
	Elf *e;
	int rc;

	rc = elf_open_src(s, label, &e, err);
	if (rc)
		return rc;
	if (elf_getphdrnum(e, &phnum)) {
		rc = errf(err, -ENOEXEC, "%s: program headers: %s", label, elf_errmsg(-1));
		goto out;
	}
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD)
			nload++;
	}
	if (nload == 0) {
		rc = errf(err, -ENOEXEC, "%s: no loadable segments", label);
		goto out;
	}
	/* More than a handful is no object a loader would map; keep the first. */
	if (nload > MAX_SEGS)
		nload = MAX_SEGS;
	o = calloc(1, sizeof(*o) + nload * sizeof(o->segs[0]));
	if (!o || !(o->label = strdup(label))) {
		free(o);
		rc = errf(err, -ENOMEM, "%s: out of memory", label);
		goto out;
	}
	for (size_t i = 0; i < phnum && o->nsegs < nload; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		o->segs[o->nsegs++] = (struct seg){
			.off = ph.p_offset,
			.vaddr = ph.p_vaddr,
			.filesz = ph.p_filesz,
			.memsz = ph.p_memsz,
			.flags = ph.p_flags,
		};
	}
	if (read_build_id(e, s, false, o->build_id, &o->build_id_len)) {
		static const char hex[] = "0123456789abcdef";

		for (size_t i = 0; i < o->build_id_len; i++) {
			o->build_id_hex[2 * i] = hex[o->build_id[i] >> 4];
			o->build_id_hex[2 * i + 1] = hex[o->build_id[i] & 15];
		}
	}
	o->pagesz = pg > 0 ? (uint64_t)pg : 4096;
	o->src = *s;
	*out = o;
out:
	elf_end(e);
	return rc;
}

int elfobj_open(struct elfobj **out, int fd, struct errbuf *err)
{
	char label[PATH_MAX], link[64];
	struct stat st;
	ssize_t n;
	int rc;

	*out = NULL;
	/* Name the file in messages as the kernel knows it. */
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, label, sizeof(label) - 1);
	if (n > 0)
		label[n] = '\0';
	else
		snprintf(label, sizeof(label), "fd %d", fd);

	if (fstat(fd, &st)) {
		rc = errf(err, -errno, "%s: %s", label, strerror(errno));
	} else if (!S_ISREG(st.st_mode)) {
		rc = errf(err, -EINVAL, "%s: not a regular file", label);
	} else {
		struct src s = { .fd = fd, .size = (uint64_t)st.st_size };

		rc = parse_headers(out, &s, label, err);
	}
	if (rc)
		close(fd);
	return rc;
}

int elfobj_open_mem(struct elfobj **out, const void *image, size_t len,
		    struct errbuf *err)
{
	struct src s = { .fd = -1, .size = len };
	int rc;

	*out = NULL;
	/* The copy also keeps the bytes stable while we parse them. */
	s.mem = malloc(len ? len : 1);
	if (!s.mem)
		return errf(err, -ENOMEM, "ELF image in memory: out of memory");
	memcpy(s.mem, image, len);
	rc = parse_headers(out, &s, "ELF image in memory", err);
	if (rc)
		free(s.mem);
	return rc;
}

static void arena_free(struct ablock *b)
{
	while (b) {
		struct ablock *next = b->next;

		free(b);
		b = next;
	}
}

void elfobj_free(struct elfobj *o)
{
	if (!o)
		return;
	if (o->src.fd >= 0)
		close(o->src.fd);
	free(o->src.mem);
	free(o->label);
	free(o->syms_err);
	free(o->syms);
	arena_free(o->arena);
	free(o);
}

void elfobj_set_file_ops(struct elfobj *o, const struct elfobj_file_ops *ops, void *ctx)
{
	o->ops = ops;
	o->ops_ctx = ctx;
}

void elfobj_close_file(struct elfobj *o)
{
	if (o->src.fd >= 0 && o->ops) {
		close(o->src.fd);
		o->src.fd = -1;
	}
}

/* Makes the object's bytes readable: reopens a file closed for the bound. */
static int src_ready(struct elfobj *o)
{
	if (o->src.mem)
		return 0;
	if (o->src.fd < 0) {
		int fd = o->ops ? o->ops->reopen(o->ops_ctx) : -EBADF;

		if (fd < 0)
			return fd;
		o->src.fd = fd;
	}
	if (o->ops && o->ops->used)
		o->ops->used(o->ops_ctx);
	return 0;
}

const char *elfobj_build_id(const struct elfobj *o)
{
	return o->build_id_hex;
}

const uint8_t *elfobj_build_id_raw(const struct elfobj *o, size_t *len)
{
	*len = o->build_id_len;
	return o->build_id;
}

/*
 * The kernel maps a segment in whole pages: a mapping of it starts at
 * p_offset rounded down to a page, and /proc/pid/maps shows that offset.
 * A runtime address A in a mapping [start, end) at file offset O is at file
 * offset F = A - start + O, and F at virtual address V = F - p_offset +
 * p_vaddr for the PT_LOAD segment holding F (p_offset and p_vaddr are
 * congruent modulo the page size, so the math also holds in the page head
 * before p_offset, where V < p_vaddr: arithmetic is modulo 2^64 on purpose).
 *
 * Segments can share a file page (layouts without -z separate-code), so F
 * may belong to two of them.  Callers translate sampled code addresses:
 * an executable segment wins, and a segment whose file image holds F wins
 * over one whose page-rounded range merely covers it.
 */
static bool seg_holds(const struct seg *s, uint64_t off, uint64_t pagesz, bool rounded)
{
	uint64_t lo = s->off, hi = s->off + s->filesz;

	if (rounded) {
		lo &= ~(pagesz - 1);
		if (hi < s->off || hi > UINT64_MAX - pagesz)
			hi = UINT64_MAX;
		else
			hi = (hi + pagesz - 1) & ~(pagesz - 1);
	} else if (hi < s->off) {
		hi = UINT64_MAX;
	}
	return off >= lo && off < hi;
}

int elfobj_file_to_vaddr(const struct elfobj *o, uint64_t file_off, uint64_t *vaddr)
{
	for (int pass = 0; pass < 4; pass++) {
		bool rounded = pass >= 2, exec_only = !(pass & 1);

		for (size_t i = 0; i < o->nsegs; i++) {
			const struct seg *s = &o->segs[i];

			if ((exec_only && !(s->flags & PF_X)) ||
			    !seg_holds(s, file_off, o->pagesz, rounded))
				continue;
			*vaddr = file_off - s->off + s->vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

/* --- sections ------------------------------------------------------------ */

/* Where a symbol table and its string table are (count 0: absent). */
struct symtab_loc {
	uint64_t off, count, str_off, str_size;
};

struct sections {
	struct symtab_loc symtab, dynsym;
	uint64_t link_off, link_size; /* .gnu_debuglink; size 0: absent */
};

static void symtab_loc(Elf *e, const struct src *s, const GElf_Shdr *sh,
		       struct symtab_loc *t)
{
	GElf_Shdr str;
	Elf_Scn *scn;

	if (t->count)
		return; /* a second table of the kind: keep the first */
	if (sh->sh_entsize != sizeof(Elf64_Sym) && sh->sh_entsize != 0)
		return;
	scn = elf_getscn(e, sh->sh_link);
	if (!scn || !gelf_getshdr(scn, &str) || str.sh_type != SHT_STRTAB)
		return;
	/*
	 * Sizes count for no more than the file holds: an absurd sh_size
	 * shrinks to the bytes that exist, so it can't make us allocate.
	 */
	t->str_off = str.sh_offset;
	t->str_size = src_avail(s, str.sh_offset, str.sh_size);
	t->off = sh->sh_offset;
	t->count = t->str_size ? src_avail(s, sh->sh_offset, sh->sh_size) / sizeof(Elf64_Sym)
			       : 0;
}

/* Is the name at @name_off of the section name table [str_off, +str_size) @want? */
static bool section_name_is(const struct src *s, uint64_t str_off, uint64_t str_size,
			    uint64_t name_off, const char *want)
{
	char buf[32];
	size_t n = strlen(want) + 1;

	if (n > sizeof(buf) || name_off >= str_size || str_size - name_off < n ||
	    src_read(s, str_off + name_off, buf, n))
		return false;
	return memcmp(buf, want, n) == 0;
}

static void find_sections(Elf *e, const struct src *s, struct sections *out)
{
	uint64_t shstr_off = 0, shstr_size = 0;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;

	memset(out, 0, sizeof(*out));
	if (!elf_getshdrstrndx(e, &shstrndx) && (scn = elf_getscn(e, shstrndx)) &&
	    gelf_getshdr(scn, &sh) && sh.sh_type == SHT_STRTAB) {
		shstr_off = sh.sh_offset;
		shstr_size = src_avail(s, sh.sh_offset, sh.sh_size);
	}
	scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			symtab_loc(e, s, &sh, &out->symtab);
		else if (sh.sh_type == SHT_DYNSYM)
			symtab_loc(e, s, &sh, &out->dynsym);
		else if (sh.sh_type == SHT_PROGBITS && !out->link_size &&
			 section_name_is(s, shstr_off, shstr_size, sh.sh_name,
					 ".gnu_debuglink")) {
			out->link_off = sh.sh_offset;
			out->link_size = src_avail(s, sh.sh_offset, min_u64(sh.sh_size, LINK_BYTES));
		}
	}
}

/* --- separate debug files ---------------------------------------------- */

/* A candidate debug file, checked and with its .symtab located. */
struct debug_file {
	struct src src;
	struct symtab_loc symtab;
};

/* zlib's crc32 is the CRC-32 that .gnu_debuglink records. */
static bool file_crc_matches(const struct src *s, uint32_t want, uint8_t *buf)
{
	uLong crc = crc32(0L, Z_NULL, 0);

	for (uint64_t off = 0; off < s->size;) {
		size_t n = (size_t)min_u64(CHUNK, s->size - off);

		if (src_read(s, off, buf, n))
			return false;
		crc = crc32(crc, buf, (uInt)n);
		off += n;
	}
	return (uint32_t)crc == want;
}

/*
 * Takes @fd; keeps it in @d when the file is a usable debug file for @o:
 * a regular ELF file with a .symtab and, when @want_id, the same build ID.
 */
static bool try_debug_fd(const struct elfobj *o, int fd, bool want_id,
			 const uint32_t *want_crc, uint8_t *buf, struct debug_file *d)
{
	struct stat st;
	struct sections secs;
	Elf *e = NULL;

	if (fd < 0)
		return false;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > DEBUG_FILE_MAX)
		goto reject;
	d->src = (struct src){ .fd = fd, .size = (uint64_t)st.st_size };
	if (want_crc && !file_crc_matches(&d->src, *want_crc, buf))
		goto reject;
	if (elf_open_src(&d->src, "debug file", &e, NULL))
		goto reject;
	if (want_id) {
		uint8_t id[ELFOBJ_BUILD_ID_MAX];
		size_t idlen = 0;

		if (!read_build_id(e, &d->src, true, id, &idlen) ||
		    idlen != o->build_id_len || memcmp(id, o->build_id, idlen))
			goto reject;
	}
	find_sections(e, &d->src, &secs);
	if (!secs.symtab.count)
		goto reject;
	d->symtab = secs.symtab;
	elf_end(e);
	return true;
reject:
	elf_end(e);
	close(fd);
	return false;
}

/* The .gnu_debuglink name and CRC; the name is a bare file name. */
static bool read_debuglink(const struct src *s, const struct sections *secs,
			   char *name, size_t name_size, uint32_t *crc)
{
	char buf[LINK_BYTES];
	size_t len = (size_t)secs->link_size, nlen, crc_off;
	const char *nul;

	if (!len || len > sizeof(buf) || src_read(s, secs->link_off, buf, len))
		return false;
	nul = memchr(buf, 0, len);
	if (!nul || nul == buf)
		return false;
	nlen = (size_t)(nul - buf);
	crc_off = (nlen + 1 + 3) & ~(size_t)3;
	if (crc_off > len || len - crc_off < 4 || nlen >= name_size)
		return false;
	memcpy(name, buf, nlen + 1);
	memcpy(crc, buf + crc_off, 4);
	/* A path would let the link escape the directories we search. */
	return !strchr(name, '/') && strcmp(name, ".") && strcmp(name, "..");
}

/*
 * Finds the separate debug file of @o: by build ID under debug_root, else
 * by .gnu_debuglink next to the object (as the process sees it), in its
 * .debug/ directory, or under debug_root.  The order is gdb's.
 */
static bool find_debug_file(const struct elfobj *o, const struct elfobj_debug_opts *opts,
			    const struct sections *secs, uint8_t *buf,
			    struct debug_file *d)
{
	const char *root = opts->debug_root, *slash;
	char path[PATH_MAX], link[256];
	uint32_t crc;
	int dirlen;

	if (root && *root && o->build_id_len >= 2) {
		if ((size_t)snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", root,
				     o->build_id_hex, o->build_id_hex + 2) < sizeof(path) &&
		    try_debug_fd(o, rootfs_open_host(path), true, NULL, buf, d))
			return true;
	}
	if (!opts->path || !(slash = strrchr(opts->path, '/')) ||
	    !read_debuglink(&o->src, secs, link, sizeof(link), &crc))
		return false;
	dirlen = (int)(slash - opts->path);
	if ((size_t)snprintf(path, sizeof(path), "%.*s/%s", dirlen, opts->path, link) <
		    sizeof(path) &&
	    try_debug_fd(o, rootfs_openat(opts->root_fd, path), false, &crc, buf, d))
		return true;
	if ((size_t)snprintf(path, sizeof(path), "%.*s/.debug/%s", dirlen, opts->path, link) <
		    sizeof(path) &&
	    try_debug_fd(o, rootfs_openat(opts->root_fd, path), false, &crc, buf, d))
		return true;
	if (root && *root &&
	    (size_t)snprintf(path, sizeof(path), "%s%.*s/%s", root, dirlen, opts->path, link) <
		    sizeof(path) &&
	    try_debug_fd(o, rootfs_open_host(path), false, &crc, buf, d))
		return true;
	return false;
}

/* --- symbols ------------------------------------------------------------- */

/*
 * A function symbol while the table is built (struct symrec): same size as
 * the final struct elfobj_sym, which each slot becomes in place once its
 * name is copied, so the table is never held twice.
 */
_Static_assert(sizeof(struct symrec) == sizeof(struct elfobj_sym),
	       "records become symbols in place");

struct recs {
	struct symrec *v;
	size_t n, cap;
	uint64_t max_bytes; /* the caller's bound on the table */
};

/* One symbol table being read, with a window on its string table. */
struct table {
	const struct src *src;
	struct symtab_loc loc;
	uint64_t win_off; /* string-table offset of buf[0] */
	size_t win_len;
	char *buf;        /* CHUNK + NAME_BYTES */
};

static int recs_push(struct recs *r, const struct symrec *x)
{
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 1024;
		struct symrec *v;

		if (cap > MAX_SYMS)
			cap = MAX_SYMS;
		if (cap * sizeof(*v) > r->max_bytes)
			return -EFBIG;
		v = realloc(r->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		r->v = v;
		r->cap = cap;
	}
	r->v[r->n++] = *x;
	return 0;
}

/*
 * Streams table @t (index @tab) and keeps its defined function symbols:
 * all of them in @r, or only those @sel chooses when there is one.
 */
static int collect(struct recs *r, struct symsel *sel, const struct table *t, uint8_t tab,
		   uint8_t *buf)
{
	const size_t per_chunk = CHUNK / sizeof(Elf64_Sym);

	for (uint64_t i = 0; i < t->loc.count;) {
		size_t k = (size_t)min_u64(per_chunk, t->loc.count - i);
		int rc = src_read(t->src, t->loc.off + i * sizeof(Elf64_Sym), buf,
				  k * sizeof(Elf64_Sym));

		if (rc)
			return rc;
		for (size_t j = 0; j < k; j++) {
			Elf64_Sym sym;
			unsigned char type;
			struct symrec x;

			memcpy(&sym, buf + j * sizeof(sym), sizeof(sym));
			type = ELF64_ST_TYPE(sym.st_info);
			if ((type != STT_FUNC && type != STT_GNU_IFUNC) ||
			    sym.st_shndx == SHN_UNDEF || sym.st_value == 0 ||
			    sym.st_name == 0 || sym.st_name >= t->loc.str_size)
				continue;
			x = (struct symrec){
				.start = sym.st_value,
				.size = sym.st_size,
				.name_off = sym.st_name,
				.rank = symrec_rank(ELF64_ST_BIND(sym.st_info)),
				.tab = tab,
			};
			if (sel) {
				symsel_offer(sel, &x);
				continue;
			}
			if (r->n >= MAX_SYMS)
				return 0; /* enough: keep what we have */
			rc = recs_push(r, &x);
			if (rc)
				return rc;
		}
		i += k;
	}
	return 0;
}

static int cmp_name_pos(const void *pa, const void *pb)
{
	const struct symrec *a = pa, *b = pb;

	if (a->tab != b->tab)
		return a->tab < b->tab ? -1 : 1;
	return a->name_off < b->name_off ? -1 : a->name_off > b->name_off;
}

static int cmp_sym(const void *pa, const void *pb)
{
	const struct elfobj_sym *a = pa, *b = pb;

	return a->start < b->start ? -1 : a->start > b->start;
}

/*
 * The name at @off of @t's string table, via a window that slides forward
 * (names are visited in offset order, so the table is read about once).
 * A name without a NUL within NAME_BYTES - 1 characters is truncated.
 */
static int table_name(struct table *t, uint64_t off, const char **name, size_t *len)
{
	uint64_t want = min_u64(NAME_BYTES, t->loc.str_size - off);
	const char *p, *nul;

	if (off < t->win_off || off + want > t->win_off + t->win_len) {
		size_t n = (size_t)min_u64(CHUNK + NAME_BYTES, t->loc.str_size - off);
		int rc = src_read(t->src, t->loc.str_off + off, t->buf, n);

		if (rc)
			return rc;
		t->win_off = off;
		t->win_len = n;
	}
	p = t->buf + (off - t->win_off);
	nul = memchr(p, 0, (size_t)want);
	*len = nul ? (size_t)(nul - p) : (size_t)min_u64(want, NAME_BYTES - 1);
	*name = p;
	return 0;
}

static char *arena_alloc(struct ablock **head, size_t n, uint64_t *bytes)
{
	struct ablock *b = *head;

	if (!b || b->cap - b->used < n) {
		/* Grow block sizes with the table: few blocks, little slack. */
		size_t cap = b ? b->cap * 2 : 16384;

		if (cap > (1u << 20))
			cap = 1u << 20;
		if (cap < n)
			cap = n;
		b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->next = *head;
		b->used = 0;
		b->cap = cap;
		*head = b;
		*bytes += sizeof(*b) + cap;
	}
	b->used += n;
	return b->data + b->used - n;
}

/*
 * Length of a symbol name without its version suffix ("memcpy@@GLIBC_2.14",
 * "foo@VERS" in .symtab of versioned libraries), which readers (perf,
 * pprof, backtrace) never show.  Mangled C++ and Rust names contain no '@'.
 */
static size_t unversioned_len(const char *p, size_t len)
{
	const char *at = memchr(p, '@', len);

	return at && at > p ? (size_t)(at - p) : len;
}

/*
 * Turns the deduplicated records into symbols: copies each distinct name
 * once (symbols sharing a string-table entry share the copy) and sorts by
 * address again.  A symbol whose name is empty or can't be kept stays,
 * nameless: it still holds its address against the symbol below it, as
 * in a table read for a few addresses only (symsel.h), and elfobj_lookup()
 * finds nothing there.
 *
 * Names are bounded in total as well as each: twice the string tables'
 * size plus a margin covers every real object (suffix-merged strings are
 * the only way to exceed 1x), while a hostile table pointing many symbols
 * into the middle of one long string can't inflate the arena.  The table
 * and its names past r->max_bytes: -EFBIG.
 */
static int build_symbols(struct elfobj *o, struct recs *r, struct table *tabs,
			 size_t ntabs)
{
	uint64_t budget = 1u << 20, prev_off = 0, bytes = r->n * sizeof(struct elfobj_sym);
	struct elfobj_sym *syms = (struct elfobj_sym *)r->v;
	const char *prev_name = NULL;
	int prev_tab = -1;

	for (size_t i = 0; i < ntabs; i++)
		budget += 2 * tabs[i].loc.str_size;
	qsort(r->v, r->n, sizeof(r->v[0]), cmp_name_pos);
	for (size_t i = 0; i < r->n; i++) {
		struct symrec x = r->v[i];
		const char *name = NULL;

		if (x.tab == prev_tab && x.name_off == prev_off) {
			name = prev_name;
		} else {
			const char *p;
			size_t len;
			char *copy;
			int rc = table_name(&tabs[x.tab], x.name_off, &p, &len);

			if (rc)
				return rc;
			len = unversioned_len(p, len);
			if (len && len + 1 <= budget &&
			    (copy = arena_alloc(&o->arena, len + 1, &bytes))) {
				memcpy(copy, p, len);
				copy[len] = '\0';
				budget -= len + 1;
				name = copy;
			}
			if (bytes > r->max_bytes)
				return -EFBIG;
			prev_tab = x.tab;
			prev_off = x.name_off;
			prev_name = name;
		}
		/* Slot i has been read into x: it becomes symbol i in place. */
		syms[i] = (struct elfobj_sym){ .start = x.start, .size = x.size, .name = name };
	}
	qsort(syms, r->n, sizeof(syms[0]), cmp_sym);
	o->syms = r->n ? realloc(syms, r->n * sizeof(syms[0])) : NULL;
	if (r->n && !o->syms)
		o->syms = syms; /* shrinking failed: keep the larger block */
	else if (!r->n)
		free(syms);
	o->nsyms = r->n;
	o->syms_bytes = bytes;
	r->v = NULL;
	r->n = r->cap = 0;
	return 0;
}

/* Keeps the preferred record at each address (its size if it has none). */
static void dedupe(struct recs *r)
{
	size_t out = 0;

	qsort(r->v, r->n, sizeof(r->v[0]), symrec_cmp);
	for (size_t i = 0; i < r->n; i++) {
		if (out && r->v[out - 1].start == r->v[i].start) {
			if (!r->v[out - 1].size)
				r->v[out - 1].size = r->v[i].size;
			continue;
		}
		r->v[out++] = r->v[i];
	}
	r->n = out;
}

/* The records @sel chose, as if a whole table had been read and deduplicated. */
static int take_selection(struct recs *r, const struct symsel *sel)
{
	if (sel->n * sizeof(struct symrec) > r->max_bytes)
		return -EFBIG;
	r->v = malloc((sel->n ? sel->n : 1) * sizeof(*r->v));
	if (!r->v)
		return -ENOMEM;
	r->n = r->cap = symsel_result(sel, r->v);
	return 0;
}

/* Reads the function symbols: all of them, or those naming the @n @vaddrs. */
static int load_symbols(struct elfobj *o, const struct elfobj_debug_opts *opts,
			const uint64_t *vaddrs, size_t n, uint64_t max_bytes,
			struct errbuf *err)
{
	struct debug_file dbg = { .src = { .fd = -1 } };
	struct table tabs[2] = { 0 };
	struct recs r = { .max_bytes = max_bytes };
	struct symsel sel = { 0 };
	struct sections secs;
	size_t ntabs = 0;
	uint8_t *buf;
	Elf *e;
	int rc;

	rc = src_ready(o);
	if (rc)
		return errf(err, rc, "%s: reopening: %s", o->label, strerror(-rc));
	rc = elf_open_src(&o->src, o->label, &e, err);
	if (rc)
		return rc;
	find_sections(e, &o->src, &secs);
	elf_end(e);

	buf = malloc(CHUNK);
	if (!buf || (vaddrs && symsel_init(&sel, vaddrs, n))) {
		free(buf);
		return errf(err, -ENOMEM, "%s: out of memory", o->label);
	}
	if (secs.symtab.count) {
		tabs[ntabs++] = (struct table){ .src = &o->src, .loc = secs.symtab };
	} else {
		/*
		 * No .symtab: a debug file's .symtab has every function; the
		 * object's .dynsym is merged in anyway (same names at the same
		 * addresses dedupe away) in case the debug file is partial.
		 */
		if (opts && find_debug_file(o, opts, &secs, buf, &dbg)) {
			tabs[ntabs++] = (struct table){ .src = &dbg.src, .loc = dbg.symtab };
			o->syms_debug = true;
		}
		if (secs.dynsym.count)
			tabs[ntabs++] = (struct table){ .src = &o->src, .loc = secs.dynsym };
	}
	for (size_t i = 0; i < ntabs && !rc; i++)
		rc = collect(&r, vaddrs ? &sel : NULL, &tabs[i], (uint8_t)i, buf);
	if (!rc && vaddrs)
		rc = take_selection(&r, &sel);
	else if (!rc && r.n)
		dedupe(&r);
	if (!rc && r.n) {
		for (size_t i = 0; i < ntabs && !rc; i++) {
			tabs[i].buf = malloc(CHUNK + NAME_BYTES);
			if (!tabs[i].buf)
				rc = -ENOMEM;
			tabs[i].win_len = 0;
		}
		if (!rc)
			rc = build_symbols(o, &r, tabs, ntabs);
	}
	for (size_t i = 0; i < ntabs; i++)
		free(tabs[i].buf);
	symsel_free(&sel);
	free(r.v);
	free(buf);
	if (dbg.src.fd >= 0)
		close(dbg.src.fd);
	if (rc) {
		elfobj_unload_symbols(o);
		if (rc == -EFBIG)
			return errf(err, rc, "%s: symbols over %.1f MB", o->label,
				    max_bytes / 1048576.0);
		return errf(err, rc, "%s: reading symbols: %s", o->label, strerror(-rc));
	}
	return 0;
}

void elfobj_unload_symbols(struct elfobj *o)
{
	free(o->syms);
	arena_free(o->arena);
	free(o->syms_err);
	o->syms = NULL;
	o->arena = NULL;
	o->syms_err = NULL;
	o->nsyms = 0;
	o->syms_bytes = 0;
	o->syms_debug = false;
	o->syms_loaded = false;
	o->syms_rc = 0;
}

int elfobj_load_symbols_for(struct elfobj *o, const struct elfobj_debug_opts *opts,
			    const uint64_t *vaddrs, size_t n, uint64_t max_bytes,
			    struct errbuf *err)
{
	elfobj_unload_symbols(o);
	return load_symbols(o, opts, vaddrs, n, max_bytes, err);
}

int elfobj_load_symbols(struct elfobj *o, const struct elfobj_debug_opts *opts,
			struct errbuf *err)
{
	struct errbuf mine;

	if (o->syms_loaded) {
		if (o->syms_rc)
			return errf(err, o->syms_rc, "%s", o->syms_err ? o->syms_err : "");
		return 0;
	}
	mine.msg[0] = '\0';
	o->syms_rc = load_symbols(o, opts, NULL, 0, UINT64_MAX, &mine);
	o->syms_loaded = true;
	if (o->syms_rc) {
		o->syms_err = strdup(mine.msg);
		return errf(err, o->syms_rc, "%s", mine.msg);
	}
	return 0;
}

const struct elfobj_sym *elfobj_lookup(const struct elfobj *o, uint64_t vaddr)
{
	size_t lo = 0, hi = o->nsyms;
	const struct elfobj_sym *s;

	/* lo ends at the first symbol starting above vaddr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (o->syms[mid].start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	s = &o->syms[lo - 1];
	if (!s->name || (s->size && vaddr - s->start >= s->size))
		return NULL;
	return s;
}

size_t elfobj_symbols_bytes(const struct elfobj *o)
{
	return o->syms_bytes;
}

const struct elfobj_sym *elfobj_symbols(const struct elfobj *o, size_t *n)
{
	*n = o->nsyms;
	return o->syms;
}

size_t elfobj_nsyms(const struct elfobj *o)
{
	return o->nsyms;
}

bool elfobj_syms_from_debug_file(const struct elfobj *o)
{
	return o->syms_debug;
}

void elfobj_source(const struct elfobj *o, int *fd, const void **image, size_t *len)
{
	/*
	 * Reopening a closed file changes no value of the object, only its
	 * cache of a descriptor: hence const, and the cast.
	 */
	struct elfobj *mut = (struct elfobj *)o;

	*fd = -1;
	*image = NULL;
	*len = 0;
	if (src_ready(mut))
		return;
	*fd = o->src.fd;
	*image = o->src.fd < 0 ? o->src.mem : NULL;
	*len = o->src.size;
}
