// SPDX-License-Identifier: MIT
/*
 * cprof-bpf: sample every CPU, write one pprof profile per process.
 *
 * main.c parses options and drives the loop: poll process events, drain the
 * BPF maps every second, and at the end symbolize and write.  All run-wide
 * state lives here.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
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

#include "kallsyms.h"
#include "objcache.h"
#include "output.h"
#include "proctab.h"
#include "profile.h"
#include "sampler.h"
#include "stackstore.h"
#include "symbolize.h"
#include "tables.h"

#define PROG "cprof-bpf"
#define MAX_PIDS 1024
#define MAX_FREQUENCY 20000
#define MAX_DURATION (365 * 24 * 3600)
#define MAX_UNWIND_KB (4096UL * 1024)

struct options {
	unsigned int duration; /* seconds */
	unsigned int frequency;
	const char *output_dir;
	uint32_t pids[MAX_PIDS];
	size_t n_pids;
	bool kernel;
	bool verbose;
	bool dwarf;               /* unwind user stacks with CFI tables */
	unsigned long unwind_kb;  /* budget of the rows array */
	unsigned int counts_max;  /* entries per counts map (0: default) */
};

/* Everything one run accumulates. */
struct run {
	struct proctab procs;
	struct stackstore stacks;
	struct objcache *objs;
	struct tables *tables; /* NULL: frame pointers only */
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

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: " PROG " [OPTIONS]\n"
		"Sample the CPU stacks of every process on this host and write one\n"
		"gzipped pprof profile per process: <output-dir>/<comm>-<pid>.pb.gz\n"
		"\n"
		"  -d, --duration SECS    sample for SECS seconds (default 30)\n"
		"  -F, --frequency HZ     samples per second per CPU (default 99, max %d)\n"
		"  -o, --output-dir DIR   where to write profiles (default ./cprof-out)\n"
		"  -p, --pid PID          only this process; repeat or comma-separate\n"
		"      --no-kernel        leave out kernel frames\n"
		"      --unwind MODE      user stacks by 'dwarf' CFI tables, falling back to\n"
		"                         frame pointers where there are none (default), or\n"
		"                         by 'fp' frame pointers only\n"
		"      --unwind-memory SIZE  memory for unwind tables in BPF maps, in MB or\n"
		"                         with a K/M/G suffix (default 16M); least recently\n"
		"                         used tables are evicted beyond it\n"
		"      --counts-max N     distinct stacks counted per drain (default %d);\n"
		"                         samples beyond it show as [lost samples]\n"
		"  -v, --verbose          show libbpf and per-process diagnostics\n"
		"  -h, --help             show this help\n"
		"  -V, --version          show the version\n"
		"\n"
		"SIGINT or SIGTERM ends sampling early; every profile is still written.\n"
		"Read the files with `go tool pprof -top FILE` or `go tool pprof -http=: FILE`.\n"
		"Needs root (CAP_BPF and CAP_PERFMON) and a kernel with BTF.\n",
		MAX_FREQUENCY, CPROF_COUNTS_MAX);
}

static int parse_uint(const char *s, unsigned long min, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/* "16" (MB), "512K", "16M", "1G" -> KB. */
static int parse_size_kb(const char *s, unsigned long *kb)
{
	static const struct {
		char suffix;
		unsigned long kb;
	} units[] = { { 'K', 1 }, { 'M', 1024 }, { 'G', 1024 * 1024 } };
	char num[32];
	unsigned long mult = 1024, v;
	size_t len = strlen(s);

	if (!len || len >= sizeof(num))
		return -EINVAL;
	memcpy(num, s, len + 1);
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (num[len - 1] == units[i].suffix ||
		    num[len - 1] == units[i].suffix - 'A' + 'a') {
			mult = units[i].kb;
			num[--len] = '\0';
		}
	}
	if (parse_uint(num, 1, MAX_UNWIND_KB, &v) || v > MAX_UNWIND_KB / mult)
		return -EINVAL;
	*kb = v * mult;
	return 0;
}

static int add_pids(struct options *o, const char *arg)
{
	char buf[4096], *save = NULL, *tok;

	if (strlen(arg) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, arg);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		unsigned long pid;
		char path[64];

		if (parse_uint(tok, 1, INT_MAX, &pid)) {
			fprintf(stderr, PROG ": --pid: '%s' is not a process id\n", tok);
			return -EINVAL;
		}
		snprintf(path, sizeof(path), "/proc/%lu", pid);
		if (access(path, F_OK)) {
			fprintf(stderr, PROG ": --pid: no process with pid %lu\n", pid);
			return -ESRCH;
		}
		if (o->n_pids == MAX_PIDS) {
			fprintf(stderr, PROG ": --pid: at most %d processes\n", MAX_PIDS);
			return -E2BIG;
		}
		o->pids[o->n_pids++] = (uint32_t)pid;
	}
	return 0;
}

/* Returns 0 to run, 1 to exit successfully (--help), -1 on a bad option. */
static int parse_options(int argc, char **argv, struct options *o)
{
	enum { OPT_NO_KERNEL = 256, OPT_UNWIND, OPT_UNWIND_MEMORY, OPT_COUNTS_MAX };
	static const struct option longopts[] = {
		{ "duration", required_argument, NULL, 'd' },
		{ "frequency", required_argument, NULL, 'F' },
		{ "output-dir", required_argument, NULL, 'o' },
		{ "pid", required_argument, NULL, 'p' },
		{ "no-kernel", no_argument, NULL, OPT_NO_KERNEL },
		{ "unwind", required_argument, NULL, OPT_UNWIND },
		{ "unwind-memory", required_argument, NULL, OPT_UNWIND_MEMORY },
		{ "counts-max", required_argument, NULL, OPT_COUNTS_MAX },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 },
	};
	unsigned long v;
	int c;

	*o = (struct options){
		.duration = 30,
		.frequency = 99,
		.output_dir = "./cprof-out",
		.kernel = true,
		.dwarf = true,
		.unwind_kb = 16 * 1024,
	};
	while ((c = getopt_long(argc, argv, "d:F:o:p:vhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			if (parse_uint(optarg, 1, MAX_DURATION, &v)) {
				fprintf(stderr, PROG ": --duration: '%s' is not a number of seconds (1-%d)\n",
					optarg, MAX_DURATION);
				return -1;
			}
			o->duration = (unsigned int)v;
			break;
		case 'F':
			if (parse_uint(optarg, 1, MAX_FREQUENCY, &v)) {
				fprintf(stderr, PROG ": --frequency: '%s' is not a rate in Hz (1-%d)\n",
					optarg, MAX_FREQUENCY);
				return -1;
			}
			o->frequency = (unsigned int)v;
			break;
		case 'o':
			if (!*optarg) {
				fprintf(stderr, PROG ": --output-dir: empty path\n");
				return -1;
			}
			o->output_dir = optarg;
			break;
		case 'p':
			if (add_pids(o, optarg))
				return -1;
			break;
		case OPT_NO_KERNEL:
			o->kernel = false;
			break;
		case OPT_UNWIND:
			if (strcmp(optarg, "dwarf") && strcmp(optarg, "fp")) {
				fprintf(stderr, PROG ": --unwind: '%s' is not 'dwarf' or 'fp'\n", optarg);
				return -1;
			}
			o->dwarf = !strcmp(optarg, "dwarf");
			break;
		case OPT_UNWIND_MEMORY:
			if (parse_size_kb(optarg, &v) || v < 64 || v > MAX_UNWIND_KB) {
				fprintf(stderr,
					PROG ": --unwind-memory: '%s' is not a size from 64K to 4G\n",
					optarg);
				return -1;
			}
			o->unwind_kb = v;
			break;
		case OPT_COUNTS_MAX:
			if (parse_uint(optarg, 16, 1 << 22, &v)) {
				fprintf(stderr, PROG ": --counts-max: '%s' is not a count (16-%d)\n",
					optarg, 1 << 22);
				return -1;
			}
			o->counts_max = (unsigned int)v;
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'h':
			usage(stdout);
			return 1;
		case 'V':
			printf(PROG " " CPROF_VERSION "\n");
			return 1;
		default:
			fprintf(stderr, "Try '" PROG " --help'.\n");
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, PROG ": unexpected argument '%s'\nTry '" PROG " --help'.\n",
			argv[optind]);
		return -1;
	}
	return 0;
}

static double now_s(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A process new to us: record it and give the unwinder its tables. */
static struct process *announce(struct run *r, uint32_t pid, uint64_t start_time,
				const char *comm, bool replace)
{
	bool created = false;
	struct process *p = proctab_announce(&r->procs, pid, start_time, comm, replace,
					     &created);

	if (p && created && r->tables)
		tables_add_process(r->tables, p, NULL);
	return p;
}

static int on_event(void *ctx, const struct cprof_event *ev)
{
	struct run *r = ctx;
	char comm[CPROF_COMM_LEN + 1];

	memcpy(comm, ev->comm, CPROF_COMM_LEN);
	comm[CPROF_COMM_LEN] = '\0';
	switch (ev->type) {
	case CPROF_EV_NEW_PROC:
		announce(r, ev->pid, ev->start_time, comm, false);
		break;
	case CPROF_EV_EXEC:
		announce(r, ev->pid, ev->start_time, comm, true);
		break;
	case CPROF_EV_NEW_CODE: {
		struct process *p = proctab_find(&r->procs, ev->pid);

		if (p && !p->exited && proctab_refresh(&r->procs, p) == 0 && r->tables)
			tables_add_process(r->tables, p, NULL);
		break;
	}
	case CPROF_EV_EXIT:
		proctab_exited(&r->procs, ev->pid);
		if (r->tables)
			tables_remove_process(r->tables, ev->pid);
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

/* A process whose event was lost (full ring) is announced by its samples. */
static struct process *process_of(struct run *r, uint32_t pid)
{
	struct process *p = proctab_find(&r->procs, pid);

	return p ? p : announce(r, pid, 0, NULL, false);
}

static int on_sample_count(void *ctx, const struct cprof_sample_key *k, uint64_t count)
{
	struct run *r = ctx;
	struct process *p = process_of(r, k->pid);

	if (!p)
		return -ENOMEM;
	r->samples_drained += count;
	return agg_add(&p->samples, k, count);
}

static int on_lost(void *ctx, uint32_t pid, const struct cprof_lost *l)
{
	struct run *r = ctx;
	struct process *p = process_of(r, pid);

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

/* Samples until the deadline or a signal, draining every second. */
static void sample_loop(struct sampler *s, struct run *r, const struct options *o)
{
	double start = now_s(CLOCK_MONOTONIC), next_drain = start + 1;
	double end = start + o->duration;
	bool tty = isatty(STDERR_FILENO);

	while (!stop_signal) {
		double t = now_s(CLOCK_MONOTONIC);

		if (t >= end)
			break;
		if (t >= next_drain) {
			drain(s, r);
			next_drain += 1;
			if (tty)
				fprintf(stderr, "\r" PROG ": sampling, %.0f s left, %llu samples  ",
					end - t, (unsigned long long)r->samples_drained);
		}
		sampler_poll(s, 100, on_event, r);
	}
	if (tty)
		fprintf(stderr, "\r\033[K");
	sampler_stop(s);
	/* Both pairs may hold samples now: drain each once. */
	drain(s, r);
	drain(s, r);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Collects every kernel frame of every process and names them in one pass. */
static int resolve_kernel(struct run *r, struct process **procs, size_t n,
			  struct ksym_table *out, struct errbuf *err)
{
	uint64_t *addrs = NULL;
	size_t na = 0, cap = 0;
	FILE *f;
	int ret;

	for (size_t i = 0; i < n; i++) {
		struct agg_entry *e;
		size_t it = 0;

		while ((e = hmap_next(&procs[i]->samples.map, &it))) {
			const uint64_t *ip;
			uint32_t nr = 0;

			if (!(e->key.kstack & CPROF_STACK_HASHED))
				continue;
			ip = stackstore_get(&r->stacks, e->key.kstack, &nr, NULL);
			for (uint32_t j = 0; ip && j < nr; j++) {
				if (na == cap) {
					uint64_t *a;

					cap = cap ? cap * 2 : 1024;
					a = realloc(addrs, cap * sizeof(*a));
					if (!a) {
						free(addrs);
						return errf(err, -ENOMEM, "out of memory");
					}
					addrs = a;
				}
				/* the same adjustment profile.c makes */
				addrs[na++] = j > 0 ? ip[j] - 1 : ip[j];
			}
		}
	}
	if (!na) {
		free(addrs);
		return 1; /* nothing to resolve */
	}
	qsort(addrs, na, sizeof(*addrs), cmp_u64);
	f = fopen("/proc/kallsyms", "re");
	if (!f) {
		ret = errf(err, -errno, "/proc/kallsyms: %s", strerror(errno));
	} else {
		ret = kallsyms_resolve(f, addrs, na, out, err);
		fclose(f);
	}
	free(addrs);
	return ret;
}

struct write_summary {
	size_t files, failed;
	uint64_t samples, lost;
};

static void write_all(struct run *r, int dirfd, const struct options *o, int64_t t0_ns,
		      int64_t dur_ns, struct write_summary *sum)
{
	struct ksym_table ksyms = { 0 };
	struct symbolizer sym = {
		.debug_root = "/usr/lib/debug",
		.proc_root = "/proc",
	};
	const struct profile_meta meta = {
		.time_nanos = t0_ns,
		.duration_nanos = dur_ns,
		.period = 1000000000LL / o->frequency,
	};
	struct errbuf err = { "" };
	struct process **procs;
	size_t n;
	int ret;

	procs = proctab_list(&r->procs, &n);
	if (!procs) {
		fprintf(stderr, PROG ": out of memory listing processes\n");
		sum->failed++;
		return;
	}
	ret = resolve_kernel(r, procs, n, &ksyms, &err);
	if (ret == 0)
		sym.ksyms = &ksyms;
	else if (ret < 0)
		fprintf(stderr, PROG ": kernel frames left unnamed: %s\n", err.msg);

	for (size_t i = 0; i < n; i++) {
		struct process *p = procs[i];
		struct profile_stats st;
		char name[64];

		if (!p->samples.samples && !agg_lost_total(&p->samples))
			continue;
		profile_filename(p, name, sizeof(name));
		if (o->verbose && p->maps_error)
			fprintf(stderr, PROG ": %s: no mappings: %s\n", name, p->maps_errmsg);
		ret = profile_write(dirfd, name, p, &r->stacks, &sym, &meta, &st, &err);
		if (ret) {
			fprintf(stderr, PROG ": %s\n", err.msg);
			sum->failed++;
			continue;
		}
		sum->files++;
		sum->samples += st.samples;
		sum->lost += agg_lost_total(&p->samples);
	}
	free(procs);
	kallsyms_free(&ksyms);
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

static void raise_fd_limit(void)
{
	struct rlimit rl;

	/* Objects keep their files open so exited processes still symbolize. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static void print_summary(const struct options *o, struct sampler *s, struct run *r,
			  const struct write_summary *sum, size_t nprocs, double sampled_s,
			  double write_s)
{
	struct cprof_stats st;

	if (sampler_stats(s, &st))
		memset(&st, 0, sizeof(st));
	fprintf(stderr,
		PROG ": sampled %.1f s at %u Hz on %d CPUs: %llu samples of %zu processes\n",
		sampled_s, o->frequency, sampler_ncpus(s), (unsigned long long)st.samples,
		nprocs);
	fprintf(stderr,
		PROG ": lost %llu samples (counts map full: %llu, no room to count: %llu);"
		" process events dropped: %llu\n",
		(unsigned long long)(sum->lost + st.lost_no_pidmap), (unsigned long long)sum->lost,
		(unsigned long long)st.lost_no_pidmap, (unsigned long long)st.events_dropped);
	fprintf(stderr, PROG ": wrote %zu profiles (%llu samples) to %s in %.3f s%s\n",
		sum->files, (unsigned long long)sum->samples, o->output_dir, write_s,
		sum->failed ? ", some failed (see above)" : "");
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
	if (r->drain_error)
		fprintf(stderr, PROG ": %s\n", r->drain_errmsg);
}

int main(int argc, char **argv)
{
	struct sampler_opts sopts;
	struct write_summary sum = { 0 };
	struct sampler *s = NULL;
	struct elfobj *vdso;
	struct options o;
	struct errbuf err = { "" };
	struct run r;
	struct timespec t0;
	double start, stop, done;
	int dirfd, ret;
	size_t nprocs;

	ret = parse_options(argc, argv, &o);
	if (ret)
		return ret > 0 ? 0 : 2;
	verbose = o.verbose;
	libbpf_set_print(libbpf_log);

	/* Fail before sampling if the results could not be written. */
	dirfd = output_open_dir(o.output_dir, &err);
	if (dirfd < 0) {
		fprintf(stderr, PROG ": %s\n", err.msg);
		return 1;
	}
	raise_fd_limit();

	sopts = (struct sampler_opts){
		.frequency = o.frequency,
		.kernel_stacks = o.kernel,
		.pids = o.n_pids ? o.pids : NULL,
		.n_pids = o.n_pids,
		.counts_max = o.counts_max,
		.unwind_rows = o.dwarf ? (uint32_t)((uint64_t)o.unwind_kb * 1024 /
						    sizeof(struct cprof_unwind_row)) : 0,
	};
	ret = sampler_open(&s, &sopts, &err);
	if (ret) {
		fprintf(stderr, PROG ": %s\n", err.msg);
		close(dirfd);
		return 1;
	}

	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	memset(&r, 0, sizeof(r));
	r.objs = objcache_new();
	vdso = open_vdso();
	stackstore_init(&r.stacks);
	proctab_init(&r.procs, r.objs, vdso, "/proc");
	if (!r.objs) {
		fprintf(stderr, PROG ": out of memory\n");
		return 1;
	}
	if (o.dwarf) {
		struct tables_maps tm = { .sync = sampler_sync, .sync_ctx = s };

		if (sampler_unwind_maps(s, &tm.rows, &tm.capacity, &tm.procs_fd) ||
		    tables_new(&r.tables, &tm, r.objs)) {
			fprintf(stderr, PROG ": cannot set up unwind tables\n");
			return 1;
		}
	}

	clock_gettime(CLOCK_REALTIME, &t0);
	start = now_s(CLOCK_MONOTONIC);
	if (isatty(STDERR_FILENO))
		fprintf(stderr, PROG ": sampling %s at %u Hz for %u s (Ctrl-C to stop early)\n",
			o.n_pids ? "the given processes" : "all processes", o.frequency,
			o.duration);
	sample_loop(s, &r, &o);
	stop = now_s(CLOCK_MONOTONIC);

	write_all(&r, dirfd, &o, (int64_t)t0.tv_sec * 1000000000LL + t0.tv_nsec,
		  (int64_t)((stop - start) * 1e9), &sum);
	done = now_s(CLOCK_MONOTONIC);

	nprocs = r.procs.by_pid.n + r.procs.nretired;
	print_summary(&o, s, &r, &sum, nprocs, stop - start, done - stop);

	sampler_close(s);
	tables_free(r.tables);
	proctab_free(&r.procs);
	stackstore_free(&r.stacks);
	objcache_free(r.objs);
	elfobj_free(vdso);
	close(dirfd);
	return sum.failed ? 1 : 0;
}
