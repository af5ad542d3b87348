/* SPDX-License-Identifier: MIT */
/*
 * symbolize: sampled address -> mapping, functions, source lines.
 *
 * User frames are named from the object behind their mapping: the ELF
 * symbol (demangled C++ and Rust, with the raw symbol kept as system name)
 * and, where the object has DWARF, the source file and line and the chain
 * of inlined calls.  Frames in code with no ELF object behind it (JIT) are
 * named from the process's perf map.  Kernel frames are named from a
 * kallsyms table resolved beforehand.
 *
 * Costs.  Each object's symbol table is loaded once (elfobj keeps it); its
 * DWARF is opened only if one of its addresses was sampled, and what was
 * found for each address is kept in a per-object cache shared by every
 * process that maps it.  symbolizer_prepare(), given every process of a
 * window, resolves all their addresses object by object, so each object's
 * DWARF is read once and only one is open at a time; the cache entry of an
 * object is released as soon as the last process that uses it is written,
 * and symbolizer_free() releases the rest.  Without prepare, the cache
 * lives for one process: it is emptied by symbolizer_done().
 */
#ifndef CPROF_SYMBOLIZE_H
#define CPROF_SYMBOLIZE_H

#include <stdbool.h>
#include <stdint.h>

#include "errbuf.h"
#include "kallsyms.h"
#include "perfmap.h"
#include "proctab.h"
#include "stackstore.h"

/* Inline frames kept per address (innermost first; the outermost always). */
#define SYM_MAX_LINES 8

/*
 * DWARF left open between profiles (only reopened for addresses prepare
 * missed): beyond this, the least recently used is closed.
 */
#define SYMBOLIZE_DWARF_BUDGET (16ull << 20)

struct symcache;

struct symbolizer {
	const char *debug_root; /* "/usr/lib/debug" */
	const struct ksym_table *ksyms; /* may be NULL: kernel frames unnamed */
	/*
	 * --symbolize=none: user frames in ELF objects keep only their
	 * address; the mapping's file name and build ID let pprof symbolize
	 * them later from the binaries (PPROF_BINARY_PATH).  Kernel and JIT
	 * frames are still named: kallsyms and perf maps exist only on this
	 * host and only now.
	 */
	bool addresses_only;
	/*
	 * Memory cap: an object whose DWARF (debug sections, decompressed)
	 * exceeds this gets names but no lines or inlines.  0: no cap but
	 * DWARFINFO_MAX_BYTES.  libc6-dbg's libc is 8.6 MB.
	 */
	uint64_t dwarf_max_bytes;
	/* Told of each object named without lines for that cap (may be NULL). */
	void (*report)(void *ctx, const char *msg);
	void *report_ctx;
	struct symcache *cache; /* private; made on first use, see symbolizer_free() */
};

struct sym_line {
	const char *name;        /* readable (demangled); NULL when unknown */
	const char *system_name; /* as in the binary, when it differs from name; else NULL */
	const char *file;        /* source file, or NULL */
	int64_t line;            /* 0 when unknown */
	int64_t start_line;      /* the function's first line, 0 when unknown */
};

struct sym {
	int vma;            /* index in the process's maps; -1: none */
	const char *module; /* kernel module, or NULL */
	bool dwarf;         /* DWARF was consulted: file, line and inlines are known */
	bool jit;           /* named from the perf map */
	unsigned nlines;    /* 0: no function known */
	struct sym_line lines[SYM_MAX_LINES]; /* innermost first */
};

/*
 * Resolves a user address of @p.  Strings stay valid until
 * symbolizer_done() for @p (or symbolizer_free()).  What cannot be read
 * just leaves fields empty.
 */
void symbolize_user(struct symbolizer *s, struct process *p, uint64_t addr,
		    struct sym *out);

void symbolize_kernel(const struct symbolizer *s, uint64_t addr, struct sym *out);

/*
 * True when an unnamed user frame in mapping @vma (sym.vma) may be JIT
 * code: no ELF object behind its mapping, or no mapping at all.
 */
bool symbolize_maybe_jit(const struct process *p, int vma);

/*
 * Names the JIT addresses @addrs of @p from its perf map into @out (see
 * perfmap_resolve()).  -ENOENT when the process has no perf map.
 */
int symbolize_jit(const struct symbolizer *s, struct process *p,
		  const uint64_t *addrs, size_t n, struct perfmap_table *out,
		  struct errbuf *err);

/*
 * Optional, before the profiles of a window are written: resolves every
 * user address sampled by @procs (those with samples), one object at a
 * time, and counts which processes use each object.  Failure is not fatal:
 * what was not prepared is resolved on demand.
 */
int symbolizer_prepare(struct symbolizer *s, struct process *const *procs, size_t n,
		       const struct stackstore *stacks, struct errbuf *err);

/*
 * After @p's profile is written: releases the cache of objects no process
 * still to be written uses, and closes DWARF beyond the budget; without
 * symbolizer_prepare(), releases all of it.
 */
void symbolizer_done(struct symbolizer *s, const struct process *p);

/* Objects named without source lines so far: their DWARF over dwarf_max_bytes. */
size_t symbolizer_dwarf_too_big(const struct symbolizer *s);

/* Releases all the cache; @s may be used again (it starts over). */
void symbolizer_free(struct symbolizer *s);

#endif
