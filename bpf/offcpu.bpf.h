/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * offcpu.bpf.h: off-CPU time (--off-cpu), loaded only when asked for.
 *
 * One program on the scheduler's switch, which works on the task leaving
 * the CPU only.  A profiled thread that blocks (leaves the CPU not
 * preempted) is stamped, and its stacks walked while it is still current:
 * the sampler's own code, stored in the live pair.  Its wait is charged at
 * its next switch off the CPU (it blocks again, is preempted or exits),
 * from the stamp to when the scheduler last brought it in, which the
 * kernel keeps in the task (sched_info.last_arrival): a wait of at least
 * the minimum to those stacks in the live pair of off-CPU maps (its
 * stacks, drained before, carry the CPROF_STACK_F_OFFCPU mark that has
 * the loader keep them), a shorter one only counted.  So the switch in,
 * which is on the path of whatever woke the thread, costs nothing but the
 * program's dispatch, and a wait spanning windows is charged whole to one
 * window: the one where its thread next leaves the CPU.
 *
 * sched_switch fires very often: the wait lives in the task's own storage
 * (no hashing), a task never stamped is told by a pointer of its own (no
 * helper call), the stamp is the scheduler's clock (no clocksource read),
 * and a block is walked only within a per-CPU budget and unless the
 * thread's last wait from the same place (where it entered the kernel) was
 * a short one, which it most likely is again.
 *
 * (A thread is not current when it is switched in, and this kernel may
 * have neither kprobes nor fentry on finish_task_switch() to walk it
 * there: so the walk happens before the wait's length is known.)
 *
 * A wait is filtered and walked as a sample is, by the sampler's own code
 * (filter.bpf.h, kstack.bpf.h, unwind.bpf.h, python.bpf.h).
 */
#ifndef CPROF_OFFCPU_BPF_H
#define CPROF_OFFCPU_BPF_H

#include "base.bpf.h"
#include "budget.bpf.h"
#include "counts.bpf.h"
#include "filter.bpf.h"
#include "framestep.bpf.h"
#include "kstack.bpf.h"
#include "process.bpf.h"
#include "python.bpf.h"
#include "state.bpf.h"
#include "unwind.bpf.h"
#include "window.bpf.h"

/* --off-cpu: waits shorter than this are only counted; walks a second per CPU. */
CPROF_SETTING __u64 offcpu_min_ns = CPROF_OFFCPU_MIN_NS;
CPROF_SETTING __u32 offcpu_unwinds = CPROF_OFFCPU_UNWINDS;
/* With --cpu, only blocks on these CPUs are waits (bit N of the words: CPU N). */
CPROF_SETTING bool offcpu_some_cpus = false;
CPROF_SETTING __u64 offcpu_cpus[CPROF_CPUS_MAX / 64] = {};

/*
 * Where the scheduler's __schedule() is (the loader reads it from kallsyms;
 * 0: unknown): an off-CPU kernel stack starts at its frame, whatever runs
 * between it and this program (another program watching the switch sends
 * the kernel through __traceiter_sched_switch, one frame more).
 */
CPROF_SETTING __u64 sched_text_lo = 0, sched_text_hi = 0;

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

/*
 * Now, at a switch on this CPU (@cur, its current task, is on this CPU's
 * run queue): the run queue's clock, which __schedule() has just brought
 * up to date (or, when a wakeup preempts, at that wakeup: when the waiting
 * ended).  It is sched_clock, one timeline across CPUs wherever it is
 * stable (x86 with an invariant TSC, arm64), and a memory read, where
 * bpf_ktime_get_ns() reads the clocksource behind a fence: on the test
 * host that read cost ~80 ns a switch, more than all the rest of a short
 * wait's path.  Without group scheduling a task has no way to its run
 * queue, and the clocksource is read.
 */
static __always_inline __u64 switch_clock(struct task_struct *cur)
{
	if (bpf_core_field_exists(cur->se.cfs_rq) &&
	    bpf_core_field_exists(((struct cfs_rq *)0)->rq))
		return cur->se.cfs_rq->rq->clock;
	return bpf_ktime_get_ns();
}

/* Whether this CPU may walk one more stack this second. */
static __always_inline bool take_walk(__u64 now)
{
	__u32 zero = 0;
	struct rate_budget *b = bpf_map_lookup_elem(&offcpu_budget, &zero);

	return b && budget_take(b, now, offcpu_unwinds);
}

/* The user stack @task (current) blocked in, from its registers at kernel entry. */
static __always_inline __u64 blocked_user_stack(struct task_struct *task, struct pt_regs *regs,
						__u32 pid, __u64 gen, __u32 pair, __u64 epoch,
						struct cprof_stats *s)
{
	struct unwind_loop l;
	struct window_span *span = unwind_begin(&l, pid);
	struct unwind_ctx *c = l.c;

	if (!span || !c)
		return CPROF_STACK_ERR_READ;
	c->gen = gen;
	c->pc = regs->ip;
	c->sp = regs->sp;
	c->bp = regs->bp;
	return walk_user_stack(&l, span, pair, epoch, CPROF_STACK_F_OFFCPU, s, NULL);
}

/*
 * Whether a block on this CPU is a wait: with --cpu, as perf's --off-cpu
 * with -C, only one that begins on a CPU sampled (it may end anywhere).
 */
static __always_inline bool cpu_chosen(void)
{
	__u32 cpu;

	if (!offcpu_some_cpus)
		return true;
	cpu = bpf_get_smp_processor_id();
	return cpu < CPROF_CPUS_MAX && (offcpu_cpus[cpu / 64] >> (cpu % 64) & 1);
}

/*
 * Whether the kernel keeps when a task was last switched in
 * (CONFIG_SCHED_INFO, in every distribution's kernel): then a wait is
 * charged when its thread next leaves the CPU, else when it comes back.
 */
static __always_inline bool arrivals_kept(void)
{
	return bpf_core_field_exists(((struct task_struct *)0)->sched_info.last_arrival);
}

/*
 * When @task (current), stamped in @t, came back: its last switch in, past
 * the stamp unless the kernel left that one unrecorded (it records an
 * arrival after a queueing it saw), when now bounds it.
 */
static __always_inline __u64 wait_end(struct task_struct *task, struct offcpu_task *t)
{
	__u64 arrived;

	if (!arrivals_kept()) /* (the field's read would not load) */
		return switch_clock(task);
	arrived = task->sched_info.last_arrival;
	return arrived > t->start ? arrived : switch_clock(task);
}

/* @t's wait, of @task, ended at @end: charged, or only counted when short. */
static __always_inline void end_wait(void *ctx, struct offcpu_task *t, struct task_struct *task,
				     __u64 end)
{
	struct cprof_stats *s = get_stats();
	struct cprof_sample_key key = {};
	/* (where sched_clock is not stable, CPUs' clocks may disagree a little) */
	__u64 wait = end > t->start ? end - t->start : 0;

	t->start = 0;
	if (!s)
		return;
	if (wait < offcpu_min_ns) {
		s->offcpu_short++;
		s->offcpu_short_ns += wait;
		t->short_site = t->site;
		return;
	}
	t->short_site = 0;
	key.pid = t->pid;
	key.tid = task->pid;
	/*
	 * Known only now, for most waits: the short ones never need it.  (An
	 * exiting thread's process may be marked gone already: not new.)
	 */
	key.gen = note_process(t->pid, task, false, task->flags & PF_EXITING);
	if (key.gen != t->gen) {
		/* walked in another image of the process, or not at all */
		t->ustack = t->kstack = CPROF_STACK_UNWALKED;
		t->pystack = CPROF_PY_NONE;
		t->walked_site = 0;
	}
	key.ustack = t->ustack;
	key.kstack = t->kstack;
	key.pystack = t->pystack;
	__builtin_memcpy(key.comm, task->comm, sizeof(key.comm));
	s->offcpu_waits++;
	if (key.ustack == CPROF_STACK_UNWALKED)
		s->offcpu_unwalked++;
	if (count_add(live_epoch & 1 ? (void *)&offcpu1 : (void *)&offcpu0, &key, wait))
		s->offcpu_ns += wait;
	else
		s->offcpu_lost++;
}

/*
 * Names where a thread entered the kernel: its user pc and stack pointer
 * there.  The same place mostly blocks the same way, on the same stacks.
 */
static __always_inline __u64 block_site(const struct pt_regs *regs)
{
	return regs->ip ^ (regs->sp * 0x9e3779b97f4a7c15ULL);
}

/*
 * @prev (current) blocks: stamps it and walks its stacks, unless its last
 * wait from the same place was short (this one most likely is too) or
 * this CPU is out of walks for the second.  Not walked, it keeps the
 * stacks of its last walk from the same place, if that was where.
 */
static __always_inline void begin_wait(void *ctx, struct offcpu_task *t, struct task_struct *prev,
				       __u64 now)
{
	struct pt_regs *regs = user_regs(prev);
	__u64 epoch, site = block_site(regs);
	__u32 pid = prev->tgid;
	struct cprof_stats *s;
	bool exec;

	t->start = now;
	t->site = site;
	if (site == t->short_site || !(s = get_stats()))
		goto keep;
	if (!take_walk(now)) {
		s->offcpu_capped++;
		goto keep;
	}
	/* One walk whichever pair is live: the unwinder is verified once. */
	exec = in_execve(prev);
	epoch = live_epoch;
	t->pid = pid;
	t->gen = note_process(pid, prev, exec, false);
	t->walked_site = site;
	/* less this program and the tracepoint's caller at least: from __schedule on */
	t->kstack = kernel_stacks ? kernel_stack_from(ctx, epoch & 1, epoch, 2, CPROF_STACK_F_OFFCPU,
						      sched_text_lo, sched_text_hi) :
				    CPROF_STACK_NONE;
	t->ustack = exec ? CPROF_STACK_NONE :
			   blocked_user_stack(prev, regs, pid, t->gen, epoch & 1, epoch, s);
	t->pystack = python_stacks && !exec ?
			     python_stack(py_ids(pid, prev->pid), t->gen, prev->thread.fsbase, epoch,
					  NULL) :
			     CPROF_PY_NONE;
	return;
keep:
	if (site != t->walked_site || pid != t->pid) {
		t->ustack = t->kstack = CPROF_STACK_UNWALKED;
		t->pystack = CPROF_PY_NONE;
		t->walked_site = 0;
		t->pid = pid;
	}
}

SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	struct offcpu_task *t;
	bool blocks;

	/*
	 * Only where the kernel does not keep when a task came back: its wait
	 * ends here.  Idle and kernel threads never wait (they are never
	 * stamped): half the switches of a host that idles.
	 */
	if (!arrivals_kept() && next->pid && !(next->flags & PF_KTHREAD)) {
		t = bpf_task_storage_get(&offcpu_tasks, next, 0, 0);
		if (t && t->start)
			end_wait(ctx, t, next, switch_clock(prev));
	}
	if (prev->pid == 0 || (prev->flags & PF_KTHREAD))
		return 0;
	/*
	 * Preempted, it still wants the CPU: not a wait.  Kernel threads wait
	 * for work, which is idleness too; an exiting task does not come back.
	 * Whichever, a wait of its that ended is charged now: a thread that
	 * has no task storage at all was never stamped.
	 */
	blocks = !preempt && prev_state && !(prev->flags & PF_EXITING) && cpu_chosen() &&
		 wanted(prev->tgid, prev);
	if (blocks)
		t = bpf_task_storage_get(&offcpu_tasks, prev, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	else if (arrivals_kept() && prev->bpf_storage)
		t = bpf_task_storage_get(&offcpu_tasks, prev, 0, 0);
	else
		return 0;
	if (!t)
		return 0;
	if (t->start)
		end_wait(ctx, t, prev, wait_end(prev, t));
	if (blocks)
		begin_wait(ctx, t, prev, switch_clock(prev));
	return 0;
}

#endif
