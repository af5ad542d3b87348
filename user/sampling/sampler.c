// SPDX-License-Identifier: MIT
/*
 * sampler.c: the BPF side seen from userspace — load, attach, poll, flip,
 * drain (what the loader writes into the maps: sampler_maps.c).
 */
#include <errno.h>
#include <linux/capability.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "sampling/countlog.h"
#include "sampling/kernel_btf.h"
#include "sampling/sampler_internal.h"

static bool has_cap(const struct __user_cap_data_struct *d, int cap)
{
	return d[cap / 32].effective & (1u << (cap % 32));
}

/*
 * Loading needs CAP_BPF + CAP_PERFMON (or CAP_SYS_ADMIN on kernels that
 * predate them); say so plainly instead of letting the verifier's EPERM
 * through.
 */
static int check_privileges(struct errbuf *err)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2] = {};

	if (syscall(SYS_capget, &hdr, data))
		return errf(err, -errno, "cannot read capabilities: %s", strerror(errno));
	if (has_cap(data, CAP_SYS_ADMIN))
		return 0;
	if (has_cap(data, 39 /* CAP_BPF */) && has_cap(data, CAP_PERFMON))
		return 0;
	return errf(err, -EPERM,
		    "needs CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN): run as root,"
		    " in a container given those capabilities");
}

static int on_ring_event(void *ctx, void *data, size_t size)
{
	struct sampler *s = ctx;

	if (size < sizeof(__u32) || !s->ev_fn)
		return 0;
	return s->ev_fn(s->ev_ctx, data, size);
}

static int open_cpu_clock(int cpu, unsigned int freq)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.size = sizeof(attr),
		.sample_freq = freq,
		.freq = 1,
	};
	int fd = syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/*
 * Opens a cpu-clock event on each CPU (each of @cpus: a CPU the user chose
 * that went offline since is an error, not a CPU left out) and attaches
 * the sampling program to it.
 */
static int attach_cpus(struct sampler *s, unsigned int freq, const struct cpulist *cpus,
		       struct errbuf *err)
{
	struct bpf_program *prog = s->skel->progs.on_sample;
	int attached = 0;

	s->perf_fds = calloc(s->ncpus, sizeof(*s->perf_fds));
	s->links = calloc(s->ncpus, sizeof(*s->links));
	if (!s->perf_fds || !s->links)
		return errf(err, -ENOMEM, "out of memory");
	for (int cpu = 0; cpu < s->ncpus; cpu++)
		s->perf_fds[cpu] = -1;
	for (int cpu = 0; cpu < s->ncpus; cpu++) {
		int fd;

		if (cpus && !cpulist_has(cpus, cpu))
			continue;
		fd = open_cpu_clock(cpu, freq);
		if (fd == -ENODEV && !cpus)
			continue; /* offline CPU */
		if (fd < 0)
			return errf(err, fd, "perf_event_open(cpu-clock, cpu %d): %s%s", cpu,
				    strerror(-fd),
				    fd == -EACCES || fd == -EPERM ?
					    " (check kernel.perf_event_paranoid and CAP_PERFMON)" :
					    "");
		s->perf_fds[cpu] = fd;
		s->links[cpu] = bpf_program__attach_perf_event(prog, fd);
		if (!s->links[cpu]) {
			int e = -errno;

			return errf(err, e, "attaching to cpu-clock on cpu %d: %s", cpu,
				    strerror(-e));
		}
		cpulist_set(&s->sampled, cpu);
		attached++;
	}
	if (!attached)
		return errf(err, -ENODEV, "no online CPU could be sampled");
	return 0;
}

int sampler_check_off_cpu(struct errbuf *err)
{
	int ret = kernel_btf_has_tracepoint(KERNEL_BTF_PATH, "sched_switch", err);

	/* Without BTF at all, sampler_open() says so, as for any run. */
	if (ret == -ENOTSUP)
		return errf_prefix(err, ret, "--off-cpu");
	return 0;
}

/* Off: its programs are not loaded and its maps take one entry each. */
static int setup_off_cpu(struct cprof_bpf *skel, const struct sampler_opts *opts)
{
	uint32_t size = opts->counts_max ? opts->counts_max : CPROF_COUNTS_MAX;

	if (!opts->off_cpu) {
		size = 1;
		bpf_program__set_autoload(skel->progs.on_switch, false);
	}
	skel->rodata->offcpu_min_ns = opts->off_cpu_min_ns;
	_Static_assert(sizeof(opts->cpus->bits) == sizeof(skel->rodata->offcpu_cpus),
		       "--cpu's set and the BPF program's differ in size");
	if (opts->cpus) {
		skel->rodata->offcpu_some_cpus = true;
		memcpy((void *)skel->rodata->offcpu_cpus, opts->cpus->bits,
		       sizeof(skel->rodata->offcpu_cpus));
	}
	skel->rodata->sched_text_lo = opts->sched_text_lo;
	skel->rodata->sched_text_hi = opts->sched_text_hi;
	if (bpf_map__set_max_entries(skel->maps.offcpu0, size) ||
	    bpf_map__set_max_entries(skel->maps.offcpu1, size))
		return -EINVAL;
	return 0;
}

/*
 * Stocks every CPU's free lists of the stacks maps.  Their elements come
 * from per-CPU caches the kernel refills only after use, and a program
 * running with interrupts off (a sample, a switch) cannot wait for that:
 * on a CPU that has not stored a stack of a class yet, the second stack
 * of a run failed as [lost: stack map full].  The warm_stacks program
 * inserts and deletes one element of each map on each CPU, and the
 * refill follows.  It is run there by the kernel's test run, through an
 * interrupt: the agent moving itself to each CPU in turn waited, in the
 * real-time class of its start-up, behind any real-time thread of a
 * higher priority that held a CPU (a busy-polling one holds it for good).
 * Best effort: a CPU that cannot be run on (offline) stays as it was.
 */
static void warm_stack_caches(struct sampler *s)
{
	int fd = bpf_program__fd(s->skel->progs.warm_stacks);

	for (int cpu = 0; cpu < s->ncpus; cpu++) {
		LIBBPF_OPTS(bpf_test_run_opts, run, .flags = BPF_F_TEST_RUN_ON_CPU, .cpu = cpu);

		bpf_prog_test_run_opts(fd, &run);
	}
}

/* Maps both pairs' count logs, which the drain reads and empties. */
static int map_count_logs(struct sampler *s)
{
	struct bpf_map *maps[2] = { s->skel->maps.count_log0, s->skel->maps.count_log1 };
	long page = sysconf(_SC_PAGESIZE);

	if (!s->log_slots)
		return 0; /* none (--counts-max): samples go to the counts maps */
	s->log_len = (size_t)s->ncpus * s->log_slots * sizeof(struct cprof_count_slot);
	s->log_len = (s->log_len + page - 1) / page * page;
	for (int i = 0; i < 2; i++) {
		void *m = mmap(NULL, s->log_len, PROT_READ | PROT_WRITE, MAP_SHARED,
			       bpf_map__fd(maps[i]), 0);

		if (m == MAP_FAILED)
			return -errno;
		s->logs[i] = m;
	}
	return 0;
}

/*
 * The host's dynamic loader: programs of a container with an ld.so of its
 * own get their libraries into the unwind tables when the loader reads
 * their maps, as without the probe.
 */
#if defined(__x86_64__)
#define LD_SO_PATH "/lib64/ld-linux-x86-64.so.2"
#elif defined(__aarch64__)
#define LD_SO_PATH "/lib/ld-linux-aarch64.so.1"
#else
#define LD_SO_PATH NULL
#endif

/*
 * A uprobe on ld.so's _dl_debug_state(), which it calls once a program's
 * libraries are mapped (ldstate.bpf.h); sampling goes on without it, and
 * says so.  Only when asked for (--ld-probe): a uprobe is a breakpoint
 * written into every process's copy of ld.so's page, where an emulator
 * that reads and runs the code itself (valgrind) meets it as its own int3
 * and dies of SIGTRAP at start-up.
 */
static void attach_ld_state(struct sampler *s)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = "_dl_debug_state");

	if (!LD_SO_PATH) {
		snprintf(s->note, sizeof(s->note),
			 "new programs' libraries reach the unwind tables once their maps are read"
			 " (no dynamic loader known on this architecture)");
		return;
	}
	s->skel->links.on_ld_state =
		bpf_program__attach_uprobe_opts(s->skel->progs.on_ld_state, -1, LD_SO_PATH, 0, &uo);
	if (!s->skel->links.on_ld_state)
		snprintf(s->note, sizeof(s->note),
			 "new programs' libraries reach the unwind tables once their maps are read"
			 " (uprobe on %s's _dl_debug_state: %s)", LD_SO_PATH, strerror(errno));
}

/* Waits for an RCU grace period: see sync_outer in cprof.bpf.c.  The worker's only call. */
static int wait_for_writers(void *ctx)
{
	struct sampler *s = ctx;
	__u32 zero = 0;
	int inner = bpf_map__fd(s->skel->maps.sync_inner);

	if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.sync_outer), &zero, &inner, BPF_ANY))
		return -errno;
	return 0;
}

enum { POLL_RING, POLL_GRACE };

/* What sampler_poll() waits on: the ring, and the end of a flip's grace period. */
static int poll_set(struct sampler *s)
{
	struct epoll_event ring = { .events = EPOLLIN, .data.u32 = POLL_RING };
	struct epoll_event grace = { .events = EPOLLIN, .data.u32 = POLL_GRACE };

	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epfd < 0)
		return -errno;
	/* libbpf's own epoll instances, nested: read_rings() then reads what is there */
	if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, ring_buffer__epoll_fd(s->ring), &ring) ||
	    epoll_ctl(s->epfd, EPOLL_CTL_ADD, ring_buffer__epoll_fd(s->dring), &ring) ||
	    epoll_ctl(s->epfd, EPOLL_CTL_ADD, grace_fd(&s->grace), &grace))
		return -errno;
	return 0;
}

/* The sampler's memory and the BPF object, opened but not loaded. */
static int sampler_new(struct sampler **out, struct errbuf *err)
{
	struct sampler *s = calloc(1, sizeof(*s));

	*out = s;
	if (!s)
		return errf(err, -ENOMEM, "out of memory");
	s->epfd = -1;
	s->ncpus = libbpf_num_possible_cpus();
	if (s->ncpus <= 0)
		return errf(err, s->ncpus ? s->ncpus : -ENODEV, "cannot count CPUs");
	/* zeroed: valgrind cannot see the kernel fill them in a batch drain */
	s->keys = calloc(DRAIN_BATCH, sizeof(struct cprof_sample_key));
	s->vals = calloc(DRAIN_BATCH, sizeof(struct cprof_stack));
	s->skel = cprof_bpf__open();
	if (!s->keys || !s->vals || !s->skel)
		return errf(err, -ENOMEM, "cannot open the BPF object: %s", strerror(errno));
	return 0;
}

/* What the program is built for (its read-only data) and the maps' sizes, before loading. */
static int configure(struct sampler *s, const struct sampler_opts *opts, struct errbuf *err)
{
	struct cprof_bpf *skel = s->skel;

	skel->rodata->self_tgid = getpid();
	skel->rodata->filter_pids = opts->pids && opts->n_pids;
	skel->rodata->filter_comms = opts->n_comms > 0;
	skel->rodata->filter_cgroups = opts->n_cgroups > 0;
	skel->rodata->kernel_stacks = opts->kernel_stacks;
	skel->rodata->file_tables = opts->unwind_rows > 0;
	skel->rodata->defer_walks = opts->unwind_rows > 0;
	/* asked for, and with tables: entries for the libraries' mmaps to fill */
	bpf_program__set_autoload(skel->progs.on_ld_state, opts->ld_probe && opts->unwind_rows > 0);
	skel->rodata->python_stacks = opts->python_stacks;

	if (opts->counts_max &&
	    (bpf_map__set_max_entries(skel->maps.counts0, opts->counts_max) ||
	     bpf_map__set_max_entries(skel->maps.counts1, opts->counts_max)))
		return errf(err, -EINVAL, "cannot size the counts maps");
	s->log_slots = countlog_slots(opts->frequency, s->ncpus, opts->counts_max);
	skel->rodata->count_log_slots = s->log_slots;
	/* (an array has one entry at least: unused without a log) */
	if (bpf_map__set_max_entries(skel->maps.count_log0,
				     s->log_slots ? s->ncpus * s->log_slots : 1) ||
	    bpf_map__set_max_entries(skel->maps.count_log1,
				     s->log_slots ? s->ncpus * s->log_slots : 1))
		return errf(err, -EINVAL, "cannot size the count logs");
	if (setup_off_cpu(skel, opts))
		return errf(err, -EINVAL, "cannot size the off-CPU maps");
	/* Frame-pointer mode keeps a one-row array: nothing to look up. */
	s->rows_cap = opts->unwind_rows;
	/*
	 * One row more than tables may use: the BPF search may read one past a
	 * table's end, which must still be inside the array.
	 */
	if (bpf_map__set_max_entries(skel->maps.unwind_rows, s->rows_cap + 1))
		return errf(err, -EINVAL, "cannot size the unwind rows map");
	return 0;
}

static int load(struct sampler *s, struct errbuf *err)
{
	if (!cprof_bpf__load(s->skel))
		return 0;
	/* The capabilities are there: EPERM is a filter's (seccomp, an LSM). */
	return errf(err, -errno ? -errno : -EINVAL, "loading the BPF program failed: %s (%s)",
		    strerror(errno),
		    errno == EPERM ? "a seccomp profile or LSM may forbid bpf();"
				     " in a container, run it unconfined" :
				     "run with -v for the verifier log");
}

/* Puts @key in the filter map @m: 0 or -errno. */
static int filter_add(struct bpf_map *m, const void *key, size_t size)
{
	__u8 one = 1;

	return bpf_map__update_elem(m, key, size, &one, sizeof(one), BPF_ANY) ? -errno : 0;
}

/* The processes, names and cgroups sampled, once the program is loaded. */
static int fill_filters(struct sampler *s, const struct sampler_opts *opts, struct errbuf *err)
{
	int ret;

	for (size_t i = 0; i < opts->n_pids; i++) {
		ret = filter_add(s->skel->maps.pid_filter, &opts->pids[i], sizeof(opts->pids[i]));
		if (ret)
			return errf(err, ret, "adding pid %u to the filter: %s", opts->pids[i],
				    strerror(-ret));
	}
	for (size_t i = 0; i < opts->n_comms; i++) {
		char comm[CPROF_COMM_LEN] = { 0 };

		strncpy(comm, opts->comms[i], sizeof(comm) - 1);
		ret = filter_add(s->skel->maps.comm_filter, comm, sizeof(comm));
		if (ret)
			return errf(err, ret, "adding comm '%s' to the filter: %s", comm,
				    strerror(-ret));
	}
	for (size_t i = 0; i < opts->n_cgroups; i++) {
		ret = filter_add(s->skel->maps.cgroup_filter, &opts->cgroups[i],
				 sizeof(opts->cgroups[i]));
		if (ret)
			return errf(err, ret, "adding a cgroup to the filter: %s", strerror(-ret));
	}
	return 0;
}

/*
 * What the loaded program's data comes through: the count logs, the
 * rings, the grace period worker and the epoll set sampler_poll() waits on.
 */
static int open_channels(struct sampler *s, const struct sampler_opts *opts, struct errbuf *err)
{
	int ret = map_count_logs(s);

	if (ret)
		return errf(err, ret, "mapping the count logs: %s", strerror(-ret));
	warm_stack_caches(s);
	s->ring = ring_buffer__new(bpf_map__fd(s->skel->maps.events), on_ring_event, s, NULL);
	/* deferred samples: their records start with their type too */
	s->dring = ring_buffer__new(bpf_map__fd(s->skel->maps.deferred), on_ring_event, s, NULL);
	if (!s->ring || !s->dring)
		return errf(err, -errno, "creating the event ring buffer: %s", strerror(errno));
	ret = grace_start(&s->grace, wait_for_writers, s, opts->waiter);
	if (ret)
		return errf(err, ret, "starting a thread: %s", strerror(-ret));
	ret = poll_set(s);
	if (ret)
		return errf(err, ret, "creating an epoll instance: %s", strerror(-ret));
	return 0;
}

/* Tracepoints first, so no process event is missed once sampling starts. */
static int attach(struct sampler *s, const struct sampler_opts *opts, struct errbuf *err)
{
	struct cprof_bpf *skel = s->skel;

	skel->links.on_exec = bpf_program__attach(skel->progs.on_exec);
	skel->links.on_exit = bpf_program__attach(skel->progs.on_exit);
	if (!skel->links.on_exec || !skel->links.on_exit)
		return errf(err, -errno, "attaching to sched tracepoints: %s", strerror(errno));
	if (opts->ld_probe && skel->rodata->file_tables)
		attach_ld_state(s);
	if (opts->off_cpu) {
		skel->links.on_switch = bpf_program__attach(skel->progs.on_switch);
		if (!skel->links.on_switch)
			return errf(err, -errno, "--off-cpu: attaching to sched_switch: %s",
				    strerror(errno));
	}
	return attach_cpus(s, opts->frequency, opts->cpus, err);
}

int sampler_open(struct sampler **out, const struct sampler_opts *opts,
		 struct errbuf *err)
{
	struct sampler *s;
	int ret;

	*out = NULL;
	ret = check_privileges(err);
	if (ret)
		return ret;
	if (access(KERNEL_BTF_PATH, R_OK))
		return errf(err, -ENOENT,
			    "no kernel BTF at %s: needs a kernel built with CONFIG_DEBUG_INFO_BTF"
			    " and, in a container, the host's /sys/kernel/btf mounted", KERNEL_BTF_PATH);
	ret = sampler_new(&s, err);
	if (!ret)
		ret = configure(s, opts, err);
	if (!ret)
		ret = load(s, err);
	if (!ret)
		ret = fill_filters(s, opts, err);
	if (!ret)
		ret = open_channels(s, opts, err);
	if (!ret)
		ret = attach(s, opts, err);
	if (ret) {
		sampler_close(s);
		return ret;
	}
	*out = s;
	return 0;
}

void sampler_pause(struct sampler *s)
{
	if (!s || !s->perf_fds)
		return;
	for (int cpu = 0; cpu < s->ncpus; cpu++)
		if (s->perf_fds[cpu] >= 0)
			ioctl(s->perf_fds[cpu], PERF_EVENT_IOC_DISABLE, 0);
}

void sampler_stop(struct sampler *s)
{
	if (!s || !s->links)
		return;
	for (int cpu = 0; cpu < s->ncpus; cpu++) {
		bpf_link__destroy(s->links[cpu]);
		s->links[cpu] = NULL;
		if (s->perf_fds[cpu] >= 0)
			close(s->perf_fds[cpu]);
		s->perf_fds[cpu] = -1;
	}
}

void sampler_close(struct sampler *s)
{
	if (!s)
		return;
	sampler_stop(s);
	sampler_write_rows(s, 0, NULL, 0);
	grace_stop(&s->grace);
	if (s->epfd >= 0)
		close(s->epfd);
	ring_buffer__free(s->ring);
	ring_buffer__free(s->dring);
	for (int i = 0; i < 2; i++)
		if (s->logs[i])
			munmap(s->logs[i], s->log_len);
	cprof_bpf__destroy(s->skel);
	free(s->links);
	free(s->perf_fds);
	free(s->keys);
	free(s->vals);
	free(s);
}

void sampler_cpus(const struct sampler *s, struct cpulist *out)
{
	*out = s->sampled;
}

int sampler_ncpus(const struct sampler *s)
{
	return s->ncpus;
}

int sampler_set_period(struct sampler *s, int cpu, uint64_t ns)
{
	__u64 period = ns;

	if (cpu < 0 || cpu >= s->ncpus || !s->perf_fds || s->perf_fds[cpu] < 0)
		return -ENOENT;
	if (ioctl(s->perf_fds[cpu], PERF_EVENT_IOC_PERIOD, &period))
		return -errno;
	return 0;
}

/*
 * What both rings hold, deferred samples first: a process's exit, in the
 * events, makes the loader let go of its entry, which a sample's record
 * parked before it copies (deferred.h).
 */
static int read_rings(struct sampler *s)
{
	int d = ring_buffer__consume(s->dring), e = ring_buffer__consume(s->ring);

	return d < 0 ? d : e < 0 ? e : d + e;
}

int sampler_poll(struct sampler *s, int timeout_ms, int slice_ms, sampler_event_fn fn,
		 void *ctx)
{
	int n = 0, left = timeout_ms;
	bool flipped = false;

	if (slice_ms <= 0)
		slice_ms = timeout_ms;
	s->ev_fn = fn;
	s->ev_ctx = ctx;
	do {
		int slice = left > slice_ms ? slice_ms : left;
		struct epoll_event ev[2];
		int k = epoll_wait(s->epfd, ev, 2, slice);

		if (k < 0)
			n = -errno;
		/*
		 * A slice over with no wakeup: the ring is read anyway, which
		 * is what the slice is for (its wakeup can come late).
		 */
		if (k == 0) {
			int r = read_rings(s);

			n = r < 0 ? r : n + r;
		}
		for (int i = 0; i < k && n >= 0; i++) {
			if (ev[i].data.u32 == POLL_GRACE) {
				grace_ack(&s->grace);
				flipped = sampler_flip_ready(s);
			} else {
				int r = read_rings(s);

				n = r < 0 ? r : n + r;
			}
		}
		left -= slice;
	} while (n == 0 && !flipped && left > 0);
	s->ev_fn = NULL;
	s->ev_ctx = NULL;
	return n;
}

const char *sampler_note(const struct sampler *s)
{
	return s->note[0] ? s->note : NULL;
}

typedef int (*entry_fn)(void *ctx, const struct sampler_drain_ops *ops,
			const void *key, const void *val, size_t vsz);

/*
 * Empties a hash map batch by batch, handing each entry to @fn.  The map
 * belongs to the idle pair, so nothing is adding to it meanwhile.
 */
static int drain_map(struct sampler *s, int fd, size_t ksz, size_t vsz, entry_fn fn,
		     const struct sampler_drain_ops *ops, void *ctx)
{
	LIBBPF_OPTS(bpf_map_batch_opts, bopts);
	__u8 token[64]; /* hash-map batch cursor: a bucket index */
	bool first = true;

	for (;;) {
		__u32 count = DRAIN_BATCH;
		int ret = bpf_map_lookup_and_delete_batch(fd, first ? NULL : token, token,
							  s->keys, s->vals, &count, &bopts);
		int e = ret ? -errno : 0;

		first = false;
		for (__u32 i = 0; i < count; i++) {
			int r = fn(ctx, ops, (char *)s->keys + i * ksz, (char *)s->vals + i * vsz,
				   vsz);

			if (r)
				return r;
		}
		if (e == -ENOENT)
			return 0; /* the whole map has been walked */
		if (e)
			return e;
	}
}

/* A stack of a size class: @vsz bytes, its nr trusted only that far. */
static int stack_entry(void *ctx, const struct sampler_drain_ops *ops, const void *k,
		       const void *v, size_t vsz)
{
	struct cprof_stack *st = (struct cprof_stack *)v;
	__u32 room = (vsz - CPROF_STACK_BYTES(0)) / sizeof(st->ip[0]);

	if (st->nr > room)
		st->nr = room;
	return ops->stack ? ops->stack(ctx, *(const __u64 *)k, st) : 0;
}

static int sample_entry(void *ctx, const struct sampler_drain_ops *ops, const void *k,
			const void *v, size_t vsz)
{
	return ops->sample ? ops->sample(ctx, k, *(const __u64 *)v) : 0;
}

struct log_ctx {
	const struct sampler_drain_ops *ops;
	void *ctx;
};

/* A count log's slot (countlog_drain()'s callback). */
static int log_entry(void *ctx, const struct cprof_sample_key *k, uint64_t n)
{
	struct log_ctx *lc = ctx;

	return lc->ops->sample ? lc->ops->sample(lc->ctx, k, n) : 0;
}

static int off_cpu_entry(void *ctx, const struct sampler_drain_ops *ops, const void *k,
			 const void *v, size_t vsz)
{
	return ops->off_cpu ? ops->off_cpu(ctx, k, *(const __u64 *)v) : 0;
}

static int lost_entry(void *ctx, const struct sampler_drain_ops *ops, const void *k,
		      const void *v, size_t vsz)
{
	return ops->lost ? ops->lost(ctx, *(const __u32 *)k, v) : 0;
}

bool sampler_flip(struct sampler *s)
{
	__u64 epoch = s->skel->bss->live_epoch;

	if (s->flip_ticket)
		return false; /* the idle pair is not drained yet */
	s->flip_idle = epoch & 1;
	s->flip_epoch = epoch;
	__atomic_store_n(&s->skel->bss->live_epoch, epoch + 1, __ATOMIC_SEQ_CST);
	/* Asked after the flip: the grace period ends once no program writes the idle pair. */
	s->flip_ticket = grace_ask(&s->grace);
	return true;
}

bool sampler_flip_ready(struct sampler *s)
{
	return s->flip_ticket && grace_passed(&s->grace, s->flip_ticket);
}

void sampler_flip_wait(struct sampler *s)
{
	if (s->flip_ticket)
		grace_wait(&s->grace, s->flip_ticket); /* its error: sampler_drain_flipped()'s */
}

int sampler_drain_flipped(struct sampler *s, const struct sampler_drain_ops *ops, void *ctx,
			  struct errbuf *err)
{
	__u32 idle = s->flip_idle;
	struct bpf_map *counts, *off_cpu, *lost;
	/* Each size class of stacks of the idle pair, with its frame room. */
	const struct {
		struct bpf_map *map;
		size_t frames;
	} stacks[] = {
		{ idle ? s->skel->maps.stacks_short1 : s->skel->maps.stacks_short0,
		  CPROF_SHORT_FRAMES },
		{ idle ? s->skel->maps.stacks_mid1 : s->skel->maps.stacks_mid0, CPROF_MID_FRAMES },
		{ idle ? s->skel->maps.stacks_long1 : s->skel->maps.stacks_long0,
		  CPROF_MAX_FRAMES },
	};
	int ret;

	if (!s->flip_ticket)
		return 0;
	ret = grace_wait(&s->grace, s->flip_ticket);
	/* A failed wait leaves the pair as it is: it is drained after it is live again. */
	s->flip_ticket = 0;
	if (ret)
		return errf(err, ret, "waiting for BPF programs: %s", strerror(-ret));

	counts = idle ? s->skel->maps.counts1 : s->skel->maps.counts0;
	off_cpu = idle ? s->skel->maps.offcpu1 : s->skel->maps.offcpu0;
	lost = idle ? s->skel->maps.lost1 : s->skel->maps.lost0;

	for (size_t i = 0; i < sizeof(stacks) / sizeof(stacks[0]) && !ret; i++)
		ret = drain_map(s, bpf_map__fd(stacks[i].map), sizeof(__u64),
				CPROF_STACK_BYTES(stacks[i].frames), stack_entry, ops, ctx);
	/* the pair's samples: its count log, then its counts map (a key may be in both) */
	if (!ret) {
		struct log_ctx lc = { ops, ctx };

		ret = countlog_drain(s->logs[idle], s->ncpus, s->log_slots, log_entry, &lc);
	}
	if (!ret)
		ret = drain_map(s, bpf_map__fd(counts), sizeof(struct cprof_sample_key),
				sizeof(__u64), sample_entry, ops, ctx);
	if (!ret)
		ret = drain_map(s, bpf_map__fd(off_cpu), sizeof(struct cprof_sample_key),
				sizeof(__u64), off_cpu_entry, ops, ctx);
	if (!ret)
		ret = drain_map(s, bpf_map__fd(lost), sizeof(__u32), sizeof(struct cprof_lost),
				lost_entry, ops, ctx);
	if (ret < 0)
		return errf(err, ret, "draining BPF maps: %s", strerror(-ret));
	s->drained_below = s->flip_epoch + 1;
	return ret;
}

uint64_t sampler_drained_below(const struct sampler *s)
{
	return s->drained_below;
}

int sampler_stats(struct sampler *s, struct cprof_stats *out)
{
	struct cprof_stats *per_cpu;
	__u32 zero = 0;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	per_cpu = calloc(s->ncpus, sizeof(*per_cpu));
	if (!per_cpu)
		return -ENOMEM;
	if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.stats), &zero, per_cpu)) {
		ret = -errno;
		goto out;
	}
	for (int i = 0; i < s->ncpus; i++) {
		/* All u64 counters (cprof.h asserts it): summed as such. */
		const __u64 *in = (const __u64 *)&per_cpu[i];
		__u64 *sum = (__u64 *)out;

		for (size_t k = 0; k < sizeof(*out) / sizeof(__u64); k++)
			sum[k] += in[k];
	}
out:
	free(per_cpu);
	return ret;
}

int sampler_prog_stats(struct sampler *s, uint64_t *run_time_ns, uint64_t *run_cnt)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(bpf_program__fd(s->skel->progs.on_sample), &info, &len))
		return -errno;
	*run_time_ns = info.run_time_ns;
	*run_cnt = info.run_cnt;
	return 0;
}
