// SPDX-License-Identifier: MIT
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "cprof.h"
#include "dwarfinfo.h"
#include "options.h"
#include "output.h"
#include "symbolize.h"

#define MAX_FREQUENCY 20000
#define MAX_DURATION (365 * 24 * 3600)
#define MAX_UNWIND_KB (4096UL * 1024)

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
		"      --keep N           with --interval, remove the files this run wrote in\n"
		"                         windows older than its N newest (nothing else)\n"
		"  -F, --frequency HZ     samples per second per CPU (default 99, max %d)\n"
		"  -o, --output-dir DIR   where to write profiles (default ./cprof-out)\n"
		"  -p, --pid PID          only this process; repeat or comma-separate\n"
		"      --comm NAME        only processes named NAME (as in /proc/PID/comm)\n"
		"      --cgroup PATH      only processes in this cgroup (v2) or below it: its\n"
		"                         directory, or its path as in /proc/PID/cgroup\n"
		"                         Filters of different kinds must all match.\n"
		"      --no-kernel        leave out kernel frames\n"
		"      --no-python        leave out Python frames (CPython 3.8-3.13 processes\n"
		"                         show their Python functions, files and lines by\n"
		"                         default)\n"
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
		"      --max-files N      files kept open for processes' binaries and perf\n"
		"                         maps (default %d, and within the open-file limit);\n"
		"                         beyond it the least recently used are closed and\n"
		"                         opened again when needed\n"
		"      --file-mode MODE   permissions of the profiles, in octal (default 0600:\n"
		"                         they name other users' functions; at most 0644)\n"
		"  -v, --verbose          show libbpf and per-process diagnostics\n"
		"  -h, --help             show this help\n"
		"  -V, --version          show the version\n"
		"\n"
		"SIGINT or SIGTERM ends sampling early; every profile is still written.\n"
		"Read the files with `go tool pprof -top FILE` or `go tool pprof -http=: FILE`.\n"
		"Needs root (CAP_BPF and CAP_PERFMON) and a kernel with BTF.\n",
		MAX_FREQUENCY, CPROF_COUNTS_MAX, DEFAULT_MAX_FILES);
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

/* A number from @min to @max for --@name, or a one-line error saying what was wanted. */
static int uint_option(const char *name, const char *arg, unsigned long min, unsigned long max,
		       const char *what, unsigned long *out)
{
	if (!parse_uint(arg, min, max, out))
		return 0;
	fprintf(stderr, PROG ": --%s: '%s' is not %s (%lu-%lu)\n", name, arg, what, min, max);
	return -1;
}

/* A size in KB from @min_kb to @max_kb for --@name (@range says it in words). */
static int size_option(const char *name, const char *arg, unsigned long min_kb,
		       unsigned long max_kb, const char *range, unsigned long *kb)
{
	if (!parse_size_kb(arg, kb) && *kb >= min_kb && *kb <= max_kb)
		return 0;
	fprintf(stderr, PROG ": --%s: '%s' is not a size from %s\n", name, arg, range);
	return -1;
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

int options_parse(int argc, char **argv, struct options *o)
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
		OPT_MAX_FILES,
		OPT_FILE_MODE,
		OPT_NO_PYTHON,
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
		{ "no-python", no_argument, NULL, OPT_NO_PYTHON },
		{ "symbolize", required_argument, NULL, OPT_SYMBOLIZE },
		{ "unwind", required_argument, NULL, OPT_UNWIND },
		{ "unwind-memory", required_argument, NULL, OPT_UNWIND_MEMORY },
		{ "dwarf-memory", required_argument, NULL, OPT_DWARF_MEMORY },
		{ "symbol-memory", required_argument, NULL, OPT_SYMBOL_MEMORY },
		{ "counts-max", required_argument, NULL, OPT_COUNTS_MAX },
		{ "max-files", required_argument, NULL, OPT_MAX_FILES },
		{ "file-mode", required_argument, NULL, OPT_FILE_MODE },
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
		.python = true,
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
		.max_files = DEFAULT_MAX_FILES,
		.file_mode = OUTPUT_FILE_MODE,
	};
	while ((c = getopt_long(argc, argv, "d:i:F:o:p:vhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			if (uint_option("duration", optarg, 0, MAX_DURATION, "a number of seconds", &v))
				return -1;
			o->duration = (unsigned int)v;
			break;
		case 'i':
			if (uint_option("interval", optarg, 1, MAX_DURATION, "a number of seconds", &v))
				return -1;
			o->interval = (unsigned int)v;
			break;
		case OPT_KEEP:
			if (uint_option("keep", optarg, 1, 1000000, "a number of windows", &v))
				return -1;
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
			if (uint_option("frequency", optarg, 1, MAX_FREQUENCY, "a rate in Hz", &v))
				return -1;
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
		case OPT_NO_PYTHON:
			o->python = false;
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
			if (size_option("unwind-memory", optarg, 64, MAX_UNWIND_KB, "64K to 4G", &v))
				return -1;
			o->unwind_kb = v;
			break;
		case OPT_DWARF_MEMORY:
			if (size_option("dwarf-memory", optarg, 64, DWARFINFO_MAX_BYTES / 1024,
					"64K to 512M", &v))
				return -1;
			o->dwarf_kb = v;
			break;
		case OPT_SYMBOL_MEMORY:
			if (size_option("symbol-memory", optarg, 64, MAX_UNWIND_KB, "64K to 4G", &v))
				return -1;
			o->symbol_kb = v;
			break;
		case OPT_COUNTS_MAX:
			if (uint_option("counts-max", optarg, 16, 1 << 22, "a count", &v))
				return -1;
			o->counts_max = (unsigned int)v;
			break;
		case OPT_MAX_FILES:
			if (uint_option("max-files", optarg, 16, 1 << 24, "a count", &v))
				return -1;
			o->max_files = v;
			break;
		case OPT_FILE_MODE: {
			char *end;

			errno = 0;
			v = strtoul(optarg, &end, 8);
			if (errno || !*optarg || *end || (v & ~(unsigned long)OUTPUT_MODE_MASK) ||
			    !(v & 0400)) {
				fprintf(stderr, PROG ": --file-mode: '%s' is not an octal mode the owner"
					" can read, with no more than %04o\n", optarg, OUTPUT_MODE_MASK);
				return -1;
			}
			o->file_mode = (unsigned int)v;
			break;
		}
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
