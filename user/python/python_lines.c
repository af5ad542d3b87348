// SPDX-License-Identifier: MIT
#include <stdint.h>

#include "python/python_lines.h"

/* co_lnotab (3.8, 3.9): (bytecode bytes, signed line delta) pairs. */
static int64_t lnotab_line(const uint8_t *tab, size_t len, int64_t line, uint64_t addr)
{
	uint64_t at = 0;

	for (size_t i = 0; i + 1 < len; i += 2) {
		at += tab[i];
		if (at > addr)
			break;
		line += (int8_t)tab[i + 1];
	}
	return line;
}

/*
 * 3.10's co_linetable: pairs of (bytecode bytes, signed line delta), each
 * a range; a delta of -128 is a range without a line.
 */
static int64_t linetable310_line(const uint8_t *tab, size_t len, int64_t line, uint64_t addr)
{
	uint64_t end = 0;

	for (size_t i = 0; i + 1 < len; i += 2) {
		int8_t delta = (int8_t)tab[i + 1];

		end += tab[i];
		if (delta != -128)
			line += delta;
		if (addr < end)
			return delta == -128 ? 0 : line;
	}
	return 0;
}

/* A varint of the location table: 6 bits a byte, low first, bit 6 continues. */
static uint64_t varint(const uint8_t *tab, size_t len, size_t *i)
{
	uint64_t v = 0;
	unsigned shift = 0;

	while (*i < len) {
		uint8_t b = tab[(*i)++];

		if (shift < 64)
			v |= (uint64_t)(b & 63) << shift;
		shift += 6;
		if (!(b & 64))
			break;
	}
	return v;
}

static int64_t svarint(const uint8_t *tab, size_t len, size_t *i)
{
	uint64_t v = varint(tab, len, i);

	return v & 1 ? -(int64_t)(v >> 1) : (int64_t)(v >> 1);
}

/*
 * 3.11+'s location table: entries each starting with a byte whose bit 7
 * is set, its bits 3-6 the form and its bits 0-2 the code units covered
 * less one.  Forms: 15 no location, 14 long (line delta and three more
 * varints), 13 line delta only, 10-12 on the line 0-2 after (two column
 * bytes), 0-9 the same line (one column byte).
 */
static int64_t locations_line(const uint8_t *tab, size_t len, int64_t line, uint64_t addr)
{
	uint64_t end = 0;
	size_t i = 0;

	while (i < len) {
		uint8_t head = tab[i++];
		unsigned form = (head >> 3) & 15;
		int64_t delta = 0;

		if (!(head & 0x80))
			return 0; /* not at an entry: a table we misread */
		end += 2 * ((head & 7) + 1);
		if (form == 14 || form == 13) {
			delta = svarint(tab, len, &i);
			/* no real table jumps 2^31 lines: past that, sums could overflow */
			if (delta > INT32_MAX || delta < -INT32_MAX)
				return 0;
			if (form == 14)
				for (int k = 0; k < 3; k++)
					varint(tab, len, &i);
		} else if (form >= 10 && form <= 12) {
			delta = form - 10;
			i += 2;
		} else if (form < 10) {
			i += 1;
		}
		line += delta;
		if (addr < end)
			return form == 15 ? 0 : line;
	}
	return 0;
}

int64_t py_line(unsigned version, const uint8_t *tab, size_t len, int64_t first, uint64_t addr)
{
	int64_t line;

	if (version < 0x30a)
		line = lnotab_line(tab, len, first, addr);
	else if (version == 0x30a)
		line = linetable310_line(tab, len, first, addr);
	else
		line = locations_line(tab, len, first, addr);
	return line > 0 ? line : 0;
}
