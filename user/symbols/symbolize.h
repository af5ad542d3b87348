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
 * Costs.  symbolizer_prepare(), given every user address a window sampled
 * (symbolizer_add()) and the processes whose profiles follow
 * (symbolizer_expect()), resolves the addresses object by object: it reads
 * the object's symbol table once for those addresses only (elfobj_load_symbols_for(): memory
 * grows with the addresses sampled, not with the symbols an object has)
 * and looks their lines up in one batch, then lets both go.  What was
 * found for each address is kept in a per-object cache shared by every
 * process that maps it, released as soon as the last process that uses it
 * is written; symbolizer_free() releases the rest.  Without prepare,
 * addresses are resolved one by one (a whole symbol table kept per object
 * while it fits the bound) and the cache lives for one process: it is
 * emptied by symbolizer_done().
 *
 * Bounds.  Symbol tables loaded and the names kept for sampled addresses
 * take at most symbol_max_bytes together, across objects: past it, frames
 * stay unnamed and symbolizer_stats() counts them.  DWARF is read in a
 * sandboxed child (dwarfworker.h) that can die or hang on hostile DWARF
 * and cost only that object its lines; Rust v0 names are demangled there.
 */
#ifndef CPROF_SYMBOLIZE_H
#define CPROF_SYMBOLIZE_H

#include <stdbool.h>
#include <stdint.h>

#include "util/errbuf.h"
#include "fs/procmaps.h"
#include "symbols/kallsyms.h"
#include "symbols/perfmap.h"

/* Inline frames kept per address (innermost first; the outermost always). */
#define SYM_MAX_LINES 8

/*
 * DWARF left open between profiles (only reopened for addresses prepare
 * missed): beyond this, the least recently used is closed.
 */
#define SYMBOLIZE_DWARF_BUDGET (16ull << 20)

/*
 * Default bound on symbol memory (tables loaded and names kept), across
 * objects.  A window's names take a few MB on a busy host; an agent under
 * a 128 MiB limit keeps 32 MiB of it for them.
 */
#define SYMBOLIZE_SYMBOL_MEMORY (32ull << 20)

struct symcache;
struct dwarfworker_sched;
struct elfobj;
struct rootfs_root;

/*
 * What the symbolizer sees of a process: its executable mappings, the
 * object behind each, and its root (where the debug file an object names
 * by link is looked for).  All borrowed, from a record that outlives the
 * process's symbolizer_done().
 */
struct sym_process {
	const struct vma_list *maps;
	struct elfobj *const *objs;     /* per maps->v[i], NULL where none; NULL: none at all */
	const struct rootfs_root *root; /* NULL: none held */
};

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
	/*
	 * The DWARF reader execs the agent's binary (dwarfworker_opts's
	 * exec_self): set by a main() that calls dwarfworker_reader_main().
	 */
	bool reader_exec_self;
	const struct dwarfworker_sched *reader_sched; /* the reader's scheduling; may be NULL */
	/*
	 * NULL: the DWARF reader is this symbolizer's, gone with
	 * symbolizer_free().  Else the caller's, made here on first use and
	 * kept across symbolizers (the agent's windows), so that what the
	 * reader decompressed serves the next window too; the caller frees it
	 * (dwarfworker_free()) and starts each window with
	 * dwarfworker_new_window().
	 */
	struct dwarfworker **reader;
	/* Symbol tables and names held at once, across objects (0: the default). */
	uint64_t symbol_max_bytes;
	/*
	 * Told of each object named without lines (its DWARF over the cap, or
	 * the reader failing on it) or without names (over symbol_max_bytes);
	 * may be NULL.
	 */
	void (*report)(void *ctx, const char *msg);
	void *report_ctx;
	/* Tests and fuzzing: libdw in this process, and a hook for the child. */
	bool lines_in_process;
	unsigned dwarf_timeout_ms;             /* 0: DWARFWORKER_TIMEOUT_MS */
	void (*dwarf_child_hook)(unsigned long request, unsigned child);
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
 * The address a frame is looked up at.  A caller's (@depth > 0, the leaf
 * at 0) is a return address: the instruction after its call, which may be
 * the next line or, after a call that ends a function, the next function.
 * One byte back is inside the call.  Whoever gathers a window's addresses
 * and whoever names its frames both step back here, so that what was
 * resolved beforehand is what is asked for.
 */
static inline uint64_t symbolize_frame_addr(uint64_t ip, uint32_t depth)
{
	return depth > 0 && ip > 0 ? ip - 1 : ip;
}

/*
 * Resolves a user address of @p.  Strings stay valid until
 * symbolizer_done() for @p (or symbolizer_free()).  What cannot be read
 * just leaves fields empty.
 */
void symbolize_user(struct symbolizer *s, const struct sym_process *p, uint64_t addr,
		    struct sym *out);

void symbolize_kernel(const struct symbolizer *s, uint64_t addr, struct sym *out);

/*
 * True when an unnamed user frame in mapping @vma (sym.vma) may be JIT
 * code: no ELF object behind its mapping, or no mapping at all.
 */
bool symbolize_maybe_jit(const struct sym_process *p, int vma);

/*
 * Names the JIT addresses @addrs of a process from its perf map, the
 * borrowed descriptor @perfmap_fd, into @out (see perfmap_resolve()).  A
 * negative @perfmap_fd (the process has none: -ENOENT) is returned as is.
 */
int symbolize_jit(const struct symbolizer *s, int perfmap_fd,
		  const uint64_t *addrs, size_t n, struct perfmap_table *out,
		  struct errbuf *err);

/*
 * Optional, before the profiles of a window are written, in three steps.
 * First symbolizer_add() registers with its object each user address of
 * the window's samples, @p's (callers' addresses stepped back by
 * symbolize_frame_addr()): 0, or -ENOMEM, which ends the steps there and
 * leaves every address to be resolved on demand.
 */
int symbolizer_add(struct symbolizer *s, const struct sym_process *p, uint64_t addr);

/*
 * Then, for each process whose profile follows: counts @p as a user of
 * each of its objects with addresses, so that symbolizer_done() lets an
 * object go after its last user.
 */
void symbolizer_expect(struct symbolizer *s, const struct sym_process *p);

/*
 * Last, resolves the addresses registered, one object at a time.  Failure
 * is not fatal: what was not prepared is resolved on demand.
 */
int symbolizer_prepare(struct symbolizer *s, struct errbuf *err);

/*
 * After @p's profile is written: releases the cache of objects no process
 * still to be written uses, and closes DWARF beyond the budget; without
 * symbolizer_prepare(), releases all of it.
 */
void symbolizer_done(struct symbolizer *s, const struct sym_process *p);

/* Objects over the DWARF bound named in symbolizer_stats: the first few. */
#define SYMBOLIZE_NAMED_MAX 8
#define SYMBOLIZE_NAME_LEN  256

struct symbolizer_stats {
	size_t dwarf_too_big;  /* objects named without lines: DWARF over dwarf_max_bytes */
	/* the first of them (their paths, cut to SYMBOLIZE_NAME_LEN - 1 bytes) */
	char too_big[SYMBOLIZE_NAMED_MAX][SYMBOLIZE_NAME_LEN];
	size_t dwarf_failed;   /* ... the DWARF reader died, hung or gave up on them */
	size_t symbols_over;   /* objects left without names: over symbol_max_bytes */
	size_t names_dropped;  /* names (functions, files) not kept: over symbol_max_bytes */
	uint64_t symbol_peak;  /* the most symbol memory held at once */
};

/* What the bounds cost so far (zeros before any use). */
void symbolizer_stats(const struct symbolizer *s, struct symbolizer_stats *st);

/* Releases all the cache; @s may be used again (it starts over). */
void symbolizer_free(struct symbolizer *s);

#endif
