// SPDX-License-Identifier: MIT
/*
 * cprof-bpf: sample every CPU, write one pprof profile per process.
 *
 * main.c drives the loop (options.c reads the command line): poll process
 * events, drain the BPF maps every second, and at the end symbolize and
 * write.  All run-wide state lives here.
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
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "fdlru.h"
#include "objcache.h"
#include "options.h"
#include "output.h"
#include "proctab.h"
#include "rootfs.h"
#include "sampler.h"
#include "stackstore.h"
#include "tables.h"
#include "window.h"

/*
 * Left for what is opened for a moment (maps, kallsyms, a profile being
 * written, debug files, DWARF) beside what the run already holds.
 */
#define FD_RESERVE 64
#define MAX_ROOTS 1024

/* What the windows of a run wrote, for the summary. */
struct totals {
	size_t windows, files, failed;
	struct symbolizer_stats sym; /* of the last window */
	uint64_t samples, lost;
	double sampled_s, write_s; /* write_s: of the last window */
};

/* Everything one run accumulates. */
struct run {
	struct outdir out;
	struct fdlru lru;            /* objects' and perf maps' descriptors */
	struct rootfs_roots *roots;  /* processes' root directories */
	struct proctab procs;
	struct stackstore stacks;
	struct objcache *objs;
	struct tables *tables; /* NULL: frame pointers only */
	struct sampler *sampler;
	bool python;                 /* Python frames wanted */
	struct py_stats py;
	uint64_t samples_drained;
	int drain_error;
	char drain_errmsg[ERRBUF_LEN];
};

static volatile sig_atomic_t stop_signal;
static bool verbose;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static int libbpf_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (!verbose && level != LIBBPF_WARN)
		return 0;
	if (!verbose)
		return 0; /* warnings resurface as our own one-line errors */
	return vfprintf(stderr, fmt, ap);
}

static double now_s(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Finds the CPython of a process not known to run one, and tells BPF of it. */
static void python_attach(struct run *r, struct process *p)
{
	struct cprof_py_proc bpf;
	struct errbuf err = { "" };
	int ret;

	if (!r->python || p->py || !p->have_maps || p->exited)
		return;
	ret = pyproc_find(&p->py, p->pid, &p->maps, p->objs, &r->py, &err);
	if (ret == 0) {
		pyproc_bpf(p->py, p->gen, &bpf);
		sampler_set_python(r->sampler, p->pid, &bpf);
	} else if (ret != -ENOENT && verbose) {
		fprintf(stderr, PROG ": pid %u: %s\n", p->pid, err.msg);
	}
}

/* The record of one process image, made (and given its tables) on first use. */
static struct process *process_of(struct run *r, uint32_t pid, uint64_t gen, const char *comm,
				  bool *created_out)
{
	bool created = false;
	struct process *p = proctab_get(&r->procs, pid, gen, comm, &created);

	/* Python first: its frames need no table, and a short run is short. */
	if (p && created)
		python_attach(r, p);
	if (p && created && r->tables)
		tables_add_process(r->tables, p, NULL);
	if (created_out)
		*created_out = created;
	return p;
}

/* Reads a live process's mappings again, and its unwind tables with them. */
static void refresh_process(struct run *r, struct process *p, enum proctab_refresh_why why)
{
	if (p && !p->exited &&
	    proctab_refresh(&r->procs, p, now_s(CLOCK_MONOTONIC), why) == 0) {
		python_attach(r, p);
		if (r->tables)
			tables_add_process(r->tables, p, NULL);
	}
}

/* Before a window is written: the refreshes the backoff deferred. */
static void refresh_deferred(struct run *r)
{
	size_t n;
	struct process **list = proctab_list(&r->procs, &n);

	for (size_t i = 0; list && i < n; i++)
		if (list[i]->refresh_pending && proctab_find(&r->procs, list[i]->pid) == list[i])
			refresh_process(r, list[i], REFRESH_DEFERRED);
	free(list);
}

static int on_event(void *ctx, const struct cprof_event *ev)
{
	struct run *r = ctx;
	char comm[CPROF_COMM_LEN + 1];
	struct process *p;
	bool created;

	memcpy(comm, ev->comm, CPROF_COMM_LEN);
	comm[CPROF_COMM_LEN] = '\0';
	switch (ev->type) {
	case CPROF_EV_NEW_PROC:
		process_of(r, ev->pid, ev->gen, comm, NULL);
		break;
	case CPROF_EV_EXEC:
		/*
		 * An image first sampled inside its execve keeps its
		 * generation: the mappings read then may predate the new ones.
		 */
		p = process_of(r, ev->pid, ev->gen, comm, &created);
		if (!created)
			refresh_process(r, p, REFRESH_EXEC);
		break;
	case CPROF_EV_NEW_CODE:
		refresh_process(r, proctab_find(&r->procs, ev->pid), REFRESH_NEW_CODE);
		break;
	case CPROF_EV_EXIT:
		p = proctab_find(&r->procs, ev->pid);
		proctab_exited(&r->procs, ev->pid, ev->gen);
		if (r->tables && p && p->gen == ev->gen)
			tables_remove_process(r->tables, ev->pid);
		if (p && p->py && p->gen == ev->gen)
			sampler_set_python(r->sampler, ev->pid, NULL);
		break;
	case CPROF_EV_PY_CODE:
		p = proctab_find(&r->procs, ev->pid);
		if (p && p->py && p->gen == ev->gen)
			pyproc_read_code(p->py, ev->pid, ev->addr);
		break;
	}
	return 0;
}

static int on_stack(void *ctx, uint64_t hash, const struct cprof_stack *st)
{
	struct run *r = ctx;
	uint32_t nr = st->nr < CPROF_MAX_FRAMES ? st->nr : CPROF_MAX_FRAMES;

	return stackstore_add(&r->stacks, hash, (const uint64_t *)st->ip, nr, st->status);
}

static int on_sample_count(void *ctx, const struct cprof_sample_key *k, uint64_t count)
{
	struct run *r = ctx;
	struct process *p;
	char comm[CPROF_COMM_LEN];

	/* The thread's name stands in for the process's if it is unknown. */
	memcpy(comm, k->comm, sizeof(comm));
	comm[sizeof(comm) - 1] = '\0';
	p = process_of(r, k->pid, k->gen, NULL, NULL);
	if (p && !p->comm[0])
		memcpy(p->comm, comm, sizeof(comm));
	if (!p)
		return -ENOMEM;
	r->samples_drained += count;
	if (p->py)
		py_stats_sample(&r->py, k->pystack, count);
	return agg_add(&p->samples, k, count);
}

/* Lost counts are per pid: they go to its current image. */
static int on_lost(void *ctx, uint32_t pid, const struct cprof_lost *l)
{
	struct run *r = ctx;
	struct process *p = proctab_find(&r->procs, pid);

	if (!p)
		p = process_of(r, pid, 0, NULL, NULL);
	if (!p)
		return -ENOMEM;
	agg_add_lost(&p->samples, l);
	return 0;
}

static const struct sampler_drain_ops drain_ops = {
	.stack = on_stack,
	.sample = on_sample_count,
	.lost = on_lost,
};

static void drain(struct sampler *s, struct run *r)
{
	struct errbuf err = { "" };
	int ret;

	/* Announce new processes before their samples arrive. */
	sampler_poll(s, 0, on_event, r);
	ret = sampler_drain(s, &drain_ops, r, &err);
	if (ret && !r->drain_error) {
		r->drain_error = ret;
		snprintf(r->drain_errmsg, sizeof(r->drain_errmsg), "%s", err.msg);
	}
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
				tables_remove_process(r->tables, p->pid);
			if (p->py)
				sampler_set_python(r->sampler, p->pid, NULL);
		}
		if (p->exited)
			sampler_forget(r->sampler, p->pid, p->gen);
	}
	free(list);
}

/*
 * Writes the window that started at @start_ns (Unix) and @start (monotonic),
 * then starts a new one: records of exited processes are freed, the other
 * processes start again from zero, and so does the stack store.
 */
static void end_window(struct run *r, const struct options *o, int64_t start_ns, double start,
		       struct totals *tot)
{
	struct window_result res;
	double stop = now_s(CLOCK_MONOTONIC);
	const struct window_opts wo = {
		.out = &r->out,
		.stamped = o->interval > 0,
		.frequency = o->frequency,
		.debug_root = "/usr/lib/debug",
		.addresses_only = !o->symbolize,
		.dwarf_max_bytes = (uint64_t)o->dwarf_kb * 1024,
		.symbol_max_bytes = (uint64_t)o->symbol_kb * 1024,
		.report = report_line,
		.verbose = o->verbose,
	};
	struct errbuf err = { "" };

	refresh_deferred(r);
	window_write(&r->procs, &r->stacks, &wo, start_ns, (int64_t)((stop - start) * 1e9), &res);
	tot->windows++;
	tot->files += res.files;
	tot->failed += res.failed;
	tot->samples += res.samples;
	tot->lost += res.lost;
	tot->sym = res.sym;
	tot->write_s = now_s(CLOCK_MONOTONIC) - stop;
	if (o->keep && outdir_prune(&r->out, o->keep, &err) < 0)
		fprintf(stderr, PROG ": --keep: %s\n", err.msg);
	retire_exits(r);
	proctab_end_window(&r->procs);
	stackstore_free(&r->stacks);
	stackstore_init(&r->stacks);
	if (r->tables)
		tables_prune(r->tables);
	/* What the window freed goes back to the system, so RSS stays flat. */
	malloc_trim(0);
}

/*
 * Samples until the duration is over or a signal comes, draining every
 * second and, in continuous mode, writing a window every interval.  The
 * last (possibly partial) window is always written.
 */
static void run_loop(struct sampler *s, struct run *r, const struct options *o,
		     struct totals *tot)
{
	double start = now_s(CLOCK_MONOTONIC), next_drain = start + 1;
	double end = o->duration ? start + o->duration : 0;
	double win_start = start;
	int64_t win_start_ns = unix_ns();
	bool tty = isatty(STDERR_FILENO);

	while (!stop_signal) {
		double t = now_s(CLOCK_MONOTONIC);

		if (end && t >= end)
			break;
		if (t >= next_drain) {
			drain(s, r);
			next_drain += 1;
			if (tty && end)
				fprintf(stderr, "\r" PROG ": sampling, %.0f s left, %llu samples  ",
					end - t, (unsigned long long)r->samples_drained);
		}
		if (o->interval && t >= win_start + o->interval) {
			drain(s, r);
			end_window(r, o, win_start_ns, win_start, tot);
			win_start += o->interval;
			win_start_ns += (int64_t)o->interval * 1000000000LL;
			if (tty)
				fprintf(stderr, "\r" PROG ": window %zu written: %zu files  ",
					tot->windows, tot->files);
		}
		sampler_poll(s, 100, on_event, r);
	}
	if (tty)
		fprintf(stderr, "\r\033[K");
	tot->sampled_s = now_s(CLOCK_MONOTONIC) - start;
	sampler_stop(s);
	/* Both pairs may hold samples now: drain each once. */
	drain(s, r);
	drain(s, r);
	end_window(r, o, win_start_ns, win_start, tot);
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

/* The bounds on what processes can make the agent hold, where they were hit. */
static void print_bounds(const struct run *r)
{
	static const char *const why[REFUSED_MAX] = {
		[REFUSED_NOT_REGULAR] = "not a regular file",
		[REFUSED_NOT_MAPPED] = "not the mapped file",
		[REFUSED_DELETED] = "deleted (map_files unusable)",
		[REFUSED_NO_OPENAT2] = "no openat2 in this kernel",
		[REFUSED_NO_ROOT] = "no root held (map_files unusable)",
		[REFUSED_OTHER] = "gone or unreadable",
	};
	const struct proctab_stats *ps = &r->procs.st;
	struct rootfs_roots_stats rs;
	struct objcache_stats os;
	char line[512];
	size_t len = 0, refused = 0;

	objcache_get_stats(r->objs, &os);
	rootfs_roots_stats(r->roots, &rs);
	if (r->lru.st.evicted)
		fprintf(stderr,
			PROG ": open files: the bound of %zu (--max-files) was hit: %zu closed,"
			" %zu reopened, %zu could not be\n",
			r->lru.max, r->lru.st.evicted, os.reopened, os.reopen_failed);
	if (rs.refused)
		fprintf(stderr, PROG ": process roots: the bound of %zu was hit: %zu processes"
			" without one (reached through map_files only)\n", rs.max, rs.refused);
	for (int i = 0; i < REFUSED_MAX; i++) {
		if (!ps->refused[i])
			continue;
		refused += ps->refused[i];
		len += (size_t)snprintf(line + len, sizeof(line) - len, "%s%zu %s",
					len ? ", " : "", ps->refused[i], why[i]);
		if (len >= sizeof(line))
			len = sizeof(line) - 1;
	}
	if (refused)
		fprintf(stderr, PROG ": mapped files not opened: %s\n", line);
	if (ps->deferred)
		fprintf(stderr,
			PROG ": re-snapshots: %zu taken, %zu deferred (at most one per %.0f-%.0f s"
			" per process after the first %d)\n", ps->refreshes, ps->deferred,
			PROCTAB_REFRESH_GAP_MIN, PROCTAB_REFRESH_GAP_MAX, PROCTAB_REFRESH_FREE);
	if (r->tables) {
		struct tables_stats ts;

		tables_get_stats(r->tables, &ts);
		if (ts.truncated)
			fprintf(stderr,
				PROG ": executable mappings: %zu process snapshots had more than %d;"
				" unwind tables for the first %d only\n",
				ts.truncated, CPROF_MAX_PROC_MAPS, CPROF_MAX_PROC_MAPS);
	}
}

static void print_summary(const struct options *o, struct sampler *s, struct run *r,
			  const struct totals *sum)
{
	struct cprof_stats st;
	char line[512];

	if (sampler_stats(s, &st))
		memset(&st, 0, sizeof(st));
	fprintf(stderr,
		PROG ": sampled %.1f s at %u Hz on %d CPUs: %llu samples of %zu processes\n",
		sum->sampled_s, o->frequency, sampler_ncpus(s), (unsigned long long)st.samples,
		r->procs.created);
	fprintf(stderr,
		PROG ": lost %llu samples (counts map full: %llu, no room to count: %llu);"
		" process events dropped: %llu\n",
		(unsigned long long)(sum->lost + st.lost_no_pidmap), (unsigned long long)sum->lost,
		(unsigned long long)st.lost_no_pidmap, (unsigned long long)st.events_dropped);
	if (o->interval)
		fprintf(stderr, PROG ": wrote %zu windows, %zu profiles (%llu samples) to %s;"
			" the last in %.3f s%s\n",
			sum->windows, sum->files, (unsigned long long)sum->samples, o->output_dir,
			sum->write_s, sum->failed ? ", some failed (see above)" : "");
	else
		fprintf(stderr, PROG ": wrote %zu profiles (%llu samples) to %s in %.3f s%s\n",
			sum->files, (unsigned long long)sum->samples, o->output_dir, sum->write_s,
			sum->failed ? ", some failed (see above)" : "");
	if (sum->sym.dwarf_too_big)
		fprintf(stderr,
			PROG ": %zu object%s named without source lines: DWARF over"
			" --dwarf-memory (%lu%s)%s\n",
			sum->sym.dwarf_too_big, sum->sym.dwarf_too_big == 1 ? "" : "s",
			o->dwarf_kb % 1024 ? o->dwarf_kb : o->dwarf_kb / 1024,
			o->dwarf_kb % 1024 ? "K" : "M", o->verbose ? "" : "; -v names them");
	if (sum->sym.dwarf_failed)
		fprintf(stderr,
			PROG ": %zu object%s named without source lines: the sandboxed DWARF reader"
			" crashed, hung or hit its limits on them%s\n",
			sum->sym.dwarf_failed, sum->sym.dwarf_failed == 1 ? "" : "s",
			o->verbose ? "" : "; -v names them");
	if (sum->sym.symbols_over || sum->sym.names_dropped)
		fprintf(stderr,
			PROG ": symbol memory over --symbol-memory (%lu%s): %zu object%s without"
			" function names, %zu names dropped; peak %llu KB\n",
			o->symbol_kb % 1024 ? o->symbol_kb : o->symbol_kb / 1024,
			o->symbol_kb % 1024 ? "K" : "M", sum->sym.symbols_over,
			sum->sym.symbols_over == 1 ? "" : "s", sum->sym.names_dropped,
			(unsigned long long)(sum->sym.symbol_peak / 1024));
	if (r->tables) {
		struct tables_stats ts;
		uint64_t stopped = 0;

		tables_get_stats(r->tables, &ts);
		for (int i = 1; i < CPROF_UNWIND_STATUS_MAX; i++)
			stopped += st.unwind_status[i];
		fprintf(stderr,
			PROG ": unwind: %llu stacks by CFI (%llu stopped early: truncated %llu,"
			" read failed %llu, no CFI %llu, bad CFA %llu), %llu by frame pointers only\n",
			(unsigned long long)st.unwind_dwarf, (unsigned long long)stopped,
			(unsigned long long)st.unwind_status[CPROF_UNWIND_TRUNCATED],
			(unsigned long long)st.unwind_status[CPROF_UNWIND_READ],
			(unsigned long long)st.unwind_status[CPROF_UNWIND_NO_ROW],
			(unsigned long long)st.unwind_status[CPROF_UNWIND_BAD_CFA],
			(unsigned long long)st.unwind_fp_only);
		fprintf(stderr,
			PROG ": unwind tables: %zu built in %.3f s, %zu failed, %zu without room,"
			" %zu evicted; peak %.1f of %.1f MB (%llu rows)\n",
			ts.built, ts.build_seconds, ts.failed, ts.no_room, ts.evicted,
			ts.rows_peak * sizeof(struct cprof_unwind_row) / 1048576.0,
			ts.rows_capacity * sizeof(struct cprof_unwind_row) / 1048576.0,
			(unsigned long long)ts.rows_peak);
	}
	if (py_stats_line(&r->py, line, sizeof(line)))
		fprintf(stderr, PROG ": %s\n", line);
	print_bounds(r);
	if (r->drain_error)
		fprintf(stderr, PROG ": %s\n", r->drain_errmsg);
}

int main(int argc, char **argv)
{
	struct sampler_opts sopts;
	struct totals sum = { 0 };
	struct sampler *s = NULL;
	struct elfobj *vdso;
	struct options o;
	struct errbuf err = { "" };
	struct run r;
	size_t max_files, max_roots;
	int ret;

	ret = options_parse(argc, argv, &o);
	if (ret)
		return ret > 0 ? 0 : 2;
	verbose = o.verbose;
	libbpf_set_print(libbpf_log);

	/* Fail before sampling if the results could not be written. */
	memset(&r, 0, sizeof(r));
	ret = outdir_open(&r.out, o.output_dir, o.file_mode, o.keep > 0, &err);
	if (ret < 0) {
		fprintf(stderr, PROG ": %s\n", err.msg);
		return 1;
	}

	sopts = (struct sampler_opts){
		.frequency = o.frequency,
		.kernel_stacks = o.kernel,
		.python_stacks = o.python,
		.pids = o.n_pids ? o.pids : NULL,
		.n_pids = o.n_pids,
		.comms = o.comms,
		.n_comms = o.n_comms,
		.cgroups = o.cgroup_ids,
		.n_cgroups = o.n_cgroups,
		.counts_max = o.counts_max,
		.unwind_rows = o.dwarf ? (uint32_t)((uint64_t)o.unwind_kb * 1024 /
						    sizeof(struct cprof_unwind_row)) : 0,
	};
	ret = sampler_open(&s, &sopts, &err);
	if (ret) {
		fprintf(stderr, PROG ": %s\n", err.msg);
		outdir_close(&r.out);
		return 1;
	}

	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	r.sampler = s;
	r.python = o.python;
	vdso = open_vdso();
	fd_budget(o.max_files, &max_files, &max_roots);
	fdlru_init(&r.lru, max_files);
	r.objs = objcache_new();
	if (!r.objs || rootfs_roots_new(&r.roots, max_roots)) {
		fprintf(stderr, PROG ": out of memory\n");
		return 1;
	}
	objcache_set_lru(r.objs, &r.lru, r.roots);
	stackstore_init(&r.stacks);
	proctab_init(&r.procs, r.objs, vdso, "/proc", r.roots, &r.lru);
	if (o.dwarf) {
		struct tables_maps tm = {
			.write_rows = sampler_write_rows,
			.retire = sampler_retire_rows,
			.set_proc = sampler_set_proc,
			.ctx = s,
		};

		if (sampler_unwind_rows(s, &tm.capacity) ||
		    tables_new(&r.tables, &tm, r.objs)) {
			fprintf(stderr, PROG ": cannot set up unwind tables\n");
			return 1;
		}
	}

	if (isatty(STDERR_FILENO))
		fprintf(stderr, PROG ": sampling %s at %u Hz %s (Ctrl-C to stop%s)\n",
			o.n_pids || o.n_comms || o.n_cgroups ? "the chosen processes" :
								 "all processes",
			o.frequency, o.duration ? "for a while" : "until stopped",
			o.duration ? " early" : "");
	run_loop(s, &r, &o, &sum);
	print_summary(&o, s, &r, &sum);

	sampler_close(s);
	tables_free(r.tables);
	proctab_free(&r.procs);
	stackstore_free(&r.stacks);
	objcache_free(r.objs);
	rootfs_roots_free(r.roots);
	elfobj_free(vdso);
	outdir_close(&r.out);
	return sum.failed ? 1 : 0;
}
