// SPDX-License-Identifier: MIT
/*
 * pprof: a streaming encoder for profile.proto (see pprof.h and
 * profile.proto for the contract).
 *
 * The message API and the output stream; the wire format is pbwire.h, the
 * de-duplication tables pprof_tables.c.
 *
 * A top-level repeated field may be split and interleaved with others,
 * which is what lets us stream: every Sample, Location, Function, Mapping
 * and string_table entry is its own top-level field, written as soon as it
 * is known.  Only a nested message needs its
 * length before its bytes, so each one is built in a scratch buffer first.
 *
 * Memory: one fixed output buffer, one scratch buffer as large as the
 * largest single message (with a hard cap), and the two de-duplication
 * tables (strings, functions), each capped.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"
#include "pprof_enc.h"

/* ---- errors and output ---- */

/* Records the first error; returns the sticky one. */
int pprof_fail(struct pprof_enc *e, int err)
{
	if (!e->err)
		e->err = err;
	return e->err;
}

static void flush(struct pprof_enc *e)
{
	int r;

	if (e->err || !e->out_len)
		return;
	r = e->sink.write(e->sink.ctx, e->out, e->out_len);
	if (r < 0)
		pprof_fail(e, r);
	else if (r > 0)
		pprof_fail(e, -EIO); /* not a valid sink return */
	e->out_len = 0;
}

/* Appends bytes to the output, flushing as needed.  Large blocks bypass. */
static void out_write(struct pprof_enc *e, const void *p, size_t n)
{
	int r;

	if (e->err || !n)
		return;
	if (n > OUT_CAP - e->out_len) {
		flush(e);
		if (e->err)
			return;
		if (n >= OUT_CAP) {
			r = e->sink.write(e->sink.ctx, p, n);
			if (r)
				pprof_fail(e, r < 0 ? r : -EIO);
			return;
		}
	}
	memcpy(e->out + e->out_len, p, n);
	e->out_len += n;
}

/* Writes a top-level length-delimited field: header, then @body. */
void pprof_out_len_field(struct pprof_enc *e, unsigned field, const void *body, size_t len)
{
	uint8_t hdr[LEN_HDR_MAX];

	out_write(e, hdr, (size_t)(put_len_hdr(hdr, field, len) - hdr));
	out_write(e, body, len);
}

/* Writes a top-level varint field (omitted when zero). */
static void out_int_field(struct pprof_enc *e, unsigned field, int64_t v)
{
	uint8_t tmp[FIELD_MAX];

	out_write(e, tmp, (size_t)(put_int_field(tmp, field, v) - tmp));
}

/* Makes room for @extra more bytes in the scratch buffer. */
static int buf_reserve(struct buf *b, size_t extra)
{
	if (extra > MAX_MESSAGE - b->len)
		return -E2BIG;
	return grow_to((void **)&b->p, &b->cap, b->len + extra, 1, 256, MAX_MESSAGE);
}

/* ---- public API ---- */

/* Encodes a ValueType into @buf, its length in *@len; 0 or an error. */
static int value_type(struct pprof_enc *e, const struct pprof_value_type *vt,
		      uint8_t buf[VALUE_TYPE_MAX], size_t *len)
{
	int64_t type = pprof_intern(e, vt->type);
	int64_t unit = pprof_intern(e, vt->unit);
	uint8_t *p = buf;

	if (e->err)
		return e->err;
	p = put_int_field(p, VALUE_TYPE_TYPE, type);
	p = put_int_field(p, VALUE_TYPE_UNIT, unit);
	*len = (size_t)(p - buf);
	return 0;
}

static int write_meta(struct pprof_enc *e, const struct pprof_meta *m)
{
	uint8_t vt[VALUE_TYPE_MAX];
	size_t len;

	for (size_t i = 0; i < m->n_sample_types; i++) {
		if (value_type(e, &m->sample_types[i], vt, &len))
			return e->err;
		pprof_out_len_field(e, PROFILE_SAMPLE_TYPE, vt, len);
	}
	if (m->period_type.type || m->period_type.unit) {
		if (value_type(e, &m->period_type, vt, &len))
			return e->err;
		pprof_out_len_field(e, PROFILE_PERIOD_TYPE, vt, len);
	}
	out_int_field(e, PROFILE_PERIOD, m->period);
	out_int_field(e, PROFILE_TIME_NANOS, m->time_nanos);
	out_int_field(e, PROFILE_DURATION_NANOS, m->duration_nanos);
	if (m->default_sample_type) {
		int64_t idx = pprof_intern(e, m->default_sample_type);

		if (idx < 0)
			return e->err;
		out_int_field(e, PROFILE_DEFAULT_SAMPLE_TYPE, idx);
	}

	/*
	 * Comments are string indexes.  One unpacked field each: readers
	 * accept both forms, and it needs no buffer.
	 */
	for (size_t i = 0; i < m->n_comments && m->comments; i++) {
		uint8_t tmp[FIELD_MAX], *p = tmp;
		int64_t idx = pprof_intern(e, m->comments[i]);

		if (idx < 0)
			return e->err;
		/* put_int_field would drop index 0 (""), so tag by hand. */
		p = put_tag(p, PROFILE_COMMENT, WT_VARINT);
		p = put_varint(p, (uint64_t)idx);
		out_write(e, tmp, (size_t)(p - tmp));
	}
	return e->err;
}

int pprof_enc_new(struct pprof_enc **out, const struct pprof_meta *meta,
		  struct pprof_sink sink)
{
	struct pprof_enc *e;
	int err;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!meta || !sink.write || !meta->n_sample_types || !meta->sample_types)
		return -EINVAL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->sink = sink;
	e->n_sample_types = meta->n_sample_types;
	err = pprof_tables_init(e);
	if (err) {
		pprof_enc_free(e);
		return err;
	}
	/* string_table[0] must be "": readers check it. */
	pprof_intern(e, "");
	err = write_meta(e, meta);
	if (err) {
		pprof_enc_free(e);
		return err;
	}
	*out = e;
	return 0;
}

/* Common entry check: NULL encoder, sticky error, use after finish. */
static int enc_check(struct pprof_enc *e)
{
	if (!e)
		return -EINVAL;
	if (e->err)
		return e->err;
	if (e->finished)
		return pprof_fail(e, -EINVAL);
	return 0;
}

int64_t pprof_add_mapping(struct pprof_enc *e, const struct pprof_mapping *m)
{
	uint8_t msg[MAPPING_MAX], *p = msg;
	int64_t filename, build_id;
	int err;

	if ((err = enc_check(e)))
		return err;
	if (!m)
		return pprof_fail(e, -EINVAL);
	filename = pprof_intern(e, m->filename);
	build_id = pprof_intern(e, m->build_id);
	if (e->err)
		return e->err;

	p = put_uint_field(p, MAPPING_ID, e->n_mappings + 1);
	p = put_uint_field(p, MAPPING_MEMORY_START, m->start);
	p = put_uint_field(p, MAPPING_MEMORY_LIMIT, m->limit);
	p = put_uint_field(p, MAPPING_FILE_OFFSET, m->offset);
	p = put_int_field(p, MAPPING_FILENAME, filename);
	p = put_int_field(p, MAPPING_BUILD_ID, build_id);
	p = put_uint_field(p, MAPPING_HAS_FUNCTIONS, m->has_functions);
	p = put_uint_field(p, MAPPING_HAS_FILENAMES, m->has_filenames);
	p = put_uint_field(p, MAPPING_HAS_LINE_NUMBERS, m->has_line_numbers);
	p = put_uint_field(p, MAPPING_HAS_INLINE_FRAMES, m->has_inline_frames);
	pprof_out_len_field(e, PROFILE_MAPPING, msg, (size_t)(p - msg));
	if (e->err)
		return e->err;
	return (int64_t)++e->n_mappings;
}

int64_t pprof_add_function(struct pprof_enc *e, const struct pprof_function *f)
{
	struct fn_key key = { 0 };
	uint8_t msg[FUNCTION_MAX], *p = msg;
	bool created;
	int64_t id;
	int err;

	if ((err = enc_check(e)))
		return err;
	if (!f)
		return pprof_fail(e, -EINVAL);
	/*
	 * Strings are interned first, so the key is four integers: equal
	 * strings have equal indexes.  An interned string of a duplicate
	 * function was already written, so this writes nothing extra.
	 */
	key.name = pprof_intern(e, f->name);
	key.system_name = f->system_name ? pprof_intern(e, f->system_name) : key.name;
	key.filename = pprof_intern(e, f->filename);
	key.start_line = f->start_line;
	if (e->err)
		return e->err;

	id = pprof_function_id(e, &key, &created);
	if (id < 0 || !created)
		return id < 0 ? pprof_fail(e, (int)id) : id;

	p = put_uint_field(p, FUNCTION_ID, (uint64_t)id);
	p = put_int_field(p, FUNCTION_NAME, key.name);
	p = put_int_field(p, FUNCTION_SYSTEM_NAME, key.system_name);
	p = put_int_field(p, FUNCTION_FILENAME, key.filename);
	p = put_int_field(p, FUNCTION_START_LINE, key.start_line);
	pprof_out_len_field(e, PROFILE_FUNCTION, msg, (size_t)(p - msg));
	if (e->err)
		return e->err;
	return id;
}

int64_t pprof_add_location(struct pprof_enc *e, uint64_t mapping_id,
			   uint64_t address, const struct pprof_line *lines,
			   size_t n_lines)
{
	struct buf *b;
	uint8_t *p;
	int err;

	if ((err = enc_check(e)))
		return err;
	b = &e->scratch;
	/* Readers reject references to ids that do not exist. */
	if (mapping_id > e->n_mappings || (n_lines && !lines))
		return pprof_fail(e, -EINVAL);
	for (size_t i = 0; i < n_lines; i++)
		if (!lines[i].function_id || lines[i].function_id > e->n_functions)
			return pprof_fail(e, -EINVAL);
	if (n_lines > MAX_MESSAGE / (LEN_HDR_MAX + LINE_MAX_BYTES))
		return pprof_fail(e, -E2BIG);

	b->len = 0;
	err = buf_reserve(b, 3 * FIELD_MAX +
				     n_lines * (LEN_HDR_MAX + LINE_MAX_BYTES));
	if (err)
		return pprof_fail(e, err);
	p = b->p;
	p = put_uint_field(p, LOCATION_ID, e->n_locations + 1);
	p = put_uint_field(p, LOCATION_MAPPING_ID, mapping_id);
	p = put_uint_field(p, LOCATION_ADDRESS, address);
	for (size_t i = 0; i < n_lines; i++) {
		uint8_t line[LINE_MAX_BYTES], *q = line;

		q = put_uint_field(q, LINE_FUNCTION_ID, lines[i].function_id);
		q = put_int_field(q, LINE_LINE, lines[i].line);
		p = put_submsg(p, LOCATION_LINE, line, (size_t)(q - line));
	}
	b->len = (size_t)(p - b->p);
	pprof_out_len_field(e, PROFILE_LOCATION, b->p, b->len);
	if (e->err)
		return e->err;
	return (int64_t)++e->n_locations;
}

/* Encodes one Label into @buf (LABEL_MAX bytes); returns its length. */
static size_t encode_label(struct pprof_enc *e, const struct pprof_label *l,
			   uint8_t *buf)
{
	uint8_t *p = buf;
	int64_t key = pprof_intern(e, l->key);

	p = put_int_field(p, LABEL_KEY, key);
	if (l->str) {
		p = put_int_field(p, LABEL_STR, pprof_intern(e, l->str));
	} else {
		p = put_int_field(p, LABEL_NUM, l->num);
		p = put_int_field(p, LABEL_NUM_UNIT, pprof_intern(e, l->num_unit));
	}
	return (size_t)(p - buf);
}

int pprof_add_sample(struct pprof_enc *e, const uint64_t *location_ids,
		     size_t n_locations, const int64_t *values,
		     size_t n_values, const struct pprof_label *labels,
		     size_t n_labels)
{
	struct buf *b;
	size_t bound;
	uint8_t *p;
	int err;

	if ((err = enc_check(e)))
		return err;
	b = &e->scratch;
	/* Readers reject a sample whose values do not match sample_type. */
	if (n_values != e->n_sample_types || !values ||
	    (n_locations && !location_ids) || (n_labels && !labels))
		return pprof_fail(e, -EINVAL);
	for (size_t i = 0; i < n_locations; i++)
		if (!location_ids[i] || location_ids[i] > e->n_locations)
			return pprof_fail(e, -EINVAL);
	for (size_t i = 0; i < n_labels; i++)
		if (!labels[i].key || !*labels[i].key)
			return pprof_fail(e, -EINVAL);
	if (n_locations > MAX_MESSAGE / VARINT_MAX ||
	    n_values > MAX_MESSAGE / VARINT_MAX ||
	    n_labels > MAX_MESSAGE / (LEN_HDR_MAX + LABEL_MAX))
		return pprof_fail(e, -E2BIG);

	/* Worst case: every varint ten bytes. */
	bound = 2 * LEN_HDR_MAX + (n_locations + n_values) * VARINT_MAX +
		n_labels * (LEN_HDR_MAX + LABEL_MAX);
	b->len = 0;
	if ((err = buf_reserve(b, bound)))
		return pprof_fail(e, err);
	p = b->p;
	p = put_packed(p, SAMPLE_LOCATION_ID, location_ids, n_locations);
	p = put_packed_int(p, SAMPLE_VALUE, values, n_values);
	for (size_t i = 0; i < n_labels; i++) {
		uint8_t label[LABEL_MAX];
		size_t len = encode_label(e, &labels[i], label);

		p = put_submsg(p, SAMPLE_LABEL, label, len);
	}
	if (e->err) /* a label string could not be interned */
		return e->err;
	b->len = (size_t)(p - b->p);
	pprof_out_len_field(e, PROFILE_SAMPLE, b->p, b->len);
	return e->err;
}

int pprof_finish(struct pprof_enc *e)
{
	if (!e)
		return -EINVAL;
	if (!e->finished) {
		flush(e);
		e->finished = true;
	}
	return e->err;
}

void pprof_enc_free(struct pprof_enc *e)
{
	if (!e)
		return;
	pprof_tables_free(e);
	free(e->scratch.p);
	free(e);
}
