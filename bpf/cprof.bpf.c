// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cprof.bpf.c: the sampler.  Runs on every CPU-clock tick of every CPU.
 *
 * Per sample: drop what is filtered out, walk the user stack here (by the
 * loader's CFI tables, else by frame pointers) and the kernel stack with
 * bpf_get_stack into per-CPU scratch, name each stack by a 64-bit hash of
 * its frames and store it once (in a map sized for its length), then count
 * the sample under {pid, gen, tid, ustack, uleaf, kstack, pystack, pyleaf,
 * comm} (the user stack stored without its leaf pc and the Python stack
 * without its innermost frame's position, which the key holds): in the
 * CPU's count log, else the counts map.  The
 * first sample of a process we have not seen sends a process event so the
 * loader snapshots its mappings while it still runs.
 *
 * Counts and stacks come in two pairs of maps.  The loader flips the live
 * pair (by advancing `live_epoch`) and waits an RCU grace period before
 * draining the idle pair, so a drain never races a writer and a stack is
 * never removed while a count of the same pair still names it.
 *
 * This file holds the sampler's programs.  What they share is in headers,
 * one a job, each with its maps and settings beside its code, and
 * including what it uses (bpf/README.md); the off-CPU program is one of
 * them (offcpu.bpf.h), brought into the object here.
 */
#include "base.bpf.h"
#include "counts.bpf.h"
#include "defer.bpf.h"
#include "entry.bpf.h"
#include "exitmaps.bpf.h"
#include "filter.bpf.h"
#include "framestep.bpf.h"
#include "kstack.bpf.h"
#include "ldstate.bpf.h"
#include "maps.bpf.h"
#include "offcpu.bpf.h"
#include "process.bpf.h"
#include "python.bpf.h"
#include "stacks.bpf.h"
#include "state.bpf.h"
#include "unwind.bpf.h"
#include "window.bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/*
 * The user stack of a sample.  (Walking frame pointers here rather than
 * with bpf_get_stack costs less, through the stack window, and goes
 * deeper.)
 */
static __always_inline __u64 user_stack(struct bpf_perf_event_data *ctx, __u32 pair, __u64 epoch,
					struct task_struct *task, __u32 pid, __u64 gen, bool in_kernel,
					struct cprof_stats *s, __u64 *leaf, bool *defer)
{
	struct unwind_loop l;
	struct window_span *span = unwind_begin(&l, pid);
	struct unwind_ctx *c = l.c;
	__u64 h;

	if (!span || !c)
		return CPROF_STACK_ERR_READ;
	c->gen = gen;
	/*
	 * The sampled registers, read unconditionally: clang would otherwise
	 * merge these loads with the ones below through a pointer select,
	 * and the verifier takes only constant-offset ctx loads.
	 */
	c->pc = ctx->regs.ip;
	c->sp = ctx->regs.sp;
	c->bp = ctx->regs.bp;
	if (in_kernel) {
		/* The user registers saved at kernel entry (direct BTF loads). */
		struct pt_regs *regs = user_regs(task);

		c->pc = regs->ip;
		c->sp = regs->sp;
		c->bp = regs->bp;
	}
	h = walk_user_stack(&l, span, pair, epoch, 0, s, leaf);
	*defer = c->defer;
	return h;
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
	bool in_kernel, no_user, exec, defer = false;
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
	 * while the memory is the new one's: no user stack to walk.  Nor
	 * once an exiting task has let its memory go (exit_mm()).
	 */
	no_user = exec || (flags & PF_KTHREAD) || ((flags & PF_EXITING) && !task->mm);
	if (epoch & 1)
		key.ustack = no_user ? CPROF_STACK_NONE :
				       user_stack(ctx, 1, epoch, task, pid, key.gen, in_kernel, s, &key.uleaf,
						  &defer);
	else
		key.ustack = no_user ? CPROF_STACK_NONE :
				       user_stack(ctx, 0, epoch, task, pid, key.gen, in_kernel, s, &key.uleaf,
						  &defer);
	/* right after the user walk: it reads what CPython keeps on the C stack from its window */
	key.pystack = python_stacks && !no_user ?
			      python_stack(py_ids(pid, tid), key.gen, task->thread.fsbase, epoch,
					   &key.pyleaf) :
			      CPROF_PY_NONE;
	if (epoch & 1) {
		key.kstack = kernel_stacks && in_kernel ? kernel_stack(ctx, 1, epoch, 0, 0) :
							   CPROF_STACK_NONE;
		/* a walk that waits for a table is counted once it is walked again */
		if (!defer || !defer_send(&key, epoch))
			count_sample(&count_log1, &counts1, &lost1, &key);
	} else {
		key.kstack = kernel_stacks && in_kernel ? kernel_stack(ctx, 0, epoch, 0, 0) :
							   CPROF_STACK_NONE;
		if (!defer || !defer_send(&key, epoch))
			count_sample(&count_log0, &counts0, &lost0, &key);
	}
	return 0;
}

/* One element into @map and out again, from the scratch stack. */
static __always_inline void warm_one(void *map, const struct cprof_stack *st)
{
	__u64 key = 0; /* not a stack's name: those have CPROF_STACK_HASHED */

	if (!bpf_map_update_elem(map, &key, st, BPF_NOEXIST))
		bpf_map_delete_elem(map, &key);
}

/*
 * Run by the loader on each CPU before sampling starts (BPF_PROG_TEST_RUN
 * on that CPU, which the kernel runs there by an interrupt): stocks the
 * CPU's free lists of the stacks maps, which the kernel refills only
 * after use, so that a sample's second stack of a class finds an element
 * (sampler.c, warm_stack_caches()).  Never attached.
 */
SEC("raw_tp")
int warm_stacks(void *ctx)
{
	struct cprof_stack *st = get_scratch();

	if (!st)
		return 0;
	warm_one(&stacks_short0, st);
	warm_one(&stacks_short1, st);
	warm_one(&stacks_mid0, st);
	warm_one(&stacks_mid1, st);
	warm_one(&stacks_long0, st);
	warm_one(&stacks_long1, st);
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
	bool inserted;

	if (!wanted(pid, task))
		return 0;
	/* A sample of this execve, taken while we ran, may have come first. */
	k = map_lookup_or_insert(&known_pids, &pid, &img, &inserted);
	if (inserted)
		goto announce;
	if (k && k->in_exec && !k->exited)
		img.gen = k->gen;
	bpf_map_update_elem(&known_pids, &pid, &img, BPF_ANY);
announce:
	forget_entry(pid, true); /* the mappings of the old image */
	/* the new one's binary, for the first samples and the libraries' mmaps */
	remember_exe(pid);
	/* and its libraries once ld.so has mapped them (ldstate.bpf.h) */
	startup_mark(pid);
	/* The new image is announced now, while its mappings can be read. */
	send_event(CPROF_EV_EXEC, task, img.gen, 0);
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
	/* before the kernel entry goes: it tells that the loader has not read it */
	send_exit_maps(pid, known->gen, get_stats());
	forget_entry(pid, false);
	send_event(CPROF_EV_EXIT, task, known->gen, 0);
	return 0;
}
