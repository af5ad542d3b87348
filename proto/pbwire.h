/* SPDX-License-Identifier: MIT */
/*
 * pbwire: protobuf's wire format, written into buffers the caller sized.
 *
 * A message is a sequence of fields, each a tag (field number << 3 | wire
 * type) followed by a varint (wire type 0) or a length and that many
 * bytes (wire type 2: strings, nested messages, packed repeated scalars).
 */
#ifndef CPROF_PBWIRE_H
#define CPROF_PBWIRE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum { WT_VARINT = 0, WT_LEN = 2 };

/* A varint holds 7 bits a byte: at most 10 bytes for 64 bits. */
#define VARINT_MAX 10
/* Upper bound of one tag + varint field (tags here fit in one byte). */
#define FIELD_MAX (1 + VARINT_MAX)
/* Upper bound of a tag + length prefix. */
#define LEN_HDR_MAX (1 + VARINT_MAX)

static inline size_t varint_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static inline uint8_t *put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static inline uint8_t *put_tag(uint8_t *p, unsigned field, unsigned wire_type)
{
	return put_varint(p, (uint64_t)field << 3 | wire_type);
}

/*
 * A varint field, left out when zero: proto3 readers treat a missing
 * scalar as zero, so writing it would only cost bytes.  int64 values go
 * through here too: protobuf encodes them as their two's complement
 * uint64, so a negative number takes ten bytes.
 */
static inline uint8_t *put_uint_field(uint8_t *p, unsigned field, uint64_t v)
{
	if (!v)
		return p;
	p = put_tag(p, field, WT_VARINT);
	return put_varint(p, v);
}

static inline uint8_t *put_int_field(uint8_t *p, unsigned field, int64_t v)
{
	return put_uint_field(p, field, (uint64_t)v);
}

/* Tag and length of a length-delimited field whose body follows. */
static inline uint8_t *put_len_hdr(uint8_t *p, unsigned field, size_t len)
{
	p = put_tag(p, field, WT_LEN);
	return put_varint(p, len);
}

/* A nested message (already encoded) at @body, @len bytes. */
static inline uint8_t *put_submsg(uint8_t *p, unsigned field, const uint8_t *body,
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
static inline uint8_t *put_packed(uint8_t *p, unsigned field, const uint64_t *v, size_t n)
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

/*
 * The same for int64 values: the same bytes as their uint64 cast, and C
 * lets an object be read through its type's unsigned counterpart.
 */
static inline uint8_t *put_packed_int(uint8_t *p, unsigned field, const int64_t *v, size_t n)
{
	return put_packed(p, field, (const uint64_t *)v, n);
}

#endif
