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

#include "cgroup.h"
#include "dwarfinfo.h"
#include "kallsyms.h"
#include "objcache.h"
#include "output.h"
#include "proctab.h"
#include "profile.h"
#include "sampler.h"
#include "stackstore.h"
#include "symbolize.h"
#include "tables.h"
#include "window.h"

#define PROG "cprof-bpf"
#define MAX_PIDS 1024
#define MAX_COMMS 64
#define MAX_CGROUPS 64
#define MAX_FREQUENCY 20000
#define MAX_DURATION (365 * 24 * 3600)
#define MAX_UNWIND_KB (4096UL * 1024)

struct options {
	unsigned int duration; /* seconds; 0: until a signal (with --interval) */
	unsigned int interval; /* seconds per window; 0: one window */
	unsigned int keep;     /* windows kept on disk; 0: all */
	const char *comms[MAX_COMMS];
	size_t n_comms;
	const char *cgroups[MAX_CGROUPS];
	uint64_t cgroup_ids[MAX_CGROUPS];
	size_t n_cgroups;
	unsigned int frequency;
	const char *output_dir;
	uint32_t pids[MAX_PIDS];
	size_t n_pids;
	bool kernel;
	bool symbolize;           /* name user frames here (--symbolize=host) */
	bool verbose;
	bool dwarf;               /* unwind user stacks with CFI tables */
	unsigned long unwind_kb;  /* budget of the rows array */
	unsigned long dwarf_kb;   /* most DWARF one object may load for lines */
	unsigned long symbol_kb;  /* symbol tables and names held at once */
	unsigned int counts_max;  /* entries per counts map (0: default) */
};

/* What the windows of a run wrote, for the summary. */
struct totals {
	size_t windows, files, failed;
	struct symbolizer_stats sym; /* of the last window */
	uint64_t samples, lost;
	double sampled_s, write_s; /* write_s: of the last window */
};

/* Everything one run accumulates. */
struct run {
	int dirfd;
	struct proctab procs;
	struct stackstore stacks;
	struct objcache *objs;
	struct tables *tables; /* NULL: frame pointers only */
	struct sampler *sampler;
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
		"  -d, --duration SECS    sample for SECS seconds (default 30; 0 with\n"
		"                         --interval: until SIGINT/SIGTERM)\n"
		"  -i, --interval SECS    continuous mode: write a complete set of profiles\n"
		"                         every SECS seconds, each file prefixed with its\n"
		"                         window's UTC start time (YYYYmmddTHHMMSSZ-)\n"
		"      --keep N           with --interval, keep only the N newest windows\n"
		"  -F, --frequency HZ     samples per second per CPU (default 99, max %d)\n"
		"  -o, --output-dir DIR   where to write profiles (default ./cprof-out)\n"
		"  -p, --pid PID          only this process; repeat or comma-separate\n"
		"      --comm NAME        only processes named NAME (as in /proc/PID/comm)\n"
		"      --cgroup PATH      only processes in this cgroup (v2) or below it: its\n"
		"                         directory, or its path as in /proc/PID/cgroup\n"
		"                         Filters of different kinds must all match.\n"
		"      --no-kernel        leave out kernel frames\n"
		"      --symbolize MODE   'host' (default): name user frames here, with source\n"
		"                         lines and inlined calls where there is DWARF;\n"
		"                         'none': addresses, mappings and build IDs only, for\n"
		"                         pprof to symbolize later (PPROF_BINARY_PATH); kernel\n"
		"                         and JIT frames are named either way\n"
		"      --unwind MODE      user stacks by 'dwarf' CFI tables, falling back to\n"
		"                         frame pointers where there are none (default), or\n"
		"                         by 'fp' frame pointers only\n"
		"      --unwind-memory SIZE  memory for unwind tables in BPF maps, in MB or\n"
		"                         with a K/M/G suffix (default 16M); least recently\n"
		"                         used tables are evicted beyond it\n"
		"      --dwarf-memory SIZE  most memory one object's DWARF may take to give\n"
		"                         source lines and inlined calls (default 8M, max\n"
		"                         512M); bigger ones get function names only\n"
		"      --symbol-memory SIZE  most memory symbol tables and the names kept\n"
		"                         for sampled addresses may take at once, across\n"
		"                         objects (default 32M); frames past it stay unnamed\n"
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

/*
 * The id of a cgroup v2 directory is its inode number.  Accepts the
 * directory itself or its path below the cgroup2 mount, as
 * /proc/PID/cgroup shows it.
 */
static int cgroup_id_of(const char *path, uint64_t *id)
{
	char full[PATH_MAX], root[PATH_MAX / 2];
	size_t rl;
	struct stat st;

	if (cgroup_v2_mount(root, sizeof(root))) {
		fprintf(stderr, PROG ": --cgroup: no cgroup v2 hierarchy is mounted\n");
		return -1;
	}
	rl = strlen(root);
	if (!strncmp(path, root, rl) && (path[rl] == '/' || path[rl] == '\0'))
		snprintf(full, sizeof(full), "%s", path);
	else
		snprintf(full, sizeof(full), "%s%s%s", root, path[0] == '/' ? "" : "/", path);
	if (stat(full, &st)) {
		fprintf(stderr, PROG ": --cgroup: %s: %s\n", full, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		fprintf(stderr, PROG ": --cgroup: %s: not a cgroup directory\n", full);
		return -1;
	}
	*id = st.st_ino;
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
	enum {
		OPT_NO_KERNEL = 256,
		OPT_UNWIND,
		OPT_UNWIND_MEMORY,
		OPT_COUNTS_MAX,
		OPT_KEEP,
		OPT_COMM,
		OPT_CGROUP,
		OPT_SYMBOLIZE,
		OPT_DWARF_MEMORY,
		OPT_SYMBOL_MEMORY,
	};
	static const struct option longopts[] = {
		{ "duration", required_argument, NULL, 'd' },
		{ "interval", required_argument, NULL, 'i' },
		{ "keep", required_argument, NULL, OPT_KEEP },
		{ "comm", required_argument, NULL, OPT_COMM },
		{ "cgroup", required_argument, NULL, OPT_CGROUP },
		{ "frequency", required_argument, NULL, 'F' },
		{ "output-dir", required_argument, NULL, 'o' },
		{ "pid", required_argument, NULL, 'p' },
		{ "no-kernel", no_argument, NULL, OPT_NO_KERNEL },
		{ "symbolize", required_argument, NULL, OPT_SYMBOLIZE },
		{ "unwind", required_argument, NULL, OPT_UNWIND },
		{ "unwind-memory", required_argument, NULL, OPT_UNWIND_MEMORY },
		{ "dwarf-memory", required_argument, NULL, OPT_DWARF_MEMORY },
		{ "symbol-memory", required_argument, NULL, OPT_SYMBOL_MEMORY },
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
		.symbolize = true,
		.dwarf = true,
		.unwind_kb = 16 * 1024,
		/*
		 * libdw holds an object's debug sections decompressed, and
		 * more: 8 MB of them took 10.6 MB.  This keeps the agent's
		 * peak under 16 MB; libc6-dbg's libc (8.6 MB) is over it.
		 */
		.dwarf_kb = 8 * 1024,
		.symbol_kb = SYMBOLIZE_SYMBOL_MEMORY / 1024,
	};
	while ((c = getopt_long(argc, argv, "d:i:F:o:p:vhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			if (parse_uint(optarg, 0, MAX_DURATION, &v)) {
				fprintf(stderr, PROG ": --duration: '%s' is not a number of seconds (0-%d)\n",
					optarg, MAX_DURATION);
				return -1;
			}
			o->duration = (unsigned int)v;
			break;
		case 'i':
			if (parse_uint(optarg, 1, MAX_DURATION, &v)) {
				fprintf(stderr, PROG ": --interval: '%s' is not a number of seconds (1-%d)\n",
					optarg, MAX_DURATION);
				return -1;
			}
			o->interval = (unsigned int)v;
			break;
		case OPT_KEEP:
			if (parse_uint(optarg, 1, 1000000, &v)) {
				fprintf(stderr, PROG ": --keep: '%s' is not a number of windows\n", optarg);
				return -1;
			}
			o->keep = (unsigned int)v;
			break;
		case OPT_COMM:
			if (!*optarg || strlen(optarg) >= CPROF_COMM_LEN || o->n_comms == MAX_COMMS) {
				fprintf(stderr, PROG ": --comm: '%s' must be 1-%d characters (at most %d names)\n",
					optarg, CPROF_COMM_LEN - 1, MAX_COMMS);
				return -1;
			}
			o->comms[o->n_comms++] = optarg;
			break;
		case OPT_CGROUP:
			if (!*optarg || o->n_cgroups == MAX_CGROUPS) {
				fprintf(stderr, PROG ": --cgroup: empty path or more than %d\n", MAX_CGROUPS);
				return -1;
			}
			if (cgroup_id_of(optarg, &o->cgroup_ids[o->n_cgroups]))
				return -1;
			o->cgroups[o->n_cgroups++] = optarg;
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
		case OPT_SYMBOLIZE:
			if (strcmp(optarg, "host") && strcmp(optarg, "none")) {
				fprintf(stderr, PROG ": --symbolize: '%s' is not 'host' or 'none'\n",
					optarg);
				return -1;
			}
			o->symbolize = !strcmp(optarg, "host");
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
		case OPT_DWARF_MEMORY:
			if (parse_size_kb(optarg, &v) || v < 64 || v > DWARFINFO_MAX_BYTES / 1024) {
				fprintf(stderr,
					PROG ": --dwarf-memory: '%s' is not a size from 64K to 512M\n",
					optarg);
				return -1;
			}
			o->dwarf_kb = v;
			break;
		case OPT_SYMBOL_MEMORY:
			if (parse_size_kb(optarg, &v) || v < 64 || v > MAX_UNWIND_KB) {
				fprintf(stderr,
					PROG ": --symbol-memory: '%s' is not a size from 64K to 4G\n",
					optarg);
				return -1;
			}
			o->symbol_kb = v;
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
	if (o->duration == 0 && !o->interval) {
		fprintf(stderr, PROG ": --duration 0 (run until stopped) needs --interval\n");
		return -1;
	}
	if (o->keep && !o->interval) {
		fprintf(stderr, PROG ": --keep needs --interval\n");
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

/* The record of one process image, made (and given its tables) on first use. */
static struct process *process_of(struct run *r, uint32_t pid, uint64_t gen, const char *comm,
				  bool *created_out)
{
	bool created = false;
	struct process *p = proctab_get(&r->procs, pid, gen, comm, &created);

	if (p && created && r->tables)
		tables_add_process(r->tables, p, NULL);
	if (created_out)
		*created_out = created;
	return p;
}

/* Reads a live process's mappings again, and its unwind tables with them. */
static void refresh_process(struct run *r, struct process *p)
{
	if (p && !p->exited && proctab_refresh(&r->procs, p) == 0 && r->tables)
		tables_add_process(r->tables, p, NULL);
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
			refresh_process(r, p);
		break;
	case CPROF_EV_NEW_CODE:
		refresh_process(r, proctab_find(&r->procs, ev->pid));
		break;
	case CPROF_EV_EXIT:
		p = proctab_find(&r->procs, ev->pid);
		proctab_exited(&r->procs, ev->pid, ev->gen);
		if (r->tables && p && p->gen == ev->gen)
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
		.dirfd = r->dirfd,
		.stamped = o->interval > 0,
		.frequency = o->frequency,
		.debug_root = "/usr/lib/debug",
		.proc_root = "/proc",
		.addresses_only = !o->symbolize,
		.dwarf_max_bytes = (uint64_t)o->dwarf_kb * 1024,
		.symbol_max_bytes = (uint64_t)o->symbol_kb * 1024,
		.report = report_line,
		.verbose = o->verbose,
	};
	struct errbuf err = { "" };

	window_write(&r->procs, &r->stacks, &wo, start_ns, (int64_t)((stop - start) * 1e9), &res);
	tot->windows++;
	tot->files += res.files;
	tot->failed += res.failed;
	tot->samples += res.samples;
	tot->lost += res.lost;
	tot->sym = res.sym;
	tot->write_s = now_s(CLOCK_MONOTONIC) - stop;
	if (o->keep && output_prune_windows(r->dirfd, o->keep, &err) < 0)
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
			  const struct totals *sum)
{
	struct cprof_stats st;

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
	int dirfd, ret;

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
		close(dirfd);
		return 1;
	}

	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	memset(&r, 0, sizeof(r));
	r.dirfd = dirfd;
	r.sampler = s;
	r.objs = objcache_new();
	vdso = open_vdso();
	stackstore_init(&r.stacks);
	proctab_init(&r.procs, r.objs, vdso, "/proc");
	if (!r.objs) {
		fprintf(stderr, PROG ": out of memory\n");
		return 1;
	}
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
	elfobj_free(vdso);
	close(dirfd);
	return sum.failed ? 1 : 0;
}
