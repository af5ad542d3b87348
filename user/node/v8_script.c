// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "node/v8_heap.h"
#include "node/v8_layout.h"
#include "node/v8_script.h"
#include "util/grow.h"

/* Line ends read from a FixedArray at once. */
#define ENDS_CHUNK 512

int v8_script_check(const struct v8_layout *l, const struct memsrc *m, uint64_t script)
{
	uint16_t t;
	int e = v8_type(l, m, script, &t);

	return e ? e : t == l->t_script ? 0 : -EINVAL;
}

/* Whether @v is undefined (or another oddball): a field that holds nothing. */
static bool is_oddball(const struct v8_layout *l, const struct memsrc *m, uint64_t v)
{
	uint16_t t;

	return v8_is_heap(v) && !v8_type(l, m, v, &t) && t == l->t_oddball;
}

int v8_script_name(const struct v8_layout *l, const struct memsrc *m, uint64_t script,
		   char *buf, size_t cap)
{
	uint64_t name;
	int e = v8_field(l, m, script, l->script_name, &name);

	if (cap)
		buf[0] = 0;
	if (e)
		return e;
	if (is_oddball(l, m, name))
		return 0;
	return v8_string(l, m, name, buf, cap);
}

/* Ends kept as they are found. */
struct ends {
	uint32_t *v;
	size_t n, cap;
	uint64_t at;      /* characters seen */
	bool cr;          /* the last one was "\r" (at at - 1) */
};

static int add_end(struct ends *s, uint64_t at)
{
	int e = grow_to((void **)&s->v, &s->cap, s->n + 1, sizeof(*s->v), 256, V8_LINES_MAX);

	if (e)
		return e;
	s->v[s->n++] = (uint32_t)at;
	return 0;
}

/* V8's line terminators: "\r\n" ends its line at the "\n". */
static int scan(void *ctx, const uint8_t *chars, size_t n, bool two_byte)
{
	struct ends *s = ctx;
	int e = 0;

	for (size_t i = 0; !e && i < n; i++, s->at++) {
		uint16_t c = chars[i];

		if (two_byte)
			memcpy(&c, chars + 2 * i, 2);
		if (s->cr && c != '\n')
			e = add_end(s, s->at - 1);
		s->cr = c == '\r';
		if (!e && (c == '\n' || c == 0x2028 || c == 0x2029))
			e = add_end(s, s->at);
	}
	return e;
}

/* The ends from the source string @src. */
static int from_source(const struct v8_layout *l, const struct memsrc *m, uint64_t src,
		       struct ends *s)
{
	int e = v8_string_walk(l, m, src, V8_SOURCE_MAX, scan, s);

	if (!e && s->cr)
		e = add_end(s, s->at - 1);
	/* V8 ends the last line at the source's end */
	if (!e)
		e = add_end(s, s->at);
	return e;
}

/* The ends V8 computed: the FixedArray @arr of Smis, increasing. */
static int from_array(const struct v8_layout *l, const struct memsrc *m, uint64_t arr,
		      struct ends *s)
{
	uint64_t len_word, chunk[ENDS_CHUNK];
	int32_t len, prev = -1;
	int e = v8_field(l, m, arr, l->array_length, &len_word);

	if (!e)
		e = v8_smi(len_word, &len);
	if (!e && (len < 0 || (uint32_t)len > V8_LINES_MAX))
		e = len < 0 ? -EINVAL : -E2BIG;
	for (int32_t i = 0; !e && i < len; i += ENDS_CHUNK) {
		int32_t k = len - i < ENDS_CHUNK ? len - i : ENDS_CHUNK;

		e = v8_read(l, m, arr, l->array_data + (uint32_t)i * 8, chunk, (size_t)k * 8);
		for (int32_t j = 0; !e && j < k; j++) {
			int32_t v;

			e = v8_smi(chunk[j], &v);
			if (!e && v <= prev)
				e = -EINVAL;
			if (!e)
				e = add_end(s, (uint64_t)v);
			prev = v;
		}
	}
	return e;
}

int v8_script_line_ends(const struct v8_layout *l, const struct memsrc *m, uint64_t script,
			uint32_t **ends, size_t *n)
{
	struct ends s = { 0 };
	uint64_t le, src;
	uint16_t t;
	int e = v8_field(l, m, script, l->script_line_ends, &le);

	if (!e && v8_is_heap(le) && !v8_type(l, m, le, &t) && t == l->t_fixed_array) {
		e = from_array(l, m, le, &s);
	} else if (!e) {
		e = v8_field(l, m, script, l->script_source, &src);
		if (!e)
			e = from_source(l, m, src, &s);
	}
	if (e) {
		free(s.v);
		return e;
	}
	*ends = s.v;
	*n = s.n;
	return 0;
}

uint32_t v8_line_of(const uint32_t *ends, size_t n, uint32_t pos)
{
	size_t lo = 0, hi = n;

	/* the first line whose end is at or past @pos: as many lines end before it */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ends[mid] < pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (uint32_t)lo + 1;
}
