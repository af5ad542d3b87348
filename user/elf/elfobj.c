// SPDX-License-Identifier: MIT
/*
 * elfobj: build ID, PT_LOAD segments and function symbols of one ELF object.
 *
 * Bytes are read through elfsrc (bounded preads, never a mapping; libelf
 * on the headers only, after they are checked) and no libelf handle is
 * kept between calls: an object costs its struct, its symbols (elfsyms)
 * and its open fd, which may be closed to bound how many are open and
 * reopened through its file ops.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf/elfobj.h"
#include "util/hexnum.h"

#define MAX_SEGS 64
/*
 * How far from the ELF entry point an address with no symbol is named
 * _start: the return addresses of the calls glibc's _start makes (34
 * bytes) and ld.so's _start with _dl_start_user (61 bytes).
 */
#define ENTRY_SPAN 64

struct seg {
	uint64_t off, vaddr, filesz, memsz;
	uint32_t flags;
};

struct elfobj {
	struct elfsrc src; /* src.fd -1: closed for the descriptor bound (or an image) */
	uint8_t *image;    /* the copied memory image src.mem points at, or NULL */
	const struct elfobj_file_ops *ops;
	void *ops_ctx;
	char *label;     /* for messages: the file's path, or "ELF image in memory" */
	uint64_t pagesz; /* mapping granularity, for elfobj_file_to_vaddr() */

	uint8_t build_id[ELFOBJ_BUILD_ID_MAX];
	size_t build_id_len;
	char build_id_hex[2 * ELFOBJ_BUILD_ID_MAX + 1];

	struct elfobj_sym entry; /* _start at e_entry; size 0: none */

	bool syms_loaded;
	int syms_rc;
	char *syms_err; /* first load's message when it failed */
	struct elfsyms syms;

	size_t nsegs;
	struct seg segs[]; /* PT_LOAD, in program header order */
};

/* --- open / free -------------------------------------------------------- */

/* Program headers, build ID: everything elfobj_open promises. */
static int parse_headers(struct elfobj **out, const struct elfsrc *s, uint8_t *image,
			 const char *label, struct errbuf *err)
{
	long pg = sysconf(_SC_PAGESIZE);
	struct elfobj *o;
	size_t phnum = 0, nload = 0;
	Elf *e;
	int rc;

	/*
	 * Any machine: an emulated process's objects (qemu-user) still have
	 * symbols and segments worth reading; only unwind tables are x86-64's.
	 */
	rc = elfsrc_begin(s, EM_NONE, ELFSRC_LOADABLE, &e, err);
	if (rc)
		return errf_prefix(err, rc, label);
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
	{
		GElf_Ehdr eh;

		if (gelf_getehdr(e, &eh) && eh.e_entry)
			o->entry = (struct elfobj_sym){ eh.e_entry, ENTRY_SPAN, "_start" };
	}
	o->build_id_len = elfsrc_build_id(e, s, false, o->build_id);
	hexnum_write(o->build_id_hex, o->build_id, o->build_id_len);
	o->pagesz = pg > 0 ? (uint64_t)pg : 4096;
	o->src = *s;
	o->image = image;
	*out = o;
out:
	elf_end(e);
	return rc;
}

int elfobj_open(struct elfobj **out, int fd, struct errbuf *err)
{
	char label[PATH_MAX], link[64];
	struct elfsrc s;
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

	rc = elfsrc_from_fd(&s, fd);
	if (rc == -EINVAL)
		rc = errf(err, rc, "%s: not a regular file", label);
	else if (rc)
		rc = errf(err, rc, "%s: %s", label, strerror(-rc));
	else
		rc = parse_headers(out, &s, NULL, label, err);
	if (rc)
		close(fd);
	return rc;
}

int elfobj_open_mem(struct elfobj **out, const void *image, size_t len,
		    struct errbuf *err)
{
	uint8_t *copy;
	struct elfsrc s;
	int rc;

	*out = NULL;
	/* The copy also keeps the bytes stable while we parse them. */
	copy = malloc(len ? len : 1);
	if (!copy)
		return errf(err, -ENOMEM, "ELF image in memory: out of memory");
	memcpy(copy, image, len);
	s = elfsrc_from_mem(copy, len);
	rc = parse_headers(out, &s, copy, "ELF image in memory", err);
	if (rc)
		free(copy);
	return rc;
}

void elfobj_free(struct elfobj *o)
{
	if (!o)
		return;
	if (o->src.fd >= 0)
		close(o->src.fd);
	free(o->image);
	free(o->label);
	free(o->syms_err);
	elfsyms_free(&o->syms);
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

int elfobj_code_vaddr(const struct elfobj *o, uint64_t *vaddr)
{
	bool found = false;

	for (size_t i = 0; i < o->nsegs; i++) {
		if (!(o->segs[i].flags & PF_X) || (found && o->segs[i].vaddr >= *vaddr))
			continue;
		*vaddr = o->segs[i].vaddr;
		found = true;
	}
	return found ? 0 : -ENOENT;
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

int elfobj_load_bias(const struct elfobj *o, uint64_t map_start, uint64_t map_offset,
		     uint64_t *bias)
{
	uint64_t vaddr;

	if (elfobj_file_to_vaddr(o, map_offset, &vaddr))
		return -ENOENT;
	*bias = map_start - vaddr;
	return 0;
}

/* --- symbols ---------------------------------------------------------------- */

/* src_ready(), saying what failed. */
static int src_ready_err(struct elfobj *o, struct errbuf *err)
{
	int rc = src_ready(o);

	return rc ? errf(err, rc, "%s: reopening: %s", o->label, strerror(-rc)) : 0;
}

/* Reads the function symbols: all of them, or those naming the @n @vaddrs. */
static int load_symbols(struct elfobj *o, const struct elfobj_debug_opts *opts,
			const uint64_t *vaddrs, size_t n, uint64_t max_bytes,
			struct errbuf *err)
{
	struct debugfile_query q;
	int rc;

	rc = src_ready_err(o, err);
	if (rc)
		return rc;
	if (opts)
		q = (struct debugfile_query){
			.debug_root = opts->debug_root,
			.build_id = o->build_id,
			.build_id_len = o->build_id_len,
			.obj = &o->src,
			.path = opts->path,
			.root_fd = opts->root_fd,
		};
	return elfsyms_load(&o->syms, &o->src, o->label, opts ? &q : NULL, vaddrs, n, max_bytes,
			    err);
}

int elfobj_find_dynamic(struct elfobj *o, struct elfsyms_named *want, size_t n,
			struct errbuf *err)
{
	int rc = src_ready_err(o, err);

	return rc ? rc : elfsyms_find_dynamic(&o->src, o->label, want, n, err);
}

void elfobj_unload_symbols(struct elfobj *o)
{
	elfsyms_free(&o->syms);
	free(o->syms_err);
	o->syms_err = NULL;
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
	const struct elfobj_sym *s = elfsyms_lookup(&o->syms, vaddr), *at;

	/*
	 * A stripped program (as, ld) or ld.so has no symbol at its entry
	 * point, which the outermost frame of each of its stacks is in; an
	 * unsized symbol below it only reaches it by a guess.
	 */
	if (!o->entry.size || vaddr - o->entry.start >= o->entry.size ||
	    (s && (s->size || s->start >= o->entry.start)))
		return s;
	at = elfsyms_lookup(&o->syms, o->entry.start);
	return at && at->start == o->entry.start ? s : &o->entry;
}

size_t elfobj_symbols_bytes(const struct elfobj *o)
{
	return o->syms.bytes;
}

const struct elfobj_sym *elfobj_symbols(const struct elfobj *o, size_t *n)
{
	*n = o->syms.n;
	return o->syms.v;
}

size_t elfobj_nsyms(const struct elfobj *o)
{
	return o->syms.n;
}

bool elfobj_syms_from_debug_file(const struct elfobj *o)
{
	return o->syms.from_debug_file;
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
	*image = o->src.fd < 0 ? o->image : NULL;
	*len = o->src.size;
}

