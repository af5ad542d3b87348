/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * entry.bpf.h: a process's entry in unwind_procs as the kernel side
 * writes it -- a kernel entry of its own before the loader has read the
 * process, the loader's entry grown by mappings it has not read yet --
 * rewritten whole (entry_add), and the loader's maps that name the files
 * in them.  The walk that reads the entries is unwind.bpf.h's.
 */
#ifndef CPROF_ENTRY_BPF_H
#define CPROF_ENTRY_BPF_H

#include "base.bpf.h"
#include "vma.bpf.h"

/*
 * A process the loader has not read yet keeps the mappings bpf_find_vma
 * found for it in an entry of its own in unwind_procs, flagged
 * CPROF_PROC_MAPS_KERNEL, until the loader's entry replaces it (exec and
 * exit drop it: forget_entry()).  bpf_find_vma answers once a
 * sample: the mmap lock it takes is given back by an irq_work that cannot
 * run inside the sample, and the next call finds that work busy (-EBUSY).
 * One walk of all the VMAs is no way round it: the bpf_iter_task_vma
 * kfuncs refuse to run with IRQs off (-EBUSY), as a perf event's program
 * does.  So the entry starts with the binary's code, which the kernel
 * tells without a lock (remember_exe(), at exec and at a first sample),
 * the dynamic loader's libraries join it once it has mapped them
 * (ldstate.bpf.h's on_ld_state, to the loader's entry as well: one read
 * at exec comes before the libraries), and each sample adds the file of its first frame
 * outside the entry: a short-lived program's first samples walk through
 * its libraries, the binary and libc, not through one file of them.
 */
#define KERNEL_ENTRY_MAPS 16

/* What entry_add() may write to. */
#define ENTRY_LOADER_TOO 1u /* the loader's entry too, not only a kernel entry */
#define ENTRY_CREATE 2u     /* a kernel entry when the process has none */

/* Unwind tables are loaded: a process without an entry looks for its files' */
CPROF_SETTING bool file_tables = false;

/*
 * A file's identity in the kernel -> its number: how the first samples of
 * a process the loader has not read yet find the tables of files it
 * already knows.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CPROF_MAX_FILE_KEYS);
	__type(key, struct cprof_file_key);
	__type(value, struct cprof_file_ref);
} unwind_file_keys SEC(".maps");

/* pid -> its executable mappings and their files, sorted by address. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, CPROF_UNWIND_PROCS);
	__type(key, __u32);
	__type(value, struct cprof_proc_maps);
} unwind_procs SEC(".maps");

/*
 * An entry being rewritten (entry_add()): too big for the BPF stack.  Two
 * a CPU, each taken while in use: a sample may interrupt a rewrite made in
 * a process's context (its exec, its mmap) on the same CPU, and nothing
 * interrupts a sample's.
 */
#define ENTRY_EDIT_SLOTS 2
struct entry_edit {
	__u32 busy;
	__u32 placed;              /* the mapping added is in pm */
	__s32 result;              /* of the copy: 1 nothing to write, -1 no room */
	__u32 pad;
	struct cprof_proc_map add; /* the mapping added, flagged */
	struct cprof_proc_maps pm; /* the new entry */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, ENTRY_EDIT_SLOTS);
	__type(key, __u32);
	__type(value, struct entry_edit);
} entry_edits SEC(".maps");

/*
 * What a step of entry_rewrite()'s copy is given: pointers and bounds set
 * before the loop; what changes (the count written, whether @add is
 * placed) lives in the map value, so the verifier checks the step once.
 */
struct entry_copy {
	const struct cprof_proc_maps *pm; /* the entry now; NULL: none */
	struct entry_edit *e;
	__u32 n, max;                     /* mappings in pm; room in the new one */
};

/*
 * Step @i: mapping i of the old entry into the new one, after e->add if
 * that goes first, unless the new one is made over it.  bpf_loop callback.
 */
static long entry_copy_step(__u32 i, void *data)
{
	struct entry_copy *c = data;
	struct entry_edit *e = c->e;
	const struct cprof_proc_map *m = NULL;
	__u32 w = e->pm.n;

	if (c->pm && i < c->n) /* n <= CPROF_MAX_PROC_MAPS: the mask only bounds i for the verifier */
		m = &c->pm->m[i & (CPROF_MAX_PROC_MAPS - 1)];
	if (m && m->start == e->add.start && m->end == e->add.end && m->bias == e->add.bias &&
	    m->file == e->add.file) {
		e->result = 1; /* known already: no rewrite */
		return 1;
	}
	if (m && m->start < e->add.end && m->end > e->add.start)
		return 0; /* made over */
	if (!e->placed && (!m || m->start > e->add.start)) {
		if (w >= c->max) {
			e->result = -1;
			return 1;
		}
		e->pm.m[w & (CPROF_MAX_PROC_MAPS - 1)] = e->add;
		e->pm.n = ++w;
		e->placed = 1;
	}
	if (!m)
		return 1;
	if (w >= c->max) {
		e->result = -1;
		return 1;
	}
	e->pm.m[w & (CPROF_MAX_PROC_MAPS - 1)] = *m;
	e->pm.n = w + 1;
	return 0;
}

/*
 * Adds mapping @add to the entry of @pid: to a kernel entry, to the
 * loader's as well with ENTRY_LOADER_TOO, made if it has none with
 * ENTRY_CREATE.  The mappings it overlaps go (a mapping made over them);
 * the rest stay sorted by start.  The entry is rewritten whole through a
 * per-CPU copy, so a walk on another CPU sees the old one or the new one.
 * -1: not added (an entry it may not write, none to make, a kernel entry
 * at KERNEL_ENTRY_MAPS, the loader's at CPROF_MAX_PROC_MAPS); 0 also when
 * it was there already.  @e: room for the new entry (entry_add() picks
 * it).  Two CPUs adding at once, or the loader writing its entry while
 * this copies the old one, may lose one of the two writes: a later sample
 * or mmap adds the mapping again.  A global function, verified once.
 */
__noinline int entry_rewrite(__u32 pid, const struct cprof_proc_map *add, __u32 how,
			     struct entry_edit *e)
{
	const struct cprof_proc_maps *pm = bpf_map_lookup_elem(&unwind_procs, &pid);
	struct entry_copy c = { .pm = pm, .e = e, .max = KERNEL_ENTRY_MAPS };
	__u32 flags = CPROF_PROC_MAPS_KERNEL;

	if (!e || !add || add->start >= add->end)
		return -1;
	e->add = *add;
	e->add.flags = 0;
	if (pm) {
		flags = pm->flags;
		if (!(flags & CPROF_PROC_MAPS_KERNEL)) {
			if (!(how & ENTRY_LOADER_TOO))
				return -1;
			c.max = CPROF_MAX_PROC_MAPS;
			/* not in the loader's snapshot: a walk through it asks for a new one */
			e->add.flags = CPROF_MAP_ADDED;
			flags |= CPROF_PROC_MAPS_GROWN;
		}
		c.n = pm->n < CPROF_MAX_PROC_MAPS ? pm->n : CPROF_MAX_PROC_MAPS;
	} else if (!(how & ENTRY_CREATE)) {
		return -1;
	}
	e->pm.n = 0;
	e->pm.flags = flags;
	e->placed = 0;
	e->result = 0;
	bpf_loop(CPROF_MAX_PROC_MAPS + 1, entry_copy_step, &c, 0);
	if (e->result)
		return e->result > 0 ? 0 : -1;
	return bpf_map_update_elem(&unwind_procs, &pid, &e->pm, pm ? BPF_EXIST : BPF_NOEXIST) ?
		       -1 :
		       0;
}

/*
 * entry_rewrite() through this CPU's first free copy (entry_edits): an
 * interrupting sample finishes before what it interrupted goes on, so a
 * flag set and cleared around the use is enough.
 */
static __always_inline int entry_add(__u32 pid, const struct cprof_proc_map *add, __u32 how)
{
	__u32 first = 0, second = 1;
	struct entry_edit *e = bpf_map_lookup_elem(&entry_edits, &first);
	int ret;

	_Static_assert(ENTRY_EDIT_SLOTS == 2, "a rewrite and a sample's inside it");
	if (e && e->busy)
		e = bpf_map_lookup_elem(&entry_edits, &second);
	if (!e || e->busy)
		return -1;
	e->busy = 1;
	ret = entry_rewrite(pid, add, how, e);
	e->busy = 0;
	return ret;
}

/*
 * Adds [@start, @end) of file @file to the kernel entry of @pid, made if
 * it has none; -1 when the process has the loader's entry or the kernel
 * entry is full.
 */
static __always_inline int remember_vma(__u32 pid, __u64 start, __u64 end, __u64 bias,
					__u32 file)
{
	struct cprof_proc_map m = { .start = start, .end = end, .bias = bias, .file = file };

	return entry_add(pid, &m, ENTRY_CREATE);
}

/* pc - bias = ELF address, for a mapping at @start of page @pgoff of a file @ref names. */
static __always_inline __u64 mapping_bias(__u64 start, __u64 pgoff, const struct cprof_file_ref *ref)
{
	/* pc - bias = (pc - start + file offset of start) + vaddr_off */
	return start - (pgoff << 12) - ref->vaddr_off;
}

/*
 * Starts the kernel entry of @pid with its binary's code, which the kernel
 * tells without bpf_find_vma, so that a first sample's one lookup goes to
 * another file (libc, mostly) and a program in main() is whole from its
 * first sample.  -1: none started; -2: its file is not numbered.
 */
__noinline int remember_exe(__u32 pid)
{
	const struct cprof_file_ref *ref;
	struct vma_file v;

	if (!file_tables || exe_code_of(&v))
		return -1;
	ref = bpf_map_lookup_elem(&unwind_file_keys, &v.key);
	if (!ref)
		return -2;
	if (!(ref->flags & CPROF_FILE_REF_CODE))
		return -1;
	return remember_vma(pid, v.start, v.end, v.start - ref->code_vaddr, ref->file);
}

/*
 * Drops the entry of @pid: at exec, any (the loader's is of the old image
 * until it reads the new one, and walking by it sent each first sample's
 * one lookup to the binary: libc moved), at exit a kernel entry (the
 * loader drops its own).
 */
static __always_inline void forget_entry(__u32 pid, bool any)
{
	struct cprof_proc_maps *pm = bpf_map_lookup_elem(&unwind_procs, &pid);

	if (pm && (any || (pm->flags & CPROF_PROC_MAPS_KERNEL)))
		bpf_map_delete_elem(&unwind_procs, &pid);
}

#endif
