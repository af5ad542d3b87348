// SPDX-License-Identifier: MIT
#include <errno.h>
#include <string.h>

#include "node/v8_heap.h"
#include "node/v8_layout.h"

/* Bytes of characters read at once. */
#define CHUNK 4096

int v8_smi(uint64_t v, int32_t *out)
{
	if (!v8_is_smi(v) || (uint32_t)v)
		return -EINVAL;
	*out = (int32_t)(uint32_t)(v >> 32);
	return 0;
}

int v8_read(const struct v8_layout *l, const struct memsrc *m, uint64_t obj, uint32_t off,
	    void *buf, size_t len)
{
	uint64_t at;

	if (!v8_is_heap(obj))
		return -EINVAL;
	at = obj - l->heap_tag + off;
	if (at < obj - l->heap_tag || at + len < at)
		return -EFAULT;
	return memsrc_read(m, at, buf, len) ? -EFAULT : 0;
}

int v8_field(const struct v8_layout *l, const struct memsrc *m, uint64_t obj, uint32_t off,
	     uint64_t *out)
{
	return v8_read(l, m, obj, off, out, sizeof(*out));
}

/* The instance type kept in the map @map. */
static int map_type(const struct v8_layout *l, const struct memsrc *m, uint64_t map, uint16_t *t)
{
	return v8_read(l, m, map, l->map_type, t, sizeof(*t));
}

int v8_type(const struct v8_layout *l, const struct memsrc *m, uint64_t obj, uint16_t *type)
{
	uint64_t map, meta;
	uint16_t mt;
	int e;

	if (!v8_is_heap(obj))
		return -EINVAL;
	e = v8_field(l, m, obj, l->obj_map, &map);
	if (e)
		return e;
	if (!v8_is_heap(map))
		return -EINVAL;
	/* a map's map is the meta map, whose type says MAP_TYPE */
	e = v8_field(l, m, map, l->obj_map, &meta);
	if (!e)
		e = v8_is_heap(meta) ? map_type(l, m, meta, &mt) : -EINVAL;
	if (!e && mt != l->t_map)
		e = -EINVAL;
	return e ? e : map_type(l, m, map, type);
}

bool v8_type_is_string(const struct v8_layout *l, uint16_t t)
{
	return t < l->first_nonstring;
}

/* A string's walk: where its characters go, and how many are still to come. */
struct walk {
	const struct v8_layout *l;
	const struct memsrc *m;
	v8_chars_fn fn;
	void *ctx;
	uint64_t left;
	unsigned pieces;
};

/*
 * Characters [@from, @from + @n) of the run at @base in the process, of
 * @csize bytes each, read a page at a time.  @base may be anything the
 * process wrote (an external string's data): an end past 2^64 is -EFAULT.
 */
static int run(struct walk *w, uint64_t base, uint32_t csize, uint64_t from, uint64_t n)
{
	uint8_t buf[CHUNK];

	/* lengths are int32: the run's bytes cannot overflow, only its end */
	if (base + (from + n) * csize < base)
		return -EFAULT;
	while (n) {
		uint64_t k = n * csize > CHUNK ? CHUNK / csize : n;
		int e = memsrc_read(w->m, base + from * csize, buf, (size_t)(k * csize));

		if (e)
			return -EFAULT;
		e = w->fn(w->ctx, buf, (size_t)k, csize == 2);
		if (e)
			return e;
		from += k;
		n -= k;
	}
	return 0;
}

/*
 * Where the characters of the external string @s of type @t are: its
 * resource_data, the embedder's resource->data() as V8 cached it.  An
 * uncached one (no such field) is -ENOTSUP: its data is a virtual call
 * into the embedder's C++ object.  A resource of NULL (V8 disposed of it:
 * the string is dead) or data of NULL is -EINVAL; any other value is read
 * as it is, each read checked.
 */
static int external_data(struct walk *w, uint64_t s, uint16_t t, uint64_t *data)
{
	const struct v8_layout *l = w->l;
	uint64_t resource;
	int e;

	if ((t & l->uncached_mask) == l->uncached_tag)
		return -ENOTSUP;
	e = v8_field(l, w->m, s, l->ext_resource, &resource);
	if (!e)
		e = v8_field(l, w->m, s, l->ext_data, data);
	if (!e && (!resource || !*data))
		e = -EINVAL;
	return e;
}

/* Characters [@from, @from + @n) of the flat (sequential or external) string @s of type @t. */
static int flat(struct walk *w, uint64_t s, uint16_t t, uint64_t from, uint64_t n)
{
	const struct v8_layout *l = w->l;
	bool two = (t & l->encoding_mask) == l->two_byte_tag;
	uint64_t base;
	int e = 0;

	if ((t & l->rep_mask) == l->external_tag) {
		e = external_data(w, s, t, &base);
	} else if ((t & l->rep_mask) == l->seq_tag) {
		base = s - l->heap_tag + (two ? l->seq2_chars : l->seq1_chars);
		e = base < s - l->heap_tag ? -EFAULT : 0;
	} else {
		e = -EINVAL;
	}
	return e ? e : run(w, base, two ? 2 : 1, from, n);
}

/* A string's length field: 0 <= length. */
static int str_length(const struct walk *w, uint64_t s, uint64_t *len)
{
	int32_t n;
	int e = v8_read(w->l, w->m, s, w->l->str_length, &n, sizeof(n));

	if (e)
		return e;
	if (n < 0)
		return -EINVAL;
	*len = (uint64_t)n;
	return 0;
}

/* The sliced string @s (@len characters): its part of its parent. */
static int sliced(struct walk *w, uint64_t s, uint64_t len)
{
	const struct v8_layout *l = w->l;
	uint64_t parent, off_word, plen;
	int32_t off;
	uint16_t t;
	int e = v8_field(l, w->m, s, l->sliced_parent, &parent);

	if (!e)
		e = v8_field(l, w->m, s, l->sliced_offset, &off_word);
	if (!e)
		e = v8_smi(off_word, &off);
	if (!e)
		e = v8_type(l, w->m, parent, &t);
	if (!e && !v8_type_is_string(l, t))
		e = -EINVAL;
	if (!e)
		e = str_length(w, parent, &plen);
	if (!e && (off < 0 || (uint64_t)off + len > plen))
		e = -EINVAL;
	/* V8 slices only flat strings: flat() refuses the others */
	return e ? e : flat(w, parent, t, (uint64_t)off, len);
}

/* One piece @s: a leaf read out, or (cons, thin) what to read next in *@next, 0 for none. */
static int piece(struct walk *w, uint64_t s, uint64_t *stack, unsigned *depth, uint64_t *next)
{
	const struct v8_layout *l = w->l;
	uint64_t len;
	uint16_t t, rep;
	int e;

	*next = 0;
	if (++w->pieces > V8_STRING_PIECES)
		return -ELOOP;
	e = v8_type(l, w->m, s, &t);
	if (!e && !v8_type_is_string(l, t))
		e = -EINVAL;
	if (!e)
		e = str_length(w, s, &len);
	/* no part is longer than what is left of the whole */
	if (!e && len > w->left)
		e = -EINVAL;
	if (e)
		return e;
	rep = t & l->rep_mask;
	if (rep == l->cons_tag) {
		if (*depth >= V8_CONS_DEPTH)
			return -ELOOP;
		e = v8_field(l, w->m, s, l->cons_second, &stack[*depth]);
		if (!e)
			e = v8_field(l, w->m, s, l->cons_first, next);
		*depth += !e;
		return e;
	}
	if (rep == l->thin_tag)
		return v8_field(l, w->m, s, l->thin_actual, next);
	if (rep == l->sliced_tag)
		e = sliced(w, s, len);
	else
		e = flat(w, s, t, 0, len);
	if (!e)
		w->left -= len;
	return e;
}

int v8_string_walk(const struct v8_layout *l, const struct memsrc *m, uint64_t str,
		   uint64_t max_len, v8_chars_fn fn, void *ctx)
{
	struct walk w = { .l = l, .m = m, .fn = fn, .ctx = ctx };
	uint64_t stack[V8_CONS_DEPTH], cur = str, next;
	unsigned depth = 0;
	uint16_t t;
	int e = v8_type(l, m, str, &t);

	if (!e && !v8_type_is_string(l, t))
		e = -EINVAL;
	if (!e)
		e = str_length(&w, str, &w.left);
	if (!e && w.left > max_len)
		e = -E2BIG;
	while (!e) {
		e = piece(&w, cur, stack, &depth, &next);
		if (e)
			break;
		if (next)
			cur = next;
		else if (depth)
			cur = stack[--depth];
		else
			break;
	}
	/* the pieces must make up the whole */
	if (!e && w.left)
		e = -EINVAL;
	return e;
}

/* UTF-8 written into a buffer as a walk goes. */
struct utf8 {
	char *buf;
	size_t cap, used;
	uint32_t high; /* a UTF-16 high surrogate waiting for its low one; 0: none */
};

static int put(struct utf8 *u, uint32_t c)
{
	uint8_t b[4];
	size_t n;

	if (!c)
		return -EILSEQ;
	if (c < 0x80) {
		b[0] = (uint8_t)c;
		n = 1;
	} else if (c < 0x800) {
		b[0] = (uint8_t)(0xc0 | c >> 6);
		b[1] = (uint8_t)(0x80 | (c & 0x3f));
		n = 2;
	} else if (c < 0x10000) {
		b[0] = (uint8_t)(0xe0 | c >> 12);
		b[1] = (uint8_t)(0x80 | (c >> 6 & 0x3f));
		b[2] = (uint8_t)(0x80 | (c & 0x3f));
		n = 3;
	} else {
		b[0] = (uint8_t)(0xf0 | c >> 18);
		b[1] = (uint8_t)(0x80 | (c >> 12 & 0x3f));
		b[2] = (uint8_t)(0x80 | (c >> 6 & 0x3f));
		b[3] = (uint8_t)(0x80 | (c & 0x3f));
		n = 4;
	}
	if (u->used + n >= u->cap)
		return -E2BIG;
	memcpy(u->buf + u->used, b, n);
	u->used += n;
	return 0;
}

/* One UTF-16 unit, surrogates paired. */
static int put16(struct utf8 *u, uint32_t c)
{
	int e = 0;

	if (u->high) {
		if (c >= 0xdc00 && c <= 0xdfff) {
			e = put(u, 0x10000 + ((u->high - 0xd800) << 10) + (c - 0xdc00));
			u->high = 0;
			return e;
		}
		e = put(u, 0xfffd);
		u->high = 0;
	}
	if (e)
		return e;
	if (c >= 0xd800 && c <= 0xdbff) {
		u->high = c;
		return 0;
	}
	return put(u, c >= 0xdc00 && c <= 0xdfff ? 0xfffd : c);
}

static int to_utf8(void *ctx, const uint8_t *chars, size_t n, bool two_byte)
{
	struct utf8 *u = ctx;
	int e = 0;

	for (size_t i = 0; !e && i < n; i++) {
		if (two_byte) {
			uint16_t c;

			memcpy(&c, chars + 2 * i, 2);
			e = put16(u, c);
		} else {
			/* a pending high surrogate ends at a Latin-1 run */
			if (u->high) {
				e = put(u, 0xfffd);
				u->high = 0;
			}
			if (!e)
				e = put(u, chars[i]);
		}
	}
	return e;
}

int v8_string(const struct v8_layout *l, const struct memsrc *m, uint64_t str, char *buf,
	      size_t cap)
{
	struct utf8 u = { .buf = buf, .cap = cap };
	int e;

	if (!cap)
		return -E2BIG;
	buf[0] = 0;
	e = v8_string_walk(l, m, str, cap - 1, to_utf8, &u);
	if (!e && u.high)
		e = put(&u, 0xfffd);
	buf[e ? 0 : u.used] = 0;
	return e;
}
