/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * state.bpf.h: what the sampler's jobs all share: the live epoch, the
 * counters, the ring of events to the loader, and the loader's wait for
 * running programs.  Each job's own maps and settings are in its header
 * (bpf/README.md).
 */
#ifndef CPROF_STATE_BPF_H
#define CPROF_STATE_BPF_H

#include "base.bpf.h"

/*
 * Advanced by the loader at each drain; its low bit is the live pair of
 * count/stack maps.  Within one epoch nothing is removed from the live
 * pair's maps.  Shared: a sample and an off-CPU wait store in the same
 * pair.
 */
__u64 live_epoch = 0;

/* Shared: every job counts what it did, and what it could not. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cprof_stats);
} stats SEC(".maps");

static __always_inline struct cprof_stats *get_stats(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&stats, &zero);
}

/* Shared: every job that tells the loader something. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, CPROF_EVENTS_BYTES);
} events SEC(".maps");

/*
 * The loader waits for running programs by updating this map-in-map:
 * the kernel does a synchronize_rcu() on every update of one, and BPF
 * programs on perf events and tracepoints run inside RCU read sections.  The loader's only: no program
 * uses them.
 */
struct sync_inner {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} sync_inner SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct sync_inner);
} sync_outer SEC(".maps");

#endif
