/* SPDX-License-Identifier: MIT */
/*
 * What the ELF tests compare elfobj with, read by another reader: the
 * build ID and the loadable segments as binutils' readelf prints them, and
 * the entry point from the ELF header itself.
 */
#ifndef CPROF_TESTS_READELF_ELF_H
#define CPROF_TESTS_READELF_ELF_H

#include <elf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static inline bool readelf_build_id(const char *path, char *out, size_t outsz)
{
	char cmd[PATH_MAX + 64];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf -n '%s' 2>/dev/null", path);
	p = popen(cmd, "r");
	char line[512];
	bool found = false;

	if (!p)
		return false;
	while (fgets(line, sizeof(line), p)) {
		char *s = strstr(line, "Build ID: ");

		if (s && !found) {
			s += strlen("Build ID: ");
			s[strcspn(s, " \r\n")] = '\0';
			snprintf(out, outsz, "%s", s);
			found = true;
		}
	}
	pclose(p);
	return found;
}

struct load {
	uint64_t off, vaddr, filesz;
	bool exec;
};

static inline size_t readelf_loads(const char *path, struct load *l, size_t max)
{
	char cmd[PATH_MAX + 64];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf -lW '%s' 2>/dev/null", path);
	p = popen(cmd, "r");
	char line[512];
	size_t n = 0;

	if (!p)
		return 0;
	while (fgets(line, sizeof(line), p)) {
		unsigned long long off, va, pa, fs, ms;
		char flags[64];

		if (n < max && sscanf(line, " LOAD %llx %llx %llx %llx %llx %63[^\n]", &off, &va,
				      &pa, &fs, &ms, flags) == 6)
			l[n++] = (struct load){ off, va, fs, strchr(flags, 'E') != NULL };
	}
	pclose(p);
	return n;
}

/* The ELF entry point of @path, or 0. */
static inline uint64_t entry_of(const char *path)
{
	Elf64_Ehdr eh;
	FILE *f = fopen(path, "rb");
	bool ok = f && fread(&eh, sizeof(eh), 1, f) == 1;

	if (f)
		fclose(f);
	return ok ? eh.e_entry : 0;
}

#endif
