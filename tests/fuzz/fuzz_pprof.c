// SPDX-License-Identifier: MIT
/*
 * fuzz_pprof: the streaming encoder driven by a random sequence of API
 * calls with random strings (symbol names come from untrusted binaries),
 * random ids (valid or not) and a sink that may fail part-way.
 *
 * When pprof_finish() reports success the output is decoded here, without
 * the encoder's code, and checked for what every pprof reader requires:
 * well-formed wire format; string_table[0] == ""; every string valid UTF-8;
 * every reference (string index, mapping, function and location id) to
 * something already emitted, since the encoder streams; ids 1, 2, 3... in
 * order; each sample with one value per sample type.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "fuzz_common.h"
#include "pprof.h"

#define STR_MAX 300
#define OUT_MAX (8u << 20)

struct sink {
	uint8_t *buf;
	size_t len, cap;
	size_t fail_at; /* fail the write that would pass this many bytes; 0: never */
};

static int sink_write(void *ctx, const void *p, size_t n)
{
	struct sink *s = ctx;

	if ((s->fail_at && s->len + n > s->fail_at) || s->len + n > OUT_MAX)
		return -ENOSPC;
	if (s->len + n > s->cap) {
		size_t cap = s->cap ? s->cap : 4096;
		uint8_t *b;

		while (cap < s->len + n)
			cap *= 2;
		b = realloc(s->buf, cap);
		if (!b)
			return -ENOMEM;
		s->buf = b;
		s->cap = cap;
	}
	memcpy(s->buf + s->len, p, n);
	s->len += n;
	return 0;
}

/* ---- an independent reader ---------------------------------------------- */

struct rd {
	const uint8_t *p, *end;
};

static bool rd_varint(struct rd *r, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; shift < 64; shift += 7) {
		uint8_t b;

		if (r->p == r->end)
			return false;
		b = *r->p++;
		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return shift < 63 || b <= 1;
	}
	return false;
}

/* Next field: its number, wire type, and (varint) value or (bytes) body. */
static bool rd_field(struct rd *r, uint32_t *field, uint32_t *wt, uint64_t *v, struct rd *body)
{
	uint64_t tag;

	if (!rd_varint(r, &tag) || (tag >> 3) == 0 || (tag >> 3) > 0xffffffffu)
		return false;
	*field = (uint32_t)(tag >> 3);
	*wt = tag & 7;
	if (*wt == 0)
		return rd_varint(r, v);
	if (*wt != 2 || !rd_varint(r, v) || *v > (uint64_t)(r->end - r->p))
		return false;
	body->p = r->p;
	body->end = r->p + *v;
	r->p += *v;
	return true;
}

static bool utf8_valid(const uint8_t *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		uint8_t c = s[i];
		size_t len;
		uint32_t cp;

		if (c < 0x80) {
			i++;
			continue;
		}
		if ((c & 0xe0) == 0xc0)
			len = 2, cp = c & 0x1f;
		else if ((c & 0xf0) == 0xe0)
			len = 3, cp = c & 0x0f;
		else if ((c & 0xf8) == 0xf0)
			len = 4, cp = c & 0x07;
		else
			return false;
		if (n - i < len)
			return false;
		for (size_t k = 1; k < len; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) ||
		    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += len;
	}
	return true;
}

struct counts {
	uint64_t strings, mappings, functions, locations, sample_types;
};

/* Checks every varint field of @m: string-index fields < strings, id fields < bounds. */
static void check_msg(struct rd m, const uint32_t *str_fields, size_t nstr,
		      const struct counts *c)
{
	uint32_t field, wt;
	uint64_t v;
	struct rd body;

	while (m.p < m.end) {
		FUZZ_ASSERT(rd_field(&m, &field, &wt, &v, &body));
		for (size_t i = 0; i < nstr; i++)
			if (field == str_fields[i])
				FUZZ_ASSERT(wt == 0 && v < c->strings);
	}
}

static uint64_t count_packed_or_single(struct rd m, uint32_t want, uint64_t bound,
				       bool check_bound)
{
	uint32_t field, wt;
	uint64_t v, n = 0;
	struct rd body;

	while (m.p < m.end) {
		FUZZ_ASSERT(rd_field(&m, &field, &wt, &v, &body));
		if (field != want)
			continue;
		if (wt == 0) {
			FUZZ_ASSERT(!check_bound || (v >= 1 && v <= bound));
			n++;
			continue;
		}
		while (body.p < body.end) {
			FUZZ_ASSERT(rd_varint(&body, &v));
			FUZZ_ASSERT(!check_bound || (v >= 1 && v <= bound));
			n++;
		}
	}
	return n;
}

static uint64_t first_id(struct rd m)
{
	uint32_t field, wt;
	uint64_t v;
	struct rd body;

	while (m.p < m.end) {
		FUZZ_ASSERT(rd_field(&m, &field, &wt, &v, &body));
		if (field == 1 && wt == 0)
			return v;
	}
	return 0;
}

static void decode(const uint8_t *p, size_t n)
{
	static const uint32_t vt_strs[] = { 1, 2 }, map_strs[] = { 5, 6 },
			      fn_strs[] = { 2, 3, 4 }, label_strs[] = { 1, 2, 4 };
	struct rd r = { p, p + n };
	struct counts c = { 0 };
	uint32_t field, wt;
	uint64_t v;
	struct rd body;

	while (r.p < r.end) {
		FUZZ_ASSERT(rd_field(&r, &field, &wt, &v, &body));
		switch (field) {
		case 6: /* string_table */
			FUZZ_ASSERT(wt == 2);
			FUZZ_ASSERT(c.strings > 0 || body.p == body.end);
			FUZZ_ASSERT(utf8_valid(body.p, (size_t)(body.end - body.p)));
			c.strings++;
			break;
		case 1:  /* sample_type */
		case 11: /* period_type */
			FUZZ_ASSERT(wt == 2);
			check_msg(body, vt_strs, 2, &c);
			c.sample_types += field == 1;
			break;
		case 3: /* mapping */
			FUZZ_ASSERT(wt == 2);
			FUZZ_ASSERT(first_id(body) == c.mappings + 1);
			check_msg(body, map_strs, 2, &c);
			c.mappings++;
			break;
		case 5: /* function */
			FUZZ_ASSERT(wt == 2);
			FUZZ_ASSERT(first_id(body) == c.functions + 1);
			check_msg(body, fn_strs, 3, &c);
			c.functions++;
			break;
		case 4: { /* location */
			struct rd m = body;
			uint32_t f2, w2;
			uint64_t v2;
			struct rd b2;

			FUZZ_ASSERT(wt == 2);
			FUZZ_ASSERT(first_id(body) == c.locations + 1);
			while (m.p < m.end) {
				FUZZ_ASSERT(rd_field(&m, &f2, &w2, &v2, &b2));
				if (f2 == 2) /* mapping_id */
					FUZZ_ASSERT(w2 == 0 && v2 <= c.mappings);
				if (f2 == 4) /* line: function_id */
					FUZZ_ASSERT(w2 == 2 &&
						    count_packed_or_single(b2, 1, c.functions, true) == 1);
			}
			c.locations++;
			break;
		}
		case 2: { /* sample */
			struct rd m = body;
			uint32_t f2, w2;
			uint64_t v2;
			struct rd b2;

			FUZZ_ASSERT(wt == 2);
			count_packed_or_single(body, 1, c.locations, true);
			FUZZ_ASSERT(count_packed_or_single(body, 2, 0, false) == c.sample_types);
			while (m.p < m.end) {
				FUZZ_ASSERT(rd_field(&m, &f2, &w2, &v2, &b2));
				if (f2 == 3) {
					FUZZ_ASSERT(w2 == 2);
					check_msg(b2, label_strs, 3, &c);
				}
			}
			break;
		}
		case 13: /* comment */
			FUZZ_ASSERT(wt == 0 && v < c.strings);
			break;
		default:
			FUZZ_ASSERT(wt == 0); /* period, times */
		}
	}
	FUZZ_ASSERT(c.strings >= 1);
}

/* ---- the call sequence --------------------------------------------------- */

/* A string, or NULL when the fuzzer says so (a length byte of 255). */
static const char *maybe_str(struct fdp *f, char *buf)
{
	if (f->left && f->p[0] == 255) {
		fdp_u8(f);
		return NULL;
	}
	return fdp_str(f, buf, STR_MAX);
}

/* An id that is usually valid (1..n), sometimes 0 or past the end. */
static uint64_t some_id(struct fdp *f, uint64_t n)
{
	uint8_t b = fdp_u8(f);

	if (b >= 250)
		return b == 255 ? 0 : n + (b - 249);
	return n ? 1 + b % n : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char s1[STR_MAX + 1], s2[STR_MAX + 1], s3[STR_MAX + 1], s4[STR_MAX + 1];
	struct fdp f = fdp_init(data, size);
	struct sink sink = { 0 };
	struct pprof_value_type types[3];
	char tnames[3][2][STR_MAX + 1];
	const char *comments[2];
	char cbuf[2][STR_MAX + 1];
	struct pprof_meta meta = { 0 };
	struct pprof_enc *e;
	uint64_t nmap = 0, nfn = 0, nloc = 0;
	int rc;

	meta.n_sample_types = 1 + fdp_u8(&f) % 3;
	for (size_t i = 0; i < meta.n_sample_types; i++) {
		types[i].type = fdp_str(&f, tnames[i][0], STR_MAX);
		types[i].unit = fdp_str(&f, tnames[i][1], STR_MAX);
	}
	meta.sample_types = types;
	meta.period_type = (struct pprof_value_type){ maybe_str(&f, s1), maybe_str(&f, s2) };
	meta.period = (int64_t)fdp_u64(&f);
	meta.time_nanos = (int64_t)fdp_u64(&f);
	meta.duration_nanos = (int64_t)fdp_u64(&f);
	meta.n_comments = fdp_u8(&f) % 3;
	for (size_t i = 0; i < meta.n_comments; i++)
		comments[i] = fdp_str(&f, cbuf[i], STR_MAX);
	meta.comments = meta.n_comments ? comments : NULL;
	sink.fail_at = fdp_u8(&f) < 16 ? fdp_u16(&f) : 0;

	if (pprof_enc_new(&e, &meta, (struct pprof_sink){ sink_write, &sink }))
		goto out;
	for (int steps = 0; f.left && steps < 4096; steps++) {
		switch (fdp_u8(&f) % 5) {
		case 0: {
			struct pprof_mapping m = {
				.start = fdp_u64(&f), .limit = fdp_u64(&f), .offset = fdp_u64(&f),
			};
			uint8_t b = fdp_u8(&f);

			m.filename = maybe_str(&f, s1);
			m.build_id = maybe_str(&f, s2);
			m.has_functions = b & 1, m.has_filenames = b & 2;
			m.has_line_numbers = b & 4, m.has_inline_frames = b & 8;
			if (pprof_add_mapping(e, &m) > 0)
				nmap++;
			break;
		}
		case 1: {
			struct pprof_function fn = { 0 };
			int64_t id;

			fn.name = maybe_str(&f, s1);
			fn.system_name = maybe_str(&f, s2);
			fn.filename = maybe_str(&f, s3);
			fn.start_line = (int64_t)fdp_u32(&f);
			id = pprof_add_function(e, &fn);
			if (id > 0) {
				FUZZ_ASSERT((uint64_t)id <= nfn + 1);
				nfn += (uint64_t)id == nfn + 1;
			}
			break;
		}
		case 2: {
			struct pprof_line lines[4];
			size_t nl = fdp_u8(&f) % 5;
			uint64_t mid = some_id(&f, nmap), addr = fdp_u64(&f);

			for (size_t i = 0; i < nl; i++)
				lines[i] = (struct pprof_line){ some_id(&f, nfn), (int64_t)fdp_u32(&f) };
			if (pprof_add_location(e, mid, addr, lines, nl) > 0)
				nloc++;
			break;
		}
		case 3: {
			uint64_t locs[16];
			int64_t vals[4];
			struct pprof_label labels[3];
			char *lstr[3] = { s2, s3, s4 };
			size_t nlocs = fdp_u8(&f) % 17, nv = meta.n_sample_types, nlab;

			if (fdp_u8(&f) == 0)
				nv = fdp_u8(&f) % 5; /* sometimes the wrong count */
			for (size_t i = 0; i < nlocs; i++)
				locs[i] = some_id(&f, nloc);
			for (size_t i = 0; i < nv; i++)
				vals[i] = (int64_t)fdp_u64(&f);
			nlab = fdp_u8(&f) % 4;
			for (size_t i = 0; i < nlab; i++) {
				/* The first key is the fuzzer's (NULL and "" are errors). */
				labels[i].key = i == 0 ? maybe_str(&f, s1) : i == 1 ? "tid" : "comm";
				if (fdp_u8(&f) & 1) {
					labels[i].str = NULL;
					labels[i].num = (int64_t)fdp_u64(&f);
					labels[i].num_unit = maybe_str(&f, lstr[i]);
				} else {
					labels[i].str = fdp_str(&f, lstr[i], STR_MAX);
					labels[i].num_unit = NULL;
				}
			}
			(void)pprof_add_sample(e, locs, nlocs, vals, nv, labels, nlab);
			break;
		}
		case 4:
			/* Exact duplicates must come back with the same id. */
			if (nfn) {
				struct pprof_function fn = { .name = "dup", .filename = "dup.c" };
				int64_t a = pprof_add_function(e, &fn), b = pprof_add_function(e, &fn);

				FUZZ_ASSERT(a < 0 || a == b);
				if (a > 0 && (uint64_t)a == nfn + 1)
					nfn++;
			}
			break;
		}
	}
	rc = pprof_finish(e);
	/* After finish every call fails; finish is idempotent. */
	FUZZ_ASSERT(pprof_add_mapping(e, &(struct pprof_mapping){ 0 }) < 0);
	FUZZ_ASSERT(pprof_finish(e) != 0);
	if (rc == 0)
		decode(sink.buf, sink.len);
	pprof_enc_free(e);
out:
	free(sink.buf);
	return 0;
}
