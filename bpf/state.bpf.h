/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * state.bpf.h: what the sampler keeps between runs of its programs and
 * has not beside its code yet (the unwinder's and the deferred walks'),
 * and what all its jobs share: settings the loader fixes before load,
 * globals it writes while sampling, maps with the types of their values.
 *
 * Included once, by cprof.bpf.c (or a test's plain-C build of the
 * unwinder, user/unwind/bpfunwind.c), before the code that uses them.
 */
#ifndef CPROF_STATE_BPF_H
#define CPROF_STATE_BPF_H

#include "base.bpf.h"
#include "budget.bpf.h"

/* Unwind tables are loaded: a process without an entry looks for its files' */
CPROF_SETTING bool file_tables = false;
/* A sample whose walk meets a table still to be built is sent to be walked again (defer.bpf.h). */
CPROF_SETTING bool defer_walks = false;

/*
 * Advanced by the loader at each drain; its low bit is the live pair of
 * count/stack maps.  Within one epoch nothing is removed from the live
 * pair's maps.
 */
__u64 live_epoch = 0;

/*
 * Advanced by the loader before it frees rows of the rows array (and then
 * waits for running programs): rows cached under an older value may name
 * rows since replaced.
 */
__u32 rows_gen = 0;

/* Deferred samples this CPU sent in the current second (CPROF_DEFER_RATE). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rate_budget);
} defer_budget SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, CPROF_EVENTS_BYTES);
} events SEC(".maps");

/* Samples to be walked again once a table is built (struct cprof_deferred, defer.bpf.h). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, CPROF_DEFER_BYTES);
} deferred SEC(".maps");

/*
 * Where this CPU's walk met the first frame in a file whose table is to
 * come (unwind.bpf.h's note_defer()): what a walk from there needs.
 * Valid when the walk's unwind_ctx.defer_file is set.
 */
struct defer_note {
	__u64 pc, sp, bp, chain_end;
	__u32 nr, exact, file, status;
	__u64 ip[CPROF_DEFER_FRAMES];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct defer_note);
} defer_notes SEC(".maps");

/* A deferred sample's record being made: its header, and a page of stack at a time. */
struct defer_buf {
	__u8 chunk[4096];
	struct cprof_deferred h; /* (last: its stack[] has no room here) */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct defer_buf);
} defer_bufs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cprof_stats);
} stats SEC(".maps");

static __always_inline struct cprof_stats *get_stats(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&stats, &zero);
}

/* When each process last reported code outside its known mappings. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, CPROF_KNOWN_PIDS);
	__type(key, __u32);
	__type(value, __u64);
} new_code_seen SEC(".maps");

/*
 * A window of the user stack being unwound.  Reading the stack costs a
 * bpf_probe_read_user a frame otherwise, and that helper is most of the
 * cost of a frame (~80 ns measured here, for 8 or 16 bytes): one read
 * serves the frames of a whole shallow stack.  The first read goes from
 * the sampled sp up to where the thread's last walk here ended (its
 * outermost frame's CFA, above which no walk reads), else 512 bytes, and
 * each refill doubles.  A read that runs past the end of the stack's
 * mapping faults and is made again up to the end of the page: ~1.3 us
 * here, where a sized read of 2.7 KiB costs ~0.1 us; sized by bytes from
 * the last sp instead, the reads of an interpreter whose leaf sp moves by
 * a few hundred bytes missed the top and refilled past the mapping's end
 * in 40% of its samples, in the runs whose stack top lay near a page end.
 */
#define STACK_WINDOW 4096
#define WINDOW_FIRST 512
#define WINDOW_AHEAD 128 /* refilled when less than this is left above sp, */
			 /* unless the window reaches the last walk's top */
#define SPAN_SLOTS 8
_Static_assert((STACK_WINDOW & (STACK_WINDOW - 1)) == 0 && (SPAN_SLOTS & (SPAN_SLOTS - 1)) == 0,
	       "window offsets and span slots are masked");
struct stack_window {
	__u64 lo;   /* user address of b[0] */
	__u32 len;  /* bytes of b read, 0: none */
	__u32 next;  /* bytes the next fill asks for */
	__u32 ahead; /* refilled when less than this is left above sp */
	__u32 pad;
	__u64 top;   /* the first fill reads up to here, if above its start; 0: none */
	/*
	 * Where the last walks of a few threads on this CPU ended (the
	 * outermost CFA), direct-mapped by tid: a thread's outermost frames
	 * stay put, so the next sample's frames lie between its sp and there,
	 * and one read of that size costs less than a small read and a refill
	 * (the cost of a read is mostly per call).  By pid, the two threads of
	 * a program took each other's: half its samples read 512 bytes and
	 * then a word alone.
	 */
	struct window_span {
		__u32 tid, pad;
		__u64 top;
	} span[SPAN_SLOTS];
	__u8 b[STACK_WINDOW + 16]; /* + room for a read at the last offset */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct stack_window);
} stack_window SEC(".maps");

/*
 * The loader waits for running programs by updating this map-in-map:
 * the kernel does a synchronize_rcu() on every update of one, and BPF
 * programs on perf events and tracepoints run inside RCU read sections.
 */
struct sync_inner {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} sync_inner SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct sync_inner);
} sync_outer SEC(".maps");

/*
 * Unwind tables of every loaded object, each a contiguous range of slots
 * (bpf/cprof.h).  The loader sizes it before load (the table budget) and
 * writes tables through an mmap; lookups in an array map are inlined by
 * the verifier, so a binary search costs a few instructions a probe.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, union cprof_table_slot);
} unwind_rows SEC(".maps");

/* File number -> where its table is in unwind_rows (struct cprof_file). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CPROF_MAX_FILES);
	__type(key, __u32);
	__type(value, struct cprof_file);
} unwind_files SEC(".maps");

/*
 * A file's identity in the kernel -> its number: how the first samples of
 * a process the loader has not read yet find the tables of files it
 * already knows.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CPROF_MAX_FILE_KEYS);
	__type(key, struct cprof_file_key);
	__type(value, struct cprof_file_ref);
} unwind_file_keys SEC(".maps");

/*
 * An entry being rewritten (unwind.bpf.h's entry_add()): too big for the
 * BPF stack.  Two a CPU, each taken while in use: a sample may interrupt
 * a rewrite made in a process's context (its exec, its mmap) on the same
 * CPU, and nothing interrupts a sample's.
 */
#define ENTRY_EDIT_SLOTS 2
struct entry_edit {
	__u32 busy;
	__u32 placed;              /* the mapping added is in pm */
	__s32 result;              /* of the copy: 1 nothing to write, -1 no room */
	__u32 pad;
	struct cprof_proc_map add; /* the mapping added, flagged */
	struct cprof_proc_maps pm; /* the new entry */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, ENTRY_EDIT_SLOTS);
	__type(key, __u32);
	__type(value, struct entry_edit);
} entry_edits SEC(".maps");

/* pid -> its executable mappings and their files, sorted by address. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, CPROF_UNWIND_PROCS);
	__type(key, __u32);
	__type(value, struct cprof_proc_maps);
} unwind_procs SEC(".maps");

/*
 * Rules found lately on this CPU, direct-mapped by lookup key.  A sample
 * mostly walks the pcs of the samples before it, and a hit costs one
 * cache line where find_row's page index and halvings cost several, cold
 * at 99 Hz, and a call.
 */
#define ROW_CACHE_BITS 9
#define ROW_CACHE_SLOTS (1 << ROW_CACHE_BITS)
struct row_cache_slot {
	__u64 key; /* row_key() of the lookup, or of its page | ROW_PAGE_KEY */
	__u32 gen; /* rows_gen when found */
	struct cprof_unwind_rule rule;
	__u16 first, last; /* a page's: the offsets the rule holds from and to */
};
#define ROW_PAGE_KEY (1ULL << 63)

struct row_cache {
	struct row_cache_slot slot[ROW_CACHE_SLOTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct row_cache);
} row_cache SEC(".maps");

#endif
