/* SPDX-License-Identifier: MIT */
/*
 * symbolize: sampled address -> mapping and function name, for a process's
 * user frames (through its mapping snapshot and the shared objects) and for
 * kernel frames (through a resolved kallsyms table).
 */
#ifndef CPROF_SYMBOLIZE_H
#define CPROF_SYMBOLIZE_H

#include <stdint.h>

#include "kallsyms.h"
#include "proctab.h"

struct symbolizer {
	const char *debug_root; /* "/usr/lib/debug" */
	const char *proc_root;  /* "/proc" */
	const struct ksym_table *ksyms; /* may be NULL: kernel frames unnamed */
};

struct sym {
	int vma;            /* index in the process's maps; -1: none */
	const char *name;   /* function, or NULL when unknown */
	const char *module; /* kernel module, or NULL */
};

/*
 * Resolves a user address of @p.  Symbols of the object are loaded on first
 * use; an object that cannot be read just leaves the name NULL.
 */
void symbolize_user(const struct symbolizer *s, struct process *p, uint64_t addr,
		    struct sym *out);

void symbolize_kernel(const struct symbolizer *s, uint64_t addr, struct sym *out);

#endif
