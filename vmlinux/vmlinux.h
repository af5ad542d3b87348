/* SPDX-License-Identifier: MIT */
/*
 * The few kernel types cprof's BPF code touches, declared by hand instead of
 * dumping all of vmlinux BTF (~5 MB of header).  Every struct is marked
 * preserve_access_index, so field offsets are relocated by libbpf (CO-RE)
 * against the running kernel's BTF: only the names and types must match,
 * not the layout, and the kernel may add or reorder fields freely.
 *
 * Constants and map/helper enums come from the UAPI headers.
 */
#ifndef __VMLINUX_H__
#define __VMLINUX_H__

#include <linux/types.h>
#include <linux/bpf.h>

typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s32 s32;
typedef __s64 s64;
typedef int pid_t;
typedef _Bool bool;
enum { false = 0, true = 1 };

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

/* x86-64 kernel register frame (what ctx->regs and bpf_task_pt_regs give). */
struct pt_regs {
	unsigned long r15, r14, r13, r12, bp, bx, r11, r10, r9, r8;
	unsigned long ax, cx, dx, si, di, orig_ax;
	unsigned long ip, cs, flags, sp, ss;
};

struct file;

/* x86-64: the vDSO's code, where the kernel mapped it (no file behind it). */
struct vdso_image {
	unsigned long size;
};

typedef struct {
	void *vdso;
	const struct vdso_image *vdso_image;
} mm_context_t;

/* The page uprobes single-step their probed instructions in (CONFIG_UPROBES). */
struct xol_area {
	unsigned long vaddr;
};

struct uprobes_state {
	struct xol_area *xol_area;
};

struct mm_struct {
	unsigned long start_code, end_code;
	unsigned long start_stack; /* the main thread's stack top: argc (defer.bpf.h) */
	struct file *exe_file;
	mm_context_t context;
	struct uprobes_state uprobes_state;
};

typedef struct {
	int counter;
} atomic_t;

struct signal_struct {
	atomic_t live; /* threads not yet exiting */
};

/* x86-64: the fs base is the thread's pthread_t (glibc and musl). */
struct thread_struct {
	unsigned long fsbase;
};

/* The scheduler's clock of a CPU, reached from a task on it (group scheduling). */
struct rq {
	u64 clock;
};

struct cfs_rq {
	struct rq *rq; /* CONFIG_FAIR_GROUP_SCHED */
};

struct sched_entity {
	struct cfs_rq *cfs_rq; /* CONFIG_FAIR_GROUP_SCHED */
};

/* CONFIG_SCHED_INFO: when the scheduler last switched the task in (rq->clock). */
struct sched_info {
	unsigned long long last_arrival;
};

/* A task's BPF storage, of any map: NULL until some program gave it one. */
struct bpf_local_storage;

struct task_struct {
	void *stack; /* its kernel stack: the user registers at the top */
	struct sched_entity se;
	struct sched_info sched_info;
	struct bpf_local_storage *bpf_storage;
	pid_t pid;
	pid_t tgid;
	unsigned int flags;
	struct mm_struct *mm;
	struct task_struct *real_parent; /* who forked it (its parent until reparented) */
	struct task_struct *group_leader;
	struct signal_struct *signal;
	u64 start_time;
	char comm[16];
	/* set from just before the new image is loaded until exec succeeds */
	unsigned int in_execve:1;
	struct thread_struct thread;
	struct fs_struct *fs;
	struct nsproxy *nsproxy;
	unsigned long nvcsw, nivcsw; /* context switches, voluntary and not */
};

/* A mapping's file, as the unwinder finds it for a process not yet read. */
struct super_block {
	u32 s_dev;
};

struct inode {
	struct super_block *i_sb;
	unsigned long i_ino;
	s64 i_size;
	s64 i_mtime_sec; /* since 6.7; before, i_mtime (the lookup goes without) */
	u32 i_mtime_nsec;
};

/* A file's name, for an exit record (bpf/exitmaps.bpf.h). */
struct qstr {
	const unsigned char *name;
};

struct dentry {
	struct dentry *d_parent; /* itself at a filesystem's root */
	struct qstr d_name;
	struct inode *d_inode;
};

/* A file's path below its process's root, for an exit record's unknown file. */
struct vfsmount {
	struct dentry *mnt_root;
	struct super_block *mnt_sb;
};

struct path {
	struct vfsmount *mnt;
	struct dentry *dentry;
};

struct mount {
	struct mount *mnt_parent;       /* itself at the top of a mount tree */
	struct dentry *mnt_mountpoint;  /* where it is mounted on its parent */
	struct vfsmount mnt;
	int mnt_id;
};

struct fs_struct {
	struct path root;
};

struct ns_common {
	unsigned int inum;
};

struct mnt_namespace {
	struct ns_common ns;
};

struct nsproxy {
	struct mnt_namespace *mnt_ns;
};

struct file {
	struct inode *f_inode;
	struct path f_path;
};

struct vm_area_struct {
	unsigned long vm_start, vm_end;
	unsigned long vm_pgoff;
	unsigned long vm_flags; /* in an anonymous union since 6.3: CO-RE finds it */
	struct file *vm_file;
};

struct trace_entry {
	unsigned short type;
	unsigned char flags;
	unsigned char preempt_count;
	int pid;
};

/* tracepoint sched:sched_process_exec */
struct trace_event_raw_sched_process_exec {
	struct trace_entry ent;
	u32 __data_loc_filename;
	pid_t pid;
	pid_t old_pid;
	char __data[0];
};

/* tracepoint sched:sched_process_exit (and _free) */
struct trace_event_raw_sched_process_template {
	struct trace_entry ent;
	char comm[16];
	pid_t pid;
	int prio;
	char __data[0];
};

#pragma clang attribute pop

/* The open-coded VMA iterator's state (kfuncs, kernel 6.7+): opaque. */
struct bpf_iter_task_vma {
	__u64 __opaque[1];
} __attribute__((aligned(8)));

/*
 * The perf_event program's context is user API with a fixed layout, which
 * the verifier rewrites into loads of the sampled registers: no CO-RE here
 * (relocating against the kernel's pt_regs would shrink loads of `cs` to the
 * 16 bits newer kernels declare, and the verifier rejects narrow ctx loads).
 */
struct cprof_uapi_regs {
	unsigned long r15, r14, r13, r12, bp, bx, r11, r10, r9, r8;
	unsigned long ax, cx, dx, si, di, orig_ax;
	unsigned long ip, cs, flags, sp, ss;
};

struct bpf_perf_event_data {
	struct cprof_uapi_regs regs;
	__u64 sample_period;
	__u64 addr;
};

#endif
