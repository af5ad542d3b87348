/* SPDX-License-Identifier: MIT */
/*
 * jvm_bytes: what the JVM reader takes from bytes it has copied out of the
 * process: a member of a structure, and one number of HotSpot's compressed
 * streams (line tables, debug info).
 */
#ifndef CPROF_JVM_BYTES_H
#define CPROF_JVM_BYTES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The @size-byte member at @off of the copy @p (x86-64: little-endian). */
static inline uint64_t jvm_member(const uint8_t *p, size_t off, unsigned size)
{
	uint64_t v = 0;

	memcpy(&v, p + off, size);
	return v;
}

/* The byte each of a JDK @major's stream bytes is offset by: 1 from JDK 20, none before. */
static inline unsigned jvm_u5_excluded(unsigned major)
{
	return major >= 20;
}

/*
 * One UNSIGNED5 number (Pack200's code) of the stream @p (@n bytes) at
 * *@pos: bytes below L end a number, the others carry 6 bits more, at most
 * 5 bytes; from JDK 20 every byte is one more, so that none is 0 (@x, from
 * jvm_u5_excluded).  0 and *@pos past it; -1 when it runs past @n, holds an
 * excluded byte or is more than 32 bits.
 */
static inline int jvm_u5(const uint8_t *p, size_t n, size_t *pos, unsigned x, uint32_t *v)
{
	const uint32_t lim = 256 - 64 - x;
	uint64_t sum = 0;

	for (unsigned i = 0, shift = 0; i < 5; i++, shift += 6) {
		uint32_t b;

		if (*pos >= n || p[*pos] < x)
			return -1;
		b = p[(*pos)++] - x;
		sum += (uint64_t)b << shift;
		if (b < lim)
			break;
	}
	if (sum > UINT32_MAX)
		return -1;
	*v = (uint32_t)sum;
	return 0;
}

/* A signed number as the streams keep it: its sign in the low bit. */
static inline int32_t jvm_unsign(uint32_t v)
{
	return (int32_t)((v >> 1) ^ -(v & 1));
}

#endif
