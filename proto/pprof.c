// SPDX-License-Identifier: MIT
/*
 * pprof: a streaming encoder for profile.proto (see pprof.h and
 * profile.proto for the contract).
 *
 * Protobuf in one paragraph: a message is a sequence of fields, each a tag
 * (field number << 3 | wire type) followed by a varint (wire type 0) or a
 * length and that many bytes (wire type 2: strings, nested messages, packed
 * repeated scalars).  A top-level repeated field may be split and
 * interleaved with others, which is what lets us stream: every Sample,
 * Location, Function, Mapping and string_table entry is its own top-level
 * field, written as soon as it is known.  Only a nested message needs its
 * length before its bytes, so each one is built in a scratch buffer first.
 *
 * Memory: one fixed output buffer, one scratch buffer as large as the
 * largest single message (with a hard cap), and the two de-duplication
 * tables (strings, functions), each capped.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "arena.h"
#include "hash.h"
#include "pprof.h"

/* Field numbers, from profile.proto. */
enum {
	PROFILE_SAMPLE_TYPE = 1,
	PROFILE_SAMPLE = 2,
	PROFILE_MAPPING = 3,
	PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5,
	PROFILE_STRING_TABLE = 6,
	PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10,
	PROFILE_PERIOD_TYPE = 11,
	PROFILE_PERIOD = 12,
	PROFILE_COMMENT = 13,

	VALUE_TYPE_TYPE = 1,
	VALUE_TYPE_UNIT = 2,

	SAMPLE_LOCATION_ID = 1,
	SAMPLE_VALUE = 2,
	SAMPLE_LABEL = 3,

	LABEL_KEY = 1,
	LABEL_STR = 2,
	LABEL_NUM = 3,
	LABEL_NUM_UNIT = 4,

	MAPPING_ID = 1,
	MAPPING_MEMORY_START = 2,
	MAPPING_MEMORY_LIMIT = 3,
	MAPPING_FILE_OFFSET = 4,
	MAPPING_FILENAME = 5,
	MAPPING_BUILD_ID = 6,
	MAPPING_HAS_FUNCTIONS = 7,
	MAPPING_HAS_FILENAMES = 8,
	MAPPING_HAS_LINE_NUMBERS = 9,
	MAPPING_HAS_INLINE_FRAMES = 10,

	LOCATION_ID = 1,
	LOCATION_MAPPING_ID = 2,
	LOCATION_ADDRESS = 3,
	LOCATION_LINE = 4,

	LINE_FUNCTION_ID = 1,
	LINE_LINE = 2,

	FUNCTION_ID = 1,
	FUNCTION_NAME = 2,
	FUNCTION_SYSTEM_NAME = 3,
	FUNCTION_FILENAME = 4,
	FUNCTION_START_LINE = 5,
};

enum { WT_VARINT = 0, WT_LEN = 2 };

/* A varint holds 7 bits a byte: at most 10 bytes for 64 bits. */
#define VARINT_MAX 10
/* Upper bound of one tag + varint field (tags here fit in one byte). */
#define FIELD_MAX (1 + VARINT_MAX)
/* Upper bound of a tag + length prefix. */
#define LEN_HDR_MAX (1 + VARINT_MAX)

/*
 * Small messages made only of varint fields are built on the stack; these
 * are their worst-case sizes (every field present, 10-byte varints).
 */
#define VALUE_TYPE_MAX (2 * FIELD_MAX)
#define LABEL_MAX (4 * FIELD_MAX)
#define LINE_MAX_BYTES (2 * FIELD_MAX)
#define FUNCTION_MAX (5 * FIELD_MAX)
#define MAPPING_MAX (10 * FIELD_MAX)

/* Bytes collected before a sink write: few syscalls, little memory. */
#define OUT_CAP (64 * 1024)

/*
 * Caps, so that hostile or runaway input (symbol names come from binaries
 * we do not trust) cannot make the encoder use unbounded memory.  Going
 * over a count cap is an error (-E2BIG); an over-long string is truncated,
 * since a profile with one clipped C++ template name beats no profile.
 */
#define MAX_STRING_LEN (1u << 20)
#define MAX_STRINGS (1u << 22)
#define MAX_STRING_BYTES (256u << 20)
#define MAX_FUNCTIONS (1u << 22)
#define MAX_MESSAGE (64u << 20)

/* Arena blocks for interned strings; big strings get their own. */
#define CHUNK_SIZE (64 * 1024)

struct str_slot {
	const char *s; /* NULL: free slot */
	uint64_t hash;
	uint32_t len;
	uint32_t idx;
};

struct fn_slot {
	uint64_t id; /* 0: free slot */
	int64_t name, system_name, filename, start_line;
};

/* A growable byte buffer, for nested messages.  Capped at MAX_MESSAGE. */
struct buf {
	uint8_t *p;
	size_t len, cap;
};

struct pprof_enc {
	struct pprof_sink sink;
	int err; /* sticky: the first error, 0 while all is well */
	bool finished;
	size_t n_sample_types;

	uint64_t n_mappings, n_locations, n_functions;

	struct str_slot *strs; /* open addressing, power-of-two size */
	size_t strs_cap;
	uint32_t n_strs;
	size_t str_bytes;
	struct arena strings; /* the interned strings' bytes */

	struct fn_slot *fns; /* open addressing, power-of-two size */
	size_t fns_cap;

	struct buf scratch;

	size_t out_len;
	uint8_t out[OUT_CAP];
};

/* ---- protobuf primitives: write into a buffer the caller sized ---- */

static size_t varint_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static uint8_t *put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static uint8_t *put_tag(uint8_t *p, unsigned field, unsigned wire_type)
{
	return put_varint(p, (uint64_t)field << 3 | wire_type);
}

/*
 * A varint field, left out when zero: proto3 readers treat a missing
 * scalar as zero, so writing it would only cost bytes.  int64 values go
 * through here too: protobuf encodes them as their two's complement
 * uint64, so a negative number takes ten bytes.
 */
static uint8_t *put_uint_field(uint8_t *p, unsigned field, uint64_t v)
{
	if (!v)
		return p;
	p = put_tag(p, field, WT_VARINT);
	return put_varint(p, v);
}

static uint8_t *put_int_field(uint8_t *p, unsigned field, int64_t v)
{
	return put_uint_field(p, field, (uint64_t)v);
}

/* Tag and length of a length-delimited field whose body follows. */
static uint8_t *put_len_hdr(uint8_t *p, unsigned field, size_t len)
{
	p = put_tag(p, field, WT_LEN);
	return put_varint(p, len);
}

/* A nested message (already encoded) at @body, @len bytes. */
static uint8_t *put_submsg(uint8_t *p, unsigned field, const uint8_t *body,
			   size_t len)
{
	p = put_len_hdr(p, field, len);
	memcpy(p, body, len);
	return p + len;
}

/*
 * A packed repeated varint field (proto3's default encoding for repeated
 * scalars): one tag, the byte length of all values, then the values.  The
 * length comes first, hence the two passes.  Nothing when @n is 0.
 */
static uint8_t *put_packed(uint8_t *p, unsigned field, const uint64_t *v,
			   size_t n)
{
	size_t len = 0;

	if (!n)
		return p;
	for (size_t i = 0; i < n; i++)
		len += varint_len(v[i]);
	p = put_len_hdr(p, field, len);
	for (size_t i = 0; i < n; i++)
		p = put_varint(p, v[i]);
	return p;
}

/* The same for int64 values (same bytes as their uint64 cast). */
static uint8_t *put_packed_int(uint8_t *p, unsigned field, const int64_t *v,
			       size_t n)
{
	size_t len = 0;

	if (!n)
		return p;
	for (size_t i = 0; i < n; i++)
		len += varint_len((uint64_t)v[i]);
	p = put_len_hdr(p, field, len);
	for (size_t i = 0; i < n; i++)
		p = put_varint(p, (uint64_t)v[i]);
	return p;
}

/* ---- errors and output ---- */

/* Records the first error; returns the sticky one. */
static int fail(struct pprof_enc *e, int err)
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
		fail(e, r);
	else if (r > 0)
		fail(e, -EIO); /* not a valid sink return */
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
				fail(e, r < 0 ? r : -EIO);
			return;
		}
	}
	memcpy(e->out + e->out_len, p, n);
	e->out_len += n;
}

/* Writes a top-level length-delimited field: header, then @body. */
static void out_len_field(struct pprof_enc *e, unsigned field,
			  const void *body, size_t len)
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

/* ---- the string table ---- */

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
static int64_t intern(struct pprof_enc *e, const char *s)
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
		return fail(e, err);
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
		idx = fail(e, -E2BIG);
		goto out;
	}
	if (2 * (e->n_strs + 1) > e->strs_cap) { /* keep load <= 1/2 */
		if ((err = strs_grow(e)) < 0) {
			idx = fail(e, err);
			goto out;
		}
		for (i = h & (e->strs_cap - 1); e->strs[i].s;
		     i = (i + 1) & (e->strs_cap - 1))
			;
	}
	/* "" needs a non-NULL pointer too: NULL marks a free slot. */
	copy = len ? arena_alloc(&e->strings, len) : NULL;
	if (len && !copy) {
		idx = fail(e, -ENOMEM);
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
	out_len_field(e, PROFILE_STRING_TABLE, s, len);
	if (e->err)
		idx = e->err;
out:
	free(fixed);
	return idx;
}

/* ---- the function table ---- */

static uint64_t fn_hash(const struct fn_slot *f)
{
	const int64_t key[] = { f->name, f->system_name, f->filename, f->start_line };

	return hash_bytes(key, sizeof(key));
}

static bool fn_equal(const struct fn_slot *a, const struct fn_slot *b)
{
	return a->name == b->name && a->system_name == b->system_name &&
	       a->filename == b->filename && a->start_line == b->start_line;
}

static int fns_grow(struct pprof_enc *e)
{
	size_t cap = e->fns_cap ? e->fns_cap * 2 : 256;
	struct fn_slot *t = calloc(cap, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < e->fns_cap; i++) {
		size_t j;

		if (!e->fns[i].id)
			continue;
		for (j = fn_hash(&e->fns[i]) & (cap - 1); t[j].id;
		     j = (j + 1) & (cap - 1))
			;
		t[j] = e->fns[i];
	}
	free(e->fns);
	e->fns = t;
	e->fns_cap = cap;
	return 0;
}

/* ---- public API ---- */

/* Encodes a ValueType into @buf, its length in *@len; 0 or an error. */
static int value_type(struct pprof_enc *e, const struct pprof_value_type *vt,
		      uint8_t buf[VALUE_TYPE_MAX], size_t *len)
{
	int64_t type = intern(e, vt->type);
	int64_t unit = intern(e, vt->unit);
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
		out_len_field(e, PROFILE_SAMPLE_TYPE, vt, len);
	}
	if (m->period_type.type || m->period_type.unit) {
		if (value_type(e, &m->period_type, vt, &len))
			return e->err;
		out_len_field(e, PROFILE_PERIOD_TYPE, vt, len);
	}
	out_int_field(e, PROFILE_PERIOD, m->period);
	out_int_field(e, PROFILE_TIME_NANOS, m->time_nanos);
	out_int_field(e, PROFILE_DURATION_NANOS, m->duration_nanos);

	/*
	 * Comments are string indexes.  One unpacked field each: readers
	 * accept both forms, and it needs no buffer.
	 */
	for (size_t i = 0; i < m->n_comments && m->comments; i++) {
		uint8_t tmp[FIELD_MAX], *p = tmp;
		int64_t idx = intern(e, m->comments[i]);

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
	arena_init(&e->strings, CHUNK_SIZE, NULL);
	err = strs_grow(e);
	if (!err)
		err = fns_grow(e);
	if (err) {
		pprof_enc_free(e);
		return err;
	}
	/* string_table[0] must be "": readers check it. */
	intern(e, "");
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
		return fail(e, -EINVAL);
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
		return fail(e, -EINVAL);
	filename = intern(e, m->filename);
	build_id = intern(e, m->build_id);
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
	out_len_field(e, PROFILE_MAPPING, msg, (size_t)(p - msg));
	if (e->err)
		return e->err;
	return (int64_t)++e->n_mappings;
}

int64_t pprof_add_function(struct pprof_enc *e, const struct pprof_function *f)
{
	struct fn_slot key = { 0 }, *slot;
	uint8_t msg[FUNCTION_MAX], *p = msg;
	size_t i;
	int err;

	if ((err = enc_check(e)))
		return err;
	if (!f)
		return fail(e, -EINVAL);
	/*
	 * Strings are interned first, so the key is four integers: equal
	 * strings have equal indexes.  An interned string of a duplicate
	 * function was already written, so this writes nothing extra.
	 */
	key.name = intern(e, f->name);
	key.system_name = f->system_name ? intern(e, f->system_name) : key.name;
	key.filename = intern(e, f->filename);
	key.start_line = f->start_line;
	if (e->err)
		return e->err;

	for (i = fn_hash(&key) & (e->fns_cap - 1); e->fns[i].id;
	     i = (i + 1) & (e->fns_cap - 1))
		if (fn_equal(&e->fns[i], &key))
			return (int64_t)e->fns[i].id;

	if (e->n_functions >= MAX_FUNCTIONS)
		return fail(e, -E2BIG);
	if (2 * (e->n_functions + 1) > e->fns_cap) { /* keep load <= 1/2 */
		if ((err = fns_grow(e)))
			return fail(e, err);
		for (i = fn_hash(&key) & (e->fns_cap - 1); e->fns[i].id;
		     i = (i + 1) & (e->fns_cap - 1))
			;
	}
	slot = &e->fns[i];
	*slot = key;
	slot->id = ++e->n_functions;

	p = put_uint_field(p, FUNCTION_ID, slot->id);
	p = put_int_field(p, FUNCTION_NAME, key.name);
	p = put_int_field(p, FUNCTION_SYSTEM_NAME, key.system_name);
	p = put_int_field(p, FUNCTION_FILENAME, key.filename);
	p = put_int_field(p, FUNCTION_START_LINE, key.start_line);
	out_len_field(e, PROFILE_FUNCTION, msg, (size_t)(p - msg));
	if (e->err)
		return e->err;
	return (int64_t)slot->id;
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
		return fail(e, -EINVAL);
	for (size_t i = 0; i < n_lines; i++)
		if (!lines[i].function_id || lines[i].function_id > e->n_functions)
			return fail(e, -EINVAL);
	if (n_lines > MAX_MESSAGE / (LEN_HDR_MAX + LINE_MAX_BYTES))
		return fail(e, -E2BIG);

	b->len = 0;
	err = buf_reserve(b, 3 * FIELD_MAX +
				     n_lines * (LEN_HDR_MAX + LINE_MAX_BYTES));
	if (err)
		return fail(e, err);
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
	out_len_field(e, PROFILE_LOCATION, b->p, b->len);
	if (e->err)
		return e->err;
	return (int64_t)++e->n_locations;
}

/* Encodes one Label into @buf (LABEL_MAX bytes); returns its length. */
static size_t encode_label(struct pprof_enc *e, const struct pprof_label *l,
			   uint8_t *buf)
{
	uint8_t *p = buf;
	int64_t key = intern(e, l->key);

	p = put_int_field(p, LABEL_KEY, key);
	if (l->str) {
		p = put_int_field(p, LABEL_STR, intern(e, l->str));
	} else {
		p = put_int_field(p, LABEL_NUM, l->num);
		p = put_int_field(p, LABEL_NUM_UNIT, intern(e, l->num_unit));
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
		return fail(e, -EINVAL);
	for (size_t i = 0; i < n_locations; i++)
		if (!location_ids[i] || location_ids[i] > e->n_locations)
			return fail(e, -EINVAL);
	for (size_t i = 0; i < n_labels; i++)
		if (!labels[i].key || !*labels[i].key)
			return fail(e, -EINVAL);
	if (n_locations > MAX_MESSAGE / VARINT_MAX ||
	    n_values > MAX_MESSAGE / VARINT_MAX ||
	    n_labels > MAX_MESSAGE / (LEN_HDR_MAX + LABEL_MAX))
		return fail(e, -E2BIG);

	/* Worst case: every varint ten bytes. */
	bound = 2 * LEN_HDR_MAX + (n_locations + n_values) * VARINT_MAX +
		n_labels * (LEN_HDR_MAX + LABEL_MAX);
	b->len = 0;
	if ((err = buf_reserve(b, bound)))
		return fail(e, err);
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
	out_len_field(e, PROFILE_SAMPLE, b->p, b->len);
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
	arena_free(&e->strings);
	free(e->strs);
	free(e->fns);
	free(e->scratch.p);
	free(e);
}
