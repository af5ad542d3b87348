// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cprof.bpf.c: the sampler.  Runs on every CPU-clock tick of every CPU.
 *
 * Per sample: drop what is filtered out, walk the user and kernel stacks
 * into per-CPU scratch, name each stack by a 64-bit hash of its frames and
 * store it once, then bump counts[{pid, tid, ustack, kstack, comm}].  The
 * first sample of a process we have not seen sends a process event so the
 * loader snapshots its mappings while it still runs.
 *
 * Counts and stacks come in two pairs of maps.  The loader flips `live_pair`
 * and waits an RCU grace period before draining the idle pair, so a drain
 * never races a writer and a stack is never removed while a count of the
 * same pair still names it.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "cprof.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

#define PF_KTHREAD 0x00200000

/* Set by the loader before load. */
const volatile __u32 self_tgid = 0;
const volatile bool filter_pids = false;
const volatile bool kernel_stacks = true;

/* Which pair of count/stack maps is live; flipped by the loader. */
__u32 live_pair = 0;

struct counts_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CPROF_COUNTS_MAX);
	__type(key, struct cprof_sample_key);
	__type(value, __u64);
};

struct stacks_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CPROF_STACKS_MAX);
	__type(key, __u64);
	__type(value, struct cprof_stack);
};

struct lost_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CPROF_LOST_MAX_PIDS);
	__type(key, __u32);
	__type(value, struct cprof_lost);
};

struct counts_map counts0 SEC(".maps"), counts1 SEC(".maps");
struct stacks_map stacks0 SEC(".maps"), stacks1 SEC(".maps");
struct lost_map lost0 SEC(".maps"), lost1 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CPROF_FILTER_PIDS);
	__type(key, __u32);
	__type(value, __u8);
} pid_filter SEC(".maps");

/* Processes already announced to the loader. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, CPROF_KNOWN_PIDS);
	__type(key, __u32);
	__type(value, __u64);
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

/* One stack being built; too big for the 512-byte BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cprof_stack);
} scratch SEC(".maps");

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

static __always_inline struct cprof_stats *get_stats(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&stats, &zero);
}

/* FNV-1a-style mixing of 64-bit words; collisions among < 1e5 stacks a
 * second are ~1e-10, far below any sampling error. */
static __always_inline __u64 hash_frames(const struct cprof_stack *st, __u64 salt)
{
	__u64 h = 0xcbf29ce484222325ULL ^ salt;
	__u32 nr = st->nr;

	for (__u32 i = 0; i < CPROF_MAX_FRAMES; i++) {
		if (i >= nr)
			break;
		h ^= st->ip[i];
		h *= 0x100000001b3ULL;
		h ^= h >> 32;
	}
	return h | CPROF_STACK_HASHED;
}

/*
 * Walks one stack into scratch, stores it under its hash in @stacks, and
 * returns the hash, or a cprof_stack_status saying why there is none.
 * This is the step the DWARF unwinder replaces for user stacks.
 */
static __always_inline __u64 record_stack(void *ctx, void *stacks, __u64 flags)
{
	__u32 zero = 0;
	struct cprof_stack *st = bpf_map_lookup_elem(&scratch, &zero);
	long n, err;
	__u64 h;

	if (!st)
		return CPROF_STACK_ERR_READ;
	n = bpf_get_stack(ctx, st->ip, sizeof(st->ip), flags);
	if (n < 0 && n != -14 /* EFAULT: nothing to walk */)
		return CPROF_STACK_ERR_READ;
	st->nr = n > 0 ? n / sizeof(__u64) : 0;
	if (st->nr == 0) /* only a user stack is expected never to be empty */
		return (flags & BPF_F_USER_STACK) ? CPROF_STACK_ERR_EMPTY : CPROF_STACK_NONE;
	h = hash_frames(st, flags);
	err = bpf_map_update_elem(stacks, &h, st, BPF_NOEXIST);
	if (err && err != -17 /* EEXIST: stored already */)
		return CPROF_STACK_ERR_FULL;
	return h;
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

static __always_inline void send_event(__u32 type, struct task_struct *task)
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
	ev->ktime_ns = bpf_ktime_get_ns();
	ev->start_time = BPF_CORE_READ(leader, start_time);
	BPF_CORE_READ_STR_INTO(&ev->comm, leader, comm);
	bpf_ringbuf_submit(ev, 0);
}

/* Announces a process the first time it is sampled. */
static __always_inline void note_process(__u32 pid, struct task_struct *task)
{
	__u64 now = 1;

	if (bpf_map_lookup_elem(&known_pids, &pid))
		return;
	if (bpf_map_update_elem(&known_pids, &pid, &now, BPF_NOEXIST) == 0)
		send_event(CPROF_EV_NEW_PROC, task);
}

SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32, tid = (__u32)id;
	struct task_struct *task;
	struct cprof_sample_key key = {};
	struct cprof_stats *s = get_stats();
	bool in_kernel;

	if (!s)
		return 0;
	if (tid == 0) {
		s->idle++;
		return 0;
	}
	if (pid == self_tgid || (filter_pids && !bpf_map_lookup_elem(&pid_filter, &pid))) {
		s->filtered++;
		return 0;
	}
	s->samples++;

	task = (struct task_struct *)bpf_get_current_task();
	note_process(pid, task);

	key.pid = pid;
	key.tid = tid;
	bpf_get_current_comm(&key.comm, sizeof(key.comm));
	/* Direct ctx access: the verifier maps it to the sampled registers. */
	in_kernel = (ctx->regs.cs & 3) == 0;

	/* Read the flag once: both stacks and the count go to the same pair. */
	if (live_pair) {
		key.ustack = (BPF_CORE_READ(task, flags) & PF_KTHREAD) ?
				     CPROF_STACK_NONE :
				     record_stack(ctx, &stacks1, BPF_F_USER_STACK);
		key.kstack = kernel_stacks && in_kernel ? record_stack(ctx, &stacks1, 0) :
							   CPROF_STACK_NONE;
		count_sample(&counts1, &lost1, &key);
	} else {
		key.ustack = (BPF_CORE_READ(task, flags) & PF_KTHREAD) ?
				     CPROF_STACK_NONE :
				     record_stack(ctx, &stacks0, BPF_F_USER_STACK);
		key.kstack = kernel_stacks && in_kernel ? record_stack(ctx, &stacks0, 0) :
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
	__u64 one = 1;

	if (pid == self_tgid || (filter_pids && !bpf_map_lookup_elem(&pid_filter, &pid)))
		return 0;
	/* The new image is announced now, while its mappings can be read. */
	bpf_map_update_elem(&known_pids, &pid, &one, BPF_ANY);
	send_event(CPROF_EV_EXEC, task);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *task)
{
	__u32 pid = BPF_CORE_READ(task, tgid);

	if (BPF_CORE_READ(task, pid) != pid)
		return 0; /* a thread, not the process */
	if (!bpf_map_lookup_elem(&known_pids, &pid))
		return 0; /* never sampled: nothing to say */
	bpf_map_delete_elem(&known_pids, &pid);
	send_event(CPROF_EV_EXIT, task);
	return 0;
}
