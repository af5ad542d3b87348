/* SPDX-License-Identifier: MIT */
/*
 * File and command helpers for the C unit tests that build their own
 * fixtures (ELF files, debug files, damaged copies).  Header-only, like
 * testlib.h: every function is static inline, so a test uses what it needs.
 */
#ifndef CPROF_TESTUTIL_H
#define CPROF_TESTUTIL_H

#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A formatted string from a ring of 8: for arguments, never to keep. */
static inline char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static inline char *fmt(const char *f, ...)
{
	static char bufs[8][PATH_MAX + 1024];
	static int next;
	char *b = bufs[next++ % 8];
	va_list ap;

	va_start(ap, f);
	vsnprintf(b, sizeof(bufs[0]), f, ap);
	va_end(ap);
	return b;
}

/* Runs a shell command; says so on stderr when it fails. */
static inline int sh(const char *cmd)
{
	int rc = system(cmd);

	if (rc != 0)
		fprintf(stderr, "# command failed (%d): %s\n", rc, cmd);
	return rc;
}

/* A whole file in a malloc'd buffer (one byte more, unset), or NULL. */
static inline uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (buf = malloc((size_t)n + 1)) && fread(buf, 1, (size_t)n, f) == (size_t)n) {
		*len = (size_t)n;
	} else {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

/* Writes @len bytes as the whole of @path. */
static inline bool spit(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");
	bool ok;

	if (!f)
		return false;
	ok = fwrite(buf, 1, len, f) == len;
	return fclose(f) == 0 && ok;
}

/*
 * A new directory /tmp/cprof-test-@name-XXXXXX into @buf (mode 0755, so
 * that processes of other users in a test can reach it); false, said on
 * stderr, when it can't be made.
 */
static inline bool temp_dir(char *buf, size_t len, const char *name)
{
	char tmpl[PATH_MAX];

	snprintf(tmpl, sizeof(tmpl), "/tmp/cprof-test-%s-XXXXXX", name);
	if (!mkdtemp(tmpl) || chmod(tmpl, 0755) || (size_t)snprintf(buf, len, "%s", tmpl) >= len) {
		perror(tmpl);
		return false;
	}
	return true;
}

/* Address and size of a defined symbol according to nm (-D: @dynamic); name@version too. */
static inline bool nm_sym(const char *path, bool dynamic, const char *name, uint64_t *addr,
			  uint64_t *size)
{
	FILE *p = popen(fmt("nm -S --defined-only %s '%s' 2>/dev/null", dynamic ? "-D" : "",
			    path), "r");
	char line[1024];
	bool found = false;

	if (!p)
		return false;
	while (fgets(line, sizeof(line), p)) {
		unsigned long long a, s;
		char type, sym[512];

		if (!found && sscanf(line, "%llx %llx %c %511s", &a, &s, &type, sym) == 4) {
			sym[strcspn(sym, "@")] = '\0';
			if (strcmp(sym, name) == 0) {
				*addr = a;
				*size = s;
				found = true;
			}
		}
	}
	pclose(p);
	return found;
}

/*
 * A C program for tests that look lines up: outer_NAME() is never inlined
 * and its loop inlines mid() and leaf() (three frames deep at leaf's
 * line).  Callers replace NAME (sed s/NAME/x/) to tell objects apart.
 */
static inline const char *fixture_inlines(void)
{
	return "static volatile int sink;\n"
	       "static inline __attribute__((always_inline)) int leaf(int x) { sink += x; return sink * 3; }\n"
	       "static inline __attribute__((always_inline)) int mid(int x) { return leaf(x + 1) + leaf(x + 2); }\n"
	       "__attribute__((noinline)) int outer_NAME(int x)\n"
	       "{\n"
	       "\tint s = 0;\n"
	       "\tfor (int i = 0; i < x; i++)\n"
	       "\t\ts += mid(i);\n"
	       "\treturn s;\n"
	       "}\n"
	       "int main(int argc, char **argv) { (void)argv; return outer_NAME(argc) & 1; }\n";
}

/* Compiles fixture_inlines() with NAME as @name into @dir/@out (gcc -O2 -g). */
static inline int build_fixture_inlines(const char *dir, const char *name, const char *out)
{
	const char *src = fixture_inlines();

	if (!spit(fmt("%s/%s.c.in", dir, out), src, strlen(src)))
		return -1;
	return sh(fmt("cd '%s' && sed s/NAME/%s/ %s.c.in > %s.c && gcc -O2 -g -o %s %s.c", dir, name,
		      out, out, out, out));
}

#endif
