/* SPDX-License-Identifier: MIT */
/*
 * kcatalog: every function of the core kernel, gathered during the first
 * pass over /proc/kallsyms, so that a later window names core kernel
 * addresses with no read: the kernel formats all ~120k lines of kallsyms
 * for each read (30-40 ms of system time), and almost every window meets
 * some core function no earlier one named (interrupt and scheduler paths
 * turn up at random).  The core kernel's text does not change while it
 * runs; modules and the pseudo-modules ([bpf], ftrace and kprobe
 * trampolines) come and go and are not in it.
 *
 * Compact: each distinct start as a uint32_t offset from the lowest one
 * (no catalog when the core's text spans 4 GiB or more), the names of each
 * KCATALOG_BLOCK consecutive functions deflated together (raw deflate;
 * about 6 bytes a name against 25 as text), one offset a block.  A lookup
 * inflates one block (microseconds) into a buffer of its own.  Everything
 * it holds, the build's transient state and the zlib streams' memory
 * included, is within the bound it is built with; past it there is no
 * catalog, and why is kept in @why.  Here: 121,863 functions in 1.25 MB
 * (1.65 MB at the build's peak); the build costs about one more read's
 * CPU, once: a first window took 91-113 ms of CPU with it against 48-56
 * without (most of it deflating 3 MB of names).
 */
#ifndef CPROF_KCATALOG_H
#define CPROF_KCATALOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/membudget.h"
#include "symbols/kallsyms.h"

#define KCATALOG_BLOCK 64

struct z_stream_s;

struct kcatalog {
	uint64_t base;              /* the lowest core text address */
	uint32_t *start;            /* each function's start less base: ascending, unique */
	size_t n;                   /* functions; 0: no catalog */
	uint32_t *block;            /* block i's names are z[block[i], block[i + 1]) */
	size_t nblocks;
	unsigned char *z;           /* the deflated blocks, one after another */
	size_t zlen;
	struct z_stream_s *inflater; /* made at the first lookup */
	char *names;                /* block names_of inflated: NUL-terminated names */
	size_t names_len, names_of; /* names_of SIZE_MAX: none */
	struct membudget mem;       /* all of the above, build included */
	const char *why;            /* no catalog: why (NULL: none tried, or one built) */
};

/* The build, one symbol of a kallsyms pass at a time. */
struct kcatalog_build {
	struct kcatalog *cat;
	size_t start_cap, block_cap, z_cap;
	struct z_stream_s *deflater;
	char *blk;                   /* names of the block being filled */
	size_t blk_len, blk_n;
	uint64_t last;               /* the core's highest text address so far; 0: none */
	/* the best of the aliases at the address last met (pending until a higher one) */
	char pend_type;
	size_t pend_len;
	char pend_name[KALLSYMS_NAME_MAX];
	/* modules' text listed before the core's: their lowest and highest */
	uint64_t early_lo, early_hi;
	/* modules' lowest text at or above base listed after the core's first */
	uint64_t late_lo;
};

/* An empty catalog (answers nothing); kcatalog_free() may be called on it. */
void kcatalog_init(struct kcatalog *c);
void kcatalog_free(struct kcatalog *c);

/*
 * Starts building @c (freed first) within @max_bytes.  @c must stay put
 * until kcatalog_build_end().
 */
void kcatalog_build_start(struct kcatalog_build *b, struct kcatalog *c, uint64_t max_bytes);

/* One symbol of the pass: as struct kallsyms_seen's fn, @arg the build. */
void kcatalog_build_sym(void *arg, const struct kallsyms_sym *s);

/*
 * Ends the build: with @complete (the pass read all of kallsyms without
 * error) the catalog answers from now on, unless it could not be built
 * (@c->why says why).  Returns whether it answers.
 */
bool kcatalog_build_end(struct kcatalog_build *b, bool complete);

/*
 * The core kernel function around @addr as kallsyms_resolve() names it:
 * its name (valid until the next lookup) and [@start, @end), @end the next
 * text symbol's address.  NULL when the catalog cannot say: no catalog, or
 * @addr outside [base, the highest core function's start), where modules
 * and trampolines may be.
 */
const char *kcatalog_find(struct kcatalog *c, uint64_t addr, uint64_t *start, uint64_t *end);

#endif
