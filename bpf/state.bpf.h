/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * state.bpf.h: everything the sampler keeps between runs of its programs:
 * the settings the loader fixes before load, the globals it writes while
 * sampling, and every map with the types of its values.
 *
 * Included once, by cprof.bpf.c (or a test's plain-C build of the
 * unwinder, user/unwind/bpfunwind.c), before the code that uses them.
 */
#ifndef CPROF_STATE_BPF_H
#define CPROF_STATE_BPF_H

#include "base.bpf.h"
#include "budget.bpf.h"

/* Set by the loader before load. */
CPROF_SETTING __u32 self_tgid = 0;
CPROF_SETTING bool filter_pids = false;
CPROF_SETTING bool filter_comms = false;
CPROF_SETTING bool filter_cgroups = false;
CPROF_SETTING bool kernel_stacks = true;
/* Unwind tables are loaded: a process without an entry looks for its files' */
CPROF_SETTING bool file_tables = false;
/* --off-cpu: waits shorter than this are only counted; walks a second per CPU. */
CPROF_SETTING __u64 offcpu_min_ns = CPROF_OFFCPU_MIN_NS;
CPROF_SETTING __u32 offcpu_unwinds = CPROF_OFFCPU_UNWINDS;
/* With --cpu, only blocks on these CPUs are waits (bit N of the words: CPU N). */
CPROF_SETTING bool offcpu_some_cpus = false;
CPROF_SETTING __u64 offcpu_cpus[CPROF_CPUS_MAX / 64] = {};
/* Slots of each CPU's part of a count log (counts.bpf.h): a power of two; 0: no log. */
CPROF_SETTING __u32 count_log_slots = 0;
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

/*
 * Where a task's user registers are from its kernel stack (see
 * user_regs()): 0 until a program has learnt it, USER_REGS_UNKNOWN when
 * no guess matched.
 */
#define USER_REGS_UNKNOWN (~0ULL)
__u64 user_regs_off = 0;

struct counts_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CPROF_COUNTS_MAX);
	__type(key, struct cprof_sample_key);
	__type(value, __u64);
};

/* Allocated as used; one map per size class (see CPROF_STACK_BYTES). */
#define STACKS_MAP(frames)                                                  \
	struct {                                                            \
		__uint(type, BPF_MAP_TYPE_HASH);                            \
		__uint(map_flags, BPF_F_NO_PREALLOC);                       \
		__uint(max_entries, CPROF_STACKS_MAX);                      \
		__uint(key_size, sizeof(__u64));                            \
		__uint(value_size, CPROF_STACK_BYTES(frames));              \
	}

struct lost_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CPROF_LOST_MAX_PIDS);
	__type(key, __u32);
	__type(value, struct cprof_lost);
};

struct counts_map counts0 SEC(".maps"), counts1 SEC(".maps");
STACKS_MAP(CPROF_SHORT_FRAMES) stacks_short0 SEC(".maps"), stacks_short1 SEC(".maps");
STACKS_MAP(CPROF_MID_FRAMES) stacks_mid0 SEC(".maps"), stacks_mid1 SEC(".maps");
STACKS_MAP(CPROF_MAX_FRAMES) stacks_long0 SEC(".maps"), stacks_long1 SEC(".maps");
struct lost_map lost0 SEC(".maps"), lost1 SEC(".maps");
/* Off-CPU ns by the same keys, a pair like the counts (one entry without --off-cpu). */
struct counts_map offcpu0 SEC(".maps"), offcpu1 SEC(".maps");

/*
 * A profiled thread's wait in progress, kept in the task itself: no
 * lookup by hash on the scheduler's path, and gone with the task.
 */
struct offcpu_task {
	__u64 start;      /* when it blocked (switch_clock()); 0: not blocked */
	__u64 gen;        /* of its process image when its stacks were walked */
	__u64 ustack, kstack, pystack; /* of the wait, or why none */
	__u64 site;        /* where (block_site()) it blocked */
	__u64 walked_site; /* where those stacks were walked; 0: none */
	__u64 short_site;  /* where its last wait was short; 0: none */
	__u32 pid;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct offcpu_task);
} offcpu_tasks SEC(".maps");

/* Stack walks this CPU made for waits in the current second. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rate_budget);
} offcpu_budget SEC(".maps");

/* Deferred samples this CPU sent in the current second (CPROF_DEFER_RATE). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rate_budget);
} defer_budget SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CPROF_FILTER_PIDS);
	__type(key, __u32);
	__type(value, __u8);
} pid_filter SEC(".maps");

/* Process names (group leader comm, zero-padded) to profile. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CPROF_FILTER_COMMS);
	__type(key, char[CPROF_COMM_LEN]);
	__type(value, __u8);
} comm_filter SEC(".maps");

/* cgroup v2 ids to profile, with everything below them. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CPROF_FILTER_CGROUPS);
	__type(key, __u64);
	__type(value, __u8);
} cgroup_filter SEC(".maps");

/* Processes announced to the loader (see struct cprof_known_image). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, CPROF_KNOWN_PIDS);
	__type(key, __u32);
	__type(value, struct cprof_known_image);
} known_pids SEC(".maps");

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

/* When each process last reported code outside its known mappings. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, CPROF_KNOWN_PIDS);
	__type(key, __u32);
	__type(value, __u64);
} new_code_seen SEC(".maps");

/*
 * Stacks this CPU found or put in the live pair's maps during this epoch,
 * direct-mapped by hash: a hit needs no lookup in the stacks map (a call
 * through the map's ops and a few cache misses, 100-150 ns here).  A slot
 * holds the hash mixed with the epoch, so the slots of an epoch drained
 * since match nothing and need no clearing.  An interpreter's samples
 * repeat hundreds of stacks a second (each line and each leaf pc in the
 * loop makes its own): 16 slots caught 0.6 of its 2 stores a sample.
 */
#define STORED_SLOTS 512
_Static_assert((STORED_SLOTS & (STORED_SLOTS - 1)) == 0, "slots are picked by a mask");
struct stored_stacks {
	__u64 hash[STORED_SLOTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct stored_stacks);
} stored SEC(".maps");

/* One stack being built; too big for the 512-byte BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cprof_stack);
} scratch SEC(".maps");

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
