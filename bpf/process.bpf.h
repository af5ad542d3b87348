/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * process.bpf.h: the task a program runs for, and its process as the
 * loader learns of it: the user registers saved at its kernel entry,
 * whether it is in an execve, and the announcement of a process image the
 * first time one of its programs sees it (known_pids, the process events).
 */
#ifndef CPROF_PROCESS_BPF_H
#define CPROF_PROCESS_BPF_H

#include "base.bpf.h"
#include "state.bpf.h"

#define PF_EXITING 0x00000004
#define PF_KTHREAD 0x00200000

/*
 * Where a task's user registers are from its kernel stack (see
 * user_regs()): 0 until a program has learnt it, USER_REGS_UNKNOWN when
 * no guess matched.
 */
#define USER_REGS_UNKNOWN (~0ULL)
__u64 user_regs_off = 0;

extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym __weak;

/*
 * The user registers the kernel saved at @task's entry: task_pt_regs(),
 * at a fixed distance from the bottom of its kernel stack.  The helper
 * bpf_task_pt_regs() is a call, and on hosts whose kernel returns through
 * a mitigation thunk (AMD's Safe RET, say) a call costs ~20 ns: as much
 * as all the rest of a short wait's path at a switch, which reads these
 * at every block.  So the distance is learnt from the helper once, among
 * the layouts the kernel may have (THREAD_SIZE 16, 32 or 64 KiB, with or
 * without FRED's 16 bytes of padding above the registers), and the
 * registers then read through a read-only cast the verifier inlines.
 */
static __always_inline struct pt_regs *user_regs(struct task_struct *task)
{
	__u64 stack = (__u64)task->stack, off = user_regs_off, regs_size;
	struct pt_regs *regs;

	if (off && off != USER_REGS_UNKNOWN && bpf_rdonly_cast)
		return bpf_rdonly_cast((void *)(stack + off), bpf_core_type_id_kernel(struct pt_regs));
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	if (off || !bpf_rdonly_cast)
		return regs;
	regs_size = bpf_core_type_size(struct pt_regs);
	off = USER_REGS_UNKNOWN;
	for (__u64 size = 16384; size <= 65536; size *= 2) {
		/* (a pointer compared with a number: allowed a CAP_PERFMON loader) */
		if ((__u64)regs == stack + size - regs_size)
			off = size - regs_size;
		else if ((__u64)regs == stack + size - regs_size - 16)
			off = size - regs_size - 16;
	}
	user_regs_off = off;
	return regs;
}

/* Processes announced to the loader (see struct cprof_known_image). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, CPROF_KNOWN_PIDS);
	__type(key, __u32);
	__type(value, struct cprof_known_image);
} known_pids SEC(".maps");

static __always_inline void send_event(__u32 type, struct task_struct *task, __u64 gen,
				       __u64 addr)
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
	ev->addr = addr;
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
		/* the user registers saved at kernel entry, or at the sample's interrupt */
		send_event(CPROF_EV_NEW_PROC, task, img.gen,
			   exec ? 0 : user_regs(task)->ip);
		return img.gen;
	}
	/* Another CPU announced it first. */
	k = bpf_map_lookup_elem(&known_pids, &pid);
	return k ? k->gen : img.gen;
}

#endif
