// SPDX-License-Identifier: MIT
/*
 * symbolize: see symbolize.h.
 *
 * The cache.  One struct objinfo per ELF object (keyed by the elfobj
 * pointer: objects are shared by processes and live at least as long as the
 * processes of the window being written), holding what was found for each
 * of its sampled addresses as a run of sym_lines, with their strings copied
 * and interned in an arena of its own.  Copying is what lets an object's
 * DWARF be closed as soon as its addresses are resolved; interning keeps
 * the copies to one per distinct file or function name.
 */
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "demangle.h"
#include "dwarfinfo.h"
#include "symbolize.h"

/* Longest demangled name kept; longer ones are cut (pprof shows them so too). */
#define DEMANGLED_MAX 4096
#define ARENA_BLOCK 16384

enum { ADDR_DONE = 1, ADDR_DWARF = 2 };

struct addr_entry {
	uint64_t vaddr; /* key */
	uint32_t first; /* index in objinfo.lines */
	uint8_t n, flags;
	uint16_t pad;
};

struct str_key {
	uint64_t hash, len;
};

struct str_entry {
	struct str_key key;
	const char *s;
};

struct ablock {
	struct ablock *next;
	size_t used, cap;
	char data[];
};

struct objinfo {
	struct elfobj *obj;
	struct dwarfinfo *dw;
	bool dw_tried;
	bool dw_too_big;   /* its DWARF is over the budget: names only */
	int64_t uses;      /* processes still to be written; -1: unknown */
	uint64_t mark;     /* the last process that counted or released it */
	uint64_t last_used;
	struct hmap addrs; /* vaddr -> addr_entry */
	struct sym_line *lines;
	size_t nlines, lines_cap;
	struct hmap strs;  /* str_key -> str_entry */
	struct ablock *arena;
	/* symbolizer_prepare(): the first process seen to use it, and where */
	const struct process *user;
	const struct vma *user_vma;
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
	size_t dwarf_too_big; /* objects named without lines: DWARF over budget */
	bool prepared;    /* symbolizer_prepare() counted the users of objects */
};

/* --- strings --------------------------------------------------------------- */

static uint64_t hash_str(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ULL;
	}
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	return h ^ (h >> 33);
}

static char *arena_copy(struct ablock **head, const char *s, size_t n)
{
	struct ablock *b = *head;

	if (!b || b->cap - b->used < n + 1) {
		size_t cap = n + 1 > ARENA_BLOCK ? n + 1 : ARENA_BLOCK;

		b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->next = *head;
		b->used = 0;
		b->cap = cap;
		*head = b;
	}
	memcpy(b->data + b->used, s, n);
	b->data[b->used + n] = '\0';
	b->used += n + 1;
	return b->data + b->used - n - 1;
}

/* The object's copy of @s (NULL stays NULL; out of memory gives NULL too). */
static const char *intern(struct objinfo *oi, const char *s)
{
	struct str_key k;
	struct str_entry *e;
	bool created;
	size_t n;

	if (!s)
		return NULL;
	n = strlen(s);
	k = (struct str_key){ hash_str(s, n), n };
	e = hmap_insert(&oi->strs, &k, &created);
	if (e && !created && e->s && !memcmp(e->s, s, n))
		return e->s;
	if (e && !created)
		return arena_copy(&oi->arena, s, n); /* a 64-bit collision: keep both */
	if (!e)
		return arena_copy(&oi->arena, s, n);
	e->s = arena_copy(&oi->arena, s, n);
	return e->s;
}

/* @file, made absolute with @dir when it is relative and @dir is known. */
static const char *intern_path(struct objinfo *oi, const char *dir, const char *file)
{
	char buf[PATH_MAX];

	if (!file || !dir || !*dir || file[0] == '/' ||
	    (size_t)snprintf(buf, sizeof(buf), "%s/%s", dir, file) >= sizeof(buf))
		return intern(oi, file);
	return intern(oi, buf);
}

/* Name and system name of a raw symbol: demangled when it is mangled. */
static void set_names(struct objinfo *oi, const char *raw, struct sym_line *l)
{
	char buf[DEMANGLED_MAX];

	if (!raw)
		return;
	if (demangle(raw, buf, sizeof(buf))) {
		l->name = intern(oi, buf);
		l->system_name = intern(oi, raw);
	} else {
		l->name = intern(oi, raw);
	}
}

/* --- objects ----------------------------------------------------------------- */

static void objinfo_close_dwarf(struct symcache *c, struct objinfo *oi)
{
	if (oi->dw) {
		c->dwarf_open -= dwarfinfo_bytes(oi->dw);
		dwarfinfo_free(oi->dw);
		oi->dw = NULL;
		/*
		 * libdw's sections were megabytes of heap; glibc keeps freed
		 * heap (and raises its mmap threshold after big frees), so
		 * hand it back or the agent's RSS stays at its peak.
		 */
		malloc_trim(0);
	}
	/* It may be opened again for an address not resolved yet. */
	oi->dw_tried = false;
}

static void objinfo_free(struct symcache *c, struct objinfo *oi)
{
	struct ablock *b = oi->arena;

	objinfo_close_dwarf(c, oi);
	while (b) {
		struct ablock *next = b->next;

		free(b);
		b = next;
	}
	hmap_free(&oi->addrs);
	hmap_free(&oi->strs);
	free(oi->lines);
	free(oi);
}

static struct symcache *cache_of(struct symbolizer *s)
{
	if (!s->cache) {
		s->cache = calloc(1, sizeof(*s->cache));
		if (s->cache)
			hmap_init(&s->cache->objs, sizeof(uint64_t), sizeof(struct obj_slot));
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
		hmap_init(&oi->strs, sizeof(struct str_key), sizeof(struct str_entry));
		slot->oi = oi;
	}
	return slot->oi;
}

/* --- resolving -------------------------------------------------------------- */

/* Where a process's copy of an object lives, for debug files found by link. */
struct where {
	struct elfobj_debug_opts opts;
};

static void where_init(struct where *w, const struct symbolizer *s, const struct process *p,
		       const struct vma *v)
{
	w->opts = (struct elfobj_debug_opts){
		.debug_root = s->debug_root,
		.path = v->path,
		.root_fd = rootfs_root_fd(p->root), /* held since the process was first seen */
	};
}

static int push_line(struct objinfo *oi, const struct sym_line *l)
{
	if (oi->nlines == oi->lines_cap) {
		size_t cap = oi->lines_cap ? 2 * oi->lines_cap : 64;
		struct sym_line *v;

		if (cap > UINT32_MAX)
			return -ENOMEM;
		v = realloc(oi->lines, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		oi->lines = v;
		oi->lines_cap = cap;
	}
	oi->lines[oi->nlines++] = *l;
	return 0;
}

/*
 * Fills @e for its address: the DWARF inline chain where there is DWARF,
 * the function the code physically belongs to named after its ELF symbol
 * (what the binary calls it, e.g. "foo.constprop.0", as perf shows it;
 * DWARF names the inlined calls), else just the ELF symbol.
 */
static void resolve(const struct symbolizer *s, struct symcache *c, struct objinfo *oi,
		    const struct elfobj_debug_opts *opts, struct addr_entry *e)
{
	struct dwarf_frame frames[SYM_MAX_LINES];
	const struct elfobj_sym *es = NULL;
	size_t nf = 0;

	e->flags = ADDR_DONE;
	e->first = (uint32_t)oi->nlines;
	e->n = 0;
	if (!elfobj_load_symbols(oi->obj, opts, NULL))
		es = elfobj_lookup(oi->obj, e->vaddr);
	if (!oi->dw_tried && !oi->dw_too_big) {
		struct errbuf err = { "" };
		int rc = dwarfinfo_open(&oi->dw, oi->obj, opts, s->dwarf_max_bytes, &err);

		oi->dw_tried = true;
		if (!rc) {
			c->dwarf_open += dwarfinfo_bytes(oi->dw);
		} else if (rc == -EFBIG) {
			oi->dw_too_big = true;
			c->dwarf_too_big++;
			if (s->report) {
				char msg[PATH_MAX + 128];

				snprintf(msg, sizeof(msg), "%s: names without source lines: %s",
					 opts->path ? opts->path : elfobj_build_id(oi->obj), err.msg);
				s->report(s->report_ctx, msg);
			}
		}
	}
	if (oi->dw)
		nf = dwarfinfo_lookup(oi->dw, e->vaddr, frames, SYM_MAX_LINES);
	for (size_t i = 0; i < nf; i++) {
		struct sym_line l = {
			.file = intern_path(oi, frames[i].dir, frames[i].file),
			.line = frames[i].line,
			.start_line = frames[i].start_line,
		};
		const char *raw = frames[i].name;

		/* A sized ELF symbol surely holds the address; a sizeless one is a guess. */
		if (i == nf - 1 && es && (es->size || !raw))
			raw = es->name;
		set_names(oi, raw, &l);
		if (push_line(oi, &l))
			return;
		e->n++;
	}
	if (nf) {
		e->flags |= ADDR_DWARF;
	} else if (es) {
		struct sym_line l = { 0 };

		set_names(oi, es->name, &l);
		if (!push_line(oi, &l))
			e->n = 1;
	}
}

/* The object and its address for a user address of @p; NULL when none. */
static struct elfobj *locate(const struct process *p, uint64_t addr, const struct vma **vp,
			     uint64_t *vaddr)
{
	const struct vma *v = procmaps_find(&p->maps, addr);
	struct elfobj *o;

	*vp = v;
	if (!v || !p->objs)
		return NULL;
	o = p->objs[v - p->maps.v];
	if (!o || elfobj_file_to_vaddr(o, addr - v->start + v->offset, vaddr))
		return NULL;
	return o;
}

void symbolize_user(struct symbolizer *s, struct process *p, uint64_t addr, struct sym *out)
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
	out->vma = v ? (int)(v - p->maps.v) : -1;
	if (!o || s->addresses_only || !(c = cache_of(s)) || !(oi = objinfo_get(c, o)))
		return;
	oi->last_used = c->tick;
	e = hmap_insert(&oi->addrs, &vaddr, &created);
	if (!e)
		return;
	if (!(e->flags & ADDR_DONE)) {
		struct where w;

		where_init(&w, s, p, v);
		resolve(s, c, oi, &w.opts, e);
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

bool symbolize_maybe_jit(const struct process *p, int vma)
{
	return vma < 0 || (size_t)vma >= p->maps.n || !p->objs || !p->objs[vma];
}

int symbolize_jit(const struct symbolizer *s, struct process *p, const uint64_t *addrs,
		  size_t n, struct perfmap_table *out, struct errbuf *err)
{
	int fd = proctab_perfmap(p, err); /* borrowed */

	memset(out, 0, sizeof(*out));
	return fd < 0 ? fd : perfmap_resolve(fd, addrs, n, out, err);
}

/* --- a window's worth ------------------------------------------------------ */

/*
 * Counts @p as a user of each of its objects with sampled addresses (once
 * per object): the others need no cache, however many a process maps.
 */
static void count_uses(struct symcache *c, const struct process *p)
{
	c->stamp++;
	for (size_t i = 0; p->objs && i < p->maps.n; i++) {
		uint64_t key = (uint64_t)(uintptr_t)p->objs[i];
		struct obj_slot *slot = p->objs[i] ? hmap_find(&c->objs, &key) : NULL;
		struct objinfo *oi = slot ? slot->oi : NULL;

		if (!oi || oi->mark == c->stamp)
			continue;
		oi->mark = c->stamp;
		oi->uses = (oi->uses < 0 ? 0 : oi->uses) + 1;
	}
}

/* Registers every user address of @p's samples with its object, unresolved. */
static int collect(struct symcache *c, const struct process *p, const struct stackstore *stacks)
{
	struct agg_entry *ae;
	size_t it = 0;

	while ((ae = hmap_next(&p->samples.map, &it))) {
		const uint64_t *ip;
		uint32_t nr = 0;

		if (!(ae->key.ustack & CPROF_STACK_HASHED) ||
		    !(ip = stackstore_get(stacks, ae->key.ustack, &nr, NULL)))
			continue;
		for (uint32_t j = 0; j < nr; j++) {
			/* The same step back into the call as profile.c takes. */
			uint64_t addr = j > 0 && ip[j] ? ip[j] - 1 : ip[j], vaddr;
			const struct vma *v;
			struct elfobj *o = locate(p, addr, &v, &vaddr);
			struct objinfo *oi;
			bool created;

			if (!o)
				continue;
			oi = objinfo_get(c, o);
			if (!oi || !hmap_insert(&oi->addrs, &vaddr, &created))
				return -ENOMEM;
			if (!oi->user) { /* for its debug links */
				oi->user = p;
				oi->user_vma = v;
			}
		}
	}
	return 0;
}

static bool has_samples(const struct process *p)
{
	return p->samples.samples || agg_lost_total(&p->samples);
}

int symbolizer_prepare(struct symbolizer *s, struct process *const *procs, size_t n,
		       const struct stackstore *stacks, struct errbuf *err)
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
	for (size_t i = 0; i < n && !ret; i++)
		if (has_samples(procs[i]))
			ret = collect(c, procs[i], stacks);
	if (ret)
		return errf(err, ret, "symbolizer: out of memory");
	for (size_t i = 0; i < n; i++)
		if (has_samples(procs[i]))
			count_uses(c, procs[i]);
	c->prepared = true;
	/* One object at a time: its DWARF is open only while it is resolved. */
	while ((slot = hmap_next(&c->objs, &it))) {
		struct objinfo *oi = slot->oi;
		struct addr_entry *e;
		struct where w;
		size_t ai = 0;

		if (!oi || !oi->user)
			continue;
		where_init(&w, s, oi->user, oi->user_vma);
		while ((e = hmap_next(&oi->addrs, &ai)))
			if (!(e->flags & ADDR_DONE))
				resolve(s, c, oi, &w.opts, e);
		objinfo_close_dwarf(c, oi);
	}
	return 0;
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
			if (slot->oi && slot->oi->dw &&
			    (!lru || slot->oi->last_used < lru->last_used))
				lru = slot->oi;
		if (!lru)
			break;
		objinfo_close_dwarf(c, lru);
	}
}

void symbolizer_done(struct symbolizer *s, const struct process *p)
{
	struct symcache *c = s->cache;
	bool released = false;

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
	for (size_t i = 0; p->objs && i < p->maps.n; i++) {
		uint64_t key = (uint64_t)(uintptr_t)p->objs[i];
		struct obj_slot *slot = p->objs[i] ? hmap_find(&c->objs, &key) : NULL;
		struct objinfo *oi = slot ? slot->oi : NULL;

		if (!oi || oi->mark == c->stamp)
			continue;
		oi->mark = c->stamp;
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

size_t symbolizer_dwarf_too_big(const struct symbolizer *s)
{
	return s->cache ? s->cache->dwarf_too_big : 0;
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
	free(c);
	s->cache = NULL;
}
