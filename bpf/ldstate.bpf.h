/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * ldstate.bpf.h: a new program's libraries into its process's entry as
 * soon as the dynamic loader has mapped them (on_rseq_update by default,
 * on_ld_state with --ld-probe).
 *
 * The loader reads a new program's maps at its exec, before ld.so maps
 * its libraries, and a sample may ask bpf_find_vma once (unwind.bpf.h,
 * above KERNEL_ENTRY_MAPS): without this, a program that lives a few
 * samples (as, ld, a shell's child) walks no further than its second
 * file.  ld.so calls _dl_debug_state() -- the debugger's breakpoint --
 * once its link map is consistent: after the libraries of the program's
 * start and after each dlopen.  A uprobe there costs a trap on those
 * calls only; the mmap syscall's tracepoint, the other place this kernel
 * (no kprobes, no fentry) could tell, would put every syscall of every
 * task on the slow path (getppid() 200 -> 267 ns measured).
 *
 * In task context the VMA iterator may take the mmap lock and give it
 * back: one walk adds each executable mapping of a file the loader knows
 * (its identity, never its name) to the entry.  An entry is made only for
 * a process announced to the loader (known_pids), so a process never
 * sampled leaves none.  Bounded: LD_VMAS_SEEN VMAs a walk, LD_WALKS walks
 * of _dl_debug_state() a second a CPU (a hostile program may call it in a
 * loop), LD_STARTUP_WALKS of programs' starts.
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
#define STARTUP_SWITCHES 128 /* context switches before a program's rseq registration, at most */

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct vma_walk);
} ld_walks SEC(".maps"), startup_walks SEC(".maps");

/*
 * Processes that exec'd and have not registered their main thread's rseq
 * area yet (on_rseq_update): pid -> 1.  An LRU: a program that never
 * registers one (static, musl, rseq tuned off) is forgotten in time.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, CPROF_UNWIND_PROCS);
	__type(key, __u32);
	__type(value, __u8);
} startup_pending SEC(".maps");

/* At @pid's exec: its libraries are to be added once ld.so has mapped them. */
static __always_inline void startup_mark(__u32 pid)
{
	__u8 one = 1;

	bpf_map_update_elem(&startup_pending, &pid, &one, BPF_ANY);
}

/*
 * Adds each executable mapping of a file the loader numbered, in the
 * current task's process, to its entry: made if the process was announced
 * to the loader, else only if it has one.  One of a file not numbered asks
 * the loader for a read of the process, if it was announced: at once when
 * @startup, else within report_new_code()'s 200 ms.
 */
static __always_inline int add_known_maps(bool startup)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 pid = bpf_get_current_pid_tgid() >> 32, how = ENTRY_LOADER_TOO;
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
	w = startup ? take_vma_walk(&startup_walks, LD_STARTUP_WALKS) :
		      take_vma_walk(&ld_walks, LD_WALKS);
	if (!w)
		return 0;
	bpf_iter_task_vma_new(&it, task, 0);
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
	return add_known_maps(false);
}

/*
 * The first rseq update of an exec'd process: glibc (2.35+) registers its
 * main thread's rseq area in ld.so's TLS set-up, after the program's
 * libraries are mapped and before its code runs, and the kernel updates
 * the area on the way back to user space, in task context.  One walk a
 * program start, no breakpoint anywhere; the cost elsewhere is a read of
 * two counters on each rseq update (a switched task's return to user
 * space), and a lookup while the task is young.
 */
SEC("tp_btf/rseq_update")
int BPF_PROG(on_rseq_update, struct task_struct *t)
{
	__u32 pid;

	/*
	 * A program registers its rseq area within its first few switches;
	 * a task switched more is past it, and costs no lookup (a pingpong
	 * of 100k switches a second updates its areas as often).
	 */
	if (t->nvcsw + t->nivcsw > STARTUP_SWITCHES)
		return 0;
	pid = bpf_get_current_pid_tgid() >> 32;
	if (!bpf_map_lookup_elem(&startup_pending, &pid))
		return 0;
	bpf_map_delete_elem(&startup_pending, &pid);
	return add_known_maps(true);
}

#endif
