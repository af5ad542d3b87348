/* SPDX-License-Identifier: MIT */
/*
 * sampler_internal.h: the sampler's state, shared by sampler.c (loading,
 * attaching, polling, draining) and sampler_maps.c (what the loader
 * writes into BPF's maps).  Not an interface: see sampler.h.
 */
#ifndef CPROF_SAMPLER_INTERNAL_H
#define CPROF_SAMPLER_INTERNAL_H

#include <stdint.h>

#include <bpf/libbpf.h>

#include "cprof.skel.h"
#include "util/errbuf.h"
#include "sampling/grace.h"
#include "sampling/sampler.h"

#define DRAIN_BATCH 64

struct sampler {
	struct cprof_bpf *skel;
	struct ring_buffer *ring;  /* the events */
	struct ring_buffer *dring; /* deferred samples */
	int ncpus;
	int *perf_fds;           /* by CPU; -1: not sampled */
	struct bpf_link **links;
	struct cpulist sampled;  /* the CPUs with an event */
	sampler_event_fn ev_fn; /* valid during sampler_poll() only */
	void *ev_ctx;
	/* drain buffers, sized for DRAIN_BATCH entries */
	void *keys, *vals;
	uint32_t rows_cap; /* unwind_rows entries; 0: unwinding off */
	/* the part of unwind_rows mapped while a table is written (sampler_write_rows) */
	char *win;
	size_t win_off, win_len; /* bytes of the array: page-aligned */
	/* grace periods (sync_outer), waited for by a worker thread */
	struct grace grace;
	int epfd;              /* the ring's epoll fd and grace_fd(): sampler_poll() waits */
	uint64_t flip_ticket;  /* the grace period of the flip not yet drained; 0: none */
	__u32 flip_idle;       /* the pair that flip made idle */
	__u64 flip_epoch;      /* the live epoch that flip ended */
	__u64 drained_below;   /* samples of epochs below it are drained */
	char note[ERRBUF_LEN]; /* what runs without: sampler_note() */
	/* each pair's count log (countlog.h), mapped; log_len bytes each */
	struct cprof_count_slot *logs[2];
	size_t log_len;
	uint32_t log_slots; /* slots a CPU */
};

#endif
