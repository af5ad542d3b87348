/* SPDX-License-Identifier: MIT */
/*
 * cprof.h: the contract between the BPF program and the loader.
 *
 * Record layouts, map value types and error codes; included by both sides,
 * so it uses only fixed-width kernel-style types and no libc or kernel
 * headers (the includer provides __u32/__u64).
 */
#ifndef CPROF_H
#define CPROF_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define CPROF_COMM_LEN 16
/* Frames kept per stack; the kernel's perf_event_max_stack default. */
#define CPROF_MAX_FRAMES 127

/* Map sizes.  Counts and stacks are drained and cleared every second. */
#define CPROF_COUNTS_MAX 16384
#define CPROF_STACKS_MAX 8192
#define CPROF_LOST_MAX_PIDS 4096
#define CPROF_KNOWN_PIDS 32768
#define CPROF_FILTER_PIDS 1024
#define CPROF_EVENTS_BYTES (256 * 1024)

/*
 * A stack is named by a 64-bit hash of its frames, computed in BPF.  Small
 * values are not hashes but say why there is no stack: the sample is still
 * counted, and the loader shows the reason as a pseudo-frame, so totals add
 * up and every loss is visible.  Real hashes always have CPROF_STACK_HASHED
 * set.
 */
#define CPROF_STACK_HASHED (1ULL << 63)
enum cprof_stack_status {
	CPROF_STACK_NONE = 0,      /* no such stack: kernel thread's user side,
				      user-mode sample's kernel side */
	CPROF_STACK_ERR_READ = 1,  /* the stack walk failed (bpf_get_stack < 0) */
	CPROF_STACK_ERR_EMPTY = 2, /* a user task whose walk gave no frame */
	CPROF_STACK_ERR_FULL = 3,  /* the stacks map was full */
	CPROF_STACK_STATUS_MAX,
};

/* Sample key: one count per distinct (thread, thread name, stacks). */
struct cprof_sample_key {
	__u32 pid; /* tgid */
	__u32 tid;
	__u64 ustack; /* stack hash or enum cprof_stack_status */
	__u64 kstack;
	char comm[CPROF_COMM_LEN]; /* thread name at sample time */
};

struct cprof_stack {
	__u32 nr; /* frames used in ip[] */
	__u32 pad;
	__u64 ip[CPROF_MAX_FRAMES]; /* leaf first */
};

/* Samples not counted at all, per process and reason. */
enum cprof_lost_reason {
	CPROF_LOST_COUNTS_FULL = 0, /* the counts map was full */
	CPROF_LOST_REASON_MAX,
};

struct cprof_lost {
	__u64 n[CPROF_LOST_REASON_MAX];
};

/* Host-wide counters (a per-CPU array of one element). */
struct cprof_stats {
	__u64 samples;        /* programs run on a profiled task */
	__u64 idle;           /* samples of the idle task, not profiled */
	__u64 filtered;       /* samples of tasks excluded by a filter */
	__u64 lost_no_pidmap; /* lost samples whose pid had no room in lost map */
	__u64 events_dropped; /* process events that did not fit the ring */
};

enum cprof_event_type {
	CPROF_EV_NEW_PROC = 1, /* first sample of a process we did not know */
	CPROF_EV_EXEC = 2,     /* sched_process_exec */
	CPROF_EV_EXIT = 3,     /* the thread group leader exited */
};

struct cprof_event {
	__u32 type;
	__u32 pid;
	__u64 ktime_ns;    /* bpf_ktime_get_ns() at the event */
	__u64 start_time;  /* task start_time (ns since boot): tells pid reuse */
	char comm[CPROF_COMM_LEN]; /* process (group leader) name */
};

#endif
