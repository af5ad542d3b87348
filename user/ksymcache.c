// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "addrsearch.h"
#include "hash.h"
#include "ksymcache.h"

#define STRINGS_BLOCK (64u << 10)

void ksymcache_init(struct ksymcache *c)
{
	memset(c, 0, sizeof(*c));
	c->budget.max = KSYMCACHE_BYTES;
	arena_init(&c->strings, STRINGS_BLOCK, &c->budget);
}

void ksymcache_free(struct ksymcache *c)
{
	arena_free(&c->strings);
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
	const struct ksymcache_entry *e = addr_floor(c->v, c->n, sizeof(*c->v), addr);

	_Static_assert(offsetof(struct ksymcache_entry, start) == 0, "addr_floor needs it first");
	return e && addr < e->end ? e : NULL;
}

/* Symbols of these come and go while the kernel runs. */
static bool passing(const char *module)
{
	return module && (!strcmp(module, "bpf") || !strncmp(module, "__builtin__", 11));
}

/* Keeps what @k names, if it is a function to keep and there is room. */
static void keep(struct ksymcache *c, const struct ksym *k)
{
	struct ksymcache_entry e = { .start = k->sym_addr, .end = k->sym_end };
	size_t at;

	if (!k->name || !k->sym_end || k->sym_end - k->sym_addr > KSYMCACHE_SPAN ||
	    passing(k->module) || kept(c, k->sym_addr))
		return;
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 256;
		struct ksymcache_entry *v;

		if (!membudget_take(&c->budget, (cap - c->cap) * sizeof(*c->v))) {
			c->full = true;
			return;
		}
		v = realloc(c->v, cap * sizeof(*c->v));
		if (!v) {
			membudget_give(&c->budget, (cap - c->cap) * sizeof(*c->v));
			c->full = true;
			return;
		}
		c->v = v;
		c->cap = cap;
	}
	e.name = arena_strndup(&c->strings, k->name, strlen(k->name));
	e.module = k->module ? arena_strndup(&c->strings, k->module, strlen(k->module)) : NULL;
	if (!e.name || (k->module && !e.module)) {
		c->full = true;
		return;
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

/* The pass over kallsyms for the @n addresses @miss no kept function holds. */
static int read_missing(struct ksymcache *c, FILE *(*kallsyms)(void), const uint64_t *miss,
			size_t n, struct ksym_table *pass, struct errbuf *err)
{
	FILE *f = kallsyms();
	int ret;

	if (!f)
		return errf(err, -errno, "/proc/kallsyms: %s", strerror(errno));
	ret = kallsyms_resolve(f, miss, n, pass, err);
	fclose(f);
	c->st.reads++;
	for (size_t i = 0; !ret && i < pass->n; i++)
		keep(c, &pass->syms[i]);
	return ret;
}

int ksymcache_resolve(struct ksymcache *c, FILE *(*kallsyms)(void), FILE *modules,
		      const uint64_t *addrs, size_t n, struct ksym_table *out, struct errbuf *err)
{
	struct ksym_table pass = { 0 };
	uint64_t *a, *miss;
	size_t m, nmiss = 0;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	if (!n)
		return 0;
	if (c->full)
		reset(c);
	check_modules(c, modules);
	c->st.resolves++;
	a = malloc(2 * n * sizeof(*a));
	if (!a)
		return errf(err, -ENOMEM, "kernel symbols: out of memory for %zu addresses", n);
	memcpy(a, addrs, n * sizeof(*a));
	m = sort_unique(a, n);
	miss = a + m;
	for (size_t i = 0; i < m; i++)
		if (!kept(c, a[i]))
			miss[nmiss++] = a[i];
	if (nmiss)
		ret = read_missing(c, kallsyms, miss, nmiss, &pass, err);
	if (!ret) {
		out->syms = calloc(m, sizeof(*out->syms));
		if (!out->syms)
			ret = errf(err, -ENOMEM, "kernel symbols: out of memory");
	}
	for (size_t i = 0; !ret && i < m; i++) {
		const struct ksymcache_entry *e = kept(c, a[i]);
		const struct ksym *k;

		if (e) {
			out->syms[i] = (struct ksym){ .addr = a[i], .sym_addr = e->start,
						      .sym_end = e->end, .name = e->name,
						      .module = e->module };
		} else if ((k = kallsyms_find(&pass, a[i]))) {
			out->syms[i] = *k; /* names in pass.strings, handed to @out */
		} else {
			out->syms[i] = (struct ksym){ .addr = a[i] };
		}
	}
	if (!ret) {
		out->n = m;
		out->strings = pass.strings;
		out->strings_len = pass.strings_len;
		out->strings_cap = pass.strings_cap;
		pass.strings = NULL;
	} else {
		kallsyms_free(out);
	}
	c->st.kept = c->n;
	kallsyms_free(&pass);
	free(a);
	return ret;
}
