// SPDX-License-Identifier: MIT
/*
 * elfsyms: function symbols of one ELF object, and its dynamic symbols by
 * name.  See elfsyms.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/addrsearch.h"
#include "elf/elfsyms.h"
#include "elf/symsel.h"

/* Bounds on what an object may make us keep or read; see the comments where used. */
#define MAX_SYMS   (4u << 20)
#define NAME_BYTES 4096u   /* longest symbol name kept, NUL included */
#define CHUNK      65536u  /* pread granularity for streamed data */

/* Name blocks: the first, and what they double up to as the table grows. */
#define NAMES_FIRST (16u << 10)
#define NAMES_MAX   (1u << 20)

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* --- tables ---------------------------------------------------------------- */

/* Where a symbol table and its string table are (count 0: absent). */
struct symtab_loc {
	uint64_t off, count, str_off, str_size;
};

struct sections {
	struct symtab_loc symtab, dynsym;
};

static void symtab_loc(Elf *e, const struct elfsrc *s, const GElf_Shdr *sh,
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
	t->str_size = elfsrc_avail(s, str.sh_offset, str.sh_size);
	t->off = sh->sh_offset;
	t->count = t->str_size ? elfsrc_avail(s, sh->sh_offset, sh->sh_size) / sizeof(Elf64_Sym)
			       : 0;
}

static void find_sections(Elf *e, const struct elfsrc *s, struct sections *out)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	memset(out, 0, sizeof(*out));
	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			symtab_loc(e, s, &sh, &out->symtab);
		else if (sh.sh_type == SHT_DYNSYM)
			symtab_loc(e, s, &sh, &out->dynsym);
	}
}

/* The symbol tables of the object @s (@label in messages). */
static int object_sections(const struct elfsrc *s, const char *label, struct sections *out,
			   struct errbuf *err)
{
	Elf *e;
	int rc = elfsrc_begin(s, EM_NONE, ELFSRC_LOADABLE, &e, err);

	if (rc)
		return errf_prefix(err, rc, label);
	find_sections(e, s, out);
	elf_end(e);
	return 0;
}

/* A debug file found for the object: its bytes and its .symtab. */
struct debug_file {
	struct elfsrc src;
	struct symtab_loc symtab;
};

/* debugfile_accept_fn: a debug file is worth having for its .symtab. */
static bool has_symtab(const struct elfsrc *s, Elf *e, void *ctx)
{
	struct debug_file *d = ctx;
	struct sections secs;

	find_sections(e, s, &secs);
	if (!secs.symtab.count)
		return false;
	d->src = *s;
	d->symtab = secs.symtab;
	return true;
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
	const struct elfsrc *src;
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

/* A walk over a symbol table's entries, read a chunk at a time. */
struct symwalk {
	const struct table *t;
	uint64_t next, end; /* entry indexes */
	uint8_t *buf;       /* CHUNK bytes */
	size_t held, used;  /* entries in buf, and those walked */
};

static void symwalk_init(struct symwalk *w, const struct table *t, uint64_t count, uint8_t *buf)
{
	*w = (struct symwalk){ .t = t, .end = min_u64(count, t->loc.count), .buf = buf };
}

/* The next entry into @sym (its index is then w->next - 1): 1, 0 past the last, or -errno. */
static int symwalk_next(struct symwalk *w, Elf64_Sym *sym)
{
	if (w->used == w->held) {
		size_t k = (size_t)min_u64(CHUNK / sizeof(Elf64_Sym), w->end - w->next);
		int rc;

		if (!k)
			return 0;
		rc = elfsrc_read(w->t->src, w->t->loc.off + w->next * sizeof(Elf64_Sym), w->buf,
				 k * sizeof(Elf64_Sym));
		if (rc)
			return rc;
		w->held = k;
		w->used = 0;
	}
	memcpy(sym, w->buf + w->used++ * sizeof(*sym), sizeof(*sym));
	w->next++;
	return 1;
}

/*
 * Streams table @t (index @tab) and keeps its defined function symbols:
 * all of them in @r, or only those @sel chooses when there is one.
 */
static int collect(struct recs *r, struct symsel *sel, const struct table *t, uint8_t tab,
		   uint8_t *buf)
{
	struct symwalk w;
	Elf64_Sym sym;
	int rc;

	symwalk_init(&w, t, t->loc.count, buf);
	while ((rc = symwalk_next(&w, &sym)) > 0) {
		unsigned char type = ELF64_ST_TYPE(sym.st_info);
		struct symrec x;

		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF ||
		    sym.st_value == 0 || sym.st_name == 0 || sym.st_name >= t->loc.str_size)
			continue;
		x = (struct symrec){
			.start = sym.st_value,
			.size = sym.st_size,
			.name_off = sym.st_name,
			.rank = symsel_rec_rank(ELF64_ST_BIND(sym.st_info)),
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
	return rc;
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
		int rc = elfsrc_read(t->src, t->loc.str_off + off, t->buf, n);

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
 * in a table read for a few addresses only (symsel.h), and elfsyms_lookup()
 * finds nothing there.
 *
 * Names are bounded in total as well as each: twice the string tables'
 * size plus a margin covers every real object (suffix-merged strings are
 * the only way to exceed 1x), while a hostile table pointing many symbols
 * into the middle of one long string can't inflate the arena.  The table
 * and its names past r->max_bytes: -EFBIG.
 */
static int build_symbols(struct elfsyms *t, struct recs *r, struct table *tabs,
			 size_t ntabs)
{
	uint64_t budget = 1u << 20, prev_off = 0, table = r->n * sizeof(struct elfobj_sym);
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
			    (copy = arena_strndup(&t->names, p, len))) {
				budget -= len + 1;
				name = copy;
			}
			if (table + t->names.bytes > r->max_bytes)
				return -EFBIG;
			prev_tab = x.tab;
			prev_off = x.name_off;
			prev_name = name;
		}
		/* Slot i has been read into x: it becomes symbol i in place. */
		syms[i] = (struct elfobj_sym){ .start = x.start, .size = x.size, .name = name };
	}
	qsort(syms, r->n, sizeof(syms[0]), cmp_sym);
	t->v = r->n ? realloc(syms, r->n * sizeof(syms[0])) : NULL;
	if (r->n && !t->v)
		t->v = syms; /* shrinking failed: keep the larger block */
	else if (!r->n)
		free(syms);
	t->n = r->n;
	t->bytes = table + t->names.bytes;
	r->v = NULL;
	r->n = r->cap = 0;
	return 0;
}

/* Keeps the preferred record at each address (its size if it has none). */
static void dedupe(struct recs *r)
{
	size_t out = 0;

	qsort(r->v, r->n, sizeof(r->v[0]), symsel_rec_cmp);
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

/* --- by name ------------------------------------------------------------ */

/* A defined symbol with a name: where the name is, and the symbol's index. */
struct nameref {
	uint32_t off, idx;
};

static int cmp_nameref(const void *pa, const void *pb)
{
	const struct nameref *a = pa, *b = pb;

	if (a->off != b->off)
		return a->off < b->off ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* The defined symbols with a name among the first ELFSYMS_DYNSYM_MAX of @t. */
static int read_namerefs(const struct table *t, uint8_t *buf, struct nameref *v, size_t *n)
{
	struct symwalk w;
	Elf64_Sym sym;
	int rc;

	*n = 0;
	symwalk_init(&w, t, ELFSYMS_DYNSYM_MAX, buf);
	while ((rc = symwalk_next(&w, &sym)) > 0)
		if (sym.st_shndx != SHN_UNDEF && sym.st_name && sym.st_name < t->loc.str_size)
			v[(*n)++] = (struct nameref){ sym.st_name, (uint32_t)(w.next - 1) };
	return rc;
}

/*
 * Finds in @t the names of @want through @refs (sorted: each name is read
 * once, the string table about once), the lowest index of each in @best.
 * A name needs its NUL within NAME_BYTES, as a reader of the table would.
 */
static int match_names(struct table *t, const struct nameref *refs, size_t nrefs,
		       struct elfsyms_named *want, size_t n, uint32_t *best)
{
	for (size_t i = 0; i < nrefs; i++) {
		const char *p;
		size_t len;
		int rc;

		if (i && refs[i].off == refs[i - 1].off)
			continue;
		rc = table_name(t, refs[i].off, &p, &len);
		if (rc)
			return rc;
		if (refs[i].off + len >= t->loc.str_size || p[len])
			continue;
		for (size_t k = 0; k < n; k++)
			if ((!want[k].found || refs[i].idx < best[k]) && !strcmp(p, want[k].name)) {
				want[k].found = true;
				best[k] = refs[i].idx;
			}
	}
	return 0;
}

/* The value and size of each name found, from its symbol at index @best. */
static int read_found(const struct table *t, struct elfsyms_named *want, size_t n,
		      const uint32_t *best)
{
	for (size_t k = 0; k < n; k++) {
		Elf64_Sym sym;
		int rc;

		if (!want[k].found)
			continue;
		rc = elfsrc_read(t->src, t->loc.off + (uint64_t)best[k] * sizeof(sym), &sym,
				 sizeof(sym));
		if (rc)
			return rc;
		want[k].value = sym.st_value;
		want[k].size = sym.st_size;
	}
	return 0;
}

int elfsyms_find_dynamic(const struct elfsrc *s, const char *label, struct elfsyms_named *want,
			 size_t n, struct errbuf *err)
{
	struct table t = { .src = s };
	struct nameref *refs = NULL;
	struct sections secs;
	uint32_t *best = NULL;
	size_t nrefs = 0;
	int rc;

	for (size_t k = 0; k < n; k++)
		want[k] = (struct elfsyms_named){ .name = want[k].name };
	rc = object_sections(s, label, &secs, err);
	if (rc)
		return rc;
	t.loc = secs.dynsym;
	if (!t.loc.count || !n)
		return 0;
	/* One buffer: the table's chunks, then the window on its names. */
	t.buf = malloc(CHUNK + NAME_BYTES);
	refs = malloc(min_u64(t.loc.count, ELFSYMS_DYNSYM_MAX) * sizeof(*refs));
	best = calloc(n, sizeof(*best));
	rc = t.buf && refs && best ? read_namerefs(&t, (uint8_t *)t.buf, refs, &nrefs) : -ENOMEM;
	if (!rc) {
		qsort(refs, nrefs, sizeof(*refs), cmp_nameref);
		rc = match_names(&t, refs, nrefs, want, n, best);
	}
	if (!rc)
		rc = read_found(&t, want, n, best);
	free(t.buf);
	free(refs);
	free(best);
	if (rc)
		return errf(err, rc, "%s: reading dynamic symbols: %s", label, strerror(-rc));
	return 0;
}

int elfsyms_load(struct elfsyms *t, const struct elfsrc *s, const char *label,
		 const struct debugfile_query *q, const uint64_t *vaddrs, size_t n,
		 uint64_t max_bytes, struct errbuf *err)
{
	struct debug_file dbg = { .src = { .fd = -1 } };
	struct table tabs[2] = { 0 };
	struct recs r = { .max_bytes = max_bytes };
	struct symsel sel = { 0 };
	struct sections secs;
	size_t ntabs = 0;
	uint8_t *buf;
	int rc;

	*t = (struct elfsyms){ 0 };
	/* Names never move in an arena, so symbols point straight into it. */
	arena_init_growing(&t->names, NAMES_FIRST, NAMES_MAX, NULL);
	rc = object_sections(s, label, &secs, err);
	if (rc)
		return rc;

	buf = malloc(CHUNK);
	if (!buf || (vaddrs && symsel_init(&sel, vaddrs, n))) {
		free(buf);
		return errf(err, -ENOMEM, "%s: out of memory", label);
	}
	if (secs.symtab.count) {
		tabs[ntabs++] = (struct table){ .src = s, .loc = secs.symtab };
	} else {
		/*
		 * No .symtab: a debug file's .symtab has every function; the
		 * object's .dynsym is merged in anyway (same names at the same
		 * addresses dedupe away) in case the debug file is partial.
		 */
		if (q && debugfile_find(q, has_symtab, &dbg) >= 0) {
			tabs[ntabs++] = (struct table){ .src = &dbg.src, .loc = dbg.symtab };
			t->from_debug_file = true;
		}
		if (secs.dynsym.count)
			tabs[ntabs++] = (struct table){ .src = s, .loc = secs.dynsym };
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
			rc = build_symbols(t, &r, tabs, ntabs);
	}
	for (size_t i = 0; i < ntabs; i++)
		free(tabs[i].buf);
	symsel_free(&sel);
	free(r.v);
	free(buf);
	if (dbg.src.fd >= 0)
		close(dbg.src.fd);
	if (rc) {
		elfsyms_free(t);
		if (rc == -EFBIG)
			return errf(err, rc, "%s: symbols over %.1f MB", label,
				    max_bytes / 1048576.0);
		return errf(err, rc, "%s: reading symbols: %s", label, strerror(-rc));
	}
	return 0;
}

void elfsyms_free(struct elfsyms *t)
{
	arena_free(&t->names);
	free(t->v);
	*t = (struct elfsyms){ 0 };
}

const struct elfobj_sym *elfsyms_lookup(const struct elfsyms *t, uint64_t vaddr)
{
	const struct elfobj_sym *s =
		addrsearch_floor(t->v, t->n, ADDRSEARCH_KEY(struct elfobj_sym, start), vaddr);

	if (!s || !s->name || (s->size && vaddr - s->start >= s->size))
		return NULL;
	return s;
}
