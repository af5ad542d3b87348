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
 * Files are read through elfsrc (its header check before libelf sees a
 * file: a hostile section count would make it allocate without bound) and
 * separate debug files found by debugfile, as for symbols; libdw sees only
 * the image of the debug sections that dwarfimage.c makes.
 *
 * DWARF shrunk by dwz refers to a shared "alt" file named in
 * .gnu_debugaltlink.  libdw would look for it itself, opening whatever path
 * the (untrusted) object names, blocking on a FIFO, mapping the file; so we
 * find it ourselves, only by its build ID under the host's debug_root, with
 * the same checks as any debug file (debugfile_find()), and hand it to libdw.  Without it such
 * DWARF is not used at all.
 */
#include <dwarf.h>
#include <elf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <libelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/addrsearch.h"
#include "elf/debugfile.h"
#include "dwarf/dwarfinfo.h"

#define MAX_CU_RANGES (4u << 20)
/* Scopes examined per address: deeper nesting than this is not real code. */
#define MAX_SCOPES    256

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

struct dwarfinfo {
	struct dwarfimage main, alt; /* alt.elf NULL: no dwz file */
	Dwarf *dw, *alt_dw;
	bool separate; /* main is a separate debug file, not the object */
	uint64_t bytes;
	/* Fallback CU index, built on the first miss when there are no aranges. */
	bool cu_index_built;
	struct cu_range *cus;
	size_t ncus;
};

/* --- files ------------------------------------------------------------- */

/* What a file must have to be read for an object's DWARF. */
struct dwant {
	struct dfile *f;
	uint64_t budget;
};

/*
 * debugfile_accept_fn: DWARF (a non-empty .debug_info) within the budget;
 * the most a refused one needed is remembered to say why none was taken.
 */
static bool has_dwarf(const struct elfsrc *s, Elf *e, void *ctx)
{
	struct dwant *w = ctx;
	struct dwarfimage_scan sc;

	if (dwarfimage_scan(e, s->fd, &sc, NULL) || !sc.has_info)
		return false;
	if (sc.bytes > w->budget) {
		if (sc.bytes > w->f->over)
			w->f->over = sc.bytes;
		return false;
	}
	w->f->scan = sc;
	return true;
}

/* The object's own DWARF, in the file open at @fd (borrowed). */
static bool own_dwarf(struct dfile *f, int fd, uint64_t budget)
{
	struct dwant w = { f, budget };
	struct elfsrc s;
	Elf *e;
	bool ok;

	if (fd < 0 || elfsrc_from_fd(&s, fd) || elfsrc_begin(&s, EM_NONE, ELFSRC_SECTIONS, &e, NULL))
		return false;
	ok = has_dwarf(&s, e, &w);
	elf_end(e);
	if (ok) {
		f->fd = fd;
		f->own = false;
	}
	return ok;
}

/* A debug file with DWARF for @q (by build ID, then link), within @budget. */
static bool find_separate(struct dfile *f, const struct debugfile_query *q, uint64_t budget)
{
	struct dwant w = { f, budget };
	int fd = debugfile_find(q, has_dwarf, &w);

	if (fd < 0)
		return false;
	f->fd = fd;
	f->own = true;
	return true;
}

static void dfile_close(struct dfile *f)
{
	if (f->own && f->fd >= 0)
		close(f->fd);
	f->fd = -1;
}

/*
 * The dwz file of @main, if its DWARF has one: by build ID under the
 * host's debug root only.  False when there is one and it cannot be used.
 */
static bool find_alt(struct dfile *alt, const struct dfile *main,
		     const struct elfobj_debug_opts *opts, uint64_t max)
{
	struct debugfile_query q = {
		.debug_root = opts ? opts->debug_root : NULL,
		.build_id = main->scan.alt_id,
		.build_id_len = main->scan.alt_id_len,
	};

	if (!q.build_id_len)
		return true;
	return find_separate(alt, &q, max - main->scan.bytes);
}

int dwarfinfo_locate(struct dwarf_source *src, const struct elfobj *o,
		     const struct elfobj_debug_opts *opts, uint64_t max_bytes,
		     struct errbuf *err)
{
	struct dfile main = { .fd = -1 }, alt = { .fd = -1 };
	struct debugfile_query q = { 0 };
	struct elfsrc obj;
	const void *img;
	size_t len;
	int fd;

	*src = (struct dwarf_source){ .fd = -1, .alt_fd = -1 };
	if (!max_bytes || max_bytes > DWARFINFO_MAX_BYTES)
		max_bytes = DWARFINFO_MAX_BYTES;
	elfobj_source(o, &fd, &img, &len);
	if (fd >= 0 && !elfsrc_from_fd(&obj, fd)) {
		q.build_id = elfobj_build_id_raw(o, &q.build_id_len);
		q.obj = &obj;
		if (opts) {
			q.debug_root = opts->debug_root;
			q.path = opts->path;
			q.root_fd = opts->root_fd;
		}
	}
	/* The in-memory vDSO image carries no DWARF. */
	if (!q.obj ||
	    (!own_dwarf(&main, fd, max_bytes) && !find_separate(&main, &q, max_bytes))) {
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

int dwarfinfo_open_fds(struct dwarfinfo **out, int fd, int alt_fd, uint64_t max_bytes,
		       struct errbuf *err)
{
	struct dwarfinfo *d;
	int rc;

	*out = NULL;
	if (!max_bytes || max_bytes > DWARFINFO_MAX_BYTES)
		max_bytes = DWARFINFO_MAX_BYTES;
	d = calloc(1, sizeof(*d));
	if (!d)
		return errf(err, -ENOMEM, "out of memory");
	rc = dwarfimage_read(&d->main, fd, max_bytes, err);
	if (rc)
		goto fail;
	d->bytes = d->main.scan.bytes;
	if (!d->main.scan.has_info) {
		rc = errf(err, -ENOENT, "no DWARF");
		goto fail;
	}
	d->dw = dwarf_begin_elf(d->main.elf, DWARF_C_READ, NULL);
	if (!d->dw) {
		rc = errf(err, -ENOEXEC, "DWARF: %s", dwarf_errmsg(-1));
		goto fail;
	}
	if (d->main.scan.alt_id_len) {
		if (alt_fd < 0) {
			rc = errf(err, -ENOENT, "DWARF refers to a dwz file that is not installed");
			goto fail;
		}
		rc = dwarfimage_read(&d->alt, alt_fd, max_bytes - d->bytes, err);
		if (rc)
			goto fail;
		d->bytes += d->alt.scan.bytes;
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
	dwarfimage_free(&d->main);
	dwarfimage_free(&d->alt);
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
	size_t upto;

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
	upto = addrsearch_upto(d->cus, d->ncus, ADDRSEARCH_KEY(struct cu_range, lo), addr);
	for (size_t i = upto; i-- > 0 && upto - i <= 64;)
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
