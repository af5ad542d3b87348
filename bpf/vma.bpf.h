/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * vma.bpf.h: what the kernel's VMAs tell: the file mapped at an address
 * of the current task (bpf_find_vma), for the unwinder; a file's identity;
 * the iterator that walks them all.  Kept apart because it is the one part
 * of the unwinder that reads kernel structures: as plain C only the
 * unwinder's declarations are here, and the userspace build of the
 * unwinder (user/unwind/bpfunwind.c) defines them from a test's made-up
 * mappings.
 */
#ifndef CPROF_VMA_BPF_H
#define CPROF_VMA_BPF_H

#include "base.bpf.h"

/* A mapping and its file, from the kernel. */
struct vma_file {
	__u64 start, end;          /* [start, end); end 0: none */
	__u64 pgoff;               /* file offset of start, in pages */
	struct cprof_file_key key; /* ino 0: none */
	__u32 exec;                /* mapped executable */
	__u32 pad;
};

/* The file mapped at @pc in the current task; -1: none, or not known now. */
static int vma_file_of(__u64 pc, struct vma_file *out);
__noinline int in_xol(__u64 pc);

/*
 * The current task's binary: its code's range (mm->start_code, end_code)
 * in start and end, its file's identity; pgoff 0.  -1: not known (a kernel
 * thread, an exec under way).  No lock taken: it leaves the sample's one
 * bpf_find_vma to another file.
 */
static int exe_code_of(struct vma_file *out);

#ifdef __bpf__

#define VM_EXEC 0x00000004UL

/*
 * A task's VMAs one by one (exitmaps.bpf.h, ldstate.bpf.h).  Weak: on a
 * kernel without them the rest loads, and those walks check for them.
 */
extern int bpf_iter_task_vma_new(struct bpf_iter_task_vma *it, struct task_struct *task,
				 __u64 addr) __ksym __weak;
extern struct vm_area_struct *bpf_iter_task_vma_next(struct bpf_iter_task_vma *it) __ksym __weak;
extern void bpf_iter_task_vma_destroy(struct bpf_iter_task_vma *it) __ksym __weak;

/* The identity of file @ino into @k; k->ino 0: none to match by. */
static __always_inline void inode_key(struct inode *ino, struct cprof_file_key *k)
{
	k->ino = BPF_CORE_READ(ino, i_ino);
	k->size = BPF_CORE_READ(ino, i_size);
	k->dev = BPF_CORE_READ(ino, i_sb, s_dev);
	if (bpf_core_field_exists(ino->i_mtime_sec)) {
		k->mtime_sec = BPF_CORE_READ(ino, i_mtime_sec);
		k->mtime_nsec = BPF_CORE_READ(ino, i_mtime_nsec);
	} else {
		k->ino = 0; /* no mtime to match: no key, so no match */
	}
}

static long read_vma(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct vma_file *out = data;
	struct inode *ino = BPF_CORE_READ(vma, vm_file, f_inode);

	if (!ino)
		return 0; /* anonymous: no file, out->end stays 0 */
	inode_key(ino, &out->key);
	out->start = BPF_CORE_READ(vma, vm_start);
	out->end = BPF_CORE_READ(vma, vm_end);
	out->pgoff = BPF_CORE_READ(vma, vm_pgoff);
	out->exec = !!(BPF_CORE_READ(vma, vm_flags) & VM_EXEC);
	return 0;
}

/*
 * Whether @pc is in the current task's vDSO: a mapping of no file, on
 * which the sample's one bpf_find_vma would be spent for nothing, leaving
 * libc under it to frame pointers.
 */
static __always_inline bool in_vdso(__u64 pc)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 lo, len;

	if (!bpf_core_field_exists(task->mm->context.vdso_image))
		return false;
	lo = (__u64)BPF_CORE_READ(task, mm, context.vdso);
	len = BPF_CORE_READ(task, mm, context.vdso_image, size);
	return lo && pc - lo < len;
}

/*
 * Whether @pc is in the current task's uprobe page ("[uprobes]"), where
 * the kernel single-steps a copy of each probed instruction (--ld-probe's
 * _dl_debug_state(), any other tool's uprobes): code of no file, which a
 * new snapshot would not name.  A global function: verified once, apart
 * from the walk's states (inline, it added 14% to the unwinder's).
 */
__noinline int in_xol(__u64 pc)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 lo;

	if (!bpf_core_field_exists(task->mm->uprobes_state))
		return 0;
	lo = BPF_CORE_READ(task, mm, uprobes_state.xol_area, vaddr);
	return lo && pc - lo < 4096;
}

static int vma_file_of(__u64 pc, struct vma_file *out)
{
	__builtin_memset(out, 0, sizeof(*out));
	if (in_vdso(pc))
		return -1;
	/* -EBUSY when the mm's lock is held: this frame goes without */
	if (bpf_find_vma(bpf_get_current_task_btf(), pc, read_vma, out, 0) || !out->key.ino)
		return -1;
	return out->end ? 0 : -1;
}

static int exe_code_of(struct vma_file *out)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct inode *ino = BPF_CORE_READ(task, mm, exe_file, f_inode);

	__builtin_memset(out, 0, sizeof(*out));
	if (!ino)
		return -1;
	inode_key(ino, &out->key);
	/* set by the ELF loader once the image is mapped: 0 before */
	out->start = BPF_CORE_READ(task, mm, start_code);
	out->end = BPF_CORE_READ(task, mm, end_code);
	return out->key.ino && out->start && out->end > out->start ? 0 : -1;
}

#endif /* __bpf__ */

#endif
