// SPDX-License-Identifier: MIT
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cprof.h"
#include "dwarf/dwarfinfo.h"
#include "agent/options.h"
#include "agent/options_host.h"
#include "output/gzfile.h"
#include "output/outdir.h"
#include "symbols/symbolize.h"

#define MAX_FREQUENCY 20000
#define MAX_DURATION (365 * 24 * 3600)
#define MAX_UNWIND_KB (4096UL * 1024)

#define STR_(x) #x
#define STR(x) STR_(x)

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
	OPT_MAX_FILES,
	OPT_FILE_MODE,
	OPT_JSON_SUMMARY,
	OPT_NO_PRIORITY_BOOST,
	OPT_NO_PYTHON,
	OPT_NO_JAVA,
	OPT_NO_NODE,
	OPT_LD_PROBE,
	OPT_OFF_CPU,
	OPT_OFF_CPU_MIN,
	OPT_NO_JITTER,
};

/*
 * Each sets the options of one kind from option @key's @arg: 0, 1 to exit
 * at once (--help), or -1 once it has told why not.
 */
typedef int setter(struct options *o, int key, const char *arg);
static setter set_run, set_filter, set_flag, set_mode, set_memory, set_output, set_info;

/* One option: what getopt needs, what sets it and what --help says of it. */
struct optdef {
	const char *name;
	int key;          /* its short letter, or an OPT_ value when it has none */
	const char *arg;  /* the argument's name in --help; NULL: takes none */
	setter *set;
	const char *help; /* lines separated by '\n' */
};

/* The one list of options: getopt's tables, --help and the parser's dispatch are made from it. */
static const struct optdef optdefs[] = {
	{ "duration", 'd', "SECS", set_run,
	  "sample for SECS seconds (default 30; 0 with\n"
	  "--interval: until SIGINT/SIGTERM)" },
	{ "interval", 'i', "SECS", set_run,
	  "continuous mode: write a complete set of profiles\n"
	  "every SECS seconds, each file prefixed with its\n"
	  "window's UTC start time (YYYYmmddTHHMMSSZ-)" },
	{ "keep", OPT_KEEP, "N", set_run,
	  "with --interval, remove the files this run wrote in\n"
	  "windows older than its N newest (nothing else)" },
	{ "frequency", 'F', "HZ", set_run,
	  "samples per second per CPU (default 99, max " STR(MAX_FREQUENCY) ")" },
	{ "cpu", 'C', "LIST", set_filter,
	  "sample only on these CPUs: a list like 0, 0,2 or\n"
	  "1-3,5 (as taskset -c), each online; --off-cpu\n"
	  "records the waits that begin on them" },
	{ "output-dir", 'o', "DIR", set_output, "where to write profiles (default ./cprof-out)" },
	{ "pid", 'p', "PID", set_filter, "only this process; repeat or comma-separate" },
	{ "comm", OPT_COMM, "NAME", set_filter, "only processes named NAME (as in /proc/PID/comm)" },
	{ "cgroup", OPT_CGROUP, "PATH", set_filter,
	  "only processes in this cgroup (v2) or below it: its\n"
	  "directory, or its path as in /proc/PID/cgroup\n"
	  "Filters of different kinds must all match." },
	{ "no-kernel", OPT_NO_KERNEL, NULL, set_flag, "leave out kernel frames" },
	{ "no-python", OPT_NO_PYTHON, NULL, set_flag,
	  "leave out Python frames (CPython 3.8-3.13 processes\n"
	  "show their Python functions, files and lines by\n"
	  "default)" },
	{ "no-java", OPT_NO_JAVA, NULL, set_flag,
	  "leave out Java frames (HotSpot JVMs, JDK 17 and 25,\n"
	  "show their Java methods, files and lines by default,\n"
	  "read from the JVM's own structures: no flag or agent)" },
	{ "no-node", OPT_NO_NODE, NULL, set_flag,
	  "leave out JavaScript frames (Node.js's V8, node 20,\n"
	  "shows its JavaScript functions, files and lines by\n"
	  "default, read from V8's own heap: no flag needed)" },
	{ "ld-probe", OPT_LD_PROBE, NULL, set_flag,
	  "a uprobe on the host's ld.so (_dl_debug_state), so\n"
	  "that a new program's libraries have unwind tables\n"
	  "from its first samples; off by default, since\n"
	  "valgrind and other emulators running on the host\n"
	  "meet its breakpoint and die of SIGTRAP" },
	{ "off-cpu", OPT_OFF_CPU, NULL, set_flag,
	  "also record where threads wait: the time a thread\n"
	  "is blocked (not preempted) is charged to the stacks\n"
	  "it blocked in, as a third sample type, off_cpu\n"
	  "(pprof -sample_index=off_cpu)" },
	{ "off-cpu-min", OPT_OFF_CPU_MIN, "TIME", set_mode,
	  "with --off-cpu, charge waits of at least TIME, in ms\n"
	  "or with a ns/us/ms/s suffix (default 1ms, 1us-60s);\n"
	  "shorter ones are only counted in the summary. At\n"
	  "most " STR(CPROF_OFFCPU_UNWINDS) " waits a second per CPU get stacks; the\n"
	  "time of the others shows under [off-cpu: not walked]" },
	{ "symbolize", OPT_SYMBOLIZE, "MODE", set_mode,
	  "'host' (default): name user frames here, with source\n"
	  "lines and inlined calls where there is DWARF;\n"
	  "'none': addresses, mappings and build IDs only, for\n"
	  "pprof to symbolize later (PPROF_BINARY_PATH); kernel\n"
	  "and JIT frames are named either way" },
	{ "unwind", OPT_UNWIND, "MODE", set_mode,
	  "user stacks by 'dwarf' CFI tables, falling back to\n"
	  "frame pointers where there are none (default), or\n"
	  "by 'fp' frame pointers only" },
	{ "unwind-memory", OPT_UNWIND_MEMORY, "SIZE", set_memory,
	  "memory for unwind tables in BPF maps, in MB or\n"
	  "with a K/M/G suffix (default 16M); least recently\n"
	  "used tables are evicted beyond it" },
	{ "dwarf-memory", OPT_DWARF_MEMORY, "SIZE", set_memory,
	  "most memory one object's DWARF may take to give\n"
	  "source lines and inlined calls (default 16M, max\n"
	  "512M); bigger ones get function names only" },
	{ "symbol-memory", OPT_SYMBOL_MEMORY, "SIZE", set_memory,
	  "most memory symbol tables and the names kept\n"
	  "for sampled addresses may take at once, across\n"
	  "objects (default 32M); frames past it stay unnamed" },
	{ "counts-max", OPT_COUNTS_MAX, "N", set_memory,
	  "distinct stacks counted per drain (default " STR(CPROF_COUNTS_MAX) ";\n"
	  "given, it bounds the CPUs' count logs too);\n"
	  "samples beyond it show as [lost samples]" },
	{ "max-files", OPT_MAX_FILES, "N", set_memory,
	  "files kept open for processes' binaries and perf\n"
	  "maps (default " STR(DEFAULT_MAX_FILES) ", and within the open-file limit);\n"
	  "beyond it the least recently used are closed and\n"
	  "opened again when needed" },
	{ "file-mode", OPT_FILE_MODE, "MODE", set_output,
	  "permissions of the profiles, in octal (default 0600:\n"
	  "they name other users' functions; at most 0644)" },
	{ "json-summary", OPT_JSON_SUMMARY, "FILE", set_output,
	  "also write the run's figures (every counter -v shows,\n"
	  "and the top processes) to FILE as JSON, for scripts" },
	{ "no-priority-boost", OPT_NO_PRIORITY_BOOST, NULL, set_flag,
	  "keep the scheduling priority it was started with;\n"
	  "by default it raises itself to nice -20 and runs\n"
	  "its short steps (start, drains, writes) in the\n"
	  "real-time class, each bounded in CPU time, so that\n"
	  "it starts and ends on time on an overloaded host" },
	{ "no-jitter", OPT_NO_JITTER, NULL, set_flag,
	  "sample every CPU at exactly the -F rate; by default\n"
	  "each CPU's rate is drawn within 30% of -F every\n"
	  "50-150 ms (the mean stays the -F rate), so that no\n"
	  "program that sleeps and wakes in time with the\n"
	  "sampling clock is over- or undercounted" },
	{ "quiet", 'q', NULL, set_flag, "print nothing but errors" },
	{ "verbose", 'v', NULL, set_flag,
	  "show every counter, libbpf's and per-process diagnostics" },
	{ "help", 'h', NULL, set_info, "show this help" },
	{ "version", 'V', NULL, set_info, "show the version" },
};

#define N_OPTS (sizeof(optdefs) / sizeof(optdefs[0]))
#define HELP_COLUMN 25

static void usage(FILE *f)
{
	fputs("Usage: " PROG " [OPTIONS]\n"
	      "Sample the CPU stacks of every process on this host and write one\n"
	      "gzipped pprof profile per process: <output-dir>/<comm>-<pid>.pb.gz\n"
	      "\n", f);
	for (size_t i = 0; i < N_OPTS; i++) {
		const struct optdef *d = &optdefs[i];
		const char *line = d->help;
		int n;

		if (d->key < OPT_NO_KERNEL)
			n = fprintf(f, "  -%c, --%s", d->key, d->name);
		else
			n = fprintf(f, "      --%s", d->name);
		if (d->arg)
			n += fprintf(f, " %s", d->arg);
		/* The text in its column, or two spaces after a long option. */
		fprintf(f, "%*s", n <= HELP_COLUMN - 2 ? HELP_COLUMN - n : 2, "");
		for (;;) {
			size_t len = strcspn(line, "\n");

			fprintf(f, "%.*s\n", (int)len, line);
			if (!line[len])
				break;
			line += len + 1;
			fprintf(f, "%*s", HELP_COLUMN, "");
		}
	}
	fputs("\n"
	      "SIGINT or SIGTERM ends sampling early; every profile is still written.\n"
	      "Read the files with `go tool pprof -top FILE` or `go tool pprof -http=: FILE`.\n"
	      "Needs root (CAP_BPF and CAP_PERFMON) and a kernel with BTF.\n", f);
}

/* getopt_long's tables, made from optdefs. */
static void getopt_tables(struct option *longopts, char *shortopts)
{
	for (size_t i = 0; i < N_OPTS; i++) {
		const struct optdef *d = &optdefs[i];

		longopts[i] = (struct option){ d->name, d->arg ? required_argument : no_argument,
					       NULL, d->key };
		if (d->key < OPT_NO_KERNEL) {
			*shortopts++ = (char)d->key;
			if (d->arg)
				*shortopts++ = ':';
		}
	}
	longopts[N_OPTS] = (struct option){ 0 };
	*shortopts = '\0';
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

int options_parse_time_ns(const char *s, uint64_t *ns)
{
	static const struct {
		const char *suffix;
		uint64_t ns;
	} units[] = { { "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 } };
	uint64_t mult = 1000000;
	unsigned long v;
	char num[32];
	size_t len = strlen(s);

	if (!len || len >= sizeof(num))
		return -EINVAL;
	memcpy(num, s, len + 1);
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		size_t sl = strlen(units[i].suffix);

		if (len > sl && !strcmp(num + len - sl, units[i].suffix)) {
			mult = units[i].ns;
			num[len - sl] = '\0';
			break;
		}
	}
	if (parse_uint(num, 0, 60UL * 1000000000UL, &v) || v > 60ULL * 1000000000ULL / mult)
		return -EINVAL;
	*ns = v * mult;
	return 0;
}

/* Tells a bad option on stderr, one line after the program's name; returns -1. */
static int bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int bad(const char *fmt, ...)
{
	va_list ap;

	fputs(PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -1;
}

/* A number from @min to @max for --@name, or a one-line error saying what was wanted. */
static int uint_option(const char *name, const char *arg, unsigned long min, unsigned long max,
		       const char *what, unsigned long *out)
{
	if (!parse_uint(arg, min, max, out))
		return 0;
	return bad("--%s: '%s' is not %s (%lu-%lu)", name, arg, what, min, max);
}

/* A size in KB from @min_kb to @max_kb for --@name (@range says it in words). */
static int size_option(const char *name, const char *arg, unsigned long min_kb,
		       unsigned long max_kb, const char *range, unsigned long *kb)
{
	if (!parse_size_kb(arg, kb) && *kb >= min_kb && *kb <= max_kb)
		return 0;
	return bad("--%s: '%s' is not a size from %s", name, arg, range);
}

static int add_pids(struct options *o, const char *arg)
{
	char buf[4096], *save = NULL, *tok;
	struct errbuf err = { "" };

	if (strlen(arg) >= sizeof(buf))
		return -1;
	strcpy(buf, arg);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		unsigned long pid;

		if (parse_uint(tok, 1, INT_MAX, &pid))
			return bad("--pid: '%s' is not a process id", tok);
		if (options_host_pid((uint32_t)pid, &err))
			return bad("--pid: %s", err.msg);
		if (o->n_pids == MAX_PIDS)
			return bad("--pid: at most %d processes", MAX_PIDS);
		o->pids[o->n_pids++] = (uint32_t)pid;
	}
	return 0;
}

/* How long, in what windows and how often it samples. */
static int set_run(struct options *o, int key, const char *arg)
{
	unsigned long v;

	switch (key) {
	case 'd':
		if (uint_option("duration", arg, 0, MAX_DURATION, "a number of seconds", &v))
			return -1;
		o->duration = (unsigned int)v;
		return 0;
	case 'i':
		if (uint_option("interval", arg, 1, MAX_DURATION, "a number of seconds", &v))
			return -1;
		o->interval = (unsigned int)v;
		return 0;
	case OPT_KEEP:
		if (uint_option("keep", arg, 1, 1000000, "a number of windows", &v))
			return -1;
		o->keep = (unsigned int)v;
		return 0;
	default: /* 'F' */
		if (uint_option("frequency", arg, 1, MAX_FREQUENCY, "a rate in Hz", &v))
			return -1;
		o->frequency = (unsigned int)v;
		return 0;
	}
}

/* Which processes are sampled, and on which CPUs: each looked up as it comes. */
static int set_filter(struct options *o, int key, const char *arg)
{
	struct errbuf err = { "" };

	switch (key) {
	case 'p':
		return add_pids(o, arg);
	case OPT_COMM:
		if (!*arg || strlen(arg) >= CPROF_COMM_LEN || o->n_comms == MAX_COMMS)
			return bad("--comm: '%s' must be 1-%d characters (at most %d names)", arg,
				   CPROF_COMM_LEN - 1, MAX_COMMS);
		o->comms[o->n_comms++] = arg;
		return 0;
	case OPT_CGROUP:
		if (!*arg || o->n_cgroups == MAX_CGROUPS)
			return bad("--cgroup: empty path or more than %d", MAX_CGROUPS);
		if (options_host_cgroup(arg, &o->cgroup_ids[o->n_cgroups], &err))
			return bad("--cgroup: %s", err.msg);
		o->cgroups[o->n_cgroups++] = arg;
		return 0;
	default: /* 'C' */
		if (options_host_cpus(arg, &o->cpus, &err))
			return bad("--cpu: %s", err.msg);
		o->cpus_set = true;
		return 0;
	}
}

/* The options that take no argument. */
static int set_flag(struct options *o, int key, const char *arg)
{
	switch (key) {
	case OPT_NO_KERNEL:
		o->kernel = false;
		break;
	case OPT_NO_PYTHON:
		o->python = false;
		break;
	case OPT_NO_JAVA:
		o->java = false;
		break;
	case OPT_NO_NODE:
		o->node = false;
		break;
	case OPT_LD_PROBE:
		o->ld_probe = true;
		break;
	case OPT_OFF_CPU:
		o->off_cpu = true;
		break;
	case OPT_NO_PRIORITY_BOOST:
		o->priority_boost = false;
		break;
	case OPT_NO_JITTER:
		o->jitter = false;
		break;
	case 'q':
		o->quiet = true;
		break;
	default: /* 'v' */
		o->verbose = true;
		break;
	}
	return 0;
}

/* How stacks are walked and named, and which waits count. */
static int set_mode(struct options *o, int key, const char *arg)
{
	uint64_t ns;

	switch (key) {
	case OPT_SYMBOLIZE:
		if (strcmp(arg, "host") && strcmp(arg, "none"))
			return bad("--symbolize: '%s' is not 'host' or 'none'", arg);
		o->symbolize = !strcmp(arg, "host");
		return 0;
	case OPT_UNWIND:
		if (strcmp(arg, "dwarf") && strcmp(arg, "fp"))
			return bad("--unwind: '%s' is not 'dwarf' or 'fp'", arg);
		o->dwarf = !strcmp(arg, "dwarf");
		return 0;
	default: /* OPT_OFF_CPU_MIN */
		if (options_parse_time_ns(arg, &ns) || ns < 1000 || ns > 60ULL * 1000000000ULL)
			return bad("--off-cpu-min: '%s' is not a time from 1us to 60s"
				   " (a number of ms, or with a ns/us/ms/s suffix)", arg);
		o->off_cpu_min_ns = ns;
		o->off_cpu_min_set = true;
		return 0;
	}
}

/* The bounds on memory, map entries and open files. */
static int set_memory(struct options *o, int key, const char *arg)
{
	unsigned long v;

	switch (key) {
	case OPT_UNWIND_MEMORY:
		if (size_option("unwind-memory", arg, 64, MAX_UNWIND_KB, "64K to 4G", &v))
			return -1;
		o->unwind_kb = v;
		return 0;
	case OPT_DWARF_MEMORY:
		if (size_option("dwarf-memory", arg, 64, DWARFINFO_MAX_BYTES / 1024, "64K to 512M",
				&v))
			return -1;
		o->dwarf_kb = v;
		return 0;
	case OPT_SYMBOL_MEMORY:
		if (size_option("symbol-memory", arg, 64, MAX_UNWIND_KB, "64K to 4G", &v))
			return -1;
		o->symbol_kb = v;
		return 0;
	case OPT_COUNTS_MAX:
		if (uint_option("counts-max", arg, 16, 1 << 22, "a count", &v))
			return -1;
		o->counts_max = (unsigned int)v;
		return 0;
	default: /* OPT_MAX_FILES */
		if (uint_option("max-files", arg, 16, 1 << 24, "a count", &v))
			return -1;
		o->max_files = v;
		return 0;
	}
}

/* Where the profiles and the JSON summary go, and the profiles' mode. */
static int set_output(struct options *o, int key, const char *arg)
{
	unsigned long v;
	char *end;

	switch (key) {
	case 'o':
		if (!*arg)
			return bad("--output-dir: empty path");
		o->output_dir = arg;
		return 0;
	case OPT_JSON_SUMMARY:
		if (!*arg)
			return bad("--json-summary: empty path");
		o->json_summary = arg;
		return 0;
	default: /* OPT_FILE_MODE */
		errno = 0;
		v = strtoul(arg, &end, 8);
		if (errno || !*arg || *end || (v & ~(unsigned long)OUTDIR_MODE_MASK) || !(v & 0400))
			return bad("--file-mode: '%s' is not an octal mode the owner can read,"
				   " with no more than %04o", arg, OUTDIR_MODE_MASK);
		o->file_mode = (unsigned int)v;
		return 0;
	}
}

static int set_info(struct options *o, int key, const char *arg)
{
	if (key == 'h')
		usage(stdout);
	else
		printf(PROG " " CPROF_VERSION "\n");
	return 1;
}

/* What options given together must agree on. */
static int check_together(const struct options *o)
{
	if (o->duration == 0 && !o->interval)
		return bad("--duration 0 (run until stopped) needs --interval");
	if (o->quiet && o->verbose)
		return bad("--quiet and --verbose contradict each other");
	if (o->keep && !o->interval)
		return bad("--keep needs --interval");
	if (o->off_cpu_min_set && !o->off_cpu)
		return bad("--off-cpu-min needs --off-cpu");
	return 0;
}

static const struct optdef *optdef_of(int key)
{
	for (size_t i = 0; i < N_OPTS; i++)
		if (optdefs[i].key == key)
			return &optdefs[i];
	return NULL;
}

int options_parse(int argc, char **argv, struct options *o)
{
	static const struct options defaults = {
		.duration = 30,
		.frequency = 99,
		.output_dir = "./cprof-out",
		.kernel = true,
		.python = true,
		.java = true,
		.node = true,
		.symbolize = true,
		.dwarf = true,
		.unwind_kb = 16 * 1024,
		.dwarf_kb = DEFAULT_DWARF_KB,
		.symbol_kb = SYMBOLIZE_SYMBOL_MEMORY / 1024,
		.max_files = DEFAULT_MAX_FILES,
		.file_mode = GZFILE_MODE,
		.priority_boost = true,
		.jitter = true,
		.off_cpu_min_ns = CPROF_OFFCPU_MIN_NS,
	};
	struct option longopts[N_OPTS + 1];
	char shortopts[2 * N_OPTS + 1];
	int c;

	*o = defaults;
	getopt_tables(longopts, shortopts);
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		const struct optdef *d = optdef_of(c);
		int ret;

		if (!d) {
			fprintf(stderr, "Try '" PROG " --help'.\n");
			return -1;
		}
		ret = d->set(o, c, optarg);
		if (ret)
			return ret;
	}
	if (optind < argc)
		return bad("unexpected argument '%s'\nTry '" PROG " --help'.", argv[optind]);
	return check_together(o);
}
