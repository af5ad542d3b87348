// SPDX-License-Identifier: MIT
/* escape: see escape.h. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "util/escape.h"

/* The C1 control characters U+0080..U+009F in UTF-8: 0xc2 0x80..0x9f. */
static bool is_c1(const unsigned char *u)
{
	return u[0] == 0xc2 && u[1] >= 0x80 && u[1] <= 0x9f;
}

size_t escape_controls(const char *s, char *out, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = 0, written = 0;
	bool full = false;

	for (; *u; u++) {
		char e[16];
		size_t k;

		if (*u >= 0x20 && *u != 0x7f && !is_c1(u)) {
			e[0] = (char)*u;
			k = 1;
		} else if (*u == '\n' || *u == '\t' || *u == '\r') {
			e[0] = '\\';
			e[1] = *u == '\n' ? 'n' : *u == '\t' ? 't' : 'r';
			k = 2;
		} else if (is_c1(u)) {
			k = (size_t)snprintf(e, sizeof(e), "\\xc2\\x%02x", u[1]);
			u++;
		} else {
			k = (size_t)snprintf(e, sizeof(e), "\\x%02x", *u);
		}
		/* An escape goes whole or not at all, and nothing after a cut one. */
		if (!full && out && written + k < len) {
			memcpy(out + written, e, k);
			written += k;
		} else {
			full = true;
		}
		n += k;
	}
	if (out && len)
		out[written] = '\0';
	return n;
}
