/* SPDX-License-Identifier: MIT */
/*
 * kallsyms: names for kernel addresses from /proc/kallsyms.
 *
 * Whole-host profiles touch a few thousand distinct kernel addresses while
 * kallsyms has ~120k-200k symbols, so the resolver is driven by the
 * queries: one streaming pass over the file keeps, for each wanted address,
 * the nearest text symbol at or below it.  Memory is bounded by the number
 * of queries, not by the size of kallsyms.
 */
#ifndef CPROF_KALLSYMS_H
#define CPROF_KALLSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/errbuf.h"

/* KSYM_NAME_LEN is 512 including the NUL; longer names are truncated to this. */
#define KALLSYMS_NAME_MAX 511

struct ksym {
	uint64_t addr;      /* the queried address */
	uint64_t sym_addr;  /* start of the symbol found (0 if none) */
	uint64_t sym_end;   /* the next text symbol's address above it (0: none) */
	const char *name;   /* NULL when unresolved */
	const char *module; /* NULL for the core kernel, else e.g. "ext4" */
};

struct ksym_table {
	struct ksym *syms; /* sorted by addr, unique */
	size_t n;
	char *strings;
	size_t strings_len, strings_cap;
};

/*
 * Resolves @addrs (any order, duplicates allowed) against the kallsyms text
 * read from @f.  Only text symbols (t, T, w, W) are candidates.  On success
 * @out holds one entry per distinct address.
 */
int kallsyms_resolve(FILE *f, const uint64_t *addrs, size_t n,
		     struct ksym_table *out, struct errbuf *err);

/*
 * One line of the kallsyms text as a pass parsed it: the name and module
 * point into the line (not NUL-terminated, valid only during the call that
 * shows them); module_len 0 is the core kernel.
 */
struct kallsyms_sym {
	uint64_t addr;
	char type;
	const char *name, *module;
	size_t name_len, module_len;
};

/* Shown each symbol of a pass in file order, so a caller can gather more without a second read. */
struct kallsyms_seen {
	void (*fn)(void *arg, const struct kallsyms_sym *s);
	void *arg;
};

/* kallsyms_resolve(), showing @seen (NULL: none) every symbol of the pass. */
int kallsyms_resolve_seen(FILE *f, const uint64_t *addrs, size_t n,
			  const struct kallsyms_seen *seen, struct ksym_table *out,
			  struct errbuf *err);

/* Whether symbols of @type are functions (t, T, w, W): the candidates for a name. */
bool kallsyms_is_text(char type);

/*
 * Whether @s names its address rather than @cur, an alias at the same
 * address listed before it (perf's choice among aliases).
 */
bool kallsyms_better_alias(const struct kallsyms_sym *cur, const struct kallsyms_sym *s);

/* Entry for @addr in a resolved table, or NULL. */
const struct ksym *kallsyms_find(const struct ksym_table *t, uint64_t addr);

/*
 * The core kernel's text symbol @name in the kallsyms text of @f (read
 * twice: @f is rewound): [@start, @end), @end the next text symbol's
 * address above it.  -ENOENT with one line in @err when it is not there
 * (or every address is hidden).
 */
int kallsyms_text_range(FILE *f, const char *name, uint64_t *start, uint64_t *end,
			struct errbuf *err);

void kallsyms_free(struct ksym_table *t);

#endif
