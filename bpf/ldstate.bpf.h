/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * ldstate.bpf.h: a new program's libraries into its process's entry as
 * soon as the dynamic loader has mapped them (by a timer from its exec by
 * default, on_ld_state with --ld-probe).
 *
 * The loader reads a new program's maps at its exec, before ld.so maps
 * its libraries, and a sample may ask bpf_find_vma once (unwind.bpf.h,
 * above KERNEL_ENTRY_MAPS): without this, a program that lives a few
 * samples (as, ld, a shell's child) walks no further than its second
 * file.
 *
 * When ld.so is done: glibc (2.35+) registers the main thread's rseq area
 * in ld.so's TLS set-up, after the program's libraries are mapped and
 * before its code runs.  Nothing cheap fires then (this kernel has no
 * kprobes and refuses fentry; the rseq_update tracepoint fires on every
 * return to user of a switched task, a dispatch of ~55 ns a switch for all
 * of the host: 3% of a pipe ping-pong's round trips; the mmap syscall's
 * tracepoint would put every syscall on the slow path), so the exec arms
 * a timer that looks at the task's rseq pointer on a schedule that widens
 * with its age (0.5 ms, then a third of the age: 0.8-4.4 ms for the
 * programs measured, node 18 ms), and walks once it is set, or at
 * STARTUP_GIVE_UP_NS for a program that never registers one (static, musl,
 * rseq tuned off).  The cost is a few timer expiries an exec, none on any
 * other path.  A uprobe on ld.so's _dl_debug_state() (--ld-probe: the
 * debugger's breakpoint, called once its link map is consistent, after
 * the start's libraries and after each dlopen) tells at the moment, at a
 * trap a call and a page of ld.so written into every process.
 *
 * The VMA iterator may take the mmap lock and give it back (a timer runs
 * in softirq: it tries the lock, and tries again at the next expiry when
 * the program holds it): one walk adds each executable mapping of a file
 * the loader knows (its identity, never its name) to the entry.  An entry
 * is made only for a process announced to the loader (known_pids), so a
 * process never sampled leaves none.  Bounded: LD_VMAS_SEEN VMAs a walk,
 * LD_WALKS walks of _dl_debug_state() a second a CPU (a hostile program
 * may call it in a loop), LD_STARTUP_WALKS of programs' starts, and
 * STARTUP_WAITS programs waited for at once.
 *
 * A file the loader has not numbered (a program's first run of the
 * profile: clang's libLLVM) cannot be added: the walk then asks the loader
 * to read the process again (CPROF_EV_NEW_CODE, addr CPROF_NEW_CODE_STARTUP)
 * at once, now that ld.so has mapped its libraries, rather than when a
 * sample first meets one of them: each round trip to the loader is tens of
 * ms of a new program's first samples walked without its tables.
 */
#ifndef CPROF_LDSTATE_BPF_H
#define CPROF_LDSTATE_BPF_H

#include "base.bpf.h"
#include "budget.bpf.h"
#include "entry.bpf.h"
#include "process.bpf.h"
#include "unwind.bpf.h"
#include "vma.bpf.h"

#define LD_VMAS_SEEN 1024
#define LD_WALKS     256
/*
 * Startup walks are one an exec, which costs far more than the walk of a
 * new program's few VMAs: their own budget, so that a host running
 * hundreds of programs a second (a build, a shell loop) or a program
 * calling _dl_debug_state() in a loop does not leave the next program's
 * first samples without its libraries.
 */
#define LD_STARTUP_WALKS 4096
#ifndef CLOCK_MONOTONIC
#define CLOCK_MONOTONIC 1
#endif
#define STARTUP_FIRST_NS   500000ULL    /* the first look after an exec */
#define STARTUP_GIVE_UP_NS 200000000ULL /* a program that never registers rseq: walked then */
#define STARTUP_WAITS      4096         /* programs waited for at once (each for <= 200 ms) */

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct vma_walk);
} ld_walks SEC(".maps"), startup_walks SEC(".maps");

/* A program's start, waited for until ld.so has mapped its libraries. */
struct startup_wait {
	struct bpf_timer timer;
	__u64 exec_ns;
};

/*
 * pid -> its wait.  A hash, not an LRU: an element is freed with its timer
 * when the wait ends, and a full map leaves a start to its samples'
 * bpf_find_vma rather than evicting a wait still under way.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, STARTUP_WAITS);
	__type(key, __u32);
	__type(value, struct startup_wait);
} startup_waits SEC(".maps");

extern struct task_struct *bpf_task_from_pid(s32 pid) __ksym __weak;
extern void bpf_task_release(struct task_struct *p) __ksym __weak;

/*
 * Adds each executable mapping of a file the loader numbered, in @task's
 * process @pid, to its entry: made if the process was announced to the
 * loader, else only if it has one.  One of a file not numbered asks the
 * loader for a read of the process, if it was announced: at once when
 * @startup, else within report_new_code()'s 200 ms.  -EBUSY: the mmap lock
 * was held (a program in mmap), nothing walked.
 */
static __always_inline int add_known_maps(struct task_struct *task, __u32 pid, bool startup)
{
	__u32 how = ENTRY_LOADER_TOO;
	struct bpf_iter_task_vma it;
	struct vm_area_struct *vma;
	struct vma_walk *w;
	bool unknown = false;

	if (!file_tables || !bpf_iter_task_vma_new)
		return 0;
	if (bpf_map_lookup_elem(&known_pids, &pid))
		how |= ENTRY_CREATE;
	else if (!bpf_map_lookup_elem(&unwind_procs, &pid))
		return 0;
	if (bpf_iter_task_vma_new(&it, task, 0)) {
		bpf_iter_task_vma_destroy(&it);
		return -EBUSY;
	}
	w = startup ? take_vma_walk(&startup_walks, LD_STARTUP_WALKS) :
		      take_vma_walk(&ld_walks, LD_WALKS);
	if (!w) {
		bpf_iter_task_vma_destroy(&it);
		return 0;
	}
	while ((vma = bpf_iter_task_vma_next(&it))) {
		const struct cprof_file_ref *ref;
		struct cprof_proc_map m = {};
		struct cprof_file_key key = {};
		struct file *f = vma->vm_file;

		if (++w->seen > LD_VMAS_SEEN)
			break;
		if (!f || !(vma->vm_flags & VM_EXEC))
			continue;
		inode_key(BPF_CORE_READ(f, f_inode), &key);
		ref = key.ino ? bpf_map_lookup_elem(&unwind_file_keys, &key) : NULL;
		if (!ref) {
			unknown = true; /* a file the loader has not seen: its read finds it */
			continue;
		}
		m.start = vma->vm_start;
		m.end = vma->vm_end;
		m.bias = mapping_bias(m.start, vma->vm_pgoff, ref);
		m.file = ref->file;
		entry_add(pid, &m, how);
	}
	bpf_iter_task_vma_destroy(&it);
	if (unknown && (how & ENTRY_CREATE))
		report_new_code(pid, startup, CPROF_NEW_CODE_STARTUP);
	return 0;
}

SEC("uprobe")
int on_ld_state(struct pt_regs *ctx)
{
	add_known_maps(bpf_get_current_task_btf(), bpf_get_current_pid_tgid() >> 32, false);
	return 0;
}

/*
 * CO-RE: the rseq area's address is task->rseq up to 6.18, and
 * task->rseq.usrptr since the rseq rework; a kernel with neither is
 * waited for until STARTUP_GIVE_UP_NS.
 */
struct rseq_data___new {
	void *usrptr;
};

struct task_struct___rseq_new {
	struct rseq_data___new rseq;
} __attribute__((preserve_access_index));

struct task_struct___rseq_old {
	void *rseq;
} __attribute__((preserve_access_index));

static __always_inline bool rseq_registered(struct task_struct *t)
{
	if (bpf_core_field_exists(struct task_struct___rseq_new, rseq.usrptr))
		return BPF_CORE_READ((struct task_struct___rseq_new *)t, rseq.usrptr) != NULL;
	if (bpf_core_field_exists(struct task_struct___rseq_old, rseq))
		return BPF_CORE_READ((struct task_struct___rseq_old *)t, rseq) != NULL;
	return false;
}

/*
 * A look at a waiting program: walked, and the wait over, once ld.so has
 * registered its rseq area, or at STARTUP_GIVE_UP_NS; else looked at again
 * after a third of its age (the wait for a 3 ms start costs 5 expiries).
 * The process gone, or its memory: the wait is over.
 */
static int startup_look(void *map, __u32 *key, struct startup_wait *sw)
{
	__u64 age = bpf_ktime_get_ns() - sw->exec_ns, next = age / 3;
	struct task_struct *task = bpf_task_from_pid(*key);
	bool over = !task;

	if (task) {
		if (!task->mm)
			over = true;
		else if ((rseq_registered(task) || age >= STARTUP_GIVE_UP_NS) &&
			 add_known_maps(task, *key, true) != -EBUSY)
			over = true;
		bpf_task_release(task);
	}
	if (over) {
		bpf_map_delete_elem(map, key);
		return 0;
	}
	bpf_timer_start(&sw->timer, next > STARTUP_FIRST_NS ? next : STARTUP_FIRST_NS, 0);
	return 0;
}

/* At @pid's exec: its libraries are to be added once ld.so has mapped them. */
static __always_inline void startup_mark(__u32 pid)
{
	struct startup_wait *sw, fresh = { .exec_ns = bpf_ktime_get_ns() };

	if (!file_tables || !bpf_iter_task_vma_new || !bpf_task_from_pid)
		return;
	/* a wait from an earlier exec of the same pid goes, its timer with it */
	if (bpf_map_update_elem(&startup_waits, &pid, &fresh, BPF_ANY))
		return;
	sw = bpf_map_lookup_elem(&startup_waits, &pid);
	if (!sw || bpf_timer_init(&sw->timer, &startup_waits, CLOCK_MONOTONIC) ||
	    bpf_timer_set_callback(&sw->timer, startup_look) ||
	    bpf_timer_start(&sw->timer, STARTUP_FIRST_NS, 0))
		bpf_map_delete_elem(&startup_waits, &pid);
}

#endif
