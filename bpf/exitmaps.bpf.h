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
 *
 * The names of a record serve the exited process's own profile; the next
 * process to run the same files needs their tables, and a file that no
 * process the loader read maps has none (nor a number): the loader never
 * opened it.  For each of those (at most CPROF_EXIT_FILES a record) its
 * path below the process's root follows the record (struct cprof_exit_file),
 * found by walking its dentry up to that root across mounts, so that the
 * loader can open it confined to the same root and number it.
 */
#ifndef CPROF_EXITMAPS_BPF_H
#define CPROF_EXITMAPS_BPF_H

#include "base.bpf.h"
#include "budget.bpf.h"
#include "entry.bpf.h"
#include "state.bpf.h"
#include "vma.bpf.h"

/* VMAs looked at, executable or not, before a record is cut */
#define EXIT_VMAS_SEEN 4096

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct vma_walk);
} exit_walks SEC(".maps");

/* The path event being made: too big for the stack. */
struct exit_unknown {
	struct cprof_exit_file ev;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct exit_unknown);
} exit_unknowns SEC(".maps");

/*
 * Whether the loader's entry for @pid holds what the process maps: it read
 * the process's maps, and no mmap added to them since.
 */
static __always_inline bool loader_read(__u32 pid)
{
	struct cprof_proc_maps *pm = bpf_map_lookup_elem(&unwind_procs, &pid);

	return pm && !(pm->flags & (CPROF_PROC_MAPS_KERNEL | CPROF_PROC_MAPS_GROWN));
}

/* The struct mount a vfsmount is embedded in. */
static __always_inline struct mount *real_mount(struct vfsmount *m)
{
	return (struct mount *)((void *)m - bpf_core_field_offset(struct mount, mnt));
}

/* A path walk under way (exit_path_step). */
struct path_walk {
	struct cprof_exit_file *ev; /* in the exit_unknowns value */
	struct dentry *d, *root_d;
	struct vfsmount *vm, *root_vm;
	struct mount *mnt;
	__u32 off;
	int result; /* 0: under way; 1: at the root; -1: not to be had */
};

/*
 * Step of the walk from a file's dentry to its process's root: one
 * component's name, or down from the top of a mount to where it is
 * mounted.  bpf_loop callback.
 */
static long exit_path_step(__u32 i, void *data)
{
	struct path_walk *w = data;
	struct cprof_exit_file *ev = w->ev;
	/* copies: BPF_CORE_READ relocates its first access, which a local is not */
	struct dentry *d = w->d, *up_d;
	struct vfsmount *vm = w->vm;
	struct mount *mnt = w->mnt, *up;
	long len;

	if (d == w->root_d && vm == w->root_vm) {
		w->result = w->off ? 1 : -1;
		return 1;
	}
	if (d == BPF_CORE_READ(vm, mnt_root)) {
		up = BPF_CORE_READ(mnt, mnt_parent);
		if (!up || up == mnt) {
			w->result = -1; /* the top of a tree that is not its root */
			return 1;
		}
		w->d = BPF_CORE_READ(mnt, mnt_mountpoint);
		w->mnt = up;
		w->vm = &up->mnt;
		return 0;
	}
	up_d = BPF_CORE_READ(d, d_parent);
	len = -1;
	if (up_d && up_d != d && w->off < CPROF_EXIT_PATH)
		len = bpf_probe_read_kernel_str(&ev->path[w->off & (CPROF_EXIT_PATH - 1)],
						CPROF_EXIT_PATH, BPF_CORE_READ(d, d_name.name));
	if (len <= 1 || w->off + len > CPROF_EXIT_PATH) {
		w->result = -1; /* a root that is not its own, or too long */
		return 1;
	}
	w->off += len;
	w->d = up_d;
	return 0;
}

/*
 * Writes into @ev the path of @f below the root @root_d on @root_vm, leaf
 * first (cprof_exit_file.path).  Whether the walk got there: not from a
 * file outside that root (another mount tree, a lazily unmounted one), nor
 * one deeper than CPROF_EXIT_DEPTH steps or longer than CPROF_EXIT_PATH.
 */
static __always_inline bool exit_path(struct cprof_exit_file *ev, struct file *f,
				      struct dentry *root_d, struct vfsmount *root_vm)
{
	struct path_walk w = {
		.ev = ev,
		.d = BPF_CORE_READ(f, f_path.dentry),
		.vm = BPF_CORE_READ(f, f_path.mnt),
		.root_d = root_d,
		.root_vm = root_vm,
	};

	w.mnt = real_mount(w.vm);
	bpf_loop(CPROF_EXIT_DEPTH + 1, exit_path_step, &w, 0);
	ev->len = w.off;
	return w.result > 0;
}

/*
 * The files of a record, looked at one by one after the VMA walk
 * (exit_file_step): checks made inside the iterator's loop multiplied the
 * verifier's paths by its mappings; a bpf_loop callback is verified once.
 */
struct exit_files {
	const struct cprof_exit_maps *rec;
	struct cprof_exit_file *ev;
	struct dentry *root_d;
	struct vfsmount *root_vm;
	__u64 file;       /* the struct file * of the mapping at hand (exit_file_of) */
	__u32 kept, sent; /* files with no number, and their paths sent */
	__u64 last_ino;   /* the last file looked at: its other segments follow */
	__u32 last_dev;
};

/* bpf_find_vma callback: the file of the VMA found. */
static long exit_file_of(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	((struct exit_files *)data)->file = (__u64)vma->vm_file;
	return 0;
}

/*
 * Step @i: the record's mapping i, its file's path sent if the loader has
 * no number for it (no process it read maps it), at most
 * CPROF_EXIT_FILES.  The file is the VMA's at the mapping's start, found
 * again (in task context: no limit to the lookups) and checked to be the
 * one of the record's identity.  bpf_loop callback.
 */
static long exit_file_step(__u32 i, void *data)
{
	struct exit_files *x = data;
	const struct cprof_exit_map *m;
	struct cprof_file_key k;
	struct file *f;

	if (i >= x->rec->n)
		return 1;
	/* bounded where the index is used: the compiler may check a copy */
	barrier_var(i);
	if (i >= CPROF_EXIT_MAPS)
		return 1;
	m = &x->rec->m[i];
	if (!m->key.ino || (m->key.ino == x->last_ino && m->key.dev == x->last_dev))
		return 0;
	x->last_ino = m->key.ino;
	x->last_dev = m->key.dev;
	if (bpf_map_lookup_elem(&unwind_file_keys, &m->key))
		return 0;
	if (++x->kept > CPROF_EXIT_FILES)
		return 0;
	x->file = 0;
	if (bpf_find_vma(bpf_get_current_task_btf(), m->start, exit_file_of, x, 0) || !x->file)
		return 0;
	f = (struct file *)x->file; /* a local: BPF_CORE_READ relocates its first access */
	inode_key(BPF_CORE_READ(f, f_inode), &k);
	if (k.ino != m->key.ino || k.dev != m->key.dev ||
	    !exit_path(x->ev, f, x->root_d, x->root_vm))
		return 0;
	x->ev->key = m->key;
	if (bpf_ringbuf_output(&events, x->ev, sizeof(*x->ev), 0))
		return 1;
	x->sent++;
	return 0;
}

/* Sends the paths of @rec's files that have no number, after the record. */
static __always_inline void send_exit_files(struct task_struct *task,
					    const struct cprof_exit_maps *rec,
					    struct exit_unknown *u, struct cprof_stats *s)
{
	/* locals: BPF_CORE_READ relocates its first access, which x's fields are not */
	struct dentry *root_d = BPF_CORE_READ(task, fs, root.dentry);
	struct vfsmount *root_vm = BPF_CORE_READ(task, fs, root.mnt);
	struct exit_files x = { .rec = rec, .ev = &u->ev, .root_d = root_d, .root_vm = root_vm };
	struct cprof_exit_file *ev = &u->ev;

	if (!root_d || !root_vm)
		return;
	ev->type = CPROF_EV_EXIT_FILE;
	ev->pid = rec->pid;
	ev->gen = rec->gen;
	ev->root_ino = BPF_CORE_READ(root_d, d_inode, i_ino);
	ev->root_dev = BPF_CORE_READ(root_vm, mnt_sb, s_dev);
	ev->root_mnt = BPF_CORE_READ(real_mount(root_vm), mnt_id);
	ev->mnt_ns = BPF_CORE_READ(task, nsproxy, mnt_ns, ns.inum);
	bpf_loop(CPROF_EXIT_MAPS, exit_file_step, &x, 0);
	if (s) {
		s->exit_files += x.sent;
		s->exit_files_unsent += x.kept - x.sent;
	}
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
	struct exit_unknown *u;
	struct vma_walk *b;
	__u32 n = 0, zero = 0;
	__u64 vdso, xol = 0;

	if (!bpf_iter_task_vma_new || loader_read(pid) || !task->mm)
		return;
	u = bpf_map_lookup_elem(&exit_unknowns, &zero);
	if (!u)
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
	if (bpf_core_field_exists(task->mm->uprobes_state))
		xol = BPF_CORE_READ(task, mm, uprobes_state.xol_area, vaddr);
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
	/*
	 * The uprobe page, one page where the kernel put it: after the walk,
	 * as a test in its loop tripled the verifier's work on this program.
	 */
	if (xol && n < CPROF_EXIT_MAPS) {
		struct cprof_exit_map *m = &rec->m[n];

		m->start = xol;
		m->end = xol + 4096;
		m->pgoff = 0;
		__builtin_memset(&m->key, 0, sizeof(m->key));
		__builtin_memcpy(m->name, CPROF_EXIT_UPROBES, sizeof(CPROF_EXIT_UPROBES));
		n++;
	}
	rec->n = n;
	/* before the record goes: the paths follow it in the ring */
	send_exit_files(task, rec, u, s);
	bpf_ringbuf_submit(rec, 0);
	if (s)
		s->exit_maps++;
}

#endif
