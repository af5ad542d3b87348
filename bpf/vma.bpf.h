/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * vma.bpf.h: the current task's executable file mappings, from the
 * kernel's VMAs (the bpf_iter_task_vma kfuncs), for the unwinder
 * (unwind.bpf.h declares kernel_vmas()).  Kept apart because it is the one
 * part of the unwinder that reads kernel structures: the userspace build
 * of the unwinder (tests/bpfunwind.c) gives its own, from a test's
 * made-up mappings.
 */
#ifndef CPROF_VMA_BPF_H
#define CPROF_VMA_BPF_H

extern int bpf_iter_task_vma_new(struct bpf_iter_task_vma *it, struct task_struct *task,
				 __u64 addr) __ksym;
extern struct vm_area_struct *bpf_iter_task_vma_next(struct bpf_iter_task_vma *it) __ksym;
extern void bpf_iter_task_vma_destroy(struct bpf_iter_task_vma *it) __ksym;

#define VM_EXEC 0x4

/* A global function: its loop is verified once, apart from the sample's. */
__noinline int kernel_vmas(struct cprof_proc_maps *pm)
{
	struct bpf_iter_task_vma it;
	struct vm_area_struct *vma;

	if (!pm)
		return 0;

	/* fails (-EBUSY) when the mmap lock is taken: no entry this sample */
	bpf_iter_task_vma_new(&it, bpf_get_current_task_btf(), 0);
	while ((vma = bpf_iter_task_vma_next(&it))) {
		struct cprof_file_key k = { 0 };
		struct inode *ino;

		if (!(BPF_CORE_READ(vma, vm_flags) & VM_EXEC))
			continue;
		ino = BPF_CORE_READ(vma, vm_file, f_inode);
		/* anonymous, or a kernel without i_mtime_sec (6.7): no key to match */
		if (!ino || !bpf_core_field_exists(ino->i_mtime_sec))
			continue;
		k.ino = BPF_CORE_READ(ino, i_ino);
		k.size = BPF_CORE_READ(ino, i_size);
		k.dev = BPF_CORE_READ(ino, i_sb, s_dev);
		k.mtime_sec = BPF_CORE_READ(ino, i_mtime_sec);
		k.mtime_nsec = BPF_CORE_READ(ino, i_mtime_nsec);
		add_kernel_map(pm, BPF_CORE_READ(vma, vm_start), BPF_CORE_READ(vma, vm_end),
			       BPF_CORE_READ(vma, vm_pgoff), &k);
	}
	bpf_iter_task_vma_destroy(&it);
	return 0;
}

#endif
