// SPDX-License-Identifier: MIT
/*
 * Tests for dwarfworker: lookups in the sandboxed child equal lookups in
 * process, frame by frame; the child is confined as sandbox.h says (read
 * back from /proc/<pid>/status and limits, and from inside: opening a file
 * or writing to stdout is refused); a child that crashes or hangs in the
 * middle of a request costs that request its remaining addresses, is
 * reaped, and the next request gets a fresh child; three failures and the
 * worker gives up; a stale handle is refused; children are recycled.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dwarf/dwarfinfo.h"
#include "dwarf/dwarfproto.h"
#include "dwarf/dwarfworker.h"
#include "elf/elfobj.h"
#include "dwarf/sandbox.h"
#include "testlib.h"
#include "testutil.h"

static char tmp[PATH_MAX - 256];

/* What the child does before lookup request N: set before it is forked. */
static int crash_at = -1, hang_at = -1, probe_at = -1, garbage_at = -1;

static void hook(unsigned long request, unsigned child)
{
	(void)child;
	if ((long)request == crash_at)
		abort(); /* SIGABRT: not caught by the sanitizers, which catch SIGSEGV */
	if ((long)request == hang_at)
		sleep(60);
	if ((long)request == garbage_at) {
		/* A reply header and bytes that are no frames, ahead of the real reply. */
		static const uint8_t junk[] = { 0, 0, 0, 0, 3, 0, 0, 0, 'a', 'b', 'c' };

		if (write(SANDBOX_SERVE_FD, junk, sizeof(junk)) != (ssize_t)sizeof(junk))
			_exit(45);
	}
	if ((long)request == probe_at) {
		/* Inside the sandbox: these must be refused. */
		if (open("/etc/hostname", O_RDONLY) >= 0 || errno != EPERM)
			_exit(43);
		if (write(STDOUT_FILENO, "x", 1) >= 0 || errno != EPERM)
			_exit(44);
	}
}

/* Every address of outer_w(), from nm. */
static size_t addresses(const char *bin, uint64_t *out, size_t max)
{
	char line[256];
	unsigned long long a = 0, s = 0;
	FILE *f = popen(fmt("nm -S '%s' | grep ' outer_w$'", bin), "r");
	size_t n = 0;

	if (f && fgets(line, sizeof(line), f))
		sscanf(line, "%llx %llx", &a, &s);
	if (f)
		pclose(f);
	for (uint64_t x = a; x < a + s && n < max; x++)
		out[n++] = x;
	return n;
}

struct got {
	size_t n;           /* addresses answered */
	char text[256][512]; /* each address's frames, as text */
};

static void record(void *ctx, size_t i, const struct dwarf_frame *f, size_t nf)
{
	struct got *g = ctx;
	size_t len = 0;

	if (i >= 256)
		return;
	g->text[i][0] = '\0';
	for (size_t k = 0; k < nf; k++)
		len += (size_t)snprintf(g->text[i] + len, len < 512 ? 512 - len : 0, "%s@%s/%s:%d(%d);",
					f[k].name ? f[k].name : "-", f[k].dir ? f[k].dir : "-",
					f[k].file ? f[k].file : "-", f[k].line, f[k].start_line);
	if (i + 1 > g->n)
		g->n = i + 1;
}

static void name_got(void *ctx, size_t i, const char *demangled)
{
	char (*got)[128] = ctx;

	snprintf(got[i], 128, "%s", demangled ? demangled : "(none)");
}

static struct dwarf_source locate(struct elfobj *o)
{
	struct dwarf_source src;

	if (dwarfinfo_locate(&src, o, NULL, 0, NULL))
		src = (struct dwarf_source){ .fd = -1, .alt_fd = -1 };
	return src;
}

static long lookup(struct dwarfworker *w, const struct dwarf_source *src, const uint64_t *addrs,
		   size_t n, struct got *g, struct errbuf *err, uint32_t *handle_out)
{
	uint32_t h;
	long r;
	int rc = dwarfworker_open(w, src, &h, err);

	memset(g, 0, sizeof(*g));
	if (rc)
		return rc;
	r = dwarfworker_lookup(w, h, addrs, n, 8, record, g, err);
	if (handle_out)
		*handle_out = h;
	else
		dwarfworker_close(w, h);
	return r;
}

static bool status_has(pid_t pid, const char *field, const char *want)
{
	char line[256];
	size_t fl = strlen(field);
	FILE *f = fopen(fmt("/proc/%d/status", (int)pid), "r");
	bool ok = false;

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, field, fl)) {
			ok = strstr(line + fl, want) != NULL;
			break;
		}
	if (f)
		fclose(f);
	return ok;
}

static bool limit_is(pid_t pid, const char *name, const char *want)
{
	char line[256];
	FILE *f = fopen(fmt("/proc/%d/limits", (int)pid), "r");
	bool ok = false;

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, name, strlen(name))) {
			char soft[32];

			ok = sscanf(line + strlen(name), "%31s", soft) == 1 && !strcmp(soft, want);
			break;
		}
	if (f)
		fclose(f);
	return ok;
}

static size_t fd_count(pid_t pid)
{
	size_t n = 0;
	FILE *f = popen(fmt("ls /proc/%d/fd", (int)pid), "r");
	char line[64];

	while (f && fgets(line, sizeof(line), f))
		n++;
	if (f)
		pclose(f);
	return n;
}

/* Of the first @n addresses, how many have the same frames in @a and @b, and some. */
static size_t alike(const struct got *a, const struct got *b, size_t n)
{
	size_t same = 0;

	for (size_t i = 0; i < n; i++)
		same += !strcmp(a->text[i], b->text[i]) && strchr(b->text[i], ';');
	return same;
}

/* The confinement sandbox.h promises, read back from @pid's /proc entries. */
static void check_confined(pid_t pid, const char *who)
{
	if (geteuid() == 0)
		CHECK(pid > 0 && status_has(pid, "Uid:", fmt("%u", SANDBOX_ID)) &&
		      status_has(pid, "Gid:", fmt("%u", SANDBOX_ID)) &&
		      status_has(pid, "Groups:", "\n"),
		      fmt("%s: runs as its own unprivileged user, no groups", who), "pid %d", (int)pid);
	CHECK(pid > 0 && status_has(pid, "CapEff:", "0000000000000000") &&
	      status_has(pid, "CapPrm:", "0000000000000000") &&
	      status_has(pid, "CapBnd:", geteuid() ? "" : "0000000000000000") &&
	      status_has(pid, "CapAmb:", "0000000000000000"),
	      fmt("%s: no capabilities in any set", who), "pid %d", (int)pid);
	CHECK(status_has(pid, "NoNewPrivs:", "1") && status_has(pid, "Seccomp:", "2"),
	      fmt("%s: no_new_privs and a seccomp filter", who), "pid %d", (int)pid);
	CHECK(limit_is(pid, "Max cpu time", "120") && limit_is(pid, "Max open files", "64") &&
	      limit_is(pid, "Max file size", "0") && !limit_is(pid, "Max address space", "unlimited"),
	      fmt("%s: CPU, descriptors, file writes and address space limited", who), "pid %d",
	      (int)pid);
	CHECK(fd_count(pid) == 4, fmt("%s: holds stdin, stdout, stderr and its socket only", who),
	      "%zu descriptors", fd_count(pid));
}

/* A number field of /proc/PID/status (kB for memory), -1 when absent. */
static long status_num(pid_t pid, const char *field)
{
	char line[256];
	size_t fl = strlen(field);
	FILE *f = fopen(fmt("/proc/%d/status", (int)pid), "r");
	long v = -1;

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, field, fl)) {
			v = strtol(line + fl, NULL, 10);
			break;
		}
	if (f)
		fclose(f);
	return v;
}

/* Whether @pid's argv[@i] is @want. */
static bool arg_is(pid_t pid, int i, const char *want)
{
	char buf[512];
	FILE *f = fopen(fmt("/proc/%d/cmdline", (int)pid), "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	const char *p = buf;

	if (f)
		fclose(f);
	buf[n] = '\0';
	for (; i > 0 && p < buf + n; i--)
		p += strlen(p) + 1;
	return p < buf + n && !strcmp(p, want);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static struct got in_proc, child;
	struct dwarfworker_opts o = { .child_hook = hook };
	struct dwarfworker *w = NULL, *wp = NULL;
	struct dwarfworker_stats st;
	struct errbuf err = { "" };
	struct dwarf_source src;
	struct elfobj *obj = NULL;
	uint64_t addrs[256] = { 0 };
	size_t na, same = 0;
	uint32_t h;
	long r;
	int fd;

	/* This binary is the DWARF reader its exec_self children run. */
	r = dwarfworker_reader_main(argc, argv);
	if (r >= 0)
		return (int)r;
	setvbuf(stdout, NULL, _IOLBF, 0);
	snprintf(tmp, sizeof(tmp), "/tmp/cprof-dwarfworker-XXXXXX");
	if (!mkdtemp(tmp) || build_fixture_inlines(tmp, "w", "fx")) {
		T_SKIP("dwarfworker", "cannot compile the fixture");
		return 0;
	}
	T_PLAN(28);
	fd = open(fmt("%s/fx", tmp), O_RDONLY | O_CLOEXEC);
	/* the fixture was built: failing to open it is the product failing */
	if (fd < 0 || elfobj_open(&obj, fd, NULL)) {
		CHECK(false, "dwarfworker: the fixture opened", "%s/fx: %s", tmp,
		      fd < 0 ? strerror(errno) : "elfobj_open failed");
		return T_EXIT();
	}
	na = addresses(fmt("%s/fx", tmp), addrs, 256);
	src = locate(obj);

	/* In process and in the child: the same frames. */
	dwarfworker_new(&wp, &(struct dwarfworker_opts){ .in_process = true });
	dwarfworker_new(&w, &o);
	r = lookup(wp, &src, addrs, na, &in_proc, &err, NULL);
	CHECK(r == (long)na && na > 10, "in process: every address of outer_w() answered",
	      "%ld of %zu: %s", r, na, err.msg);
	r = lookup(w, &src, addrs, na, &child, &err, &h);
	same = alike(&in_proc, &child, na);
	CHECK(r == (long)na && same == na,
	      "sandboxed child: every address's frames as in process (names, files, lines)",
	      "%ld answered, %zu alike: %s", r, same, err.msg);
	dwarfworker_stats(w, &st);
	check_confined(st.pid, "child");
	dwarfworker_close(w, h);

	/* Inside the sandbox, opening a file and writing to stdout are refused. */
	dwarfworker_free(w);
	probe_at = 0;
	dwarfworker_new(&w, &o);
	r = lookup(w, &src, addrs, 8, &child, &err, NULL);
	CHECK(r == 8, "child: open() of a file and write() to stdout fail with EPERM",
	      "%ld answered: %s", r, err.msg);
	probe_at = -1;
	dwarfworker_free(w);

	/*
	 * exec_self: the child is this binary started anew as the reader, so
	 * none of the parent's memory is resident in it (a fork holds it all:
	 * here 64 MB, made resident first), and it answers as the fork does.
	 */
	{
		size_t ballast_len = 64u << 20;
		char *ballast = malloc(ballast_len);
		long rss;

		if (ballast)
			memset(ballast, 1, ballast_len);
		dwarfworker_new(&w, &(struct dwarfworker_opts){ .exec_self = true });
		r = lookup(w, &src, addrs, na, &child, &err, &h);
		same = alike(&in_proc, &child, na);
		CHECK(r == (long)na && same == na,
		      "exec_self: every address's frames as in process (names, files, lines)",
		      "%ld answered, %zu alike: %s", r, same, err.msg);
		dwarfworker_stats(w, &st);
		rss = status_num(st.pid, "VmHWM:");
		CHECK(ballast && st.pid > 0 && arg_is(st.pid, 1, DWARFCHILD_ARGV1) && rss > 0 &&
		      rss < 32768,
		      "exec_self: the child runs this binary as the reader, without our 64 MB",
		      "pid %d, peak RSS %ld kB", (int)st.pid, rss);
		check_confined(st.pid, "exec_self child");
		dwarfworker_close(w, h);
		dwarfworker_free(w);
		free(ballast);
	}

	/* A crash in the middle: the batches before it are kept, the child reaped. */
	crash_at = 1;
	dwarfworker_new(&w, &o);
	r = lookup(w, &src, addrs, 200, &child, &err, &h);
	dwarfworker_stats(w, &st);
	CHECK(r == DWARFWORKER_BATCH && strstr(err.msg, "signal 6") && st.failures == 1 &&
	      st.pid == 0,
	      "child crashing on its second batch: the first batch answered, the crash told",
	      "%ld answered, %u failures, pid %d: %s", r, st.failures, (int)st.pid, err.msg);
	CHECK(dwarfworker_lookup(w, h, addrs, 1, 8, record, &child, &err) == -ESTALE,
	      "a handle of the dead child: -ESTALE", "not refused");
	crash_at = -1;
	r = lookup(w, &src, addrs, na, &child, &err, NULL);
	dwarfworker_stats(w, &st);
	CHECK(r == (long)na && st.spawned == 2, "after a crash: a fresh child answers everything",
	      "%ld of %zu, %u children: %s", r, na, st.spawned, err.msg);

	/* A malformed reply: the child is killed, its answers so far kept. */
	dwarfworker_free(w);
	garbage_at = 1;
	dwarfworker_new(&w, &o);
	r = lookup(w, &src, addrs, 200, &child, &err, NULL);
	dwarfworker_stats(w, &st);
	CHECK(r == DWARFWORKER_BATCH && strstr(err.msg, "malformed") && st.failures == 1 &&
	      st.pid == 0,
	      "child answering garbage on its second batch: killed, the first batch kept",
	      "%ld answered, %u failures: %s", r, st.failures, err.msg);
	garbage_at = -1;

	/* A hang: killed at the deadline, and the run goes on. */
	dwarfworker_free(w);
	hang_at = 0;
	o.timeout_ms = 400;
	dwarfworker_new(&w, &o);
	{
		double t0 = now();
		pid_t pid;

		dwarfworker_open(w, &src, &h, &err);
		dwarfworker_stats(w, &st);
		pid = st.pid;
		r = dwarfworker_lookup(w, h, addrs, na, 8, record, &child, &err);
		CHECK(r == 0 && now() - t0 < 3 && strstr(err.msg, "did not answer within 0.4 s") &&
		      pid > 0 && kill(pid, 0) < 0 && errno == ESRCH,
		      "child hanging in a request: killed after the timeout, reaped, nothing answered",
		      "%ld answered in %.1f s: %s", r, now() - t0, err.msg);
	}
	hang_at = -1;
	o.timeout_ms = 0;
	crash_at = 0;
	r = lookup(w, &src, addrs, 4, &child, &err, NULL);
	r = lookup(w, &src, addrs, 4, &child, &err, NULL);
	r = lookup(w, &src, addrs, 4, &child, &err, NULL);
	dwarfworker_stats(w, &st);
	CHECK(st.failures == 3 && st.gave_up && r == -ECANCELED,
	      "three failures: the worker gives up, later opens refused", "%u failures, r %ld: %s",
	      st.failures, r, err.msg);
	crash_at = -1;
	dwarfworker_free(w);

	/* Rust v0 names, demangled in the child; one that loops is killed with its child. */
	{
		static const char *const names[] = {
			"_RNvMNtCs6GmmlP4bgsG_1r5outerINtB2_5ThingmE6crunchB4_", "main",
			"_ZN2ns4TypeIiE6methodEl",
		};
		/* A binder claiming ~2^60 lifetimes: libiberty counts them all. */
		static const char *const hostile[] = { "_RYRYDGGGGGGGGGGGY_RGGGGGGGGGGGGGGGGGGGGGGGGGGGYYYGD" };
		char got[3][128] = { "", "", "" };

		dwarfworker_new(&w, &(struct dwarfworker_opts){ .timeout_ms = 400 });
		r = dwarfworker_demangle(w, names, 3, name_got, got, &err);
		CHECK(r == 3 && !strcmp(got[0], "<r::outer::Thing<u32>>::crunch") &&
		      !strcmp(got[1], "(none)") && !strcmp(got[2], "ns::Type<int>::method(long)"),
		      "Rust v0 names demangled in the child", "%ld: '%s' '%s' '%s' %s", r, got[0],
		      got[1], got[2], err.msg);
		r = dwarfworker_demangle(w, hostile, 1, name_got, got, &err);
		dwarfworker_stats(w, &st);
		CHECK(r == 0 && st.failures == 1 && strstr(err.msg, "did not answer"),
		      "a v0 name libiberty loops on: the child killed at the timeout",
		      "%ld, %u failures: %s", r, st.failures, err.msg);
		r = dwarfworker_demangle(w, names, 1, name_got, got, &err);
		CHECK(r == 1 && !strcmp(got[0], "<r::outer::Thing<u32>>::crunch"),
		      "... and the next names demangled by a fresh child", "%ld: %s", r, err.msg);
		dwarfworker_free(w);
	}

	/*
	 * The agent killed while its child hangs in a request (so the closed
	 * socket can't end it): the parent-death signal must, though the
	 * child's change of user clears it unless set again after.
	 */
	{
		int pfd[2];
		pid_t agent = -1, wpid = 0;

		hang_at = 0;
		if (pipe(pfd) == 0 && (agent = fork()) == 0) {
			struct dwarfworker *aw;
			struct dwarfworker_stats ast;
			uint32_t ah;

			dwarfworker_new(&aw, &o);
			dwarfworker_open(aw, &src, &ah, &err);
			dwarfworker_stats(aw, &ast);
			if (write(pfd[1], &ast.pid, sizeof(ast.pid)) < 0)
				_exit(1);
			dwarfworker_lookup(aw, ah, addrs, 1, 8, record, &child, &err);
			_exit(0);
		}
		hang_at = -1;
		if (read(pfd[0], &wpid, sizeof(wpid)) == (ssize_t)sizeof(wpid) && wpid > 0) {
			bool gone = false;

			usleep(300000); /* the request in, the child asleep in it */
			kill(agent, SIGKILL);
			waitpid(agent, NULL, 0);
			for (int i = 0; i < 100 && !gone; i++) {
				/* Dead and reaped by init, or a zombie waiting for it. */
				gone = kill(wpid, 0) < 0 || status_has(wpid, "State:", "Z");
				if (!gone)
					usleep(10000);
			}
			CHECK(gone, "agent killed mid-request: its hanging DWARF child dies with it",
			      "pid %d alive", (int)wpid);
			if (!gone)
				kill(wpid, SIGKILL);
		} else {
			CHECK(false, "agent killed mid-request: its hanging DWARF child dies with it",
			      "no worker started");
		}
		close(pfd[0]);
		close(pfd[1]);
	}

	/*
	 * An agent that is root without CAP_SETUID, CAP_SETGID and CAP_SETPCAP
	 * (the systemd unit's bounding set): its child keeps uid 0 but no
	 * capability, and still works.
	 */
	if (geteuid() == 0) {
		int pfd[2];
		pid_t agent = -1;
		char res[64] = "";

		if (pipe(pfd) == 0 && (agent = fork()) == 0) {
			struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
			struct __user_cap_data_struct data[2];
			struct dwarfworker *aw;
			struct dwarfworker_stats ast;
			static struct got g;
			long n;

			syscall(SYS_capget, &hdr, data);
			for (int k = 0; k < 2; k++) {
				uint32_t drop = k ? 0 : (1u << CAP_SETUID | 1u << CAP_SETGID | 1u << CAP_SETPCAP);

				data[k].effective &= ~drop;
				data[k].permitted &= ~drop;
				data[k].inheritable &= ~drop;
			}
			if (syscall(SYS_capset, &hdr, data))
				_exit(1);
			dwarfworker_new(&aw, &(struct dwarfworker_opts){ 0 });
			n = lookup(aw, &src, addrs, na, &g, &err, &h);
			dwarfworker_stats(aw, &ast);
			snprintf(res, sizeof(res), "%ld %d %d %d", n, status_has(ast.pid, "Uid:", "0\t0\t0"),
				 status_has(ast.pid, "CapEff:", "0000000000000000"),
				 status_has(ast.pid, "Seccomp:", "2"));
			if (write(pfd[1], res, sizeof(res)) < 0)
				_exit(1);
			_exit(0);
		}
		if (agent > 0 && read(pfd[0], res, sizeof(res)) > 0) {
			long n = 0;
			int uid0 = 0, nocaps = 0, filtered = 0;

			sscanf(res, "%ld %d %d %d", &n, &uid0, &nocaps, &filtered);
			CHECK(n == (long)na && uid0 && nocaps && filtered,
			      "root agent without CAP_SETUID/SETGID/SETPCAP: its child keeps uid 0, "
			      "no capability, filtered, and answers",
			      "'%s'", res);
		} else {
			CHECK(false, "root agent without CAP_SETUID/SETGID/SETPCAP: its child works",
			      "no answer");
		}
		if (agent > 0)
			waitpid(agent, NULL, 0);
		close(pfd[0]);
		close(pfd[1]);
	}

	/* Recycling: a fresh child after its share of objects. */
	dwarfworker_new(&w, &o);
	for (int i = 0; i < DWARFWORKER_RECYCLE_OBJECTS + 1; i++)
		if (lookup(w, &src, addrs, 1, &child, &err, NULL) != 1)
			break;
	dwarfworker_stats(w, &st);
	CHECK(st.recycled == 1 && st.spawned == 2 && st.failures == 0,
	      "a child is replaced after its share of objects", "%u recycled, %u spawned, %u failed",
	      st.recycled, st.spawned, st.failures);
	dwarfworker_free(w);
	{
		size_t n = (size_t)DWARFWORKER_BATCH * 8;
		uint64_t *many = malloc(n * sizeof(*many));
		static struct got sink;

		for (size_t i = 0; many && i < n; i++)
			many[i] = addrs[i % na];
		dwarfworker_new(&w, &(struct dwarfworker_opts){ .recycle_requests = 8 });
		r = many ? dwarfworker_open(w, &src, &h, &err) : -ENOMEM;
		if (!r)
			r = dwarfworker_lookup(w, h, many, n, 1, record, &sink, &err);
		dwarfworker_close(w, h);
		dwarfworker_stats(w, &st);
		CHECK(r == (long)n && st.recycled == 1 && st.pid == 0,
		      "... and after its share of requests, once its object is closed",
		      "%ld of %zu answered, %u recycled: %s", r, n, st.recycled, err.msg);
		dwarfworker_free(w);
		free(many);
	}
	dwarfworker_free(wp);
	dwarfinfo_source_close(&src);
	elfobj_free(obj);
	sh(fmt("rm -rf '%s'", tmp));
	return T_EXIT();
}
