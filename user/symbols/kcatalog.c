// SPDX-License-Identifier: MIT
/*
 * kcatalog: the build streams with the pass.  /proc/kallsyms lists the core
 * kernel's symbols in address order (scripts/kallsyms sorts them) before
 * any module's, so each function is final once a higher address is met
 * and its name goes straight into the block being filled: the build holds
 * one block of names as text, never all of them.  A text that lists the
 * core's functions out of order gets no catalog (the pass still answers
 * its queries).
 *
 * It answers as kallsyms_resolve() would only if no other text symbol lies
 * among the core's: the best alias at an address and the next symbol's
 * address would then be decided by that symbol.  Modules' text and the
 * trampolines live in their own areas, apart from the kernel's image;
 * the build checks that this text says so, listed before the core or
 * after it, and later windows rely on it.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "util/addrsearch.h"
#include "util/grow.h"
#include "symbols/kcatalog.h"

/* A block's names as text, at most. */
#define BLOCK_BYTES (KCATALOG_BLOCK * (KALLSYMS_NAME_MAX + 1))
/*
 * Raw deflate (no header or checksum: the blocks are ours) with 4 KiB of
 * history: a block's names are about 1.6 KB, so a longer window finds
 * nothing more, and the deflater's state is 40 KB instead of 270.  The
 * fastest level: deflating 3 MB of names took 42 ms here against 61 at
 * the default level, for 757 KB against 678.
 */
#define Z_WBITS (-12)
#define Z_MEMLEVEL 5
#define Z_LEVEL Z_BEST_SPEED

/* zlib's allocations come from the catalog's bound: each keeps its size for its release. */
union zhead {
	size_t bytes;
	max_align_t align;
};

static voidpf z_take(voidpf opaque, uInt items, uInt size)
{
	struct membudget *mem = opaque;
	size_t bytes = (size_t)items * size + sizeof(union zhead);
	union zhead *h;

	if (!membudget_take(mem, bytes))
		return Z_NULL;
	h = malloc(bytes);
	if (!h) {
		membudget_give(mem, bytes);
		return Z_NULL;
	}
	h->bytes = bytes;
	return h + 1;
}

static void z_give(voidpf opaque, voidpf p)
{
	union zhead *h = (union zhead *)p - 1;

	membudget_give(opaque, h->bytes);
	free(h);
}

static void *take(struct kcatalog *c, size_t bytes)
{
	void *p;

	if (!membudget_take(&c->mem, bytes))
		return NULL;
	p = calloc(1, bytes);
	if (!p)
		membudget_give(&c->mem, bytes);
	return p;
}

static void give(struct kcatalog *c, void *p, size_t bytes)
{
	if (p)
		membudget_give(&c->mem, bytes);
	free(p);
}

static z_stream *new_stream(struct kcatalog *c)
{
	z_stream *z = take(c, sizeof(*z));

	if (z) {
		z->zalloc = z_take;
		z->zfree = z_give;
		z->opaque = &c->mem;
	}
	return z;
}

/* Room for @need elements of @size in @*v, its growth (doubling, as grow.h does) charged to the bound. */
static bool room(struct kcatalog *c, void **v, size_t *cap, size_t need, size_t size, size_t first)
{
	size_t old = *cap;
	uint64_t left = c->mem.max - c->mem.used;
	size_t max = left / size < SIZE_MAX - old ? old + (size_t)(left / size) : SIZE_MAX;

	if (grow_to(v, cap, need, size, first, max) < 0)
		return false;
	return membudget_take(&c->mem, (uint64_t)(*cap - old) * size);
}

/* Keeps @n of @size in @*v, of @cap allocated, giving the rest back. */
static void shrink(struct kcatalog *c, void **v, size_t cap, size_t n, size_t size)
{
	void *nv = realloc(*v, n * size);

	if (nv) {
		*v = nv;
		membudget_give(&c->mem, (uint64_t)(cap - n) * size);
	}
}

void kcatalog_init(struct kcatalog *c)
{
	memset(c, 0, sizeof(*c));
	c->names_of = SIZE_MAX;
}

/* Frees all it holds; why, the bound and its peak stay. */
static void drop(struct kcatalog *c)
{
	struct membudget mem = c->mem;
	const char *why = c->why;

	if (c->inflater) {
		inflateEnd(c->inflater);
		free(c->inflater);
	}
	free(c->start);
	free(c->block);
	free(c->z);
	free(c->names);
	kcatalog_init(c);
	c->mem = (struct membudget){ .max = mem.max, .peak = mem.peak, .refused = mem.refused };
	c->why = why;
}

void kcatalog_free(struct kcatalog *c)
{
	drop(c);
	kcatalog_init(c);
}

/* Ends the build's own state: the deflater and the block being filled. */
static void end_build(struct kcatalog_build *b)
{
	if (b->deflater) {
		deflateEnd(b->deflater);
		give(b->cat, b->deflater, sizeof(*b->deflater));
		b->deflater = NULL;
	}
	give(b->cat, b->blk, BLOCK_BYTES);
	b->blk = NULL;
}

/* No catalog, for @why; false for the callers' convenience. */
static bool fail(struct kcatalog_build *b, const char *why)
{
	if (!b->cat->why)
		b->cat->why = why;
	end_build(b);
	drop(b->cat);
	return false;
}

void kcatalog_build_start(struct kcatalog_build *b, struct kcatalog *c, uint64_t max_bytes)
{
	kcatalog_free(c);
	c->mem.max = max_bytes;
	*b = (struct kcatalog_build){ .cat = c, .early_lo = UINT64_MAX, .late_lo = UINT64_MAX };
	b->blk = take(c, BLOCK_BYTES);
	b->deflater = new_stream(c);
	if (!b->blk || !b->deflater) {
		fail(b, "over its memory bound");
		return;
	}
	if (deflateInit2(b->deflater, Z_LEVEL, Z_DEFLATED, Z_WBITS, Z_MEMLEVEL,
			 Z_DEFAULT_STRATEGY) != Z_OK) {
		give(c, b->deflater, sizeof(*b->deflater));
		b->deflater = NULL; /* never made: nothing to end */
		fail(b, "over its memory bound");
	}
}

/* Deflates the block being filled onto the others. */
static bool deflate_block(struct kcatalog_build *b)
{
	struct kcatalog *c = b->cat;
	z_stream *z = b->deflater;
	size_t bound = deflateBound(z, b->blk_len);

	if (c->zlen + bound > UINT32_MAX)
		return fail(b, "over 4 GiB of names");
	/* one more offset kept free for the end of the last block */
	if (!room(c, (void **)&c->block, &b->block_cap, c->nblocks + 2, sizeof(*c->block), 256) ||
	    !room(c, (void **)&c->z, &b->z_cap, c->zlen + bound, 1, 64u << 10))
		return fail(b, "over its memory bound");
	deflateReset(z);
	z->next_in = (Bytef *)b->blk;
	z->avail_in = (uInt)b->blk_len;
	z->next_out = c->z + c->zlen;
	z->avail_out = (uInt)bound;
	if (deflate(z, Z_FINISH) != Z_STREAM_END)
		return fail(b, "zlib could not deflate its names");
	c->block[c->nblocks++] = (uint32_t)c->zlen;
	c->zlen += bound - z->avail_out;
	b->blk_len = b->blk_n = 0;
	return true;
}

/* The function at b->last is final: into the catalog. */
static bool push(struct kcatalog_build *b)
{
	struct kcatalog *c = b->cat;

	if (!room(c, (void **)&c->start, &b->start_cap, c->n + 1, sizeof(*c->start), 4096))
		return fail(b, "over its memory bound");
	c->start[c->n++] = (uint32_t)(b->last - c->base);
	memcpy(b->blk + b->blk_len, b->pend_name, b->pend_len);
	b->blk[b->blk_len + b->pend_len] = '\0';
	b->blk_len += b->pend_len + 1;
	return ++b->blk_n < KCATALOG_BLOCK || deflate_block(b);
}

static void pend(struct kcatalog_build *b, const struct kallsyms_sym *s)
{
	b->last = s->addr;
	b->pend_type = s->type;
	b->pend_len = s->name_len < sizeof(b->pend_name) ? s->name_len : sizeof(b->pend_name);
	memcpy(b->pend_name, s->name, b->pend_len);
}

/* A module's or trampoline's text at @addr: where it lies against the core's. */
static void note_module(struct kcatalog_build *b, uint64_t addr)
{
	if (!b->last) {
		if (addr < b->early_lo)
			b->early_lo = addr;
		if (addr > b->early_hi)
			b->early_hi = addr;
	} else if (addr >= b->cat->base && addr < b->late_lo) {
		b->late_lo = addr;
	}
}

void kcatalog_build_sym(void *arg, const struct kallsyms_sym *s)
{
	struct kcatalog_build *b = arg;
	struct kcatalog *c = b->cat;

	/* kptr_restrict shows 0 for every address; data is never a name */
	if (c->why || !s->addr || !kallsyms_is_text(s->type))
		return;
	if (s->module_len) {
		note_module(b, s->addr);
		return;
	}
	if (b->last && s->addr == b->last) {
		const struct kallsyms_sym cur = { .addr = b->last, .type = b->pend_type,
						  .name = b->pend_name, .name_len = b->pend_len };

		if (kallsyms_better_alias(&cur, s))
			pend(b, s);
		return;
	}
	if (!b->last)
		c->base = s->addr;
	else if (s->addr < b->last)
		return (void)fail(b, "the core kernel's text is not in address order");
	else if (!push(b))
		return;
	if (s->addr - c->base > UINT32_MAX)
		return (void)fail(b, "the core kernel's text spans 4 GiB or more");
	pend(b, s);
}

/*
 * Whether a module's text lies among the core's, [base, b->last): one at
 * the last core function's start or above changes no answer the catalog
 * gives.
 */
static bool modules_among_core(const struct kcatalog_build *b)
{
	return (b->early_lo < b->last && b->early_hi >= b->cat->base) || b->late_lo < b->last;
}

bool kcatalog_build_end(struct kcatalog_build *b, bool complete)
{
	struct kcatalog *c = b->cat;

	if (c->why)
		return false;
	if (!complete)
		return fail(b, "the pass over kallsyms failed");
	if (b->last && !push(b))
		return false;
	if (b->blk_n && !deflate_block(b))
		return false;
	if (modules_among_core(b))
		return fail(b, "a module's text lies among the core kernel's");
	if (c->n < 2)
		return fail(b, "no core kernel text");
	end_build(b);
	shrink(c, (void **)&c->start, b->start_cap, c->n, sizeof(*c->start));
	shrink(c, (void **)&c->z, b->z_cap, c->zlen, 1);
	c->block[c->nblocks] = (uint32_t)c->zlen;
	shrink(c, (void **)&c->block, b->block_cap, c->nblocks + 1, sizeof(*c->block));
	return true;
}

/* Block @i's names into c->names. */
static bool inflate_block(struct kcatalog *c, size_t i)
{
	z_stream *z = c->inflater;

	if (c->names_of == i)
		return true;
	if (!c->names && !(c->names = take(c, BLOCK_BYTES)))
		return false;
	if (!z) {
		z = new_stream(c);
		if (!z)
			return false;
		if (inflateInit2(z, Z_WBITS) != Z_OK) {
			give(c, z, sizeof(*z));
			return false;
		}
		c->inflater = z;
	}
	c->names_of = SIZE_MAX;
	inflateReset(z);
	z->next_in = c->z + c->block[i];
	z->avail_in = c->block[i + 1] - c->block[i];
	z->next_out = (Bytef *)c->names;
	z->avail_out = BLOCK_BYTES;
	if (inflate(z, Z_FINISH) != Z_STREAM_END)
		return false;
	c->names_len = BLOCK_BYTES - z->avail_out;
	c->names_of = i;
	return true;
}

/* The @k-th name of the block inflated, or NULL past its end. */
static const char *nth_name(const struct kcatalog *c, size_t k)
{
	const char *p = c->names, *end = c->names + c->names_len;

	for (; p < end; k--) {
		const char *nul = memchr(p, '\0', (size_t)(end - p));

		if (!nul)
			return NULL;
		if (!k)
			return p;
		p = nul + 1;
	}
	return NULL;
}

const char *kcatalog_find(struct kcatalog *c, uint64_t addr, uint64_t *start, uint64_t *end)
{
	const char *name;
	size_t i;

	if (c->n < 2 || addr < c->base || addr - c->base >= c->start[c->n - 1])
		return NULL;
	/* start[0] is 0: there is always one at or below */
	i = addrsearch_upto(c->start, c->n, ADDRSEARCH_BARE(uint32_t), addr - c->base) - 1;
	if (!inflate_block(c, i / KCATALOG_BLOCK) || !(name = nth_name(c, i % KCATALOG_BLOCK)))
		return NULL;
	*start = c->base + c->start[i];
	*end = c->base + c->start[i + 1];
	return name;
}
