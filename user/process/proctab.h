/* SPDX-License-Identifier: MIT */
/*
 * proctab: every process sampled during a run, by pid, with what is needed
 * to write its profile after it may have exited: its name, a snapshot of its
 * executable mappings taken while it ran, references to the parsed objects
 * behind them, its root directory and its perf map, held from its first
 * sight.
 *
 * The files behind the mappings are the process's, opened as it sees them
 * (rootfs.h): through /proc/PID/map_files/RANGE, else by their path
 * resolved inside the process's root, checked to be regular files with the
 * device and inode of their maps line; a deleted file is never looked up by
 * its path (which now names something else, if anything).  What was not
 * opened, and why, is counted.
 *
 * A pid that is reused, or a process that execs, gets a new record; the old
 * one is retired, not freed, so its samples are still written.
 */
#ifndef CPROF_PROCTAB_H
#define CPROF_PROCTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "process/aggregate.h"
#include "fs/cgroup.h"
#include "elf/elfobj.h"
#include "util/errbuf.h"
#include "util/hmap.h"
#include "elf/objcache.h"
#include "symbols/perfmap.h"
#include "fs/procmaps.h"
#include "java/jvm.h"
#include "node/v8_layout.h"
#include "python/python.h"
#include "fs/rootfs.h"

/*
 * Re-snapshots of one program image: the first few as asked (a process
 * starting up maps its libraries as it is first sampled), then at most one
 * per gap, doubling up to the last.
 */
#define PROCTAB_REFRESH_FREE 4
#define PROCTAB_REFRESH_GAP_MIN 1.0
#define PROCTAB_REFRESH_GAP_MAX 64.0

/* Why a snapshot is retaken. */
enum proctab_refresh_why {
	REFRESH_NEW_CODE, /* code outside the known mappings: backs off */
	REFRESH_EXEC,     /* a new program in the same record: starts afresh */
	REFRESH_DEFERRED, /* one the backoff deferred, before a window is written */
	REFRESH_STARTUP,  /* its libraries mapped at its start (BPF's startup walk): never deferred */
	REFRESH_RACED,    /* mapped while the last was read (bpftables.h): never deferred */
};

/* Why the file of a mapping was not opened. */
enum proctab_refusal {
	REFUSED_NOT_REGULAR, /* a FIFO, device, directory... at its path */
	REFUSED_NOT_MAPPED,  /* another file than the maps line's device and inode */
	REFUSED_DELETED,     /* deleted, and map_files unusable */
	REFUSED_NO_OPENAT2,  /* kernel without openat2: no confined path lookup */
	REFUSED_NO_ROOT,     /* map_files unusable and no root held for the process */
	REFUSED_OTHER,       /* gone, unreadable, ... */
	REFUSED_MAX,
};

struct process {
	uint32_t pid;
	uint64_t gen;        /* image generation, from BPF */
	/*
	 * Its start, ns since boot (CLOCK_BOOTTIME) in whole 1/USER_HZ s, from
	 * /proc/PID/stat at first sight; 0 when unknown.  Its perf map must
	 * have been written since (perfmap_open_at()).
	 */
	uint64_t start_time;
	char comm[CPROF_COMM_LEN];
	struct vma_list maps;   /* executable mappings only */
	struct elfobj **objs;   /* per maps.v[i]; NULL where none could be read */
	bool have_maps;
	bool exited;
	int maps_error;         /* negative errno of the snapshot, 0 if fine */
	char maps_errmsg[ERRBUF_LEN];
	size_t obj_errors;      /* mappings whose object could not be read */
	size_t refreshes;       /* snapshots retaken (new code mapped) */
	unsigned refresh_asks;  /* refreshes asked for since the image began */
	double next_refresh;    /* CLOCK_MONOTONIC s before which refreshes wait */
	double refresh_gap;
	bool refresh_pending;   /* a refresh was deferred by the backoff */
	struct rootfs_root *root; /* its root directory; NULL: none held */
	uint32_t uid;           /* its owner (of /proc/PID): perf maps must be its or root's */
	struct perfmap_file perfmap;
	struct cgroup_info cgroup; /* path and container id ("" if unknown) */
	struct pyproc *py;      /* its CPython (python.h); NULL: none known */
	struct jvmproc *jvm;    /* its HotSpot JVM (java/jvm.h); NULL: none known */
	double jvm_retry;       /* CLOCK_MONOTONIC s to look again for a JVM still starting; 0: not */
	unsigned jvm_tries;     /* looks for it that found it still starting */
	struct v8proc *v8;      /* its V8 (node/v8_layout.h), when it has no JVM; NULL: none known */
	uint32_t ns_pid;        /* pid in its own namespace; 0 if unknown */
	uint64_t first_pc;      /* the pc BPF first found it at (its table is wanted) */
	double exec_s;          /* CLOCK_MONOTONIC s of its exec, seen while sampling; 0: none */
	struct aggregate samples;
};

struct proctab_stats {
	size_t refused[REFUSED_MAX]; /* mapped files not opened, by reason */
	size_t exit_named;           /* processes gone when read, named from their exit records */
	size_t exit_unknown;         /* ... files of theirs no object held was */
	size_t exit_opened;          /* ... opened by the paths BPF sent (cprof_exit_file) */
	size_t exit_other_root;      /* ... not: the process had another root or mount namespace */
	size_t exit_refused;         /* ... not: no such file there, or another one */
	size_t opened;               /* mapped files opened: once a file in a snapshot, not a mapping */
	size_t by_path;              /* mapped files opened by path (map_files unusable) */
	size_t refreshes, deferred;  /* re-snapshots taken, and deferred by the backoff */
	size_t startup;              /* ... of them at a program's start (REFRESH_STARTUP) */
	size_t raced;                /* ... of them as mapped while the last was read (REFRESH_RACED) */
	size_t perfmap_stale;        /* processes whose perf map at first sight predated them: refused */
};

struct proctab {
	struct hmap by_pid;       /* pid -> struct process * (live records) */
	struct process **retired; /* replaced records whose samples remain */
	size_t nretired, retired_cap;
	struct objcache *objs;
	struct elfobj *vdso;      /* the host's vDSO image, or NULL */
	const char *proc_root;    /* "/proc" */
	struct rootfs_roots *roots; /* where process roots are held (NULL: none) */
	struct fdlru *lru;        /* bounds perf maps' descriptors (NULL: unbounded) */
	size_t created;           /* records made during the run */
	/* this process's root, held on the first exit file (proctab_exit_file) */
	struct rootfs_root *self_root;
	uint64_t self_mnt_ns;     /* the inode of its mount namespace; 0: unknown */
	bool self_tried;
	struct proctab_stats st;
};

/*
 * @vdso (may be NULL), @roots and @lru (both may be NULL) are borrowed and
 * must outlive the table.
 */
int proctab_init(struct proctab *t, struct objcache *objs, struct elfobj *vdso,
		 const char *proc_root, struct rootfs_roots *roots, struct fdlru *lru);
void proctab_free(struct proctab *t);

/* The live record of @pid, or NULL. */
struct process *proctab_find(struct proctab *t, uint32_t pid);

/*
 * The record of image @gen of process @pid (see cprof_event.gen), made on
 * first use: a snapshot of its mappings is taken and its objects opened.
 * A newer generation retires the live record of the pid (exec, pid reuse);
 * its samples stay and are written.  Snapshot failures (the process already
 * exited) are kept in the record, not returned: its samples still count.
 * *@created (may be NULL) tells whether a new live record was made.
 */
struct process *proctab_get(struct proctab *t, uint32_t pid, uint64_t gen,
			    const char *comm, bool *created);

/*
 * Retakes the snapshot of a running process that mapped new code (dlopen)
 * or exec'd: the new mappings replace the old.  On failure (the process is
 * gone) the old snapshot stays.  Refreshes for new code back off (see
 * PROCTAB_REFRESH_*): one asked for sooner than @now allows is deferred
 * (-EAGAIN) and marked pending, to be taken with REFRESH_DEFERRED before
 * the window is written.
 */
int proctab_refresh(struct proctab *t, struct process *p, double now,
		    enum proctab_refresh_why why);

/*
 * The perf map of @p to read its JIT names from: the file at its path
 * inside the process's root if that is another one than held, else the one
 * held since it was first found (so names outlive the process and its
 * file).  A borrowed descriptor, or a negative errno (-ENOENT: none).
 */
int proctab_perfmap(struct process *p, struct errbuf *err);

/*
 * The exit record of a process (bpf/cprof.h, struct cprof_exit_maps): for
 * an image whose snapshot found it gone from /proc (or with no mappings
 * left), its executable mappings as the kernel had them at its exit.
 * Their files are named only by identity (device, inode, size, mtime),
 * among the objects held now; nothing is opened by the names told.  A
 * record that is not for such an image, or whose mappings are out of
 * order or overlap, changes nothing.
 */
void proctab_exit_maps(struct proctab *t, const struct cprof_exit_maps *rec);

/*
 * A file of an exit record that no object held was, by its path in the
 * exited process's root (bpf/cprof.h, struct cprof_exit_file): opened only
 * when that root and mount namespace are ours, confined to our root,
 * following no symlink, and only if it is the regular file of the record's
 * identity (device, inode, size and mtime).  The object then fills the
 * record's mappings of that file, and the process is returned so that the
 * caller numbers them (bpftables_add_files); NULL when nothing was filled
 * (counted: proctab_stats.exit_*).
 */
struct process *proctab_exit_file(struct proctab *t, const struct cprof_exit_file *ev);

/* Marks the live record of image @gen of @pid as exited (kept until written). */
void proctab_exited(struct proctab *t, uint32_t pid, uint64_t gen);

/*
 * After a window's profiles are written: frees retired and exited records,
 * and empties the samples of the others.
 */
void proctab_end_window(struct proctab *t);

/* All records, live and retired; *@n set.  The caller frees the array. */
struct process **proctab_list(struct proctab *t, size_t *n);

#endif
