/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * counts.bpf.h: where a sample is counted: in the count logs (see struct
 * cprof_count_slot in cprof.h), else in the counts map of the pair, else
 * as lost.  Off-CPU waits are counted by the same code, in maps of their
 * own (offcpu.bpf.h).
 *
 * In the counts map every sample cost a lookup of its 72-byte key (a
 * call, the key hashed, its bucket walked and compared) and a key new in
 * the epoch an insert as well (hashed again under the bucket's lock, an
 * element off the free list, the key copied in); an interpreter's
 * samples bring a new key at half of them, as the native leaf pc in its
 * loop and the Python innermost position move with every bytecode.
 * Here a sample costs loads and stores only (in paired runs, 170-250 ns
 * less a sample, native and Python alike: bench/python.sh): the key's hash
 * picks a slot of a per-CPU memo, which names the log slot the CPU last
 * counted a key of that hash in; that slot holds the key (compared
 * whole) and is counted in place, or the key is appended.  The memo is
 * a hint: a stale or colliding one costs an append, never a count.
 */
#ifndef CPROF_COUNTS_BPF_H
#define CPROF_COUNTS_BPF_H

#include "base.bpf.h"
#include "maps.bpf.h"
#include "stacks.bpf.h"
#include "state.bpf.h"

/* Slots of each CPU's part of a count log: a power of two; 0: no log. */
CPROF_SETTING __u32 count_log_slots = 0;

struct counts_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CPROF_COUNTS_MAX);
	__type(key, struct cprof_sample_key);
	__type(value, __u64);
};

struct lost_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CPROF_LOST_MAX_PIDS);
	__type(key, __u32);
	__type(value, struct cprof_lost);
};

/* A pair's samples by key, where the CPU's count log had no room for them. */
struct counts_map counts0 SEC(".maps"), counts1 SEC(".maps");

/* A pair's samples that could not be counted, by pid and why. */
struct lost_map lost0 SEC(".maps"), lost1 SEC(".maps");

struct count_log_map {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1); /* the loader's: CPUs x count_log_slots */
	__type(key, __u32);
	__type(value, struct cprof_count_slot);
};

struct count_log_map count_log0 SEC(".maps"), count_log1 SEC(".maps");

/*
 * This CPU's hint, by key hash, of where its live log holds a key: a
 * slot number within its part, 0 for none.  Not per pair: a hint into
 * the other pair's part meets another key there (or the same, rightly
 * counted), and is replaced.
 */
#define COUNT_MEMO_SLOTS 2048
_Static_assert((COUNT_MEMO_SLOTS & (COUNT_MEMO_SLOTS - 1)) == 0, "slots are picked by a mask");
struct count_memo {
	__u16 slot[COUNT_MEMO_SLOTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct count_memo);
} count_memos SEC(".maps");

#define KEY_WORDS (sizeof(struct cprof_sample_key) / 8)
_Static_assert(sizeof(struct cprof_sample_key) % 8 == 0, "a key is whole words");

static __always_inline __u64 key_hash(const struct cprof_sample_key *k)
{
	const __u64 *w = (const __u64 *)k;
	__u64 h = HASH_SEED;

	for (__u32 i = 0; i < KEY_WORDS; i++)
		h = hash_mix(h, w[i]);
	return h;
}

static __always_inline bool key_equal(const struct cprof_sample_key *a,
				      const struct cprof_sample_key *b)
{
	const __u64 *x = (const __u64 *)a, *y = (const __u64 *)b;
	__u64 d = 0;

	for (__u32 i = 0; i < KEY_WORDS; i++)
		d |= x[i] ^ y[i];
	return !d;
}

/*
 * Counts one sample of @key in this CPU's part of @log (a pair's
 * count_log): true, or false when the part is full (or there is no log),
 * for the caller to count it elsewhere.
 */
static __always_inline bool count_log_add(void *log, const struct cprof_sample_key *key)
{
	__u32 slots = count_log_slots, zero = 0, base, at, used, hint;
	struct count_memo *memo = bpf_map_lookup_elem(&count_memos, &zero);
	struct cprof_count_slot *head, *e;
	__u16 *m;

	if (!slots || !memo)
		return false;
	base = bpf_get_smp_processor_id() * slots;
	head = bpf_map_lookup_elem(log, &base);
	if (!head)
		return false;
	used = head->n;
	m = &memo->slot[key_hash(key) & (COUNT_MEMO_SLOTS - 1)];
	hint = *m;
	if (hint && hint <= used) {
		at = base + hint;
		e = bpf_map_lookup_elem(log, &at);
		if (e && key_equal(&e->key, key)) {
			e->n++; /* this CPU's part: no other writer */
			return true;
		}
	}
	if (used + 1 >= slots)
		return false;
	at = base + used + 1;
	e = bpf_map_lookup_elem(log, &at);
	if (!e)
		return false;
	e->key = *key;
	e->n = 1;
	head->n = used + 1;
	*m = used + 1;
	return true;
}

static __always_inline void count_lost(void *lost, __u32 pid, int reason)
{
	bool valid = reason >= 0 && reason < CPROF_LOST_REASON_MAX, inserted;
	struct cprof_lost *l, one = {};

	if (valid)
		one.n[reason] = 1;
	l = map_lookup_or_insert(lost, &pid, &one, &inserted);
	if (l) {
		if (valid)
			__sync_fetch_and_add(&l->n[reason], 1);
	} else if (!inserted) {
		struct cprof_stats *s = get_stats();

		if (s)
			s->lost_no_pidmap++;
	}
}

/*
 * Adds @n to @key's value in hash @map; false when the map had no room
 * for a new key.
 */
static __always_inline bool count_add(void *map, struct cprof_sample_key *key, __u64 n)
{
	bool inserted;
	__u64 *v = map_lookup_or_insert(map, key, &n, &inserted);

	if (v)
		__sync_fetch_and_add(v, n);
	return v || inserted;
}

/* One sample of @key in a pair: its count log, else its counts map, else lost. */
static __always_inline void count_sample(void *log, void *counts, void *lost,
					 struct cprof_sample_key *key)
{
	if (count_log_add(log, key))
		return;
	if (!count_add(counts, key, 1))
		count_lost(lost, key->pid, CPROF_LOST_COUNTS_FULL);
}

#endif
