/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * stacks.bpf.h: the stack store.  A stack is named by a 64-bit hash of its
 * frames and stored once per epoch, in the map of its size class of the
 * live pair (see CPROF_STACK_BYTES in cprof.h).
 */
#ifndef CPROF_STACKS_BPF_H
#define CPROF_STACKS_BPF_H

#include "base.bpf.h"

/* Allocated as used; one map per size class (see CPROF_STACK_BYTES). */
#define STACKS_MAP(frames)                                                  \
	struct {                                                            \
		__uint(type, BPF_MAP_TYPE_HASH);                            \
		__uint(map_flags, BPF_F_NO_PREALLOC);                       \
		__uint(max_entries, CPROF_STACKS_MAX);                      \
		__uint(key_size, sizeof(__u64));                            \
		__uint(value_size, CPROF_STACK_BYTES(frames));              \
	}

STACKS_MAP(CPROF_SHORT_FRAMES) stacks_short0 SEC(".maps"), stacks_short1 SEC(".maps");

STACKS_MAP(CPROF_MID_FRAMES) stacks_mid0 SEC(".maps"), stacks_mid1 SEC(".maps");
STACKS_MAP(CPROF_MAX_FRAMES) stacks_long0 SEC(".maps"), stacks_long1 SEC(".maps");

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
 * @epoch; returns @h or why not.  *@fresh (when not NULL) is set when
 * this put the stack in the map: its first sight in the epoch.
 */
static __always_inline __u64 store_stack(struct cprof_stack *st, __u32 pair, __u64 epoch, __u64 h,
					 bool *fresh)
{
	__u32 nr = st->nr, zero = 0;
	struct stored_stacks *seen = bpf_map_lookup_elem(&stored, &zero);
	__u64 *slot = NULL, tag = h ^ (epoch + 1) * 0x9e3779b97f4a7c15ULL;
	void *map;
	long err;

	if (seen) {
		slot = &seen->hash[(h >> 8) & (STORED_SLOTS - 1)];
		if (*slot == tag)
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
		if (err && err != -EEXIST /* stored meanwhile */)
			return CPROF_STACK_ERR_FULL;
		if (!err && fresh)
			*fresh = true;
	}
	if (slot)
		*slot = tag;
	return h;
}

#endif
