// SPDX-License-Identifier: MIT
/*
 * The pprof encoder's de-duplication tables: strings (each written to the
 * string_table once, when first used) and functions (four integers once
 * their strings are interned, in an hmap).  The strings' table is its own
 * (open addressing, at most half full): its keys are strings of any length,
 * compared by content, where hmap's keys are fixed-size bytes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/hash.h"
#include "pprof_enc.h"

/* ---- strings ---- */

/*
 * Length of the well-formed UTF-8 sequence at @s (at most @n bytes), or 0
 * when it is not one.  Strict, as protobuf runtimes are: no overlong forms,
 * no surrogates, nothing above U+10FFFF.
 */
static size_t utf8_seq(const uint8_t *s, size_t n)
{
	uint8_t c = s[0], lo = 0x80, hi = 0xbf;
	size_t len;

	if (c < 0x80)
		return 1;
	if (c < 0xc2)
		return 0;
	if (c < 0xe0) {
		len = 2;
	} else if (c < 0xf0) {
		len = 3;
		if (c == 0xe0)
			lo = 0xa0; /* overlong */
		else if (c == 0xed)
			hi = 0x9f; /* surrogates */
	} else if (c < 0xf5) {
		len = 4;
		if (c == 0xf0)
			lo = 0x90; /* overlong */
		else if (c == 0xf4)
			hi = 0x8f; /* above U+10FFFF */
	} else {
		return 0;
	}
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return len;
}

/*
 * proto3 string fields must hold valid UTF-8, and some readers (Go
 * protobuf, hence Parca and Pyroscope) reject the whole profile otherwise.
 * Names come from binaries we do not control, so each invalid byte is
 * replaced by U+FFFD.  Returns a malloc'd copy, *@len updated, or NULL
 * when @s is valid (and on ENOMEM, with *@err set).
 */
static char *utf8_sanitize(const char *s, size_t *len, int *err)
{
	const uint8_t *u = (const uint8_t *)s;
	size_t n = *len, i = 0, o = 0, k;
	char *copy;

	while (i < n && (k = utf8_seq(u + i, n - i)))
		i += k;
	if (i == n)
		return NULL;
	copy = malloc(3 * n); /* every byte may become 3 */
	if (!copy) {
		*err = -ENOMEM;
		return NULL;
	}
	memcpy(copy, s, i);
	o = i;
	while (i < n) {
		k = utf8_seq(u + i, n - i);
		if (k) {
			memcpy(copy + o, s + i, k);
			o += k;
			i += k;
		} else {
			memcpy(copy + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
		}
	}
	*len = o;
	return copy;
}

/* Doubles the string table (or creates it). */
static int strs_grow(struct pprof_enc *e)
{
	size_t cap = e->strs_cap ? e->strs_cap * 2 : 1024;
	struct str_slot *t = calloc(cap, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < e->strs_cap; i++) {
		struct str_slot *o = &e->strs[i];
		size_t j;

		if (!o->s)
			continue;
		for (j = o->hash & (cap - 1); t[j].s; j = (j + 1) & (cap - 1))
			;
		t[j] = *o;
	}
	free(e->strs);
	e->strs = t;
	e->strs_cap = cap;
	return 0;
}

/*
 * Returns the string_table index of @s, adding it (and writing its
 * string_table entry to the output) the first time.  NULL and "" are 0.
 * Negative errno on failure (also recorded as the sticky error).
 */
int64_t pprof_intern(struct pprof_enc *e, const char *s)
{
	size_t len, i;
	char *fixed, *copy;
	uint64_t h;
	int err = 0;
	int64_t idx;

	if (e->err)
		return e->err;
	if (!s)
		return 0;
	len = strnlen(s, MAX_STRING_LEN + 1);
	if (len > MAX_STRING_LEN) {
		/* Cut at a character boundary, not inside a sequence. */
		len = MAX_STRING_LEN;
		while (len && ((uint8_t)s[len] & 0xc0) == 0x80)
			len--;
	}
	fixed = utf8_sanitize(s, &len, &err);
	if (err)
		return pprof_fail(e, err);
	if (fixed)
		s = fixed;

	h = hash_bytes(s, len);
	for (i = h & (e->strs_cap - 1); e->strs[i].s; i = (i + 1) & (e->strs_cap - 1)) {
		struct str_slot *t = &e->strs[i];

		if (t->hash == h && t->len == len && !memcmp(t->s, s, len)) {
			idx = t->idx;
			goto out;
		}
	}

	/* New string. */
	if (e->n_strs >= MAX_STRINGS || len > MAX_STRING_BYTES - e->str_bytes) {
		idx = pprof_fail(e, -E2BIG);
		goto out;
	}
	if (2 * (e->n_strs + 1) > e->strs_cap) { /* keep load <= 1/2 */
		if ((err = strs_grow(e)) < 0) {
			idx = pprof_fail(e, err);
			goto out;
		}
		for (i = h & (e->strs_cap - 1); e->strs[i].s;
		     i = (i + 1) & (e->strs_cap - 1))
			;
	}
	/* "" needs a non-NULL pointer too: NULL marks a free slot. */
	copy = len ? arena_alloc(&e->strings, len) : NULL;
	if (len && !copy) {
		idx = pprof_fail(e, -ENOMEM);
		goto out;
	}
	if (len)
		memcpy(copy, s, len);
	e->strs[i].s = len ? copy : "";
	e->strs[i].hash = h;
	e->strs[i].len = (uint32_t)len;
	e->strs[i].idx = e->n_strs++;
	e->str_bytes += len;
	idx = e->strs[i].idx;

	/* The entry goes out now, before any message that refers to it. */
	pprof_out_len_field(e, PROFILE_STRING_TABLE, s, len);
	if (e->err)
		idx = e->err;
out:
	free(fixed);
	return idx;
}

/* ---- functions ---- */

int64_t pprof_function_id(struct pprof_enc *e, const struct fn_key *key, bool *created)
{
	struct fn_slot *f = hmap_find(&e->fns, key);

	*created = false;
	if (f)
		return (int64_t)f->id;
	if (e->n_functions >= MAX_FUNCTIONS)
		return -E2BIG;
	f = hmap_insert(&e->fns, key, NULL);
	if (!f)
		return -ENOMEM;
	f->id = ++e->n_functions;
	*created = true;
	return (int64_t)f->id;
}

int pprof_tables_init(struct pprof_enc *e)
{
	arena_init(&e->strings, CHUNK_SIZE, NULL);
	hmap_init(&e->fns, sizeof(struct fn_key), sizeof(struct fn_slot));
	return strs_grow(e);
}

void pprof_tables_free(struct pprof_enc *e)
{
	arena_free(&e->strings);
	free(e->strs);
	hmap_free(&e->fns);
}
