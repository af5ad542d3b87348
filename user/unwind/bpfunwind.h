/* SPDX-License-Identifier: MIT */
/*
 * bpfunwind: the BPF unwinder of bpf/unwind.bpf.h, built as plain C
 * (user/unwind/bpfshim.h), for unit tests and the agent's deferred walks
 * (deferred.c): the same find_mapping, row search, row cache and frame
 * steps that run in the kernel, over tables the loader's code built and
 * stacks a test recorded or a deferred sample brought.
 */
#ifndef CPROF_BPFUNWIND_H
#define CPROF_BPFUNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cprof.h"

/*
 * The rows array (the unwind_rows map) is @n slots at @slots, the
 * caller's.  Advances rows_gen, as the loader does before it rewrites
 * rows: the row cache forgets what it found before.
 */
void bpfu_set_rows(const union cprof_table_slot *slots, uint32_t n);

/*
 * The rows array as @n slots that @fn gives one at a time (into storage
 * of its own, valid until its next call): the agent's, which reads them
 * from the map.  Advances rows_gen as bpfu_set_rows().
 */
void bpfu_set_rows_fn(const union cprof_table_slot *(*fn)(void *ctx, uint32_t idx), void *ctx,
		      uint32_t n);

/* Sets file @file's entry of the unwind_files array; bpfu_get_file() reads it. */
void bpfu_set_file(uint32_t file, const struct cprof_file *f);
void bpfu_get_file(uint32_t file, struct cprof_file *out);

/* Names a file by its identity in unwind_file_keys; @ref NULL: forgets it. */
void bpfu_set_file_key(const struct cprof_file_key *k, const struct cprof_file_ref *ref);

/*
 * A mapping as the kernel's VMA tells it (vma.bpf.h's vma_file_of()): as in
 * a sample, a walk finds one.
 */
struct bpfu_vma {
	uint64_t start, end, pgoff;
	struct cprof_file_key key;
};
#define BPFU_VMAS_MAX 64

/*
 * The process's mappings as the kernel has them, for the walks that follow,
 * and whether the unwinder looks there (the file_tables setting).
 */
void bpfu_set_vmas(const struct bpfu_vma *v, size_t n, bool file_tables_on);

/*
 * The rule of the last row at or below @rel (< 2^32, as find_row passes
 * it) in table @t, by search_row alone (no cache); -1: none.
 */
int bpfu_search_row(const struct cprof_table *t, uint64_t rel, struct cprof_unwind_rule *out);

/* The same as the unwinder looks a row up (find_row: this CPU's row cache first). */
int bpfu_find_row(const struct cprof_table *t, uint64_t rel, struct cprof_unwind_rule *out);

/* The index in @pm of the mapping holding @pc (find_mapping); -1: none. */
int bpfu_find_mapping(const struct cprof_proc_maps *pm, uint64_t pc);

/*
 * Tells the walk of @pid that @t's pages hold CPython perf trampolines, as
 * the loader does (python_tramp.h).  -1: more than the shim holds.
 */
int bpfu_set_tramp(uint32_t pid, const struct cprof_py_tramp *t);

/* Registers where a walk starts: pc is exact (not a return address). */
struct bpfu_regs {
	uint64_t pc, sp, bp;
};

/* A process's stack memory, as the walk reads it: [lo, lo + len). */
struct bpfu_memory {
	uint64_t lo;
	const uint8_t *bytes;
	size_t len;
};

struct bpfu_walk {
	struct cprof_stack st;     /* frames, leaf first; status: CPROF_STACK_F_* */
	uint32_t status;           /* enum cprof_unwind_status */
	uint64_t hash;             /* of the frames, as the walk computes it */
	uint64_t sp;               /* where it stopped: the last frame's sp */
	size_t reads;              /* bpf_probe_read_user calls */
	size_t new_code;           /* CPROF_EV_NEW_CODE events sent (pcs in no mapping) */
	uint32_t new_code_pid;     /* ... the pid of the last one */
	size_t asked;              /* CPROF_EV_WANT_TABLE events sent */
	uint32_t asked_file[16];   /* ... their files, the first 16 */
	bool unknown_file;         /* met a file not numbered (cprof_stats.unwind_unknown_file) */
	bool deferred;             /* met a table to come: bpfu_defer_note() says where */
};

/*
 * The kernel entry of a process without the loader's (entry.bpf.h):
 * remember_vma() adds a mapping found by bpf_find_vma (-1: the loader's
 * entry is there, or the kernel entry is full); forget_entry() drops it
 * at exec (@any: the loader's too) or exit; bpfu_entry() copies the
 * process's entry, whichever it is (-1: none).
 */
int bpfu_remember(uint32_t pid, uint64_t start, uint64_t end, uint64_t bias, uint32_t file);

/*
 * entry_add() as an mmap of an executable file calls it (ldstate.bpf.h's
 * on_ld_state): into the loader's entry too, made when none and @create.
 */
int bpfu_mmap_add(uint32_t pid, const struct cprof_proc_map *m, bool create);

/*
 * Marks this CPU's rewrite copy @slot in use (@busy), as a rewrite that a
 * sample interrupted leaves it; returns the entry count it holds.
 */
uint32_t bpfu_edit_slot(unsigned slot, bool busy);
void bpfu_forget(uint32_t pid, bool any);
int bpfu_entry(uint32_t pid, struct cprof_proc_maps *out);

/* Sets @pid's entry in unwind_procs to @pm (NULL: none), as the loader does. */
void bpfu_set_proc(uint32_t pid, const struct cprof_proc_maps *pm);

/* As bpfu_walk()'s @pm: the entry the walks before left (a kernel entry, say). */
#define BPFU_KEPT ((const struct cprof_proc_maps *)1)

/*
 * Walks the user stack of process @pid, whose unwind_procs entry is @pm
 * (NULL: none; BPFU_KEPT: what the walks before left), from @regs over
 * @mem, with the code of
 * user_stack() in bpf/cprof.bpf.c: unwind_begin(), the registers,
 * unwind_walk().  The files' entries are what bpfu_set_file() last set:
 * the walk asks for the tables of those still unbuilt, as in the kernel.
 * -1 when a map is missing.
 */
int bpfu_walk(uint32_t pid, const struct cprof_proc_maps *pm, const struct bpfu_regs *regs,
	      const struct bpfu_memory *mem, struct bpfu_walk *out);

/*
 * The stack window as a user walk leaves it (window.bpf.h): @len bytes
 * (at most STACK_WINDOW) of the thread's stack at @lo, which are @bytes.
 * A test may make them differ from the memory there, to tell which one a
 * read was answered from.
 */
void bpfu_set_window(uint64_t lo, const void *bytes, uint32_t len);

/*
 * python.bpf.h's reads of what CPython keeps on the C stack after the
 * walk: the word at @addr (py_stack_word: the window's, else read from
 * @mem; *@reads: bpf_probe_read_user calls), and the frame of @size bytes
 * at @addr copied from the window (py_frame_from_window: -1 when the
 * window does not hold it; its first CPROF_PY_FRAME_READ bytes in @out).
 */
int bpfu_py_stack_word(const struct bpfu_memory *mem, uint64_t addr, uint64_t *out,
		       size_t *reads);
int bpfu_py_frame_from_window(uint64_t addr, uint32_t size, uint8_t out[CPROF_PY_FRAME_READ]);

/*
 * The count logs of counts.bpf.h: each pair's is @log0 or @log1, the
 * caller's, @ncpus (at most 8) parts of @slots slots (count_log_slots),
 * and the CPUs' memos empty.  bpfu_count_log_add() counts a sample of
 * @key on @cpu in @pair's log, with count_log_add(): false when that
 * CPU's part is full (the sample is for the counts map then).
 */
void bpfu_set_count_logs(struct cprof_count_slot *log0, struct cprof_count_slot *log1,
			 uint32_t ncpus, uint32_t slots);
bool bpfu_count_log_add(unsigned int pair, unsigned int cpu, const struct cprof_sample_key *key);

/*
 * Whether walks note the first frame in a file whose table is to come, as
 * the sampler's do (the defer_walks setting; bpf/defer.bpf.h).  Off at start.
 */
void bpfu_set_defer(bool on);

/*
 * Where the last walk that met such a frame noted it, as the record BPF
 * sends (bpf/defer.bpf.h) holds it: @out's header and frames, not its
 * key, epoch or stack.
 */
int bpfu_defer_note(struct cprof_deferred *out);

/*
 * Walks a deferred sample on from where its walk met a table to come, as
 * unwind_step() goes on: from @rec's registers, after its frames, over
 * its stack copy @stack (rec->stack_len bytes at rec->stack_lo; nothing
 * else of the process is read), in process @pid whose unwind_procs entry
 * is @pm (NULL: none); the files' entries are what bpfu_set_file() last
 * set.  The whole stack into @out as bpfu_walk() gives it (out->hash: of
 * all frames but the leaf).  -1 when a map is missing.
 */
int bpfu_resume(uint32_t pid, const struct cprof_proc_maps *pm, const struct cprof_deferred *rec,
		const uint8_t *stack, struct bpfu_walk *out);

/*
 * The name BPF gives a user stack stored whole (unwind.bpf.h's
 * walk_user_stack()): @walk_hash of all its frames but the leaf, as a
 * walk leaves it, with the leaf and the stack's status.  0: no frames.
 */
uint64_t bpfu_stack_hash(const struct cprof_stack *st, uint64_t walk_hash);

#endif
