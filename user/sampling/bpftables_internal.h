/* SPDX-License-Identifier: MIT */
/*
 * bpftables_internal: what bpftables.c (files, numbers, the rows array) and
 * bpftables_procs.c (the per-process entries) share; not for other modules.
 */
#ifndef CPROF_BPFTABLES_INTERNAL_H
#define CPROF_BPFTABLES_INTERNAL_H

#include "util/hmap.h"
#include "sampling/bpftables.h"

/* What the loader knows of a file beyond what BPF sees (struct cprof_file). */
enum tstate {
	T_UNBUILT,  /* no table: BPF asks for it when a sample lands there */
	T_QUEUED,   /* asked for, to be built */
	T_LOADED,   /* in the rows array at [first, first + nslots) */
	T_FAILED,   /* no table to be had (no CFI, unreadable): never retried */
	T_NO_ROOM,  /* built, did not fit: asked for again once room is freed */
};

/* One numbered file: its number is its index in tables.files. */
struct tfile {
	struct elfobj *obj; /* holds an objcache reference; NULL: number free */
	struct cprof_table desc;
	uint32_t first, nslots;
	uint32_t users;     /* process entries naming it */
	uint64_t last_use;  /* tables.clock when last asked for or named */
	enum tstate state;
	int64_t vaddr_off;  /* ELF virtual address - file offset of its code */
	uint32_t nkeys;     /* identities told to BPF (unwind_file_keys) */
	bool keyless;       /* its mappings disagree on vaddr_off: none told */
	bool along;         /* queued with a young program's other files, not asked for */
};

/* The files a process's entry names, to release on exit. */
struct proc_entry {
	uint64_t pid;
	uint32_t *files;
	size_t n;
};

/* A free range of the rows array. */
struct slot_range {
	uint32_t first, n;
};

struct bpftables {
	struct bpftables_maps maps;
	struct objcache *objs;
	struct tfile *files;  /* by number; grows up to CPROF_MAX_FILES */
	uint32_t nfiles;      /* numbers handed out so far (some may be free again) */
	size_t files_cap;
	struct hmap by_obj;   /* struct elfobj * -> struct obj_entry */
	struct hmap by_pid;   /* pid -> struct proc_entry */
	uint32_t *queue;      /* numbers of the tables to build, in order asked */
	size_t nqueue;
	struct slot_range *free;   /* sorted by first, coalesced */
	size_t nfree, free_cap;
	struct slot_range *dying;  /* unloaded, free after the next retire */
	size_t ndying, dying_cap;
	uint64_t clock;
	uint64_t pruned_at;   /* clock of the last prune for want of numbers */
	struct bpftables_stats st;
	struct cprof_proc_maps scratch; /* the entry being written */
	struct cprof_proc_maps before;  /* the one it replaces, as BPF had it */
};

/* The number of @o, given now if it has none (bpftables.c). */
uint32_t bpftables_file_of(struct bpftables *t, struct elfobj *o, int64_t vaddr_off);

#endif /* CPROF_BPFTABLES_INTERNAL_H */
