/* SPDX-License-Identifier: MIT */
/*
 * sampler: loads and attaches the BPF program, and hands its data to the
 * caller: process events as they arrive, and the counts, stacks and lost
 * counters of the idle map pair on every drain.
 */
#ifndef CPROF_SAMPLER_H
#define CPROF_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cprof.h"
#include "fs/cpulist.h"
#include "util/errbuf.h"
#include "sampling/grace.h"

struct sampler_opts {
	unsigned int frequency; /* Hz, per CPU */
	const struct cpulist *cpus; /* sample only on these (each online); NULL: every online CPU */
	bool kernel_stacks;
	bool python_stacks; /* read Python frames where the loader says how */
	const uint32_t *pids; /* only these processes (tgids); NULL: all */
	size_t n_pids;
	const char *const *comms; /* only processes with these names */
	size_t n_comms;
	const uint64_t *cgroups; /* only processes in (or under) these cgroup ids */
	size_t n_cgroups;
	uint32_t unwind_rows; /* CFI row budget; 0: frame pointers only */
	uint32_t counts_max;  /* entries per counts map; 0: CPROF_COUNTS_MAX */
	bool ld_probe;        /* uprobe on ld.so's _dl_debug_state (ldstate.bpf.h) */
	bool off_cpu;         /* charge waits too (cprof.h: off-CPU time) */
	uint64_t off_cpu_min_ns; /* shorter waits are only counted */
	/* __schedule()'s text, where off-CPU kernel stacks start; 0: unknown */
	uint64_t sched_text_lo, sched_text_hi;
	/* the scheduling of the thread that waits for grace periods (grace.h); may be NULL */
	const struct grace_hooks *waiter;
};

struct sampler;

/*
 * Checks privileges and kernel support, loads the BPF program and starts
 * sampling on every online CPU, or on opts->cpus.  Every failure comes back as one line in
 * @err naming what is missing ("needs CAP_BPF and CAP_PERFMON (run as
 * root)", "no kernel BTF at /sys/kernel/btf/vmlinux", ...).
 */
int sampler_open(struct sampler **out, const struct sampler_opts *opts,
		 struct errbuf *err);

/*
 * Whether this kernel has what --off-cpu attaches to, the sched_switch
 * tracepoint: 0, or -ENOTSUP with one line in @err.  Reads only the
 * kernel's BTF: nothing is loaded.  A kernel without BTF passes, for
 * sampler_open() to refuse as it does any run.
 */
int sampler_check_off_cpu(struct errbuf *err);

/* What sampler_open() could not set up and sampling goes without; NULL: nothing. */
const char *sampler_note(const struct sampler *s);

/* Stops sampling (detaches from the perf events); drains still work. */
void sampler_stop(struct sampler *s);

/*
 * Stops the perf events firing, with nothing but ioctl(2): safe in a
 * signal handler, so that sampling ends on time while the agent is busy
 * (sampler_stop() still releases them).
 */
void sampler_pause(struct sampler *s);

void sampler_close(struct sampler *s);

/* The CPUs sampled: those whose event could be opened. */
void sampler_cpus(const struct sampler *s, struct cpulist *out);

/* The CPUs the kernel may have: CPU numbers are below it. */
int sampler_ncpus(const struct sampler *s);

/*
 * Sets @cpu's clock to a period of @ns from now (the kernel restarts it).
 * -ENOENT: @cpu is not sampled.
 */
int sampler_set_period(struct sampler *s, int cpu, uint64_t ns);

/*
 * One record of the event ring: a struct cprof_event or, for
 * CPROF_EV_WANT_TABLE, a struct cprof_file_event (both start with their
 * type); @size bytes.
 */
typedef int (*sampler_event_fn)(void *ctx, const void *ev, size_t size);

/*
 * Waits up to @timeout_ms for process events and calls @fn for each,
 * looking at the ring at least every @slice_ms (0: only when woken), for
 * a wakeup that comes late.  Returns early, with no event, when the grace
 * period of a flip passes (sampler_flip_ready()).  Returns the number
 * handled, or a negative errno (-EINTR on a signal).
 */
int sampler_poll(struct sampler *s, int timeout_ms, int slice_ms, sampler_event_fn fn,
		 void *ctx);

/* Called for everything found in the drained pair: stacks come first. */
struct sampler_drain_ops {
	int (*stack)(void *ctx, uint64_t hash, const struct cprof_stack *st);
	int (*sample)(void *ctx, const struct cprof_sample_key *key,
		      uint64_t count);
	int (*lost)(void *ctx, uint32_t pid, const struct cprof_lost *lost);
	/* ns off the CPU charged to @key's stacks (--off-cpu) */
	int (*off_cpu)(void *ctx, const struct cprof_sample_key *key, uint64_t ns);
};

/*
 * Draining is in two steps, so that the loader goes on handling events
 * while the kernel waits for BPF programs still writing the old pair (an
 * RCU grace period: 10 ms to over half a second on a loaded host).
 *
 * sampler_flip() makes the other map pair live and starts the grace
 * period on a worker thread: true, or false (and nothing done) while
 * the pair of the flip before is not drained.  sampler_flip_ready()
 * tells when it has passed (sampler_poll() returns early then), and
 * sampler_flip_wait() blocks until it has (nothing pending: at once).
 * sampler_drain_flipped() hands over and clears the contents of the idle
 * pair, first waiting for the grace period if it has not passed; 0 at
 * once if no flip is pending.  A callback's non-zero return aborts the
 * drain and is returned.
 */
bool sampler_flip(struct sampler *s);
bool sampler_flip_ready(struct sampler *s);
void sampler_flip_wait(struct sampler *s);
int sampler_drain_flipped(struct sampler *s, const struct sampler_drain_ops *ops,
			  void *ctx, struct errbuf *err);

/*
 * The rows array's capacity, for bpftables.c.  -ENOENT when unwinding is off
 * (unwind_rows == 0).
 */
int sampler_unwind_rows(struct sampler *s, uint32_t *capacity);

/*
 * Writes the unwind entry of @pid (struct bpftables_maps.set_proc); @pm NULL
 * removes it.  0 or a negative errno.
 */
int sampler_set_proc(void *sampler, uint32_t pid, const struct cprof_proc_maps *pm);
/* Reads it as BPF has it (struct bpftables_maps.get_proc): 0, or a negative errno. */
int sampler_get_proc(void *sampler, uint32_t pid, struct cprof_proc_maps *pm);

/*
 * Tells the program where the CPython of @pid is and how it is laid out
 * (python.h); @pp NULL: no longer.  0 or a negative errno.
 */
int sampler_set_python(struct sampler *s, uint32_t pid, const struct cprof_py_proc *pp);

/* ... where the JVM of @pid keeps its code (bpf/jvm.bpf.h); @jp NULL: no longer. */
int sampler_set_jvm(struct sampler *s, uint32_t pid, const struct cprof_jvm_proc *jp);

/* ... what a frame's check needs of the V8 of @pid (bpf/v8.bpf.h); @vp NULL: no longer. */
int sampler_set_v8(struct sampler *s, uint32_t pid, const struct cprof_v8_proc *vp);

/*
 * Tells the program of a page of CPython perf trampolines (python_tramp.h);
 * @t NULL: no longer.  0 or a negative errno.
 */
int sampler_set_py_tramp(void *sampler, const struct cprof_py_tramp_key *k,
			 const struct cprof_py_tramp *t);

/*
 * Copies @n slots of a table to index @first of the rows array; @n 0: the
 * table's writes are over.  The array is mapped a window at a time, and
 * only while a table is written, so its pages do not stay in our resident
 * memory: they are the kernel's (BPF map memory), reported on their own.
 */
int sampler_write_rows(void *sampler, uint32_t first, const union cprof_table_slot *rows,
		       uint32_t n);

/* Writes the entry of file @file (struct bpftables_maps.set_file). */
int sampler_set_file(void *sampler, uint32_t file, const struct cprof_file *f);

/*
 * What a deferred walk (deferred.h) reads of BPF's maps: file @file's
 * entry, process @pid's unwind entry (-ENOENT: none), and slot @idx of the
 * rows array.
 */
int sampler_get_file(struct sampler *s, uint32_t file, struct cprof_file *out);
int sampler_get_entry(struct sampler *s, uint32_t pid, struct cprof_proc_maps *out);
int sampler_get_slot(struct sampler *s, uint32_t idx, union cprof_table_slot *out);

/*
 * Samples of epochs below this have been drained: their stacks are in the
 * store (a deferred sample is counted only then).
 */
uint64_t sampler_drained_below(const struct sampler *s);

/* Names a file by its identity, or forgets it (struct bpftables_maps.set_file_key). */
int sampler_set_file_key(void *sampler, const struct cprof_file_key *k,
			 const struct cprof_file_ref *ref);

/*
 * Forgets image @gen of @pid, which has exited and been written: BPF keeps
 * an exited image until then (struct cprof_known_image).
 */
void sampler_forget(struct sampler *s, uint32_t pid, uint64_t gen);

/*
 * Before rows of the rows array are freed for reuse: BPF forgets the rows
 * it cached, and this waits until no program still runs with what it read
 * before the call (blocks for a grace period).
 */
int sampler_retire_rows(void *sampler);

/* Host-wide counters summed over CPUs. */
int sampler_stats(struct sampler *s, struct cprof_stats *out);

/*
 * Run-time statistics of the BPF sampling program (needs
 * kernel.bpf_stats_enabled=1 to be non-zero).
 */
int sampler_prog_stats(struct sampler *s, uint64_t *run_time_ns,
		       uint64_t *run_cnt);

#endif
