// SPDX-License-Identifier: MIT
/*
 * cprof-bpf: sample every CPU, write one pprof profile per process.
 *
 * main.c drives the loop (options.c reads the command line): poll process
 * events, drain the BPF maps every second, and at the end symbolize and
 * write (events.c turns what BPF sends into the run's records).  All
 * run-wide state lives here: struct run (run.h) and the signal flags.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "util/clock.h"
#include "dwarf/dwarfworker.h"
#include "agent/events.h"
#include "fs/fdlru.h"
#include "symbols/kallsyms.h"
#include "elf/objcache.h"
#include "agent/options.h"
#include "output/outdir.h"
#include "agent/priority.h"
#include "fs/procstat.h"
#include "process/proctab.h"
#include "fs/rootfs.h"
#include "agent/run.h"
#include "sampling/sampler.h"
#include "util/stackstore.h"
#include "agent/summary.h"
#include "sampling/bpftables.h"
#include "output/window.h"

/*
 * Left for what is opened for a moment (maps, kallsyms, a profile being
 * written, debug files, DWARF) beside what the run already holds.
 */
#define FD_RESERVE 64
#define MAX_ROOTS 1024
/*
 * Most frames of off-CPU stacks kept from one window to the next (8 MB),
 * for waits still in progress; waits beyond it show as [lost: stack not
 * found].
 */
#define OFFCPU_CARRY_FRAMES (1u << 20)

static volatile sig_atomic_t stop_signal;
/* The run being sampled, for the handler (run_loop sets it). */
static struct run *volatile sampling;
static bool verbose;

static void on_signal(int sig)
{
	struct run *r = sampling;

	stop_signal = sig;
	/*
	 * Sampling ends on time however busy the agent is, and what is left
	 * (the drain under way, the write) starts a real-time step at once.
	 */
	if (r) {
		sampler_pause(r->sampler);
		priority_step(&r->prio, PRIORITY_WRITE_MS);
	}
}

__attribute__((format(printf, 2, 0)))
__attribute__((format(printf, 2, 0)))
static int libbpf_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (!verbose && level != LIBBPF_WARN)
		return 0;
	if (!verbose)
		return 0; /* warnings resurface as our own one-line errors */
	return vfprintf(stderr, fmt, ap);
}

static void drain_error(struct run *r, int ret, const struct errbuf *err)
{
	if (ret && !r->drain_error) {
		r->drain_error = ret;
		snprintf(r->drain_errmsg, sizeof(r->drain_errmsg), "%s", err->msg);
	}
}

/*
 * The pair of the last sampler_flip(), once its grace period has passed
 * (blocks until it has).  Events first: new processes are announced
 * before their samples arrive.
 */
static void drain_flipped(struct sampler *s, struct run *r)
{
	struct errbuf err = { "" };
	double t0 = clock_s(CLOCK_MONOTONIC), ms;

	sampler_flip_wait(s);
	sampler_poll(s, 0, 0, events_on_event, r);
	drain_error(r, sampler_drain_flipped(s, &events_drain_ops, r, &err), &err);
	ms = (clock_s(CLOCK_MONOTONIC) - t0) * 1e3;
	r->phases.drains++;
	if (ms > r->phases.drain_max_ms)
		r->phases.drain_max_ms = ms;
}

/* Everything sampled so far (a window's end): blocks for a grace period or two. */
static void drain(struct sampler *s, struct run *r)
{
	priority_step(&r->prio, PRIORITY_DRAIN_MS);
	drain_flipped(s, r); /* a flip pending: its pair first */
	sampler_flip(s);
	drain_flipped(s, r);
}

static int64_t unix_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void report_line(void *ctx, const char *msg)
{
	fprintf(stderr, PROG ": %s\n", msg);
}

/*
 * After a window is written: processes gone without an exit event (the
 * ring was full) are marked exited, and BPF forgets every exited image,
 * whose record is freed now.
 */
static void retire_exits(struct run *r)
{
	struct process **list;
	size_t n;

	list = proctab_list(&r->procs, &n);
	for (size_t i = 0; list && i < n; i++) {
		struct process *p = list[i];

		if (!p->exited && proctab_find(&r->procs, p->pid) == p &&
		    kill((pid_t)p->pid, 0) < 0 && errno == ESRCH) {
			proctab_exited(&r->procs, p->pid, p->gen);
			if (r->tables)
				bpftables_remove_process(r->tables, p->pid);
			events_forget_runtimes(r, p);
		}
		if (p->exited)
			sampler_forget(r->sampler, p->pid, p->gen);
	}
	free(list);
}

/* Continuous mode's line for a window just written, with its own counters. */
static void window_line(struct run *r, int64_t start_ns, const struct window_result *res)
{
	struct summary w = {
		.files = res->files,
		.failed = res->failed,
		.samples = res->samples,
		.lost = res->lost,
		.sym = res->sym,
		.unwind_tables = r->tables != NULL,
	};
	struct cprof_stats now;
	uint64_t *d = (uint64_t *)&w.bpf;
	const uint64_t *a = (const uint64_t *)&now, *b = (const uint64_t *)&r->bpf_before;
	char stamp[32];

	/* All u64 counters (cprof.h asserts it): the window's are differences. */
	if (!sampler_stats(r->sampler, &now)) {
		for (size_t i = 0; i < sizeof(now) / sizeof(uint64_t); i++)
			d[i] = a[i] - b[i];
		r->bpf_before = now;
	}
	window_stamp(start_ns, stamp, sizeof(stamp));
	summary_window(stderr, stamp, &w, r->opts, &r->told);
}

static const struct dwarfworker_sched reader_sched = {
	.started = priority_child_started,
	.ready = priority_child_ready,
};

/*
 * Writes the window that started at @start_ns (Unix) and @start (monotonic)
 * and whose samples were taken until @stop (monotonic), then starts a new one: records of exited processes are freed, the other
 * processes start again from zero, and so does the stack store.
 */
static void end_window(struct run *r, const struct options *o, int64_t start_ns, double start,
		       double stop, struct summary *tot)
{
	struct window_result res;
	const struct window_opts wo = {
		.out = &r->out,
		.stamped = o->interval > 0,
		.frequency = o->frequency,
		.off_cpu = o->off_cpu,
		.debug_root = "/usr/lib/debug",
		.addresses_only = !o->symbolize,
		.dwarf_max_bytes = (uint64_t)o->dwarf_kb * 1024,
		.reader_exec_self = true,
		/* The agent waits for its reader: it runs at the agent's priority. */
		.reader_sched = &reader_sched,
		/* One reader for the run: what it decompressed serves every window. */
		.reader = &r->reader,
		/* What a window's pass over kallsyms named serves the next ones. */
		.ksyms = &r->ksyms,
		.symbol_max_bytes = (uint64_t)o->symbol_kb * 1024,
		.report = report_line,
		.verbose = o->verbose,
	};
	struct errbuf err = { "" };

	priority_step(&r->prio, PRIORITY_WRITE_MS);
	events_refresh_deferred(r);
	window_write(&r->procs, &r->stacks, &wo, start_ns, (int64_t)((stop - start) * 1e9), &res);
	tot->windows++;
	tot->files += res.files;
	tot->failed += res.failed;
	tot->samples += res.samples;
	tot->lost += res.lost;
	tot->sym = res.sym;
	tot->ksyms = r->ksyms.st;
	tot->last = res;
	tot->write_s = clock_s(CLOCK_MONOTONIC) - stop;
	if (o->interval)
		window_line(r, start_ns, &res);
	if (o->keep && outdir_prune(&r->out, o->keep, &err) < 0)
		fprintf(stderr, PROG ": --keep: %s\n", err.msg);
	retire_exits(r);
	proctab_end_window(&r->procs);
	hmap_clear(&r->js_read);
	/* The stacks of waits in progress: they may be charged in a later window. */
	if (stackstore_carry(&r->stacks, CPROF_STACK_F_OFFCPU, OFFCPU_CARRY_FRAMES))
		fprintf(stderr, PROG ": out of memory keeping the stacks of waits in progress\n");
	if (r->tables)
		bpftables_prune(r->tables);
	/* What the window freed goes back to the system, so RSS stays flat. */
	malloc_trim(0);
}

/*
 * How often to look at the event ring while waiting.  A new program is
 * read from /proc while it lives, and `as` in a build lives a few ms;
 * under a make -j2 on a heavily loaded 2-CPU KVM guest (kernel 6.18) the
 * ring's epoll wakeup was seen 40-300 ms after the event (on a quiet or
 * merely CPU-bound host: under 0.1 ms), so while processes are being
 * born the ring is looked at every few ms.  Not otherwise: those wakeups
 * cost an idle host 200 switches a second and a switch-heavy workload
 * several percent of its throughput.
 */
#define POLL_SLICE_MS 5
#define POLL_BIRTHS_S 1.0

static int poll_slice_ms(const struct run *r, double now)
{
	return r->birth_s && now - r->birth_s < POLL_BIRTHS_S ? POLL_SLICE_MS : 0;
}

/*
 * Before a window is written (its maps drained): the tables the deferred
 * samples wait for are built (a look first asks for those of files
 * numbered since they were parked: a program gone before the loader read
 * it, named from its exit record), then every sample is counted.
 */
static void finish_deferred(struct run *r)
{
	if (r->tables && deferred_waiting(&r->deferred)) {
		events_deferred(r, false);
		bpftables_build_pending(r->tables);
	}
	events_deferred(r, true);
}

static int set_period(void *sampler, int cpu, uint64_t ns)
{
	return sampler_set_period(sampler, cpu, ns);
}

/* The sampling clocks varied (unless --no-jitter), each from its CPU; steady when they cannot be. */
static void start_jitter(struct sampler *s, struct run *r, const struct options *o)
{
	uint64_t seed = (uint64_t)getpid() << 32 ^ (uint64_t)unix_ns();
	struct errbuf err = { "" };

	if (o->jitter && clockthreads_start(&r->clocks, sampler_ncpus(s), o->frequency, seed,
					    set_period, s, &err))
		fprintf(stderr, PROG ": sampling at a steady %u Hz: %s\n", o->frequency, err.msg);
}

/*
 * Samples until the duration is over or a signal comes, draining every
 * second and, in continuous mode, writing a window every interval.  The
 * last (possibly partial) window is always written.
 */
static void run_loop(struct sampler *s, struct run *r, const struct options *o,
		     struct summary *tot)
{
	double start = clock_s(CLOCK_MONOTONIC), next_drain = start + 1;
	double end = o->duration ? start + o->duration : 0;
	double win_start = start;
	int64_t win_start_ns = unix_ns();
	bool tty = isatty(STDERR_FILENO) && !o->quiet;
	/* SIGALRM at the end pauses sampling, even in the middle of a long drain. */
	struct itimerval alarm_at = { .it_value = { (time_t)o->duration, 0 } };

	sampling = r;
	if (o->duration)
		setitimer(ITIMER_REAL, &alarm_at, NULL);
	start_jitter(s, r, o);
	while (!stop_signal) {
		double t = clock_s(CLOCK_MONOTONIC);

		if (end && t >= end)
			break;
		/*
		 * Once a second the other map pair is made live; the idle one is
		 * drained once the kernel's grace period has passed, with events
		 * handled meanwhile (sampler_poll() returns when it passes).  A
		 * flip waits until the one before has been drained.
		 */
		if (t >= next_drain && sampler_flip(s)) {
			next_drain += 1;
			if (tty && end)
				fprintf(stderr, "\r" PROG ": sampling, %.0f s left, %llu samples  ",
					end - t, (unsigned long long)r->samples_drained);
		}
		if (o->interval && t >= win_start + o->interval) {
			drain(s, r);
			finish_deferred(r);
			if (tty)
				fprintf(stderr, "\r\033[K");
			end_window(r, o, win_start_ns, win_start, clock_s(CLOCK_MONOTONIC), tot);
			win_start += o->interval;
			win_start_ns += (int64_t)o->interval * 1000000000LL;
		}
		/* no wait while tables are queued: they are built between two looks */
		sampler_poll(s, r->tables && bpftables_pending(r->tables) ? 0 : 100,
			     poll_slice_ms(r, t), events_on_event, r);
		if (sampler_flip_ready(s)) {
			priority_step(&r->prio, PRIORITY_DRAIN_MS);
			drain_flipped(s, r);
		}
		/* Tables asked for are built between polls, so events are never held up long. */
		if (r->tables)
			bpftables_build_pending(r->tables);
		/* and the samples that waited for them counted */
		events_deferred(r, false);
	}
	if (tty)
		fprintf(stderr, "\r\033[K");
	alarm_at = (struct itimerval){ { 0, 0 }, { 0, 0 } };
	setitimer(ITIMER_REAL, &alarm_at, NULL);
	sampling = NULL;
	tot->sampled_s = clock_s(CLOCK_MONOTONIC) - start;
	/* A loop that came late found sampling paused by the alarm at its end. */
	if (end && tot->sampled_s > o->duration)
		tot->sampled_s = o->duration;
	sampler_stop(s);
	/* Both pairs may hold samples now: drain each once. */
	drain(s, r);
	drain(s, r);
	finish_deferred(r);
	/*
	 * The window ends where sampling did, not after the last drains: on a
	 * starved host they took 1.7 s, and a profile of 5 s said 6.7.
	 */
	end_window(r, o, win_start_ns, win_start, start + tot->sampled_s, tot);
	/* From the end of sampling: the last drains are part of the write. */
	tot->write_s = clock_s(CLOCK_MONOTONIC) - start - tot->sampled_s;
}

/* The host's vDSO is the same image in every process of our ABI. */
static struct elfobj *open_vdso(void)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	struct vma_list maps = { 0 };
	struct elfobj *o = NULL;

	if (!base || procmaps_read("/proc", getpid(), &maps, NULL))
		return NULL;
	const struct vma *v = procmaps_find(&maps, base);

	if (v)
		elfobj_open_mem(&o, (const void *)v->start, v->end - v->start, NULL);
	procmaps_free(&maps);
	return o;
}

/* Descriptors open now (a few more: ".", ".." and the listing's own). */
static size_t open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	size_t n = 0;

	if (!d)
		return 256; /* a guess on the safe side */
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/*
 * Objects keep their files open so exited processes still symbolize: as
 * many as the open-file limit allows, less what the run holds already and
 * a reserve, so that kallsyms, the profiles being written and the maps
 * being read never lack one.  A quarter of what is left goes to processes'
 * roots, the rest to objects and perf maps (at most --max-files).
 */
static void fd_budget(unsigned long max_files, size_t *files, size_t *roots)
{
	struct rlimit rl;
	size_t avail, used = open_fds();

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY)
		rl.rlim_cur = 1 << 20;
	avail = rl.rlim_cur > used + FD_RESERVE + 32 ? rl.rlim_cur - used - FD_RESERVE : 32;
	*roots = avail / 4 < MAX_ROOTS ? avail / 4 : MAX_ROOTS;
	*files = avail - *roots < max_files ? avail - *roots : max_files;
}

/* The run's figures for the summary, taken from every part of it. */
static void gather(struct run *r, struct summary *sum)
{
	if (sampler_stats(r->sampler, &sum->bpf))
		memset(&sum->bpf, 0, sizeof(sum->bpf));
	sampler_cpus(r->sampler, &sum->cpus);
	sum->ncpus = cpulist_count(&sum->cpus);
	sum->processes = r->procs.created;
	sum->unwind_tables = r->tables != NULL;
	if (r->tables)
		bpftables_get_stats(r->tables, &sum->tables);
	sum->deferred = r->deferred.st;
	sum->procs = r->procs.st;
	rootfs_roots_stats(r->roots, &sum->roots);
	objcache_get_stats(r->objs, &sum->objs);
	sum->files_max = r->lru.max;
	sum->files_evicted = r->lru.st.evicted;
	sum->drain_error = r->drain_error ? r->drain_errmsg : NULL;
	sum->py = r->py;
	sum->java = r->java_st;
	sum->node = r->node_st;
	py_tramps_get_stats(r->tramps, &sum->py.tramps);
	clockthreads_stats(r->clocks, &sum->jitter);
	sum->phases = r->phases;
	sum->phases.main_ms = priority_since_launch_ms(r->launch_ns, r->main_ns);
	sum->phases.raised_ms = priority_since_launch_ms(r->launch_ns, r->raised_ns);
}

/*
 * Where __schedule() is, for off-CPU kernel stacks to start there.  Not
 * found (kallsyms hidden), they start two frames above the program, as
 * the tracepoint's own call reaches it: one frame too high while another
 * program watches the switch.
 */
static void sched_text(struct sampler_opts *sopts)
{
	struct errbuf err = { "" };
	FILE *f = rootfs_fopen_host("/proc/kallsyms");

	if (!f)
		return;
	kallsyms_text_range(f, "__schedule", &sopts->sched_text_lo, &sopts->sched_text_hi, &err);
	fclose(f);
}

/*
 * The grace worker's scheduling (grace.h): the agent's steps wait for it,
 * so it has real-time steps of its own, one a wait.
 */
static void waiter_start(void *ctx)
{
	struct run *r = ctx;

	/* In a step from the start: its first wakeup is as urgent as the others. */
	priority_thread(&r->waiter_prio, &r->prio);
	priority_step(&r->waiter_prio, PRIORITY_WAIT_MS);
}

static void waiter_before(void *ctx)
{
	struct run *r = ctx;

	priority_step(&r->waiter_prio, PRIORITY_WAIT_MS);
}

static void waiter_end(void *ctx)
{
	struct run *r = ctx;

	priority_release(&r->waiter_prio);
}

/* Sets up every part of a run; on failure what was made is left for run_free. */
static int run_open(struct run *r, const struct options *o, struct errbuf *err)
{
	struct sampler_opts sopts = {
		.frequency = o->frequency,
		.cpus = o->cpus_set ? &o->cpus : NULL,
		.kernel_stacks = o->kernel,
		.python_stacks = o->python,
		.ld_probe = o->ld_probe,
		.pids = o->n_pids ? o->pids : NULL,
		.n_pids = o->n_pids,
		.comms = o->comms,
		.n_comms = o->n_comms,
		.cgroups = o->cgroup_ids,
		.n_cgroups = o->n_cgroups,
		.counts_max = o->counts_max,
		.off_cpu = o->off_cpu,
		.off_cpu_min_ns = o->off_cpu_min_ns,
		.unwind_rows = o->dwarf ? (uint32_t)((uint64_t)o->unwind_kb * 1024 /
						     sizeof(union cprof_table_slot)) : 0,
	};
	const struct grace_hooks waiter = {
		.start = waiter_start, .before = waiter_before, .end = waiter_end, .ctx = r,
	};
	size_t max_files, max_roots;
	double t0;
	int ret;

	sopts.waiter = &waiter;
	r->python = o->python;
	r->java = o->java;
	r->node = o->node;
	ksymcache_init(&r->ksyms, o->interval ? KSYMCACHE_CATALOG_BYTES : 0);
	/* Fail before sampling if the results could not be written. */
	ret = outdir_open(&r->out, o->output_dir, o->file_mode, o->keep > 0, err);
	if (ret < 0)
		return ret;
	r->out_open = true;
	if (o->off_cpu)
		sched_text(&sopts);
	t0 = clock_s(CLOCK_MONOTONIC);
	ret = sampler_open(&r->sampler, &sopts, err);
	r->phases.load_ms = (clock_s(CLOCK_MONOTONIC) - t0) * 1e3;
	if (ret)
		return ret;
	if (sampler_note(r->sampler))
		fprintf(stderr, PROG ": %s\n", sampler_note(r->sampler));
	r->vdso = open_vdso();
	fd_budget(o->max_files, &max_files, &max_roots);
	fdlru_init(&r->lru, max_files);
	r->objs = objcache_new();
	if (!r->objs || rootfs_roots_new(&r->roots, max_roots))
		return errf(err, -ENOMEM, "out of memory");
	objcache_set_lru(r->objs, &r->lru, r->roots);
	stackstore_init(&r->stacks);
	hmap_init(&r->js_read, sizeof(struct js_stack_key), sizeof(struct js_stack_key));
	deferred_init(&r->deferred);
	proctab_init(&r->procs, r->objs, r->vdso, "/proc", r->roots, &r->lru);
	r->procs_open = true;
	{
		struct py_tramp_sink sink = { sampler_set_py_tramp, r->sampler };

		if (py_tramps_new(&r->tramps, &sink))
			return errf(err, -ENOMEM, "out of memory");
	}
	if (o->dwarf) {
		struct bpftables_maps tm = {
			.write_rows = sampler_write_rows,
			.retire = sampler_retire_rows,
			.set_proc = sampler_set_proc,
			.get_proc = sampler_get_proc,
			.set_file = sampler_set_file,
			.set_file_key = sampler_set_file_key,
			.ctx = r->sampler,
		};

		if (sampler_unwind_rows(r->sampler, &tm.capacity) ||
		    bpftables_new(&r->tables, &tm, r->objs))
			return errf(err, -ENOMEM, "cannot set up unwind tables");
	}
	return 0;
}

/* Frees what run_open made, however far it got. */
static void run_free(struct run *r)
{
	dwarfworker_free(r->reader);
	ksymcache_free(&r->ksyms);
	clockthreads_stop(r->clocks, NULL); /* before the events they set go */
	sampler_close(r->sampler);
	bpftables_free(r->tables);
	py_tramps_free(r->tramps);
	if (r->procs_open) {
		proctab_free(&r->procs);
		stackstore_free(&r->stacks);
		hmap_free(&r->js_read);
		deferred_free(&r->deferred);
	}
	objcache_free(r->objs);
	rootfs_roots_free(r->roots);
	elfobj_free(r->vdso);
	if (r->out_open)
		outdir_close(&r->out);
	/*
	 * r->prio is not freed: the last step (PRIORITY_EXIT_MS) lasts until
	 * the process is gone, its exit included (priority.h).
	 */
}

/* Raises the agent's priority for the whole run, and starts its first real-time step. */
static void boost(struct run *r, struct errbuf *err)
{
	/* On failure what could be had is kept (nice -20 alone: the step is a no-op). */
	uint64_t cpu, wait;

	priority_raise(&r->prio, PRIORITY_START_MS, err);
	r->raised_ns = priority_now_ns();
	/* What it cost to get here, read once raised: the reading waits for no CPU. */
	if (procstat_sched_ns(AT_FDCWD, "/proc/self/schedstat", &cpu, &wait)) {
		r->phases.raise_cpu_ms = r->phases.raise_wait_ms = -1;
	} else {
		r->phases.raise_cpu_ms = cpu / 1e6;
		r->phases.raise_wait_ms = wait / 1e6;
	}
}

int main(int argc, char **argv)
{
	uint64_t main_ns = priority_now_ns();
	struct summary sum = { 0 };
	struct options o;
	struct errbuf err = { "" }, prio_err = { "" };
	struct run r = { .phases = { .raise_cpu_ms = -1, .raise_wait_ms = -1 } };
	bool raised = false;
	double t0;
	int ret;

	/* Started by ourselves as the DWARF reader: nothing else of main() runs. */
	ret = dwarfworker_reader_main(argc, argv);
	if (ret == 2)
		fprintf(stderr, PROG ": %s is internal: cprof-bpf starts its DWARF reader so\n",
			argv[1]);
	if (ret >= 0)
		return ret;
	/*
	 * First of all, before the options are parsed: among a busy host's
	 * threads each slice of CPU used at the priority the agent was started
	 * with costs it a second or more of waiting (priority.h).
	 */
	if (priority_wanted(argc, argv)) {
		boost(&r, &prio_err);
		raised = true;
	}
	r.launch_ns = priority_launch_ns();
	r.main_ns = main_ns;
	ret = options_parse(argc, argv, &o);
	if (ret)
		return ret > 0 ? 0 : 2;
	verbose = o.verbose;
	libbpf_set_print(libbpf_log); /* before the check: libbpf's warnings are not our line */
	/* A kernel that cannot do it is a bad request, refused before anything is loaded. */
	if (o.off_cpu && sampler_check_off_cpu(&err)) {
		fprintf(stderr, PROG ": %s\n", err.msg);
		return 2;
	}

	r.opts = &o;
	r.stop = &stop_signal;
	/* An argument that only looked like --no-priority-boost: raised now. */
	if (o.priority_boost && !raised)
		boost(&r, &prio_err);
	ret = run_open(&r, &o, &err);
	if (ret) {
		fprintf(stderr, PROG ": %s\n", err.msg);
		run_free(&r);
		return 1;
	}
	sum.start_ms = priority_since_launch_ms(r.launch_ns, priority_now_ns());
	/* Told once it samples: a run refused before that gets its one line. */
	if (prio_err.msg[0])
		fprintf(stderr, PROG ": %s\n", prio_err.msg);

	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* The end of the duration: what it interrupts goes on (poll(2) returns). */
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);

	summary_start(stderr, &o);
	run_loop(r.sampler, &r, &o, &sum);
	/* The last step: it lasts until the process is gone (run_free() keeps it). */
	priority_step(&r.prio, PRIORITY_EXIT_MS);
	gather(&r, &sum);
	t0 = clock_s(CLOCK_MONOTONIC);
	run_free(&r);
	sum.phases.teardown_ms = (clock_s(CLOCK_MONOTONIC) - t0) * 1e3;
	summary_print(stderr, &sum, &o);
	ret = sum.failed ? 1 : 0;
	if (o.json_summary && summary_json(o.json_summary, &sum, &o, &err)) {
		fprintf(stderr, PROG ": %s\n", err.msg);
		ret = 1;
	}
	return ret;
}
