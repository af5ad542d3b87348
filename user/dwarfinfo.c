// SPDX-License-Identifier: MIT
/*
 * dwarfinfo: libdw on one object's DWARF.  See dwarfinfo.h for the contract.
 *
 * What libdw gives and what we add:
 *  - dwarf_addrdie() finds an address's compilation unit through
 *    .debug_aranges; clang and some linkers emit none, so a sorted index of
 *    the CUs' address ranges is built on the first miss when it is absent.
 *  - dwarf_getsrc_die() is the line-table row of the address: the innermost
 *    frame's file and line.
 *  - dwarf_getscopes() finds the innermost scope containing the address
 *    (past an inlined instance it continues with the abstract definition's
 *    scopes, so only its first entry is used), and dwarf_getscopes_die()
 *    the chain of DIEs physically containing that one, inner first.  Each
 *    DW_TAG_inlined_subroutine in the chain is a call inlined into the next
 *    function out, whose line is the call's DW_AT_call_file/call_line.
 *    This is what eu-addr2line -i and llvm-symbolizer print.
 *
 * Before libelf sees a file we check its header (a hostile section count
 * would make it allocate without bound); libdw sees only the image of its
 * debug sections that dwarfimage.c makes.
 *
 * DWARF shrunk by dwz refers to a shared "alt" file named in
 * .gnu_debugaltlink.  libdw would look for it itself, opening whatever path
 * the (untrusted) object names, blocking on a FIFO, mapping the file; so we
 * find it ourselves, only by its build ID under the host's debug_root, with
 * the same checks as any debug file, and hand it to libdw.  Without it such
 * DWARF is not used at all.
 */
#include <dwarf.h>
#include <elf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "dwarfinfo.h"
#include "rootfs.h"

#define MAX_SECTIONS  65536u
#define CRC_CHUNK     65536u
#define MAX_CU_RANGES (4u << 20)
/* Scopes examined per address: deeper nesting than this is not real code. */
#define MAX_SCOPES    256
/* .gnu_debuglink and .gnu_debugaltlink: a file name and a CRC or build ID. */
#define LINK_BYTES    4096u

struct cu_range {
	uint64_t lo, hi; /* [lo, hi) */
	uint64_t cu_off; /* offset of the CU's DIE in .debug_info */
};

/* A file found for an object's DWARF, not read yet. */
struct dfile {
	int fd;        /* owned when @own */
	bool own;
	struct dwarfimage_scan scan;
	uint64_t over; /* none taken: the most a candidate needed over the budget */
};

/* A file read: its image, and libelf's handle on the image. */
struct dimage {
	struct dwarfimage img;
	Elf *elf;
};

struct dwarfinfo {
	struct dimage main, alt; /* alt.elf NULL: no dwz file */
	Dwarf *dw, *alt_dw;
	bool separate; /* main is a separate debug file, not the object */
	uint64_t bytes;
	/* Fallback CU index, built on the first miss when there are no aranges. */
	bool cu_index_built;
	struct cu_range *cus;
	size_t ncus;
};

/* --- files ------------------------------------------------------------- */

/*
 * What libelf must not see: not 64-bit native-endian ELF, or more sections
 * than we allow (extended numbering puts the count in section 0's sh_size).
 */
static bool header_ok(int fd, uint64_t size)
{
	Elf64_Ehdr eh;
	Elf64_Shdr sh0;
	uint64_t n;

	if (size < sizeof(eh) || pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh))
		return false;
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB
									       : ELFDATA2MSB))
		return false;
	if (!eh.e_shoff || eh.e_shentsize != sizeof(Elf64_Shdr))
		return false;
	n = eh.e_shnum;
	if (n == 0) {
		if (pread(fd, &sh0, sizeof(sh0), (off_t)eh.e_shoff) != (ssize_t)sizeof(sh0))
			return false;
		n = sh0.sh_size;
	}
	return n <= MAX_SECTIONS;
}

static bool crc_matches(int fd, uint64_t size, uint32_t want)
{
	uint8_t *buf = malloc(CRC_CHUNK);
	uLong crc = crc32(0L, Z_NULL, 0);
	bool ok = buf != NULL;

	for (uint64_t off = 0; ok && off < size;) {
		size_t n = size - off < CRC_CHUNK ? (size_t)(size - off) : CRC_CHUNK;

		ok = pread(fd, buf, n, (off_t)off) == (ssize_t)n;
		crc = crc32(crc, buf, (uInt)n);
		off += n;
	}
	free(buf);
	return ok && (uint32_t)crc == want;
}

/*
 * Takes @fd (closed unless kept, when @own) and, when it is a readable ELF
 * file with DWARF within @budget bytes (and, for a debug file, carries
 * @want_id or matches @want_crc), makes it @f.
 */
static bool try_fd(struct dfile *f, int fd, bool own, uint64_t budget, const uint8_t *want_id,
		   size_t want_id_len, const uint32_t *want_crc)
{
	struct dwarfimage_scan sc;
	struct stat st;
	Elf *e = NULL;

	if (fd < 0)
		return false;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || !header_ok(fd, (uint64_t)st.st_size))
		goto reject;
	if (want_crc && !crc_matches(fd, (uint64_t)st.st_size, *want_crc))
		goto reject;
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF)
		goto reject;
	if (want_id) {
		const void *id;
		ssize_t n = dwelf_elf_gnu_build_id(e, &id);

		if (n <= 0 || (size_t)n != want_id_len || memcmp(id, want_id, want_id_len))
			goto reject;
	}
	if (dwarfimage_scan(e, fd, &sc, NULL) || !sc.has_info)
		goto reject;
	if (sc.bytes > budget) {
		if (sc.bytes > f->over)
			f->over = sc.bytes;
		goto reject;
	}
	elf_end(e);
	f->fd = fd;
	f->own = own;
	f->scan = sc;
	return true;
reject:
	if (e)
		elf_end(e);
	if (own)
		close(fd);
	return false;
}

static void dfile_close(struct dfile *f)
{
	if (f->own && f->fd >= 0)
		close(f->fd);
	f->fd = -1;
}

/* "<root>/.build-id/xx/rest.debug" for a raw build ID. */
static bool build_id_path(char *buf, size_t len, const char *root, const uint8_t *id,
			  size_t idlen)
{
	static const char hex[] = "0123456789abcdef";
	size_t n;

	if (!root || !*root || idlen < 2 || idlen > ELFOBJ_BUILD_ID_MAX)
		return false;
	n = (size_t)snprintf(buf, len, "%s/.build-id/%c%c/", root, hex[id[0] >> 4], hex[id[0] & 15]);
	if (n + 2 * idlen + sizeof(".debug") > len)
		return false;
	for (size_t i = 1; i < idlen; i++) {
		buf[n++] = hex[id[i] >> 4];
		buf[n++] = hex[id[i] & 15];
	}
	memcpy(buf + n, ".debug", sizeof(".debug"));
	return true;
}

/*
 * The .gnu_debuglink of the file open at @fd: a bare file name (a path
 * could lead out of the directories searched) and the CRC of its target.
 */
static bool read_debuglink(int fd, char *name, size_t name_len, uint32_t *crc)
{
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	char buf[LINK_BYTES];
	Elf_Scn *scn = NULL;
	size_t shstrndx, nlen, crc_off;
	bool ok = false;

	if (!e)
		return false;
	if (elf_getshdrstrndx(e, &shstrndx))
		goto out;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *sn;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
		    !(sn = elf_strptr(e, shstrndx, sh.sh_name)) || strcmp(sn, ".gnu_debuglink"))
			continue;
		if (sh.sh_size > sizeof(buf) ||
		    pread(fd, buf, sh.sh_size, (off_t)sh.sh_offset) != (ssize_t)sh.sh_size)
			break;
		nlen = strnlen(buf, sh.sh_size);
		crc_off = (nlen + 1 + 3) & ~(size_t)3;
		if (!nlen || nlen >= name_len || crc_off + 4 > sh.sh_size)
			break;
		memcpy(name, buf, nlen + 1);
		memcpy(crc, buf + crc_off, 4);
		ok = !strchr(name, '/') && strcmp(name, ".") && strcmp(name, "..");
		break;
	}
out:
	elf_end(e);
	return ok;
}

/* By build ID, then by .gnu_debuglink, in gdb's order. */
static bool find_separate(struct dfile *d, const struct elfobj *o,
			  const struct elfobj_debug_opts *opts, uint64_t max)
{
	const char *root = opts ? opts->debug_root : NULL, *slash;
	char path[PATH_MAX], name[256];
	size_t idlen;
	const uint8_t *id = elfobj_build_id_raw(o, &idlen);
	uint32_t crc;
	bool found = false;
	int ofd, dirlen;
	const void *img;
	size_t len;

	if (build_id_path(path, sizeof(path), root, id, idlen) &&
	    try_fd(d, rootfs_open_host(path), true, max, id, idlen, NULL))
		return true;
	if (!opts || !opts->path || !(slash = strrchr(opts->path, '/')))
		return false;
	elfobj_source(o, &ofd, &img, &len);
	if (ofd < 0 || !read_debuglink(ofd, name, sizeof(name), &crc))
		return false;
	dirlen = (int)(slash - opts->path);
	if ((size_t)snprintf(path, sizeof(path), "%.*s/%s", dirlen, opts->path, name) <
	    sizeof(path))
		found = try_fd(d, rootfs_openat(opts->root_fd, path), true, max,
			       NULL, 0, &crc);
	if (!found && (size_t)snprintf(path, sizeof(path), "%.*s/.debug/%s", dirlen,
				       opts->path, name) < sizeof(path))
		found = try_fd(d, rootfs_openat(opts->root_fd, path), true, max,
			       NULL, 0, &crc);
	if (!found && root && *root &&
	    (size_t)snprintf(path, sizeof(path), "%s%.*s/%s", root, dirlen, opts->path, name) <
		    sizeof(path))
		found = try_fd(d, rootfs_open_host(path), true, max, NULL, 0, &crc);
	return found;
}

/*
 * The dwz file of @main, if its DWARF has one: by build ID under the
 * host's debug root only.  False when there is one and it cannot be used.
 */
static bool find_alt(struct dfile *alt, const struct dfile *main,
		     const struct elfobj_debug_opts *opts, uint64_t max)
{
	const uint8_t *id = main->scan.alt_id;
	size_t n = main->scan.alt_id_len;
	char path[PATH_MAX];

	if (!n)
		return true;
	return build_id_path(path, sizeof(path), opts ? opts->debug_root : NULL, id, n) &&
	       try_fd(alt, rootfs_open_host(path), true, max - main->scan.bytes, id, n, NULL);
}

int dwarfinfo_locate(struct dwarf_source *src, const struct elfobj *o,
		     const struct elfobj_debug_opts *opts, uint64_t max_bytes,
		     struct errbuf *err)
{
	struct dfile main = { .fd = -1 }, alt = { .fd = -1 };
	const void *img;
	size_t len;
	int fd;

	*src = (struct dwarf_source){ .fd = -1, .alt_fd = -1 };
	if (!max_bytes || max_bytes > DWARFINFO_MAX_BYTES)
		max_bytes = DWARFINFO_MAX_BYTES;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return errf(err, -ENOSYS, "libelf: %s", elf_errmsg(-1));
	elfobj_source(o, &fd, &img, &len);
	/* The in-memory vDSO image carries no DWARF. */
	if (fd < 0 || (!try_fd(&main, fd, false, max_bytes, NULL, 0, NULL) &&
		       !find_separate(&main, o, opts, max_bytes))) {
		if (main.over)
			return errf(err, -EFBIG, "DWARF of %.1f MB, over the %.1f MB allowed",
				    main.over / 1048576.0, max_bytes / 1048576.0);
		return errf(err, -ENOENT, "no DWARF");
	}
	if (!find_alt(&alt, &main, opts, max_bytes)) {
		uint64_t over = alt.over ? main.scan.bytes + alt.over : 0;

		dfile_close(&main);
		if (over)
			return errf(err, -EFBIG,
				    "DWARF of %.1f MB with its dwz file, over the %.1f MB allowed",
				    over / 1048576.0, max_bytes / 1048576.0);
		return errf(err, -ENOENT, "DWARF refers to a dwz file that is not installed");
	}
	*src = (struct dwarf_source){
		.fd = main.fd,
		.alt_fd = alt.fd,
		.own_fd = main.own,
		.bytes = main.scan.bytes + (alt.fd >= 0 ? alt.scan.bytes : 0),
	};
	return 0;
}

void dwarfinfo_source_close(struct dwarf_source *src)
{
	if (src->own_fd && src->fd >= 0)
		close(src->fd);
	if (src->alt_fd >= 0)
		close(src->alt_fd);
	*src = (struct dwarf_source){ .fd = -1, .alt_fd = -1 };
}

/* Reads the file at @fd into @di: its image, open with libelf. */
static int read_image(struct dimage *di, int fd, uint64_t max, struct errbuf *err)
{
	struct stat st;
	Elf *e;
	int rc;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || !header_ok(fd, (uint64_t)st.st_size))
		return errf(err, -ENOEXEC, "not a 64-bit ELF file of this host's byte order");
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		if (e)
			elf_end(e);
		return errf(err, -ENOEXEC, "not an ELF file");
	}
	rc = dwarfimage_build(e, fd, max, &di->img, err);
	elf_end(e);
	if (rc)
		return rc;
	di->elf = elf_memory((char *)di->img.buf, di->img.len);
	if (!di->elf) {
		dwarfimage_free(&di->img);
		return errf(err, -ENOEXEC, "libelf: %s", elf_errmsg(-1));
	}
	return 0;
}

static void dimage_free(struct dimage *di)
{
	if (di->elf)
		elf_end(di->elf);
	dwarfimage_free(&di->img);
	di->elf = NULL;
}

int dwarfinfo_open_fds(struct dwarfinfo **out, int fd, int alt_fd, uint64_t max_bytes,
		       struct errbuf *err)
{
	struct dwarfinfo *d;
	int rc;

	*out = NULL;
	if (!max_bytes || max_bytes > DWARFINFO_MAX_BYTES)
		max_bytes = DWARFINFO_MAX_BYTES;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return errf(err, -ENOSYS, "libelf: %s", elf_errmsg(-1));
	d = calloc(1, sizeof(*d));
	if (!d)
		return errf(err, -ENOMEM, "out of memory");
	rc = read_image(&d->main, fd, max_bytes, err);
	if (rc)
		goto fail;
	d->bytes = d->main.img.scan.bytes;
	if (!d->main.img.scan.has_info) {
		rc = errf(err, -ENOENT, "no DWARF");
		goto fail;
	}
	d->dw = dwarf_begin_elf(d->main.elf, DWARF_C_READ, NULL);
	if (!d->dw) {
		rc = errf(err, -ENOEXEC, "DWARF: %s", dwarf_errmsg(-1));
		goto fail;
	}
	if (d->main.img.scan.alt_id_len) {
		if (alt_fd < 0) {
			rc = errf(err, -ENOENT, "DWARF refers to a dwz file that is not installed");
			goto fail;
		}
		rc = read_image(&d->alt, alt_fd, max_bytes - d->bytes, err);
		if (rc)
			goto fail;
		d->bytes += d->alt.img.scan.bytes;
		d->alt_dw = dwarf_begin_elf(d->alt.elf, DWARF_C_READ, NULL);
		if (!d->alt_dw) {
			rc = errf(err, -ENOEXEC, "dwz file: %s", dwarf_errmsg(-1));
			goto fail;
		}
		dwarf_setalt(d->dw, d->alt_dw);
	}
	*out = d;
	return 0;
fail:
	dwarfinfo_free(d);
	return rc;
}

int dwarfinfo_open(struct dwarfinfo **out, const struct elfobj *o,
		   const struct elfobj_debug_opts *opts, uint64_t max_bytes,
		   struct errbuf *err)
{
	struct dwarf_source src;
	int rc;

	*out = NULL;
	rc = dwarfinfo_locate(&src, o, opts, max_bytes, err);
	if (rc)
		return rc;
	rc = dwarfinfo_open_fds(out, src.fd, src.alt_fd, max_bytes, err);
	if (!rc)
		(*out)->separate = src.own_fd;
	dwarfinfo_source_close(&src);
	return rc;
}

void dwarfinfo_free(struct dwarfinfo *d)
{
	if (!d)
		return;
	/* The main Dwarf first: it points at the alt one. */
	if (d->dw)
		dwarf_end(d->dw);
	if (d->alt_dw)
		dwarf_end(d->alt_dw);
	dimage_free(&d->main);
	dimage_free(&d->alt);
	free(d->cus);
	free(d);
}

uint64_t dwarfinfo_bytes(const struct dwarfinfo *d)
{
	return d->bytes;
}

bool dwarfinfo_separate(const struct dwarfinfo *d)
{
	return d->separate;
}

/* --- the CU of an address ------------------------------------------------ */

static int cmp_range(const void *pa, const void *pb)
{
	const struct cu_range *a = pa, *b = pb;

	return a->lo < b->lo ? -1 : a->lo > b->lo;
}

static void build_cu_index(struct dwarfinfo *d)
{
	Dwarf_Off off = 0, next;
	size_t hsize, cap = 0;

	d->cu_index_built = true;
	while (dwarf_nextcu(d->dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		Dwarf_Addr base, lo, hi;
		ptrdiff_t it = 0;

		if (dwarf_offdie(d->dw, off + hsize, &cu)) {
			while ((it = dwarf_ranges(&cu, it, &base, &lo, &hi)) > 0) {
				if (lo >= hi)
					continue;
				if (d->ncus == cap) {
					struct cu_range *v;

					if (cap >= MAX_CU_RANGES)
						goto done;
					cap = cap ? 2 * cap : 256;
					v = realloc(d->cus, cap * sizeof(*v));
					if (!v)
						goto done;
					d->cus = v;
				}
				d->cus[d->ncus++] = (struct cu_range){ lo, hi, off + hsize };
			}
		}
		off = next;
	}
done:
	if (d->ncus)
		qsort(d->cus, d->ncus, sizeof(*d->cus), cmp_range);
}

static bool find_cu(struct dwarfinfo *d, uint64_t addr, Dwarf_Die *cu)
{
	size_t lo = 0, hi;

	if (dwarf_addrdie(d->dw, addr, cu))
		return true;
	if (!d->cu_index_built) {
		Dwarf_Aranges *ar;
		size_t n = 0;

		/* With aranges present, a miss is a real miss. */
		if (dwarf_getaranges(d->dw, &ar, &n) == 0 && n > 0) {
			d->cu_index_built = true;
			return false;
		}
		build_cu_index(d);
	}
	/* The last range starting at or below addr; ranges may nest, so look back. */
	hi = d->ncus;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (d->cus[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i-- > 0 && lo - i <= 64;)
		if (addr < d->cus[i].hi)
			return dwarf_offdie(d->dw, d->cus[i].cu_off, cu) != NULL;
	return false;
}

/* --- the inline chain ------------------------------------------------------ */

static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *s = NULL;

	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &a) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a))
		s = dwarf_formstring(&a);
	return s ? s : dwarf_diename(die);
}

static int die_uint(Dwarf_Die *die, unsigned attr)
{
	Dwarf_Attribute a;
	Dwarf_Word v;

	if (!dwarf_attr(die, attr, &a) || dwarf_formudata(&a, &v) || v > INT_MAX)
		return -1;
	return (int)v;
}

static bool is_function(Dwarf_Die *die)
{
	int tag = dwarf_tag(die);

	return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
	       tag == DW_TAG_entry_point;
}

size_t dwarfinfo_lookup(struct dwarfinfo *d, uint64_t vaddr, struct dwarf_frame *frames,
			size_t max)
{
	Dwarf_Die cu, inner, *scopes = NULL;
	Dwarf_Files *files = NULL;
	size_t nfiles = 0, n = 0;
	const char *file = NULL, *comp_dir;
	Dwarf_Attribute a;
	Dwarf_Line *row;
	int line = 0, nscopes;

	if (!max || !find_cu(d, vaddr, &cu))
		return 0;
	comp_dir = dwarf_formstring(dwarf_attr(&cu, DW_AT_comp_dir, &a));
	row = dwarf_getsrc_die(&cu, vaddr);
	if (row) {
		file = dwarf_linesrc(row, NULL, NULL);
		/* A line program can count past INT_MAX: that is no line. */
		if (dwarf_lineno(row, &line) || line < 0)
			line = 0;
	}
	nscopes = dwarf_getscopes(&cu, vaddr, &scopes);
	if (nscopes > 0) {
		inner = scopes[0];
		free(scopes);
		scopes = NULL;
		nscopes = dwarf_getscopes_die(&inner, &scopes);
	}
	if (nscopes > MAX_SCOPES)
		nscopes = MAX_SCOPES;
	for (int i = 0; i < nscopes; i++) {
		Dwarf_Die *s = &scopes[i];
		struct dwarf_frame f = { .file = file, .line = line };
		int tag, idx;

		if (file && file[0] != '/')
			f.dir = comp_dir;
		if (!is_function(s))
			continue;
		f.name = die_name(s);
		if (dwarf_decl_line(s, &f.start_line) || f.start_line < 0)
			f.start_line = 0;
		/* Full: the outermost frame overwrites the last slot. */
		frames[n < max ? n++ : max - 1] = f;
		tag = dwarf_tag(s);
		if (tag != DW_TAG_inlined_subroutine)
			break;
		/* The next function out is where this one was called from. */
		if (!files && dwarf_getsrcfiles(&cu, &files, &nfiles))
			files = NULL;
		idx = die_uint(s, DW_AT_call_file);
		file = files && idx >= 0 && (size_t)idx < nfiles
			       ? dwarf_filesrc(files, (size_t)idx, NULL, NULL) : NULL;
		line = die_uint(s, DW_AT_call_line);
		if (line < 0)
			line = 0;
	}
	free(scopes);
	/* A CU with a line row but no function DIE there (assembly): one nameless frame. */
	if (!n && row)
		frames[n++] = (struct dwarf_frame){
			.file = file,
			.dir = file && file[0] != '/' ? comp_dir : NULL,
			.line = line,
		};
	return n;
}
