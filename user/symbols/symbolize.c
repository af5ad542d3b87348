// SPDX-License-Identifier: MIT
/*
 * symbolize: see symbolize.h.
 *
 * The cache.  One struct objinfo per ELF object (keyed by the elfobj
 * pointer: objects are shared by processes and live at least as long as the
 * processes of the window being written), holding what was found for each
 * of its sampled addresses as a run of sym_lines, with their strings copied
 * and interned in a pool of its own (strpool.h).  Copying is what lets an
 * object's symbols and DWARF be let go as soon as its addresses are
 * resolved; interning keeps the copies to one per distinct name.
 */
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cprof.h"
#include "util/grow.h"
#include "util/demangle.h"
#include "dwarf/dwarfinfo.h"
#include "dwarf/dwarfworker.h"
#include "elf/elfobj.h"
#include "fs/rootfs.h"
#include "util/membudget.h"
#include "util/strpool.h"
#include "symbols/symbolize.h"

/* Longest demangled name kept; longer ones are cut (pprof shows them so too). */
#define DEMANGLED_MAX 4096

enum { ADDR_DONE = 1, ADDR_DWARF = 2 };

struct addr_entry {
	uint64_t vaddr; /* key */
	uint32_t first; /* index in objinfo.lines */
	uint8_t n, flags;
	uint16_t pad;
};

struct objinfo {
	struct elfobj *obj;
	bool dw_open;      /* its DWARF is open in the worker as dw_handle */
	uint32_t dw_handle;
	uint64_t dw_bytes;
	bool dw_tried;
	bool dw_too_big;   /* its DWARF is over the budget: names only */
	bool dw_failed;    /* the reader died or hung on it: names only */
	bool syms_whole;   /* its whole symbol table is loaded (resolving on demand) */
	bool syms_over;    /* its symbols did not fit symbol_max_bytes */
	int64_t uses;      /* processes still to be written; -1: unknown */
	uint64_t mark;     /* the last process that counted or released it */
	uint64_t last_used;
	struct hmap addrs; /* vaddr -> addr_entry */
	struct sym_line *lines;
	size_t nlines, lines_cap;
	struct strpool names; /* the strings of lines, interned */
	uint32_t *v0;      /* lines whose name is a Rust v0 name still mangled */
	size_t nv0, v0_cap;
	/* symbolizer_add(): where the first process seen to use it has it */
	bool has_user;
	const struct rootfs_root *user_root;
	const char *user_path;
};

struct obj_slot {
	uint64_t key; /* the elfobj pointer */
	struct objinfo *oi; /* NULL once released (until compacted away) */
};

struct symcache {
	struct hmap objs; /* elfobj pointer -> obj_slot */
	uint64_t tick;    /* advances per process done, for LRU */
	uint64_t stamp;   /* a fresh mark per pass over one process's objects */
	uint64_t dwarf_open; /* bytes of DWARF currently open */
	struct membudget sym; /* symbol tables loaded and names kept */
	struct symbolizer_stats st;
	struct dwarfworker *worker; /* made on first use */
	bool worker_failed;         /* ... and could not be */
	bool prepared;    /* symbolizer_prepare() counted the users of objects */
};

/* --- names ----------------------------------------------------------------- */

/*
 * Name and system name of a raw symbol: demangled when it is mangled.  A
 * Rust v0 name keeps its raw form for now: *@v0 says so, and the worker
 * demangles it with the object's others (demangle_v0s()).
 */
static void set_names(struct objinfo *oi, const char *raw, struct sym_line *l, bool *v0)
{
	char buf[DEMANGLED_MAX];

	*v0 = false;
	if (!raw)
		return;
	if (demangle(raw, buf, sizeof(buf))) {
		l->name = strpool_intern(&oi->names, buf);
		l->system_name = strpool_intern(&oi->names, raw);
	} else {
		l->name = strpool_intern(&oi->names, raw);
		*v0 = l->name && demangle_is_v0(raw);
	}
}

/* --- objects ----------------------------------------------------------------- */

static void objinfo_close_dwarf(struct symcache *c, struct objinfo *oi)
{
	if (oi->dw_open) {
		c->dwarf_open -= oi->dw_bytes;
		dwarfworker_close(c->worker, oi->dw_handle);
		oi->dw_open = false;
	}
	/* It may be opened again for an address not resolved yet. */
	oi->dw_tried = false;
}

static void objinfo_unload_symbols(struct symcache *c, struct objinfo *oi)
{
	membudget_give(&c->sym, elfobj_symbols_bytes(oi->obj));
	elfobj_unload_symbols(oi->obj);
	oi->syms_whole = false;
}

static void objinfo_free(struct symcache *c, struct objinfo *oi)
{
	objinfo_close_dwarf(c, oi);
	if (oi->syms_whole)
		objinfo_unload_symbols(c, oi);
	strpool_free(&oi->names);
	hmap_free(&oi->addrs);
	free(oi->lines);
	free(oi->v0);
	free(oi);
}

static struct symcache *cache_of(struct symbolizer *s)
{
	if (!s->cache) {
		s->cache = calloc(1, sizeof(*s->cache));
		if (s->cache) {
			hmap_init(&s->cache->objs, sizeof(uint64_t), sizeof(struct obj_slot));
			s->cache->sym.max = s->symbol_max_bytes ? s->symbol_max_bytes
								: SYMBOLIZE_SYMBOL_MEMORY;
		}
	}
	return s->cache;
}

static struct objinfo *objinfo_get(struct symcache *c, struct elfobj *o)
{
	uint64_t key = (uint64_t)(uintptr_t)o;
	struct obj_slot *slot;
	bool created;

	slot = hmap_insert(&c->objs, &key, &created);
	if (!slot)
		return NULL;
	if (!slot->oi) {
		struct objinfo *oi = calloc(1, sizeof(*oi));

		if (!oi)
			return NULL;
		oi->obj = o;
		oi->uses = -1;
		hmap_init(&oi->addrs, sizeof(uint64_t), sizeof(struct addr_entry));
		strpool_init(&oi->names, &c->sym);
		slot->oi = oi;
	}
	return slot->oi;
}

/* --- resolving -------------------------------------------------------------- */

/*
 * Where a process's copy of an object lives (its mapping's @path in its
 * @root), for debug files found by link.
 */
static struct elfobj_debug_opts where(const struct symbolizer *s, const struct rootfs_root *root,
				      const char *path)
{
	return (struct elfobj_debug_opts){
		.debug_root = s->debug_root,
		.path = path,
		.root_fd = rootfs_root_fd(root), /* held since the process was first seen */
	};
}

static const char *obj_name(const struct objinfo *oi, const struct elfobj_debug_opts *opts)
{
	return opts->path ? opts->path : elfobj_build_id(oi->obj);
}

static void tell(const struct symbolizer *s, const char *what, const char *why)
{
	char msg[PATH_MAX + 2 * ERRBUF_LEN];

	if (!s->report)
		return;
	snprintf(msg, sizeof(msg), "%s: %s", what, why);
	s->report(s->report_ctx, msg);
}

static int push_line(struct objinfo *oi, const struct sym_line *l)
{
	if (grow((void **)&oi->lines, &oi->lines_cap, oi->nlines, sizeof(*oi->lines), 64,
		 UINT32_MAX))
		return -ENOMEM;
	oi->lines[oi->nlines++] = *l;
	return 0;
}

static void push_v0(struct objinfo *oi, size_t line)
{
	if (grow((void **)&oi->v0, &oi->v0_cap, oi->nv0, sizeof(*oi->v0), 16, GROW_NO_MAX))
		return; /* it stays mangled */
	oi->v0[oi->nv0++] = (uint32_t)line;
}

static struct dwarfworker *worker_of(const struct symbolizer *s, struct symcache *c)
{
	struct dwarfworker_opts o = {
		.max_bytes = s->dwarf_max_bytes,
		.timeout_ms = s->dwarf_timeout_ms,
		.in_process = s->lines_in_process,
		.exec_self = s->reader_exec_self,
		.sched = s->reader_sched,
		.child_hook = s->dwarf_child_hook,
	};

	struct dwarfworker **wp = s->reader ? s->reader : &c->worker;

	if (!*wp && !c->worker_failed && dwarfworker_new(wp, &o))
		c->worker_failed = true;
	c->worker = *wp;
	return c->worker;
}

/* An object that lost its lines (or demangling) to the reader failing. */
static void reader_failed(const struct symbolizer *s, struct symcache *c, struct objinfo *oi,
			  const struct elfobj_debug_opts *opts, const char *why)
{
	if (oi->dw_failed)
		return;
	oi->dw_failed = true;
	c->st.dwarf_failed++;
	tell(s, obj_name(oi, opts), why);
}

/* Opens @oi's DWARF in the worker, once; false when it has none to use. */
static bool open_dwarf(const struct symbolizer *s, struct symcache *c, struct objinfo *oi,
		       const struct elfobj_debug_opts *opts)
{
	struct dwarf_source src;
	struct errbuf err = { "" };
	struct dwarfworker *w;
	int rc;

	if (oi->dw_open || oi->dw_tried || oi->dw_too_big || oi->dw_failed)
		return oi->dw_open;
	oi->dw_tried = true;
	rc = dwarfinfo_locate(&src, oi->obj, opts, s->dwarf_max_bytes, &err);
	if (rc == -EFBIG) {
		char why[ERRBUF_LEN + 64];

		oi->dw_too_big = true;
		if (c->st.dwarf_too_big < SYMBOLIZE_NAMED_MAX)
			snprintf(c->st.too_big[c->st.dwarf_too_big], SYMBOLIZE_NAME_LEN, "%s",
				 obj_name(oi, opts));
		c->st.dwarf_too_big++;
		snprintf(why, sizeof(why), "names without source lines: %s", err.msg);
		tell(s, obj_name(oi, opts), why);
	}
	if (rc)
		return false;
	w = worker_of(s, c);
	rc = w ? dwarfworker_open(w, &src, &oi->dw_handle, &err) : -ENOMEM;
	if (!rc) {
		oi->dw_open = true;
		oi->dw_bytes = src.bytes;
		c->dwarf_open += src.bytes;
	} else if (rc == -ECHILD || rc == -ECANCELED || rc == -ENOMEM) {
		char why[ERRBUF_LEN + 64];

		snprintf(why, sizeof(why), "names without source lines: %s",
			 rc == -ENOMEM ? "out of memory" : err.msg);
		reader_failed(s, c, oi, opts, why);
	}
	dwarfinfo_source_close(&src);
	return !rc;
}

/*
 * Fills @e for its address: the DWARF inline chain where there is DWARF,
 * the function the code physically belongs to named after its ELF symbol
 * (what the binary calls it, e.g. "foo.constprop.0", as perf shows it;
 * DWARF names the inlined calls), else just the ELF symbol.
 */
static void fill(struct symcache *c, struct objinfo *oi, struct addr_entry *e,
		 const struct dwarf_frame *frames, size_t nf)
{
	const struct elfobj_sym *es = elfobj_lookup(oi->obj, e->vaddr);
	struct sym_line l;
	bool v0;

	e->flags = ADDR_DONE | (nf ? ADDR_DWARF : 0);
	e->first = (uint32_t)oi->nlines;
	e->n = 0;
	for (size_t i = 0; i < nf; i++) {
		const char *raw = frames[i].name;

		l = (struct sym_line){
			.file = strpool_intern_path(&oi->names, frames[i].dir, frames[i].file),
			.line = frames[i].line,
			.start_line = frames[i].start_line,
		};
		/* A sized ELF symbol surely holds the address; a sizeless one is a guess. */
		if (i == nf - 1 && es && (es->size || !raw))
			raw = es->name;
		set_names(oi, raw, &l, &v0);
		if (push_line(oi, &l))
			return;
		if (v0)
			push_v0(oi, oi->nlines - 1);
		e->n++;
	}
	if (!nf && es) {
		l = (struct sym_line){ 0 };
		set_names(oi, es->name, &l, &v0);
		if (!push_line(oi, &l)) {
			e->n = 1;
			if (v0)
				push_v0(oi, oi->nlines - 1);
		}
	}
}

struct batch {
	struct symcache *c;
	struct objinfo *oi;
	struct addr_entry **todo;
};

static void got_frames(void *ctx, size_t i, const struct dwarf_frame *frames, size_t nf)
{
	struct batch *b = ctx;

	fill(b->c, b->oi, b->todo[i], frames, nf);
}

static void got_name(void *ctx, size_t i, const char *demangled)
{
	struct batch *b = ctx;
	struct sym_line *l = &b->oi->lines[b->oi->v0[i]];
	const char *name = demangled ? strpool_intern(&b->oi->names, demangled) : NULL;

	if (name) {
		l->system_name = l->name;
		l->name = name;
	}
}

/* The object's Rust v0 names, demangled by the worker (demangle.h says why). */
static void demangle_v0s(const struct symbolizer *s, struct symcache *c, struct objinfo *oi,
			 const struct elfobj_debug_opts *opts)
{
	struct batch b = { .c = c, .oi = oi };
	struct errbuf err = { "" };
	struct dwarfworker *w;
	const char **names;
	long r;

	if (!oi->nv0 || !(w = worker_of(s, c)) || !(names = malloc(oi->nv0 * sizeof(*names))))
		goto out;
	for (size_t i = 0; i < oi->nv0; i++)
		names[i] = oi->lines[oi->v0[i]].name;
	r = dwarfworker_demangle(w, names, oi->nv0, got_name, &b, &err);
	if (r < (long)oi->nv0) {
		char why[ERRBUF_LEN + 64];

		snprintf(why, sizeof(why), "Rust names left mangled: %s", err.msg);
		reader_failed(s, c, oi, opts, why);
	}
	free(names);
out:
	oi->nv0 = 0;
}

/*
 * Resolves @n addresses of @oi (@todo, sorted by address), its symbols
 * loaded: lines from the worker in batches, names from the symbols.  The
 * addresses the reader did not answer (it failed) get names only.
 */
static void resolve(const struct symbolizer *s, struct symcache *c, struct objinfo *oi,
		    const struct elfobj_debug_opts *opts, struct addr_entry **todo, size_t n)
{
	struct batch b = { .c = c, .oi = oi, .todo = todo };
	struct errbuf err = { "" };
	uint64_t *vaddrs = NULL;
	long done = 0;

	if (open_dwarf(s, c, oi, opts) && (vaddrs = malloc(n * sizeof(*vaddrs)))) {
		for (size_t i = 0; i < n; i++)
			vaddrs[i] = todo[i]->vaddr;
		done = dwarfworker_lookup(c->worker, oi->dw_handle, vaddrs, n, SYM_MAX_LINES,
					  got_frames, &b, &err);
		if (done == -ESTALE) {
			/* Its child was replaced since: open it again in the new one. */
			oi->dw_open = oi->dw_tried = false;
			c->dwarf_open -= oi->dw_bytes;
			done = open_dwarf(s, c, oi, opts)
				       ? dwarfworker_lookup(c->worker, oi->dw_handle, vaddrs, n,
							    SYM_MAX_LINES, got_frames, &b, &err)
				       : 0;
		}
		if (done >= 0 && (size_t)done < n) {
			char why[ERRBUF_LEN + 64];

			snprintf(why, sizeof(why), "names without source lines: %s", err.msg);
			reader_failed(s, c, oi, opts, why);
			objinfo_close_dwarf(c, oi);
		}
		if (done < 0)
			done = 0;
	}
	free(vaddrs);
	for (size_t i = (size_t)done; i < n; i++)
		fill(c, oi, todo[i], NULL, 0);
	demangle_v0s(s, c, oi, opts);
}

/*
 * Loads @oi's symbols for @n sorted addresses (NULL: the whole table),
 * within what is left of the symbol memory bound.
 */
static bool load_symbols(const struct symbolizer *s, struct symcache *c, struct objinfo *oi,
			 const struct elfobj_debug_opts *opts, const uint64_t *vaddrs, size_t n)
{
	uint64_t left;
	int rc;

	if (oi->syms_whole)
		objinfo_unload_symbols(c, oi);
	left = c->sym.max - c->sym.used;
	rc = elfobj_load_symbols_for(oi->obj, opts, vaddrs, n, left, NULL);
	if (!rc && !membudget_take(&c->sym, elfobj_symbols_bytes(oi->obj))) {
		elfobj_unload_symbols(oi->obj);
		rc = -EFBIG;
	}
	if (!rc) {
		oi->syms_whole = !vaddrs;
	} else if (rc == -EFBIG && vaddrs && !oi->syms_over) {
		oi->syms_over = true;
		c->st.symbols_over++;
		tell(s, obj_name(oi, opts), "frames without names: symbols over the symbol memory bound");
	}
	return !rc;
}

/* The object and its address for a user address of @p; NULL when none. */
static struct elfobj *locate(const struct sym_process *p, uint64_t addr, const struct vma **vp,
			     uint64_t *vaddr)
{
	const struct vma *v = procmaps_find(p->maps, addr);
	struct elfobj *o;

	*vp = v;
	if (!v || !p->objs)
		return NULL;
	o = p->objs[v - p->maps->v];
	if (!o || elfobj_file_to_vaddr(o, addr - v->start + v->offset, vaddr))
		return NULL;
	return o;
}

/*
 * An address prepare did not resolve: the object's whole table is kept
 * while it fits the bound (it may be asked again), else read for this
 * address alone.
 */
static void resolve_one(const struct symbolizer *s, struct symcache *c, struct objinfo *oi,
			const struct elfobj_debug_opts *opts, struct addr_entry *e)
{
	bool partial = false;

	if (!oi->syms_whole && !load_symbols(s, c, oi, opts, NULL, 0))
		partial = load_symbols(s, c, oi, opts, &e->vaddr, 1);
	resolve(s, c, oi, opts, &e, 1);
	if (partial)
		objinfo_unload_symbols(c, oi);
}

void symbolize_user(struct symbolizer *s, const struct sym_process *p, uint64_t addr,
		    struct sym *out)
{
	struct symcache *c;
	struct objinfo *oi;
	struct addr_entry *e;
	const struct vma *v;
	struct elfobj *o;
	uint64_t vaddr;
	bool created;

	memset(out, 0, sizeof(*out));
	o = locate(p, addr, &v, &vaddr);
	out->vma = v ? (int)(v - p->maps->v) : -1;
	/* the kernel's uprobe page: a probed instruction's copy, stepped there */
	if (!o && v && v->kind == VMA_SPECIAL && v->path && !strcmp(v->path, CPROF_EXIT_UPROBES)) {
		out->nlines = 1;
		out->lines[0].name = CPROF_EXIT_UPROBES;
		return;
	}
	if (!o || s->addresses_only || !(c = cache_of(s)) || !(oi = objinfo_get(c, o)))
		return;
	oi->last_used = c->tick;
	e = hmap_insert(&oi->addrs, &vaddr, &created);
	if (!e)
		return;
	if (!(e->flags & ADDR_DONE)) {
		struct elfobj_debug_opts opts = where(s, p->root, v->path);

		resolve_one(s, c, oi, &opts, e);
	}
	out->dwarf = e->flags & ADDR_DWARF;
	out->nlines = e->n;
	if (e->n)
		memcpy(out->lines, oi->lines + e->first, e->n * sizeof(out->lines[0]));
}

void symbolize_kernel(const struct symbolizer *s, uint64_t addr, struct sym *out)
{
	const struct ksym *k = s->ksyms ? kallsyms_find(s->ksyms, addr) : NULL;

	memset(out, 0, sizeof(*out));
	out->vma = -1;
	if (k && k->name) {
		out->nlines = 1;
		out->lines[0].name = k->name;
		out->module = k->module;
	}
}

bool symbolize_maybe_jit(const struct sym_process *p, int vma)
{
	return vma < 0 || (size_t)vma >= p->maps->n || !p->objs || !p->objs[vma];
}

int symbolize_jit(const struct symbolizer *s, int perfmap_fd, const uint64_t *addrs,
		  size_t n, struct perfmap_table *out, struct errbuf *err)
{
	memset(out, 0, sizeof(*out));
	return perfmap_fd < 0 ? perfmap_fd : perfmap_resolve(perfmap_fd, addrs, n, out, err);
}

/* --- a window's worth ------------------------------------------------------ */

/*
 * The next of @p's objects that has a cache entry, from mapping *@i on,
 * each once per c->stamp (a process maps one object several times); its
 * slot in *@slotp.  NULL at the end.
 */
static struct objinfo *next_objinfo(struct symcache *c, const struct sym_process *p, size_t *i,
				    struct obj_slot **slotp)
{
	while (p->objs && *i < p->maps->n) {
		uint64_t key = (uint64_t)(uintptr_t)p->objs[*i];
		struct obj_slot *slot = p->objs[*i] ? hmap_find(&c->objs, &key) : NULL;
		struct objinfo *oi = slot ? slot->oi : NULL;

		(*i)++;
		if (!oi || oi->mark == c->stamp)
			continue;
		oi->mark = c->stamp;
		*slotp = slot;
		return oi;
	}
	return NULL;
}

int symbolizer_add(struct symbolizer *s, const struct sym_process *p, uint64_t addr)
{
	struct symcache *c;
	const struct vma *v;
	struct objinfo *oi;
	struct elfobj *o;
	uint64_t vaddr;
	bool created;

	if (s->addresses_only)
		return 0;
	if (!(c = cache_of(s)))
		return -ENOMEM;
	if (!(o = locate(p, addr, &v, &vaddr)))
		return 0;
	oi = objinfo_get(c, o);
	if (!oi || !hmap_insert(&oi->addrs, &vaddr, &created))
		return -ENOMEM;
	if (!oi->has_user) { /* for its debug links */
		oi->has_user = true;
		oi->user_root = p->root;
		oi->user_path = v->path;
	}
	return 0;
}

/*
 * Counts @p as a user of each of its objects with sampled addresses (once
 * per object): the others need no cache, however many a process maps.
 */
void symbolizer_expect(struct symbolizer *s, const struct sym_process *p)
{
	struct symcache *c = s->cache;
	struct obj_slot *slot;
	struct objinfo *oi;
	size_t i = 0;

	if (s->addresses_only || !c)
		return;
	c->stamp++;
	while ((oi = next_objinfo(c, p, &i, &slot)))
		oi->uses = (oi->uses < 0 ? 0 : oi->uses) + 1;
}

static int cmp_entry(const void *pa, const void *pb)
{
	const struct addr_entry *a = *(struct addr_entry *const *)pa;
	const struct addr_entry *b = *(struct addr_entry *const *)pb;

	return a->vaddr < b->vaddr ? -1 : a->vaddr > b->vaddr;
}

/*
 * Every address of @oi not resolved yet, at once: its symbol table read
 * for those addresses only, its lines in batches, then both let go.
 */
static int prepare_object(const struct symbolizer *s, struct symcache *c, struct objinfo *oi,
			  const struct elfobj_debug_opts *opts)
{
	struct addr_entry **todo, *e;
	uint64_t *vaddrs;
	size_t n = 0, it = 0;

	todo = malloc((oi->addrs.n ? oi->addrs.n : 1) * sizeof(*todo));
	vaddrs = malloc((oi->addrs.n ? oi->addrs.n : 1) * sizeof(*vaddrs));
	if (!todo || !vaddrs) {
		free(todo);
		free(vaddrs);
		return -ENOMEM;
	}
	/* Entries stay put: nothing is inserted into oi->addrs until we are done. */
	while ((e = hmap_next(&oi->addrs, &it)))
		if (!(e->flags & ADDR_DONE))
			todo[n++] = e;
	qsort(todo, n, sizeof(*todo), cmp_entry);
	for (size_t i = 0; i < n; i++)
		vaddrs[i] = todo[i]->vaddr;
	if (n) {
		bool loaded = load_symbols(s, c, oi, opts, vaddrs, n);

		resolve(s, c, oi, opts, todo, n);
		if (loaded)
			objinfo_unload_symbols(c, oi);
	}
	free(todo);
	free(vaddrs);
	return 0;
}

int symbolizer_prepare(struct symbolizer *s, struct errbuf *err)
{
	struct symcache *c;
	struct obj_slot *slot;
	size_t it = 0;
	int ret = 0;

	if (s->addresses_only)
		return 0;
	c = cache_of(s);
	if (!c)
		return errf(err, -ENOMEM, "symbolizer: out of memory");
	c->prepared = true;
	/* One object at a time: its symbols and DWARF are held only while it is resolved. */
	while ((slot = hmap_next(&c->objs, &it))) {
		struct objinfo *oi = slot->oi;
		struct elfobj_debug_opts opts;

		if (!oi || !oi->has_user)
			continue;
		opts = where(s, oi->user_root, oi->user_path);
		if (prepare_object(s, c, oi, &opts))
			ret = -ENOMEM;
		objinfo_close_dwarf(c, oi);
	}
	/* libdw's heap was the child's; ours held only names, but return what went. */
	malloc_trim(0);
	return ret ? errf(err, ret, "symbolizer: out of memory") : 0;
}

static bool slot_dead(const void *entry)
{
	return ((const struct obj_slot *)entry)->oi == NULL;
}

/* Closes the least recently used DWARF until what is open fits the budget. */
static void enforce_budget(struct symcache *c)
{
	while (c->dwarf_open > SYMBOLIZE_DWARF_BUDGET) {
		struct objinfo *lru = NULL;
		struct obj_slot *slot;
		size_t it = 0;

		while ((slot = hmap_next(&c->objs, &it)))
			if (slot->oi && slot->oi->dw_open &&
			    (!lru || slot->oi->last_used < lru->last_used))
				lru = slot->oi;
		if (!lru)
			break;
		objinfo_close_dwarf(c, lru);
	}
}

void symbolizer_done(struct symbolizer *s, const struct sym_process *p)
{
	struct symcache *c = s->cache;
	struct obj_slot *slot;
	struct objinfo *oi;
	bool released = false;
	size_t i = 0;

	if (!c)
		return;
	/*
	 * Unprepared, nothing says which objects later processes use, nor
	 * whether symbolizer_free() will be called: keep nothing.
	 */
	if (!c->prepared) {
		symbolizer_free(s);
		return;
	}
	c->tick++;
	c->stamp++;
	while ((oi = next_objinfo(c, p, &i, &slot))) {
		if (oi->uses > 0 && --oi->uses == 0) {
			objinfo_free(c, oi);
			slot->oi = NULL;
			released = true;
		}
	}
	if (released)
		hmap_compact(&c->objs, slot_dead);
	enforce_budget(c);
}

void symbolizer_stats(const struct symbolizer *s, struct symbolizer_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!s->cache)
		return;
	*st = s->cache->st;
	st->names_dropped = s->cache->sym.refused;
	st->symbol_peak = s->cache->sym.peak;
}

void symbolizer_free(struct symbolizer *s)
{
	struct symcache *c = s->cache;
	struct obj_slot *slot;
	size_t it = 0;

	if (!c)
		return;
	while ((slot = hmap_next(&c->objs, &it)))
		if (slot->oi)
			objinfo_free(c, slot->oi);
	hmap_free(&c->objs);
	/* The child goes, and with it whatever libdw leaked in it; the caller's stays. */
	if (!s->reader)
		dwarfworker_free(c->worker);
	free(c);
	s->cache = NULL;
}
