// SPDX-License-Identifier: MIT
/*
 * test_python: the Python layouts and line tables against the CPythons
 * installed here (pyenv's 3.8 to 3.13).  Each version is a check of its
 * own; a version not installed is a skip saying so.
 *
 *  - layout: tools/pylayout.c compiled against the version's headers must
 *    print the row user/python/python_layout.c holds for it.
 *  - lines: for every code object of a source with jumps of all sizes,
 *    py_line() must give at every instruction the line the interpreter
 *    itself gives (co_lines(), or dis.findlinestarts() before 3.10).
 *  - garbage: any bytes as a table give some line or none, within bounds
 *    (ASan watches in the SANITIZE build).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "python/python_layout.h"
#include "python/python_lines.h"
#include "pyenv.h"
#include "testlib.h"

static const char *const versions[] = { "3.8", "3.9", "3.10", "3.11", "3.12", "3.13" };

/* The row of user/python/python_layout.c for @l, as tools/pylayout.c prints it. */
static void print_row(const struct py_layout *l, char *buf, size_t len)
{
	const struct py_offsets *o = &l->off;
	const struct py_code_layout *c = &l->code;

	snprintf(buf, len,
		 "\t{ 0x%x, { %u, %u, %u, %u, %u, %u, %u, %u, %u, %u, %u, %u, %u, %u },\n"
		 "\t  { %u, %u, %u, %u, %u, %u, %u, %u, %u, %u } },\n",
		 l->version, o->runtime_interps, o->interp_next, o->interp_threads, o->tstate_next,
		 o->tstate_interp, o->tstate_thread_id, o->tstate_frame, o->cframe_frame,
		 o->frame_back, o->frame_code, o->frame_lasti, o->frame_entry, o->frame_owner,
		 o->frame_read, c->filename, c->name, c->firstlineno, c->linetable, c->bytecode,
		 c->ascii_size, c->compact_size, c->str_state, c->bytes_data, c->var_size);
}

static void check_layout(const char *v, const char *dir, unsigned minor)
{
	char name[64], cmd[1024], want[512], got[512] = "";
	const struct py_layout *l = py_layout_find(3, minor);
	size_t n;
	FILE *f;

	snprintf(name, sizeof(name), "layout %s from its headers", v);
	if (!l) {
		CHECK(0, name, "no layout for %s", v);
		return;
	}
	snprintf(cmd, sizeof(cmd),
		 "cc -w -o /tmp/pylayout-%d-%s tools/pylayout.c -I%s/include/python%s &&"
		 " /tmp/pylayout-%d-%s; rm -f /tmp/pylayout-%d-%s",
		 (int)getpid(), v, dir, v, (int)getpid(), v, (int)getpid(), v);
	f = popen(cmd, "r");
	if (!f) {
		CHECK(0, name, "cannot run cc");
		return;
	}
	n = fread(got, 1, sizeof(got) - 1, f);
	got[n] = '\0';
	pclose(f);
	print_row(l, want, sizeof(want));
	CHECK(!strcmp(got, want), name, "headers give\n%s, the table has\n%s", got, want);
}

/*
 * Prints, per code object of a test source: "T <first> <hex table>" then
 * "L <offset> <line>" for each instruction (line 0: none).
 */
static const char script[] =
	"import dis, sys\n"
	"src = 'def f(a):\\n    x = 0\\n' + '\\n' * 300 + '    for i in range(a):\\n"
	"        if i % 3:\\n            x += i\\n        else:\\n"
	"            x -= 1\\n' + '\\n' * 40 + '    return (x,\\n        a)\\n"
	"class C:\\n    def m(self):\\n        return [y for y in range(3)]\\n'\n"
	"def walk(co):\n"
	"    yield co\n"
	"    for c in co.co_consts:\n"
	"        if hasattr(c, 'co_code'):\n"
	"            yield from walk(c)\n"
	"for co in walk(compile(src, 't.py', 'exec')):\n"
	"    tab = co.co_linetable if sys.version_info >= (3, 10) else co.co_lnotab\n"
	"    print('T', co.co_firstlineno, tab.hex() or '-')\n"
	"    n = len(co.co_code)\n"
	"    line = [0] * n\n"
	"    if sys.version_info >= (3, 10):\n"
	"        for s, e, l in co.co_lines():\n"
	"            for o in range(s, min(e, n)):\n"
	"                line[o] = l or 0\n"
	"    else:\n"
	"        starts = list(dis.findlinestarts(co))\n"
	"        for o in range(n):\n"
	"            for s, l in starts:\n"
	"                if s <= o:\n"
	"                    line[o] = l\n"
	"    for o in range(0, n, 2):\n"
	"        print('L', o, line[o])\n";

static size_t unhex(const char *s, uint8_t *out, size_t cap)
{
	size_t n = 0;
	unsigned b;

	while (n < cap && sscanf(s + 2 * n, "%2x", &b) == 1)
		out[n++] = (uint8_t)b;
	return n;
}

static void check_lines(const char *v, const char *dir, unsigned minor)
{
	char name[64], path[512], line[65536];
	static uint8_t tab[32768];
	size_t ntab = 0, nlines = 0, bad = 0, codes = 0;
	long long first = 0, off, want, got;
	FILE *f, *in;
	char *cmd;

	snprintf(name, sizeof(name), "lines %s as the interpreter gives them", v);
	snprintf(path, sizeof(path), "/tmp/pylines-%d.py", (int)getpid());
	in = fopen(path, "w");
	if (!in || fputs(script, in) < 0) {
		CHECK(0, name, "cannot write %s", path);
		if (in)
			fclose(in);
		return;
	}
	fclose(in);
	if (asprintf(&cmd, "%s/bin/python%s %s", dir, v, path) < 0)
		return;
	f = popen(cmd, "r");
	free(cmd);
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "T %lld", &first) == 1) {
			char *hex = strchr(line + 2, ' ');

			ntab = hex && hex[1] != '-' ? unhex(hex + 1, tab, sizeof(tab)) : 0;
			codes++;
		} else if (sscanf(line, "L %lld %lld", &off, &want) == 2) {
			got = py_line(0x300 | minor, tab, ntab, first, (uint64_t)off);
			nlines++;
			if (got != want && bad++ < 3)
				printf("# %s: offset %lld: line %lld, the interpreter says %lld\n", v,
				       off, got, want);
		}
	}
	if (f)
		pclose(f);
	unlink(path);
	CHECK(codes >= 4 && nlines > 50 && !bad, name,
	      "%zu code objects, %zu instructions, %zu lines wrong", codes, nlines, bad);
}

/* Random bytes as every version's table: a line or none, never a read past. */
static void check_garbage(void)
{
	static const unsigned vs[] = { 0x308, 0x30a, 0x30b };
	uint64_t x = 88172645463325252ULL;
	bool sane = true;

	for (int round = 0; round < 2000; round++) {
		size_t len = round % 97;
		uint8_t *tab = malloc(len ? len : 1);

		for (size_t i = 0; i < len; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			tab[i] = (uint8_t)x;
		}
		for (size_t k = 0; k < 3; k++)
			sane &= py_line(vs[k], tab, len, (int64_t)(x % 1000), x % 300) >= 0;
		free(tab);
	}
	CHECK(sane, "garbage line tables give a line or none", "a negative line");

	/* 3.11+ entries each jumping 2^62 lines: no overflow (UBSan), no line. */
	uint8_t big[4096];

	for (size_t i = 0; i < sizeof(big); i += 12) {
		big[i] = 0x80 | 13 << 3; /* line delta only, one code unit */
		for (size_t k = 1; k < 12 && i + k < sizeof(big); k++)
			big[i + k] = k < 11 ? 64 | 62 : 62; /* +2^65 or so, cut to 64 bits */
	}
	CHECK(py_line(0x30b, big, sizeof(big), 1, 2 * 300) == 0,
	      "line deltas past 2^31 give no line", "a line from them");
}

/*
 * The program reads a code object's tag fields as one span: within its
 * read buffer, each field whole inside it, where the loader reads it.
 */
static void check_code_span(void)
{
	for (unsigned minor = 8; minor <= 13; minor++) {
		const struct py_layout *l = py_layout_find(3, minor);
		const struct py_code_layout *c;
		struct cprof_py_layout b;
		char name[64];

		snprintf(name, sizeof(name), "3.%u: a code object's tag fields in one read", minor);
		if (!l) {
			CHECK(0, name, "no layout");
			continue;
		}
		c = &l->code;
		py_layout_bpf(l, &b);
		CHECK(b.code_read > 0 && b.code_read <= CPROF_PY_CODE_READ &&
			      b.code_lo + b.code_firstlineno == c->firstlineno &&
			      b.code_firstlineno + 4 <= b.code_read &&
			      b.code_lo + b.code_filename == c->filename &&
			      b.code_filename + 8 <= b.code_read &&
			      b.code_lo + b.code_name == c->name && b.code_name + 8 <= b.code_read &&
			      b.code_lo + b.code_linetable == c->linetable &&
			      b.code_linetable + 8 <= b.code_read,
		      name, "%u bytes from %u: first %u, file %u, name %u, lines %u", b.code_read,
		      b.code_lo, b.code_firstlineno, b.code_filename, b.code_name, b.code_linetable);
	}
}

int main(void)
{
	T_PLAN(21);
	for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
		const char *v = versions[i];
		unsigned minor = (unsigned)atoi(v + 2);
		char dir[512];

		if (!pyenv_install(v, dir, sizeof(dir))) {
			char name[64];

			snprintf(name, sizeof(name), "python %s", v);
			T_SKIP(name, "CPython %s is not installed under " PYENV, v);
			continue;
		}
		check_layout(v, dir, minor);
		check_lines(v, dir, minor);
	}
	CHECK(!py_layout_find(3, 14) && !py_layout_find(3, 7) && !py_layout_find(2, 7),
	      "versions without a layout are unknown", "a layout for 3.14, 3.7 or 2.7");
	check_garbage();
	check_code_span();
	return T_EXIT();
}
