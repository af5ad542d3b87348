/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * filter.bpf.h: whether a task is to be profiled, by the loader's filters
 * (--pid, --comm, --cgroup), and never the profiler itself: for the samples
 * and the off-CPU waits alike.
 */
#ifndef CPROF_FILTER_BPF_H
#define CPROF_FILTER_BPF_H

#include "base.bpf.h"

/* Set by the loader before load. */
CPROF_SETTING __u32 self_tgid = 0;
CPROF_SETTING bool filter_pids = false;
CPROF_SETTING bool filter_comms = false;
CPROF_SETTING bool filter_cgroups = false;

/* Process ids (tgid) to profile. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CPROF_FILTER_PIDS);
	__type(key, __u32);
	__type(value, __u8);
} pid_filter SEC(".maps");

/* Process names (group leader comm, zero-padded) to profile. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CPROF_FILTER_COMMS);
	__type(key, char[CPROF_COMM_LEN]);
	__type(value, __u8);
} comm_filter SEC(".maps");

/* cgroup v2 ids to profile, with everything below them. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CPROF_FILTER_CGROUPS);
	__type(key, __u64);
	__type(value, __u8);
} cgroup_filter SEC(".maps");

static __always_inline bool in_cgroup_filter(void)
{
	/* Walk from the root down: any ancestor (or the cgroup itself) listed. */
	for (int level = 0; level < CPROF_CGROUP_MAX_DEPTH; level++) {
		__u64 id = bpf_get_current_ancestor_cgroup_id(level);

		if (!id)
			return false;
		if (bpf_map_lookup_elem(&cgroup_filter, &id))
			return true;
	}
	return false;
}

/*
 * Whether the current task is to be profiled.  Filters of different kinds
 * must all match; the profiler itself never is, nor any process it started
 * (its sandboxed DWARF reader), from their fork: a child of the agent's.
 * Two loads through the task's BTF pointer, no helper call.
 */
static __always_inline bool wanted(__u32 pid, struct task_struct *task)
{
	if (pid == self_tgid || task->real_parent->tgid == self_tgid)
		return false;
	if (filter_pids && !bpf_map_lookup_elem(&pid_filter, &pid))
		return false;
	if (filter_comms) {
		char comm[CPROF_COMM_LEN] = {};

		BPF_CORE_READ_STR_INTO(&comm, task, group_leader, comm);
		if (!bpf_map_lookup_elem(&comm_filter, comm))
			return false;
	}
	if (filter_cgroups && !in_cgroup_filter())
		return false;
	return true;
}

#endif
