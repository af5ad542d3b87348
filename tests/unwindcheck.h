/* SPDX-License-Identifier: MIT */
/*
 * unwindcheck: building unwind tables in tests and looking rows up in them
 * the way the BPF unwinder does: row_at() lays the table out as the loader
 * does and runs bpf/unwind.bpf.h's find_row over it (user/unwind/bpfunwind.h).
 */
#ifndef CPROF_UNWINDCHECK_H
#define CPROF_UNWINDCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cprof.h"
#include "unwind/unwind.h"

/*
 * unwind_build_fd() and unwind_build_mem(), and the former of a path.
 * Tests build tables only through these: row_at() then knows a table
 * built anew in the place of an old one.
 */
int build_fd(int fd, struct unwind_table *t, struct errbuf *err);
int build_file(const char *path, struct unwind_table *t, struct errbuf *err);
int build_mem(const void *image, size_t len, struct unwind_table *t, struct errbuf *err);

/*
 * The rule the BPF unwinder finds at @vaddr (an ELF virtual address) in
 * @t, or NULL: valid until the next call.  @t is laid out in the rows array
 * (unwind_plan(), unwind_emit(), at slot 1) when it is not the table laid
 * out last.
 */
const struct cprof_unwind_rule *row_at(const struct unwind_table *t, uint64_t vaddr);

/* The same, by search_row alone (the row cache bypassed). */
const struct cprof_unwind_rule *row_at_uncached(const struct unwind_table *t, uint64_t vaddr);

/*
 * Forgets the table laid out last: for a table made other than by the
 * build functions above, which may have the address of one freed.
 */
void forget_layout(void);

/* Where @t is laid out for the lookups above (laying it out if need be). */
const struct cprof_table *laid_out(const struct unwind_table *t);

/* "RSP+8 rbp offset-2", for messages. */
const char *row_str(const struct cprof_unwind_rule *r);
const char *cfa_name(unsigned cfa);
const char *rbp_name(unsigned rbp);

bool row_is(const struct cprof_unwind_rule *r, int cfa, int off, int rbp, int rbp_off);

/* Rows strictly sorted, rules in range: what the BPF side relies on. */
bool table_sane(const struct unwind_table *t);

/* The same rows: pcs and rules (their numbering may differ). */
bool tables_same(const struct unwind_table *a, const struct unwind_table *b);

/*
 * The row at @a is exactly {cfa, off, rbp, rbp_off, name}; a level of
 * indirection so that RSP(8) and friends expand into four arguments.
 */
#define CHECK_ROW(t, a, ...) CHECK_ROW_(t, a, __VA_ARGS__)
#define CHECK_ROW_(t, a, cfa, off, rbp, roff, name)                           \
	do {                                                                  \
		const struct cprof_unwind_rule *_r = row_at((t), (a));        \
		CHECK(row_is(_r, cfa, off, rbp, roff), name, "at %#llx: %s",  \
		      (unsigned long long)(a), row_str(_r));                  \
	} while (0)

#endif
