/* SPDX-License-Identifier: MIT */
/*
 * Helpers the elfobj tests share: opening an object by path, naming an
 * address, and whether a symbol table is sane, plus the clock and RSS
 * figures they print.
 */
#ifndef CPROF_TESTS_ELFOBJCHECK_H
#define CPROF_TESTS_ELFOBJCHECK_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "elf/elfobj.h"
#include "util/errbuf.h"

/* A shared object's source, compiled by the tests that need one. */
static const char lib_src[] =
	"volatile int lsink;\n"
	"__attribute__((noinline)) int cprof_lib_exported_a(int n)\n"
	"{ int s = 0; for (int i = 0; i < n; i++) s += i * lsink; return s; }\n"
	"static __attribute__((noinline, used)) int cprof_lib_static_b(int n)\n"
	"{ int s = 1; for (int i = 0; i < n; i++) s ^= i + lsink; return s * 5; }\n"
	"__attribute__((noinline)) int cprof_lib_exported_c(int n)\n"
	"{ int s = cprof_lib_static_b(n) + cprof_lib_exported_a(n);\n"
	"  for (int i = 0; i < n; i++) s += lsink; return s; }\n";

static inline int open_obj(const char *path, struct elfobj **o, struct errbuf *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	*o = NULL;
	if (fd < 0)
		return errf(err, -errno, "%s: %s", path, strerror(errno));
	return elfobj_open(o, fd, err);
}

/* The object at @path, or NULL: for tests that need no reason. */
static inline struct elfobj *elfobj_at(const char *path)
{
	struct elfobj *o = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || elfobj_open(&o, fd, NULL))
		return NULL;
	return o;
}

static inline const char *name_at(const struct elfobj *o, uint64_t vaddr)
{
	const struct elfobj_sym *s = elfobj_lookup(o, vaddr);

	return s ? s->name : "(none)";
}

static inline long rss_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kib = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

static inline double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/*
 * Sorted, unique, names bounded; where @nameless, symbols whose name could
 * not be read (a damaged table) may be nameless, and are never found.
 */
static inline bool symbols_sane_as(const struct elfobj *o, bool nameless)
{
	size_t n;
	const struct elfobj_sym *s = elfobj_symbols(o, &n);

	for (size_t i = 0; i < n; i++) {
		if (!s[i].name ? !nameless || elfobj_lookup(o, s[i].start)
			       : !s[i].name[0] || strlen(s[i].name) >= 4096 ||
					 elfobj_lookup(o, s[i].start) != &s[i])
			return false;
		if (i && s[i - 1].start >= s[i].start)
			return false;
	}
	return true;
}

static inline bool symbols_sane(const struct elfobj *o)
{
	return symbols_sane_as(o, false);
}

#endif
