// SPDX-License-Identifier: MIT
/*
 * Tests for escape_controls(): what a process names itself (comm, thread
 * names, paths, symbols) reaches a profile with nothing a terminal would
 * act on: C0 and C1 controls and DEL shown as escapes, the rest untouched,
 * never cut inside an escape.
 */
#include <string.h>

#include "util/escape.h"
#include "testlib.h"

static const char *esc(const char *s)
{
	static char buf[256];

	escape_controls(s, buf, sizeof(buf));
	return buf;
}

int main(void)
{
	char small[8];
	size_t n;

	setvbuf(stdout, NULL, _IOLBF, 0);
	T_PLAN(10);
	CHECK_STR(esc("\x1b[31mred"), "\\x1b[31mred", "escape: ESC shown as \\x1b");
	CHECK_STR(esc("a\nb"), "a\\nb", "escape: a newline shown as \\n");
	CHECK_STR(esc("t\tr\r\x7f"), "t\\tr\\r\\x7f", "escape: tab, CR and DEL");
	CHECK_STR(esc("\xc2\x9b" "2J"), "\\xc2\\x9b2J", "escape: C1 CSI (U+009B) too");
	CHECK_STR(esc("caf\xc3\xa9 \xe2\x82\xac"), "caf\xc3\xa9 \xe2\x82\xac",
		  "escape: other UTF-8 untouched");
	CHECK_STR(esc("std::vector<int>::at"), "std::vector<int>::at",
		  "escape: printable names untouched");
	CHECK_STR(esc(""), "", "escape: empty");
	n = escape_controls("\x1b\x1b", NULL, 0);
	CHECK(n == 8, "escape: returns the whole length, as snprintf", "%zu", n);
	n = escape_controls("ab\x1b", small, 5);
	CHECK(n == 6 && !strcmp(small, "ab"), "escape: an escape is never cut",
	      "%zu \"%s\"", n, small);
	n = escape_controls("\x01z", small, sizeof(small));
	CHECK(n == 5 && !strcmp(small, "\\x01z"), "escape: fits exactly", "%zu \"%s\"", n, small);
	return T_EXIT();
}
