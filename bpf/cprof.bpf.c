// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cprof.bpf.c: the sampler.  Runs on every CPU-clock tick of every CPU.
 *
 * Per sample: drop what is filtered out, walk the user stack here (by the
 * loader's CFI tables, else by frame pointers) and the kernel stack with
 * bpf_get_stack into per-CPU scratch, name each stack by a 64-bit hash of
 * its frames and store it once (in a map sized for its length), then bump
 * counts[{pid, gen, tid, ustack, kstack, comm}].  The
 * first sample of a process we have not seen sends a process event so the
 * loader snapshots its mappings while it still runs.
 *
 * Counts and stacks come in two pairs of maps.  The loader flips the live
 * pair (by advancing `live_epoch`) and waits an RCU grace period before
 * draining the idle pair, so a drain never races a writer and a stack is
 * never removed while a count of the same pair still names it.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "cprof.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

#define PF_EXITING 0x00000004
#define PF_KTHREAD 0x00200000

/* Set by the loader before load. */
const volatile __u32 self_tgid = 0;
const volatile bool filter_pids = false;
const volatile bool filter_comms = false;
const volatile bool filter_cgroups = false;
const volatile bool kernel_stacks = true;

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
 * direct-mapped by hash: a hit needs no lookup in the stacks map (a
 * helper call and a few cache misses).  Consecutive samples of a CPU
 * mostly repeat a few stacks.
 */
#define STORED_SLOTS 16
struct stored_stacks {
	__u64 epoch;
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
 * serves the frames of a whole shallow stack.  The first read asks for
 * what the process's last walk here spanned (else 512 bytes) and each
 * refill doubles: stack memory above the live frames is mostly cold, and
 * a 4 KiB first read cost 3-4 times what a 512-byte one did for a
 * 20-frame stack (~800 bytes).
 */
#define STACK_WINDOW 4096
#define WINDOW_FIRST 512
#define WINDOW_AHEAD 128 /* refilled when less than this is left above sp */
#define SPAN_SLOTS 8
struct stack_window {
	__u64 lo;   /* user address of b[0] */
	__u32 len;  /* bytes of b read, 0: none */
	__u32 next; /* bytes the next fill asks for */
	/*
	 * The bytes of stack the last walks of a few processes on this CPU
	 * spanned, direct-mapped by pid: the next sample of a process mostly
	 * walks as deep, and one read of that size costs less than a small
	 * read and a refill (the cost of a read is mostly per call).
	 */
	struct {
		__u32 pid, bytes;
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
 * Unwind rows of every loaded object, each table a contiguous range.  The
 * loader sizes it before load (the row budget) and writes rows through an
 * mmap; lookups in an array map are inlined by the verifier, so a binary
 * search costs a few instructions a probe.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, union cprof_table_slot);
} unwind_rows SEC(".maps");

/* pid -> its executable mappings and their tables, sorted by address. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, CPROF_UNWIND_PROCS);
	__type(key, __u32);
	__type(value, struct cprof_proc_maps);
} unwind_procs SEC(".maps");

static __always_inline bool in_cgroup_filter(void)
{
	/* Walk from the root down: any ancestor (or the cgroup itself) listed. */
	for (int level = 0; level < CPROF_CGROUP_MAX_DEPTH; level++) {
		__u64 id = bpf_get_current_ancestor_cgroup_id(level);

		if (!id)
			return false;
		if (bpf_map_lookup_elem(&cgroup_filter, &id))
			return true;
	}
	return false;
}

/*
 * Whether the current task is to be profiled.  Filters of different kinds
 * must all match; the profiler itself never is.
 */
static __always_inline bool wanted(__u32 pid, struct task_struct *task)
{
	if (pid == self_tgid)
		return false;
	if (filter_pids && !bpf_map_lookup_elem(&pid_filter, &pid))
		return false;
	if (filter_comms) {
		char comm[CPROF_COMM_LEN] = {};

		BPF_CORE_READ_STR_INTO(&comm, task, group_leader, comm);
		if (!bpf_map_lookup_elem(&comm_filter, comm))
			return false;
	}
	if (filter_cgroups && !in_cgroup_filter())
		return false;
	return true;
}

static __always_inline struct cprof_stats *get_stats(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&stats, &zero);
}

/* FNV-1a-style mixing of 64-bit words; collisions among < 1e5 stacks a
 * second are ~1e-10, far below any sampling error. */
#define HASH_SEED 0xcbf29ce484222325ULL

static __always_inline __u64 hash_mix(__u64 h, __u64 word)
{
	h ^= word;
	h *= 0x100000001b3ULL;
	return h ^ (h >> 32);
}

/*
 * The final name of a stack: frames, how the walk went, and who walked it
 * (@salt), so identical frames from different walks stay apart.
 */
static __always_inline __u64 hash_finish(__u64 h, const struct cprof_stack *st, __u64 salt)
{
	h = hash_mix(h, salt ^ ((__u64)st->status << 40) ^ st->nr);
	return h | CPROF_STACK_HASHED;
}

/*
 * For kernel stacks (at most CPROF_MAX_KFRAMES frames).  A plain
 * bounded loop: a bpf_loop would make an indirect call per frame, which
 * cost as much as the hashing.  (The unwinder hashes as it goes instead.)
 */
static __always_inline __u64 hash_frames(const struct cprof_stack *st, __u64 salt)
{
	__u64 h = HASH_SEED;
	__u32 nr = st->nr;

	for (__u32 i = 0; i < CPROF_MAX_KFRAMES; i++) {
		if (i >= nr)
			break;
		h = hash_mix(h, st->ip[i]);
	}
	return hash_finish(h, st, salt);
}

static __always_inline struct cprof_stack *get_scratch(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&scratch, &zero);
}

/*
 * Stores the stack in scratch under hash @h in @pair, the live one in
 * @epoch; returns @h or why not.
 */
static __always_inline __u64 store_stack(struct cprof_stack *st, __u32 pair, __u64 epoch, __u64 h)
{
	__u32 nr = st->nr, zero = 0;
	struct stored_stacks *seen = bpf_map_lookup_elem(&stored, &zero);
	__u64 *slot = NULL;
	void *map;
	long err;

	if (seen) {
		if (seen->epoch != epoch) {
			/* the slots name stacks of a pair drained since */
			__builtin_memset(seen->hash, 0, sizeof(seen->hash));
			seen->epoch = epoch;
		}
		slot = &seen->hash[h & (STORED_SLOTS - 1)];
		if (*slot == h)
			return h;
	}

	/* @pair is a constant once inlined: this folds to the class test. */
	if (nr <= CPROF_SHORT_FRAMES)
		map = pair ? (void *)&stacks_short1 : (void *)&stacks_short0;
	else if (nr <= CPROF_MID_FRAMES)
		map = pair ? (void *)&stacks_mid1 : (void *)&stacks_mid0;
	else
		map = pair ? (void *)&stacks_long1 : (void *)&stacks_long0;
	/*
	 * Most stacks were stored already: a lookup is lock-free, where an
	 * insert that finds the key takes the bucket lock to say so.  (The
	 * lookup is a call through the map's ops, the map being picked at
	 * run time.  A call site per map has it inlined, ~2% of a sample,
	 * but verifying twelve took 0.12 s more CPU at load: more than a
	 * default 30 s run saves on any host below some 600 CPUs.)
	 */
	if (!bpf_map_lookup_elem(map, &h)) {
		err = bpf_map_update_elem(map, &h, st, BPF_NOEXIST);
		if (err && err != -17 /* EEXIST: stored meanwhile */)
			return CPROF_STACK_ERR_FULL;
	}
	if (slot)
		*slot = h;
	return h;
}

/* The kernel stack, walked by the kernel. */
static __always_inline __u64 kernel_stack(void *ctx, __u32 pair, __u64 epoch)
{
	struct cprof_stack *st = get_scratch();
	long n;

	if (!st)
		return CPROF_STACK_ERR_READ;
	n = bpf_get_stack(ctx, st->ip, CPROF_MAX_KFRAMES * sizeof(__u64), 0);
	if (n < 0 && n != -14 /* EFAULT: nothing to walk */)
		return CPROF_STACK_ERR_READ;
	st->nr = n > 0 ? n / sizeof(__u64) : 0;
	st->status = 0;
	if (st->nr == 0)
		return CPROF_STACK_NONE;
	return store_stack(st, pair, epoch, hash_frames(st, 0));
}

/* --- DWARF CFI unwinding (DESIGN.md section 4) --------------------------- */

/*
 * The last row found and the table offset it was found for: a recursive
 * call returns to the same pc frame after frame.
 */
struct row_memo {
	__u64 key; /* row_key() of the lookup; 0: none */
	struct cprof_unwind_row row;
};

/*
 * Rows found lately on this CPU, direct-mapped by lookup key.  A sample
 * mostly walks the pcs of the samples before it, and a hit costs one
 * cache line where find_row's page index and halvings cost several, cold
 * at 99 Hz, and a call.
 */
#define ROW_CACHE_BITS 9
#define ROW_CACHE_SLOTS (1 << ROW_CACHE_BITS)
struct row_cache_slot {
	__u64 key;
	__u32 gen; /* rows_gen when found */
	struct cprof_unwind_row row;
};

struct row_cache {
	struct row_cache_slot slot[ROW_CACHE_SLOTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct row_cache);
} row_cache SEC(".maps");

/* Names a lookup of table offset @rel in @m's table; 0: no such offset. */
static __always_inline __u64 row_key(const struct cprof_proc_map *m, __u64 rel)
{
	/* first_row > 0: a table's rows follow its index */
	return rel >> 32 ? 0 : (__u64)m->first_row << 32 | rel;
}

struct unwind_ctx {
	struct cprof_stack *st;
	struct stack_window *win;
	struct cprof_proc_maps *pm;
	__u32 pid;
	bool reported; /* NEW_CODE sent for this walk */
	__u64 hash;    /* of the frames so far */
	__u64 pc, sp, bp;
	bool exact; /* pc is not a return address: the leaf, or a signal's */
	__u32 status;
	__u32 last_map; /* 1 + the mapping of the previous frame, 0: none */
	struct row_memo memo;
};

/*
 * Branch-free binary searches: a fixed number of halvings with no
 * data-dependent jumps (comparisons are done by subtraction and the sign
 * bit, which clang cannot turn back into jumps), so the verifier walks one
 * path, and they can run inside the per-frame callback without a bpf_loop
 * of their own.
 */

/* 1 when a <= b, for values below 2^63 (user addresses, row pcs). */
static __always_inline __u64 le_bit(__u64 a, __u64 b)
{
	return 1 - ((b - a) >> 63);
}

/*
 * The mapping containing @pc, or NULL.  Mappings are sorted and disjoint.
 * The previous frame's mapping is tried first: callers are mostly in the
 * same object.
 */
static __always_inline const struct cprof_proc_map *find_mapping(struct unwind_ctx *c, __u64 pc)
{
	const struct cprof_proc_maps *pm = c->pm;
	__u32 n, lo = 0, len, half, idx;

	if (!pm)
		return NULL; /* frame pointers only */
	n = pm->n;
	if (c->last_map) {
		idx = (c->last_map - 1) & (CPROF_MAX_PROC_MAPS - 1);
		if (pc >= pm->m[idx].start && pc < pm->m[idx].end)
			return &pm->m[idx];
	}
	if (n > CPROF_MAX_PROC_MAPS)
		n = CPROF_MAX_PROC_MAPS;
	/* the last mapping with start <= pc, if any */
	len = n;
	for (int i = 0; i < 9; i++) { /* ceil(log2(CPROF_MAX_PROC_MAPS)) + 1 */
		if (!len) /* the one jump: it only leaves the loop */
			break;
		half = len / 2;
		idx = (lo + half) & (CPROF_MAX_PROC_MAPS - 1);
		lo += le_bit(pm->m[idx].start, pc) * (len - half);
		len = half;
	}
	/* lo: how many mappings start at or below pc (1-based position) */
	if (lo == 0 || lo > n)
		return NULL;
	idx = (lo - 1) & (CPROF_MAX_PROC_MAPS - 1);
	if (pc >= pm->m[idx].end)
		return NULL;
	c->last_map = idx + 1;
	return &pm->m[idx];
}

/* Entry @k of the page index that ends at slot @end. */
static __always_inline int index_entry(__u32 end, __u32 npages, __u32 k, __u32 *out)
{
	__u32 slot = end - CPROF_INDEX_SLOTS(npages) + k / 2;
	const union cprof_table_slot *e = bpf_map_lookup_elem(&unwind_rows, &slot);

	if (!e)
		return -1;
	*out = e->index[k & 1];
	return 0;
}

/* The last row at or below @rel in the mapping's table, by binary search. */
static __always_inline int search_row(const struct cprof_proc_map *m, __u64 rel,
				      struct cprof_unwind_row *out)
{
	__u32 first, nrows, npages, lo, len, half, idx, a, b;
	__u64 page;
	const union cprof_table_slot *r;

	first = m->first_row;
	nrows = m->nrows;
	npages = m->npages;
	if (!nrows)
		return -1;
	page = rel >> (m->index_shift & 31);
	if (page >= npages) {
		/* past the last row's page: the last row */
		lo = nrows - 1;
		len = 1;
	} else {
		/* rows of this page, and the one before that covers its start */
		if (index_entry(first, npages, page, &a) ||
		    index_entry(first, npages, page + 1, &b))
			return -1;
		lo = a ? a - 1 : 0;
		if (b <= lo || b > nrows)
			return -1; /* not an index we wrote */
		len = b - lo;
	}
	for (int i = 0; i < 26; i++) { /* tables have < 2^25 rows */
		if (!len) /* the one jump: it only leaves the loop */
			break;
		half = len / 2;
		idx = first + lo + half;
		r = bpf_map_lookup_elem(&unwind_rows, &idx);
		if (!r)
			return -1;
		lo += le_bit(r->row.pc, rel) * (len - half);
		len = half;
	}
	if (lo == 0)
		return -1;
	idx = first + lo - 1;
	r = bpf_map_lookup_elem(&unwind_rows, &idx);
	if (!r)
		return -1;
	*out = r->row;
	return 0;
}

/*
 * Leaves in memo->row the last row at or below @rel in the mapping's
 * table, from this CPU's row cache when there; -1: none.  A global
 * function, checked once by the verifier rather than at every frame of the
 * walk in that frame's state.
 */
__noinline int find_row(const struct cprof_proc_map *m, __u64 rel, struct row_memo *memo)
{
	__u32 zero = 0;
	struct row_cache *rc = bpf_map_lookup_elem(&row_cache, &zero);
	struct row_cache_slot *e = NULL;
	__u32 gen = rows_gen;
	__u64 key;

	if (!m || !memo)
		return -1;
	key = row_key(m, rel);
	if (!key)
		return -1;
	if (rc) {
		e = &rc->slot[(key * 0x9e3779b97f4a7c15ULL) >> (64 - ROW_CACHE_BITS)];
		if (e->key == key && e->gen == gen) {
			memo->key = key;
			memo->row = e->row;
			return 0;
		}
	}
	if (search_row(m, rel, &memo->row))
		return -1;
	memo->key = key;
	if (e) {
		e->key = key;
		e->gen = gen;
		e->row = memo->row;
	}
	return 0;
}

/*
 * The stack window's two operations are global functions: the verifier
 * checks each once, where inlined at every read site they made too many
 * paths for it.
 */

/*
 * Fills the window from @addr on: w->next bytes, or up to the end of
 * @addr's page when that fails (the top of a stack may be nearer).
 */
__noinline int fill_window(struct stack_window *w, __u64 addr)
{
	__u32 size, page_left = 4096 - (addr & 4095);

	if (!w)
		return -1;
	size = w->next;
	if (size > STACK_WINDOW)
		size = STACK_WINDOW;
	if (size < WINDOW_FIRST)
		size = WINDOW_FIRST;
	w->next = size * 2;
	w->lo = addr;
	w->len = size;
	if (!bpf_probe_read_user(w->b, size, (const void *)addr))
		return 0;
	if (page_left >= size || bpf_probe_read_user(w->b, page_left, (const void *)addr))
		page_left = 0;
	w->len = page_left;
	return 0;
}

struct stack_words {
	__u64 w[2];
};

/* @size (8 or 16) bytes of the user stack at @addr: from the window, else read alone. */
static __always_inline int read_stack(struct stack_window *w, __u64 addr, struct stack_words *out, __u32 size)
{
	__u64 off;

	if (!w || !out)
		return -1;
	size = size > 8 ? 16 : 8;
	off = addr - w->lo;
	if (addr < w->lo || off + size > w->len) {
		if (size > 8)
			return bpf_probe_read_user(out, 16, (const void *)addr);
		return bpf_probe_read_user(out, 8, (const void *)addr);
	}
	off &= STACK_WINDOW - 1;
	out->w[0] = *(__u64 *)&w->b[off];
	if (size > 8)
		out->w[1] = *(__u64 *)&w->b[off + 8];
	return 0;
}

static __always_inline int read_word(struct unwind_ctx *c, __u64 addr, __u64 *out)
{
	struct stack_words v;
	int err = read_stack(c->win, addr, &v, 8);

	*out = v.w[0];
	return err;
}

/* Moves to the caller whose return address is @ra; 1 ends the walk. */
static __always_inline long step_to(struct unwind_ctx *c, __u64 ra, __u64 sp)
{
	if (sp <= c->sp) {
		c->status = CPROF_UNWIND_BAD_CFA; /* would loop */
		return 1;
	}
	c->sp = sp;
	c->pc = ra;
	if (ra == 0) { /* a zero return address marks the outermost frame */
		c->status = CPROF_UNWIND_OK;
		return 1;
	}
	return 0;
}

/* No CFI for this pc: follow the frame-pointer chain for one frame. */
static __always_inline long step_fp(struct unwind_ctx *c, bool had_table)
{
	struct stack_words frame; /* saved rbp, return address */

	if (c->bp == 0 || c->bp < c->sp) {
		/* rbp 0 ends a frame-pointer chain (_start clears it). */
		c->status = had_table ? CPROF_UNWIND_NO_ROW :
			    c->bp == 0 ? CPROF_UNWIND_OK : CPROF_UNWIND_BAD_CFA;
		return 1;
	}
	if (read_stack(c->win, c->bp, &frame, sizeof(frame))) {
		c->status = CPROF_UNWIND_READ;
		return 1;
	}
	c->st->status |= CPROF_STACK_F_FP;
	{
		__u64 sp = c->bp + 16;

		c->bp = frame.w[0];
		return step_to(c, frame.w[1], sp);
	}
}

/*
 * Signal trampoline: the interrupted registers are in the ucontext that
 * the stack pointer points at (struct rt_sigframe after its return
 * address was popped): uc_mcontext at 40, then rbp, rsp, rip of struct
 * sigcontext at 80, 120, 128.
 */
static __always_inline long step_signal(struct unwind_ctx *c)
{
	__u64 pc, sp, bp;

	if (read_word(c, c->sp + 40 + 128, &pc) || read_word(c, c->sp + 40 + 120, &sp) ||
	    read_word(c, c->sp + 40 + 80, &bp)) {
		c->status = CPROF_UNWIND_READ;
		return 1;
	}
	c->bp = bp;
	c->exact = true;
	/* the interrupted code's stack lies above the signal frame */
	return step_to(c, pc, sp);
}

static __always_inline long step_dwarf(struct unwind_ctx *c, const struct cprof_unwind_row *row)
{
	__u64 cfa, ra, bp;

	switch (CPROF_ROW_CFA(row)) {
	case CPROF_CFA_RSP:
		cfa = c->sp + row->cfa_off;
		break;
	case CPROF_CFA_RBP:
		cfa = c->bp + row->cfa_off;
		break;
	case CPROF_CFA_PLT:
		cfa = c->sp + 8 + ((c->pc & 15) >= (__u64)row->cfa_off ? 8 : 0);
		break;
	case CPROF_CFA_SIGNAL:
		return step_signal(c);
	case CPROF_CFA_STOP:
		c->status = CPROF_UNWIND_OK;
		return 1;
	default:
		return step_fp(c, true);
	}
	if (CPROF_ROW_RBP(row) == CPROF_RBP_OFFSET && row->rbp_off == -2) {
		/* the usual prologue: rbp saved right below the return address */
		struct stack_words frame;

		if (read_stack(c->win, cfa - 16, &frame, sizeof(frame))) {
			c->status = CPROF_UNWIND_READ;
			return 1;
		}
		c->bp = frame.w[0];
		ra = frame.w[1];
	} else {
		if (read_word(c, cfa - 8, &ra)) {
			c->status = CPROF_UNWIND_READ;
			return 1;
		}
		if (CPROF_ROW_RBP(row) == CPROF_RBP_OFFSET) {
			if (read_word(c, cfa + (__s64)row->rbp_off * 8, &bp)) {
				c->status = CPROF_UNWIND_READ;
				return 1;
			}
			c->bp = bp;
		}
	}
	c->st->status |= CPROF_STACK_F_DWARF;
	return step_to(c, ra, cfa);
}

/*
 * A pc in no mapping the loader gave us: a library loaded since, or JIT
 * code.  Ask for a new snapshot, at most every 200 ms per process.
 */
static void report_new_code(__u32 pid)
{
	__u64 now = bpf_ktime_get_ns(), *last = bpf_map_lookup_elem(&new_code_seen, &pid);
	struct cprof_event *ev;

	if (last && now - *last < 200000000ULL)
		return;
	bpf_map_update_elem(&new_code_seen, &pid, &now, BPF_ANY);
	ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
	if (!ev)
		return;
	__builtin_memset(ev, 0, sizeof(*ev));
	ev->type = CPROF_EV_NEW_CODE;
	ev->pid = pid;
	ev->ktime_ns = now;
	bpf_ringbuf_submit(ev, 0);
}

/* One frame: record the pc, then find the caller.  bpf_loop callback. */
static long unwind_step(__u32 i, void *data)
{
	struct unwind_ctx *c = data;
	struct cprof_stack *st = c->st;
	const struct cprof_proc_map *m;
	__u32 n = st->nr;
	__u64 lookup;

	if (n >= CPROF_MAX_FRAMES) {
		c->status = CPROF_UNWIND_TRUNCATED;
		return 1;
	}
	st->ip[n & (CPROF_MAX_FRAMES - 1)] = c->pc;
	st->nr = n + 1;
	c->hash = hash_mix(c->hash, c->pc);
	/* This frame's saved registers lie a little above sp, mostly. */
	if (c->sp < c->win->lo || c->sp + WINDOW_AHEAD > c->win->lo + c->win->len)
		fill_window(c->win, c->sp);
	/* A return address is past its call; look up the call itself. */
	lookup = c->exact ? c->pc : c->pc - 1;
	c->exact = false;
	m = find_mapping(c, lookup);
	if (!m && c->pm && !c->reported && !(c->pm->flags & CPROF_PROC_MAPS_TRUNCATED)) {
		report_new_code(c->pid);
		c->reported = true;
	}
	if (m && m->nrows) {
		__u64 rel = lookup - m->bias, key = row_key(m, rel);

		/* the same row as the last frame's needs no call */
		if ((key && key == c->memo.key) || !find_row(m, rel, &c->memo))
			return step_dwarf(c, &c->memo.row);
	}
	return step_fp(c, m && m->nrows);
}

/*
 * The user stack, walked here: by CFI where the loader gave the process
 * tables (@pm), by frame pointers elsewhere and for processes without any.
 * (Walking frame pointers here rather than with bpf_get_stack costs less,
 * through the stack window, and goes deeper.)
 */
static __always_inline __u64 user_stack(struct bpf_perf_event_data *ctx, __u32 pair, __u64 epoch,
					struct task_struct *task, __u32 pid, bool in_kernel,
					struct cprof_stats *s)
{
	struct unwind_ctx c = { .pid = pid, .exact = true, .hash = HASH_SEED };
	__u32 zero = 0;
	__u64 sp0;
	typeof(&c.win->span[0]) span;

	c.pm = bpf_map_lookup_elem(&unwind_procs, &pid);
	c.st = get_scratch();
	c.win = bpf_map_lookup_elem(&stack_window, &zero);
	if (!c.st || !c.win)
		return CPROF_STACK_ERR_READ;
	c.win->len = 0; /* another stack's */
	c.win->next = WINDOW_FIRST;
	span = &c.win->span[pid & (SPAN_SLOTS - 1)];
	if (span->pid == pid && span->bytes > WINDOW_FIRST - WINDOW_AHEAD)
		c.win->next = span->bytes + WINDOW_AHEAD;
	/*
	 * The sampled registers, read unconditionally: clang would otherwise
	 * merge these loads with the ones below through a pointer select,
	 * and the verifier takes only constant-offset ctx loads.
	 */
	c.pc = ctx->regs.ip;
	c.sp = ctx->regs.sp;
	c.bp = ctx->regs.bp;
	if (in_kernel) {
		/* The user registers saved at kernel entry (direct BTF loads). */
		struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);

		c.pc = regs->ip;
		c.sp = regs->sp;
		c.bp = regs->bp;
	}
	c.st->nr = 0;
	c.st->status = 0;
	c.status = CPROF_UNWIND_TRUNCATED; /* unless a step says otherwise */
	sp0 = c.sp;
	bpf_loop(CPROF_MAX_FRAMES + 1, unwind_step, &c, 0);
	span->pid = pid;
	span->bytes = c.sp - sp0 < STACK_WINDOW ? c.sp - sp0 : STACK_WINDOW;
	if (c.pm) {
		s->unwind_dwarf++;
		if (c.status < CPROF_UNWIND_STATUS_MAX)
			s->unwind_status[c.status]++;
	} else {
		s->unwind_fp_only++;
		/*
		 * A chain of frame pointers cannot tell its end from a break:
		 * only its length is worth a pseudo-frame.
		 */
		if (c.status != CPROF_UNWIND_TRUNCATED)
			c.status = CPROF_UNWIND_OK;
	}
	c.st->status |= c.status;
	if (c.st->nr == 0)
		return CPROF_STACK_ERR_EMPTY;
	return store_stack(c.st, pair, epoch, hash_finish(c.hash, c.st, BPF_F_USER_STACK));
}

static __always_inline void count_lost(void *lost, __u32 pid, int reason)
{
	struct cprof_lost *l = bpf_map_lookup_elem(lost, &pid);

	if (!l) {
		struct cprof_lost zero = {};

		bpf_map_update_elem(lost, &pid, &zero, BPF_NOEXIST);
		l = bpf_map_lookup_elem(lost, &pid);
	}
	if (l) {
		if (reason >= 0 && reason < CPROF_LOST_REASON_MAX)
			__sync_fetch_and_add(&l->n[reason], 1);
	} else {
		struct cprof_stats *s = get_stats();

		if (s)
			s->lost_no_pidmap++;
	}
}

static __always_inline void count_sample(void *counts, void *lost,
					 struct cprof_sample_key *key)
{
	__u64 one = 1, *v;

	v = bpf_map_lookup_elem(counts, key);
	if (v) {
		__sync_fetch_and_add(v, 1);
		return;
	}
	if (bpf_map_update_elem(counts, key, &one, BPF_NOEXIST) == 0)
		return;
	/* Another CPU may have inserted the same key meanwhile. */
	v = bpf_map_lookup_elem(counts, key);
	if (v)
		__sync_fetch_and_add(v, 1);
	else
		count_lost(lost, key->pid, CPROF_LOST_COUNTS_FULL);
}

static __always_inline void send_event(__u32 type, struct task_struct *task, __u64 gen)
{
	struct task_struct *leader = BPF_CORE_READ(task, group_leader);
	struct cprof_event *ev;

	ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
	if (!ev) {
		struct cprof_stats *s = get_stats();

		if (s)
			s->events_dropped++;
		return;
	}
	ev->type = type;
	ev->pid = BPF_CORE_READ(task, tgid);
	ev->gen = gen;
	ev->ktime_ns = bpf_ktime_get_ns();
	ev->start_time = BPF_CORE_READ(leader, start_time);
	BPF_CORE_READ_STR_INTO(&ev->comm, leader, comm);
	bpf_ringbuf_submit(ev, 0);
}

/* True while @task is inside execve: its user registers are the old image's. */
static __always_inline bool in_execve(struct task_struct *task)
{
	if (!bpf_core_field_exists(task->in_execve))
		return false;
	return BPF_CORE_READ_BITFIELD(task, in_execve);
}

/*
 * The generation of the process's current image, announcing the process
 * the first time it is sampled.
 */
static __always_inline __u64 note_process(__u32 pid, struct task_struct *task, bool exec,
					  bool exiting)
{
	struct cprof_known_image *k = bpf_map_lookup_elem(&known_pids, &pid), img = {};

	if (k && !(k->exited && !exiting)) {
		/* Out of an execve that failed: a later one is another image. */
		if (k->in_exec && !exec)
			k->in_exec = 0;
		return k->gen;
	}
	img.gen = bpf_ktime_get_ns();
	img.in_exec = exec;
	if (bpf_map_update_elem(&known_pids, &pid, &img, k ? BPF_EXIST : BPF_NOEXIST) == 0) {
		send_event(CPROF_EV_NEW_PROC, task, img.gen);
		return img.gen;
	}
	/* Another CPU announced it first. */
	k = bpf_map_lookup_elem(&known_pids, &pid);
	return k ? k->gen : img.gen;
}

SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	/* BTF-typed: its fields are plain loads, not helper calls. */
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 pid = task->tgid, tid = task->pid;
	struct cprof_sample_key key = {};
	struct cprof_stats *s = get_stats();
	__u64 epoch = live_epoch;
	bool in_kernel, no_user, exec;
	unsigned int flags;

	if (!s)
		return 0;
	if (tid == 0) {
		s->idle++;
		return 0;
	}
	if (!wanted(pid, task)) {
		s->filtered++;
		return 0;
	}
	s->samples++;

	/* Direct ctx access: the verifier maps it to the sampled registers. */
	in_kernel = (ctx->regs.cs & 3) == 0;
	exec = in_kernel && in_execve(task);
	flags = task->flags;
	key.gen = note_process(pid, task, exec, flags & PF_EXITING);
	key.pid = pid;
	key.tid = tid;
	/* Plain loads where the helper is a call (the kernel zero-pads comm). */
	__builtin_memcpy(key.comm, task->comm, sizeof(key.comm));

	/*
	 * Read the epoch once: both stacks and the count go to the same pair.
	 * Inside execve the saved user registers belong to the old image
	 * while the memory is the new one's: no user stack to walk.
	 */
	no_user = exec || (flags & PF_KTHREAD);
	if (epoch & 1) {
		key.ustack = no_user ? CPROF_STACK_NONE :
				       user_stack(ctx, 1, epoch, task, pid, in_kernel, s);
		key.kstack = kernel_stacks && in_kernel ? kernel_stack(ctx, 1, epoch) :
							   CPROF_STACK_NONE;
		count_sample(&counts1, &lost1, &key);
	} else {
		key.ustack = no_user ? CPROF_STACK_NONE :
				       user_stack(ctx, 0, epoch, task, pid, in_kernel, s);
		key.kstack = kernel_stacks && in_kernel ? kernel_stack(ctx, 0, epoch) :
							   CPROF_STACK_NONE;
		count_sample(&counts0, &lost0, &key);
	}
	return 0;
}

/*
 * BTF-typed raw tracepoints: they need no tracefs mount (often absent in
 * containers) and hand us the task directly.
 */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *task)
{
	__u32 pid = BPF_CORE_READ(task, tgid);
	struct cprof_known_image img = { .gen = bpf_ktime_get_ns() }, *k;

	if (!wanted(pid, task))
		return 0;
	k = bpf_map_lookup_elem(&known_pids, &pid);
	if (!k) {
		if (bpf_map_update_elem(&known_pids, &pid, &img, BPF_NOEXIST) == 0)
			goto announce;
		/* A sample of this execve, taken while we ran, came first. */
		k = bpf_map_lookup_elem(&known_pids, &pid);
	}
	if (k && k->in_exec && !k->exited)
		img.gen = k->gen;
	bpf_map_update_elem(&known_pids, &pid, &img, BPF_ANY);
announce:
	/* The new image is announced now, while its mappings can be read. */
	send_event(CPROF_EV_EXEC, task, img.gen);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *task)
{
	__u32 pid = BPF_CORE_READ(task, tgid);
	struct cprof_known_image *known;

	/* The group's last thread: its exit, not the leader's, ends the process. */
	if (BPF_CORE_READ(task, signal, live.counter) != 0)
		return 0;
	known = bpf_map_lookup_elem(&known_pids, &pid);
	if (!known || known->exited)
		return 0; /* never sampled: nothing to say */
	known->exited = 1;
	send_event(CPROF_EV_EXIT, task, known->gen);
	return 0;
}
