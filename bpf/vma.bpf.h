/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * vma.bpf.h: the file mapped at an address of the current task, from the
 * kernel's VMA (bpf_find_vma), for the unwinder (unwind.bpf.h declares
 * vma_file_of()).  Kept apart because it is the one part of the unwinder
 * that reads kernel structures: the userspace build of the unwinder
 * (tests/bpfunwind.c) gives its own, from a test's made-up mappings.
 */
#ifndef CPROF_VMA_BPF_H
#define CPROF_VMA_BPF_H

static long read_vma(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct vma_file *out = data;
	struct inode *ino = BPF_CORE_READ(vma, vm_file, f_inode);

	if (!ino)
		return 0; /* anonymous: no file, out->end stays 0 */
	out->key.ino = BPF_CORE_READ(ino, i_ino);
	out->key.size = BPF_CORE_READ(ino, i_size);
	out->key.dev = BPF_CORE_READ(ino, i_sb, s_dev);
	if (bpf_core_field_exists(ino->i_mtime_sec)) {
		out->key.mtime_sec = BPF_CORE_READ(ino, i_mtime_sec);
		out->key.mtime_nsec = BPF_CORE_READ(ino, i_mtime_nsec);
	} else {
		out->key.ino = 0; /* no mtime to match: no key, so no match */
	}
	out->start = BPF_CORE_READ(vma, vm_start);
	out->end = BPF_CORE_READ(vma, vm_end);
	out->pgoff = BPF_CORE_READ(vma, vm_pgoff);
	return 0;
}

static int vma_file_of(__u64 pc, struct vma_file *out)
{
	__builtin_memset(out, 0, sizeof(*out));
	/* -EBUSY when the mm's lock is held: this frame goes without */
	if (bpf_find_vma(bpf_get_current_task_btf(), pc, read_vma, out, 0) || !out->key.ino)
		return -1;
	return out->end ? 0 : -1;
}

#endif
