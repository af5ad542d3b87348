// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/addrsearch.h"
#include "util/hash.h"
#include "symbols/ksymcache.h"

#define STRINGS_BLOCK (64u << 10)
/* Names spill only when the kept ones are full: a window's worth at most. */
#define SPILL_BLOCK (16u << 10)

void ksymcache_init(struct ksymcache *c, uint64_t catalog_bytes)
{
	memset(c, 0, sizeof(*c));
	c->budget.max = KSYMCACHE_BYTES;
	arena_init(&c->strings, STRINGS_BLOCK, &c->budget);
	arena_init(&c->spill, SPILL_BLOCK, NULL);
	kcatalog_init(&c->catalog);
	c->catalog_max = catalog_bytes;
}

void ksymcache_free(struct ksymcache *c)
{
	arena_free(&c->strings);
	arena_free(&c->spill);
	kcatalog_free(&c->catalog);
	free(c->v);
	memset(c, 0, sizeof(*c));
}

/* Everything kept goes: the bound was reached, and the next window is to find room. */
static void reset(struct ksymcache *c)
{
	arena_free(&c->strings);
	membudget_give(&c->budget, c->cap * sizeof(*c->v));
	free(c->v);
	c->v = NULL;
	c->n = c->cap = 0;
	c->full = false;
	c->st.resets++;
	arena_init(&c->strings, STRINGS_BLOCK, &c->budget);
}

/* Drops the modules' functions: /proc/modules changed, so may their addresses. */
static void drop_modules(struct ksymcache *c)
{
	size_t k = 0;

	for (size_t i = 0; i < c->n; i++)
		if (!c->v[i].module)
			c->v[k++] = c->v[i];
	c->n = k;
}

/* Checks /proc/modules as it is now against the last read. */
static void check_modules(struct ksymcache *c, FILE *modules)
{
	uint64_t h = 1; /* no modules (none loadable): a value of its own */
	char buf[4096];
	size_t got;

	if (modules) {
		h = hash_u64(0);
		while ((got = fread(buf, 1, sizeof(buf), modules)) > 0)
			h = hash_u64(h ^ hash_bytes(buf, got));
	}
	if (c->modules_hash && h != c->modules_hash)
		drop_modules(c);
	c->modules_hash = h;
}

static const struct ksymcache_entry *kept(const struct ksymcache *c, uint64_t addr)
{
	const struct ksymcache_entry *e =
		addrsearch_floor(c->v, c->n, ADDRSEARCH_KEY(struct ksymcache_entry, start), addr);

	return e && addr < e->end ? e : NULL;
}

/* Symbols of these come and go while the kernel runs. */
static bool passing(const char *module)
{
	return module && (!strcmp(module, "bpf") || !strncmp(module, "__builtin__", 11));
}

/*
 * Keeps what @k names, if it is a function to keep and there is room: the
 * entry (until the next keep), or NULL.
 */
static const struct ksymcache_entry *keep(struct ksymcache *c, const struct ksym *k)
{
	struct ksymcache_entry e = { .start = k->sym_addr, .end = k->sym_end };
	size_t at;

	if (!k->name || !k->sym_end || k->sym_end - k->sym_addr > KSYMCACHE_SPAN ||
	    passing(k->module) || kept(c, k->sym_addr))
		return NULL;
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 256;
		struct ksymcache_entry *v;

		if (!membudget_take(&c->budget, (cap - c->cap) * sizeof(*c->v))) {
			c->full = true;
			return NULL;
		}
		v = realloc(c->v, cap * sizeof(*c->v));
		if (!v) {
			membudget_give(&c->budget, (cap - c->cap) * sizeof(*c->v));
			c->full = true;
			return NULL;
		}
		c->v = v;
		c->cap = cap;
	}
	e.name = arena_strndup(&c->strings, k->name, strlen(k->name));
	e.module = k->module ? arena_strndup(&c->strings, k->module, strlen(k->module)) : NULL;
	if (!e.name || (k->module && !e.module)) {
		c->full = true;
		return NULL;
	}
	/* after the last kept at or below its start: none overlaps it (kept() said) */
	at = c->n;
	while (at > 0 && c->v[at - 1].start > e.start)
		at--;
	if (at < c->n && c->v[at].start < e.end)
		e.end = c->v[at].start;
	memmove(c->v + at + 1, c->v + at, (c->n - at) * sizeof(*c->v));
	c->v[at] = e;
	c->n++;
	return &c->v[at];
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* @a sorted and unique, in place; its new length. */
static size_t sort_unique(uint64_t *a, size_t n)
{
	size_t m = 0;

	qsort(a, n, sizeof(*a), cmp_u64);
	for (size_t i = 0; i < n; i++)
		if (!m || a[i] != a[m - 1])
			a[m++] = a[i];
	return m;
}

/* @addr as a kept function names it into @k: true, or false when none holds it. */
static bool from_kept(const struct ksymcache *c, uint64_t addr, struct ksym *k)
{
	const struct ksymcache_entry *e = kept(c, addr);

	if (e)
		*k = (struct ksym){ .addr = addr, .sym_addr = e->start, .sym_end = e->end,
				    .name = e->name, .module = e->module };
	return e != NULL;
}

/*
 * @addr as the catalog names it into @k, the function kept (or its name
 * spilled, when there is no room): 1, 0 when the catalog cannot say, or an
 * error.
 */
static int from_catalog(struct ksymcache *c, uint64_t addr, struct ksym *k)
{
	const struct ksymcache_entry *e;
	uint64_t start, end;
	const char *name = kcatalog_find(&c->catalog, addr, &start, &end);

	if (!name)
		return 0;
	*k = (struct ksym){ .addr = addr, .sym_addr = start, .sym_end = end, .name = name };
	e = keep(c, k);
	k->name = e ? e->name : arena_strndup(&c->spill, name, strlen(name));
	if (!k->name)
		return -ENOMEM;
	c->st.catalog_answers++;
	return 1;
}

/*
 * The pass over kallsyms for the @n addresses @miss nothing kept holds;
 * the run's first complete pass builds the catalog on the way.
 */
static int read_missing(struct ksymcache *c, FILE *(*kallsyms)(void), const uint64_t *miss,
			size_t n, struct ksym_table *pass, struct errbuf *err)
{
	struct kcatalog_build build;
	const struct kallsyms_seen seen = { .fn = kcatalog_build_sym, .arg = &build };
	bool building = c->catalog_max && !c->catalog_tried;
	FILE *f = kallsyms();
	int ret;

	if (!f)
		return errf(err, -errno, "/proc/kallsyms: %s", strerror(errno));
	if (building)
		kcatalog_build_start(&build, &c->catalog, c->catalog_max);
	ret = kallsyms_resolve_seen(f, miss, n, building ? &seen : NULL, pass, err);
	fclose(f);
	c->st.reads++;
	if (building) {
		kcatalog_build_end(&build, ret == 0);
		/* a failed pass may fare better next time; a complete one said all there is */
		c->catalog_tried = ret == 0;
	}
	for (size_t i = 0; !ret && i < pass->n; i++)
		keep(c, &pass->syms[i]);
	return ret;
}

static void update_stats(struct ksymcache *c)
{
	c->st.kept = c->n;
	c->st.catalog_functions = c->catalog.n;
	c->st.catalog_bytes = c->catalog.mem.used;
	c->st.catalog_none = c->catalog.why;
}

/*
 * Names what was kept or is in the catalog into @out (one entry for each of
 * the @m addresses @a) and lists the rest in @miss.
 */
static int answer_known(struct ksymcache *c, const uint64_t *a, size_t m, struct ksym *out,
			uint64_t *miss, size_t *nmiss)
{
	*nmiss = 0;
	for (size_t i = 0; i < m; i++) {
		int got = from_kept(c, a[i], &out[i]) ? 1 : from_catalog(c, a[i], &out[i]);

		if (got < 0)
			return got;
		if (!got)
			miss[(*nmiss)++] = a[i];
	}
	return 0;
}

int ksymcache_resolve(struct ksymcache *c, FILE *(*kallsyms)(void), FILE *modules,
		      const uint64_t *addrs, size_t n, struct ksym_table *out, struct errbuf *err)
{
	struct ksym_table pass = { 0 };
	uint64_t *a, *miss;
	size_t m, nmiss = 0;
	int ret;

	memset(out, 0, sizeof(*out));
	if (!n)
		return 0;
	if (c->full)
		reset(c);
	/* the last window's @out is gone (as the interface asks) */
	arena_free(&c->spill);
	check_modules(c, modules);
	c->st.resolves++;
	a = malloc(2 * n * sizeof(*a));
	if (!a)
		return errf(err, -ENOMEM, "kernel symbols: out of memory for %zu addresses", n);
	memcpy(a, addrs, n * sizeof(*a));
	m = sort_unique(a, n);
	miss = a + m;
	out->syms = calloc(m, sizeof(*out->syms));
	ret = out->syms ? answer_known(c, a, m, out->syms, miss, &nmiss) : -ENOMEM;
	if (ret < 0)
		ret = errf(err, ret, "kernel symbols: out of memory");
	else if (nmiss)
		ret = read_missing(c, kallsyms, miss, nmiss, &pass, err);
	for (size_t i = 0; !ret && i < m; i++) {
		const struct ksym *k;

		if (out->syms[i].name)
			continue;
		k = kallsyms_find(&pass, a[i]);
		out->syms[i] = k ? *k : (struct ksym){ .addr = a[i] };
	}
	if (!ret) {
		/* names of the pass handed to @out */
		out->n = m;
		out->strings = pass.strings;
		out->strings_len = pass.strings_len;
		out->strings_cap = pass.strings_cap;
		pass.strings = NULL;
	} else {
		kallsyms_free(out);
	}
	update_stats(c);
	kallsyms_free(&pass);
	free(a);
	return ret;
}
