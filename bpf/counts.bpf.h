/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * counts.bpf.h: the count logs (see struct cprof_count_slot in cprof.h),
 * where a sample is counted before the counts map is tried.
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
 *
 * Its maps are here with the code, the only code that uses them.
 */
#ifndef CPROF_COUNTS_BPF_H
#define CPROF_COUNTS_BPF_H

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

#endif
