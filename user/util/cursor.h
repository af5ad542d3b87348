/* SPDX-License-Identifier: MIT */
/*
 * cursor: reading untrusted bytes without passing their end.
 *
 * Fixed-size little-endian values, LEB128 and length-prefixed blocks.  A
 * read that runs out (or a value that cannot be decoded) sets the cursor's
 * bad flag and reads as 0; callers check the flag once after a group of
 * reads instead of after each one.
 */
#ifndef CPROF_CURSOR_H
#define CPROF_CURSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Reads never pass @end; running out (or an undecodable value) sets @bad. */
struct cur {
	const uint8_t *p, *end;
	bool bad;
};

static inline bool need(struct cur *c, size_t n)
{
	if ((size_t)(c->end - c->p) >= n)
		return true;
	c->bad = true;
	c->p = c->end;
	return false;
}

static inline uint8_t rd_u8(struct cur *c)
{
	return need(c, 1) ? *c->p++ : 0;
}

#define RD_FIXED(name, type)                                                  \
	static inline type name(struct cur *c)                                \
	{                                                                     \
		type v = 0;                                                   \
		if (need(c, sizeof(v))) {                                     \
			memcpy(&v, c->p, sizeof(v));                          \
			c->p += sizeof(v);                                    \
		}                                                             \
		return v;                                                     \
	}
RD_FIXED(rd_u16, uint16_t)
RD_FIXED(rd_u32, uint32_t)
RD_FIXED(rd_u64, uint64_t)
#undef RD_FIXED

/*
 * LEB128, unsigned or sign-extended: bits past the 64th are dropped, the
 * bytes still consumed.
 */
static inline uint64_t rd_leb(struct cur *c, bool sign)
{
	uint64_t v = 0;
	unsigned shift = 0;

	while (c->p < c->end) {
		uint8_t b = *c->p++;

		if (shift < 64) {
			v |= (uint64_t)(b & 0x7f) << shift;
			shift += 7;
		}
		if (!(b & 0x80)) {
			if (sign && shift < 64 && (b & 0x40))
				v |= ~0ull << shift;
			return v;
		}
	}
	c->bad = true;
	return 0;
}

static inline uint64_t rd_uleb(struct cur *c)
{
	return rd_leb(c, false);
}

static inline int64_t rd_sleb(struct cur *c)
{
	return (int64_t)rd_leb(c, true);
}

/* Skips a ULEB128-sized block and returns where it starts. */
static inline const uint8_t *rd_block(struct cur *c, uint64_t *len)
{
	const uint8_t *p;

	*len = rd_uleb(c);
	if (c->bad || !need(c, *len))
		return NULL;
	p = c->p;
	c->p += *len;
	return p;
}

#endif
