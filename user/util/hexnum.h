/* SPDX-License-Identifier: MIT */
/*
 * hexnum.h: hex numbers in the text the agent reads (/proc/PID/maps,
 * /proc/kallsyms, a process's /tmp/perf-PID.map).  One parser for all of
 * them, bounded by an end and a maximum, since a process writes its perf
 * map as it likes: a number can neither wrap nor run past its line.  And
 * build IDs written as hex digits (hexnum_write()), for profiles and for
 * debug file paths.
 */
#ifndef CPROF_HEXNUM_H
#define CPROF_HEXNUM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The value of hex digit @c, or -1. */
static inline int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * Reads the hex digits at *@pp, before @end, into *@out and moves *@pp
 * past them.  False, and nothing moved, without a digit or when the
 * number is over @max.
 */
static inline bool parse_hex(const char **pp, const char *end, uint64_t max, uint64_t *out)
{
	const char *p = *pp;
	uint64_t v = 0;
	int d;

	if (p == end || hex_digit(*p) < 0)
		return false;
	for (; p < end && (d = hex_digit(*p)) >= 0; p++) {
		if (v > (max - (uint64_t)d) / 16)
			return false;
		v = v * 16 + (uint64_t)d;
	}
	*pp = p;
	*out = v;
	return true;
}

/* Writes the @n bytes at @p as 2 * @n lowercase hex digits, then a NUL, at @out. */
static inline void hexnum_write(char *out, const uint8_t *p, size_t n)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		*out++ = digits[p[i] >> 4];
		*out++ = digits[p[i] & 15];
	}
	*out = '\0';
}

#endif
