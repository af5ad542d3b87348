/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * exitmaps.bpf.h: the executable file mappings of a sampled process that
 * exits before the loader read its own (struct cprof_exit_maps), so that
 * a process that lives milliseconds is still named when /proc/PID/maps is
 * gone by the time the loader looks, as perf keeps its mmap records.
 *
 * Sent from the exit tracepoint, which fires before exit_mm() (6.16+; on
 * an older kernel the mm is gone there and nothing is sent): the VMA
 * iterator takes the mmap lock with a trylock, and here, unlike in a
 * perf event's program, it can be given back.  Bounded: one record per
 * process the loader has not read (each was sampled first, so their rate
 * is the sampling rate's), at most CPROF_EXIT_RECORDS a second per CPU,
 * CPROF_EXIT_MAPS mappings each found among the first EXIT_VMAS_SEEN VMAs;
 * a full ring drops the record, counted.
 */
#ifndef CPROF_EXITMAPS_BPF_H
#define CPROF_EXITMAPS_BPF_H

/* VMAs looked at, executable or not, before a record is cut */
#define EXIT_VMAS_SEEN 4096

extern int bpf_iter_task_vma_new(struct bpf_iter_task_vma *it, struct task_struct *task,
				 __u64 addr) __ksym __weak;
extern struct vm_area_struct *bpf_iter_task_vma_next(struct bpf_iter_task_vma *it) __ksym __weak;
extern void bpf_iter_task_vma_destroy(struct bpf_iter_task_vma *it) __ksym __weak;

/*
 * A VMA walk's budget: walks a second on this CPU, and the VMAs the walk
 * under way looked at (in the map, so that the verifier does not follow
 * the loop value by value).  The exit records' and ldstate.bpf.h's.
 */
struct vma_walk {
	struct rate_budget walks;
	__u64 seen;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct vma_walk);
} exit_walks SEC(".maps");

/* @map's (a vma_walk array) if this CPU may walk once more this second, else NULL. */
static __always_inline struct vma_walk *take_vma_walk(void *map, __u32 per_second)
{
	__u32 zero = 0;
	struct vma_walk *w = bpf_map_lookup_elem(map, &zero);

	if (!w || !budget_take(&w->walks, bpf_ktime_get_ns(), per_second))
		return NULL;
	w->seen = 0;
	return w;
}

/*
 * Whether the loader's entry for @pid holds what the process maps: it read
 * the process's maps, and no mmap added to them since.
 */
static __always_inline bool loader_read(__u32 pid)
{
	struct cprof_proc_maps *pm = bpf_map_lookup_elem(&unwind_procs, &pid);

	return pm && !(pm->flags & (CPROF_PROC_MAPS_KERNEL | CPROF_PROC_MAPS_GROWN));
}

/*
 * Sends the exit record of the current task's process @pid, image @gen,
 * if the loader has not read it.  Called on the group's last exit.
 */
static __always_inline void send_exit_maps(__u32 pid, __u64 gen, struct cprof_stats *s)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct bpf_iter_task_vma it;
	struct vm_area_struct *vma;
	struct cprof_exit_maps *rec;
	struct vma_walk *b;
	__u32 n = 0;
	__u64 vdso;

	if (!bpf_iter_task_vma_new || loader_read(pid) || !task->mm)
		return;
	if (!(b = take_vma_walk(&exit_walks, CPROF_EXIT_RECORDS))) {
		if (s)
			s->exit_maps_capped++;
		return;
	}
	rec = bpf_ringbuf_reserve(&events, sizeof(*rec), 0);
	if (!rec) {
		if (s)
			s->exit_maps_capped++;
		return;
	}
	rec->type = CPROF_EV_EXIT_MAPS;
	rec->pid = pid;
	rec->gen = gen;
	rec->cgroup = bpf_get_current_cgroup_id();
	rec->flags = 0;
	vdso = (__u64)BPF_CORE_READ(task, mm, context.vdso);
	bpf_iter_task_vma_new(&it, task, 0);
	while ((vma = bpf_iter_task_vma_next(&it))) {
		struct cprof_exit_map *m;
		struct file *f = vma->vm_file;

		/* a process may have 65530 VMAs: its exit is not to cost a walk of them all */
		if (++b->seen > EXIT_VMAS_SEEN) {
			rec->flags |= CPROF_EXIT_MAPS_TRUNCATED;
			break;
		}
		if (!(vma->vm_flags & VM_EXEC) || (!f && vma->vm_start != vdso))
			continue;
		if (n >= CPROF_EXIT_MAPS) {
			rec->flags |= CPROF_EXIT_MAPS_TRUNCATED;
			break;
		}
		m = &rec->m[n];
		m->start = vma->vm_start;
		m->end = vma->vm_end;
		m->pgoff = vma->vm_pgoff;
		if (!f) {
			/* the vDSO: no file, no identity, its own name */
			__builtin_memset(&m->key, 0, sizeof(m->key));
			__builtin_memcpy(m->name, CPROF_EXIT_VDSO, sizeof(CPROF_EXIT_VDSO));
			n++;
			continue;
		}
		inode_key(BPF_CORE_READ(f, f_inode), &m->key);
		if (bpf_probe_read_kernel_str(m->name, sizeof(m->name),
					      BPF_CORE_READ(f, f_path.dentry, d_name.name)) < 0)
			m->name[0] = '\0';
		n++;
	}
	bpf_iter_task_vma_destroy(&it);
	rec->n = n;
	bpf_ringbuf_submit(rec, 0);
	if (s)
		s->exit_maps++;
}

#endif
