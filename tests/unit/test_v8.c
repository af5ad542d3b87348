// SPDX-License-Identifier: MIT
/*
 * V8 read from outside, against V8's own word: node runs
 * tests/workloads/node/frames.js (and its worker_threads worker,
 * worker.js), which defines functions of every kind at lines marked
 * "// @label" and prints each with %DebugPrint, whose "shared_info" is the
 * function's SharedFunctionInfo.  Each is named from node's memory by
 * user/node/ and checked for its name (as V8's DebugName gives it), its
 * file and its start line.  Then node waits inside an interpreted frame
 * (waiter) called from a Sparkplug frame (bwaiter): its stack is read as
 * BPF will read it, the frames found by their function slot, and the
 * interpreted one's bytecode offset must name the line it waits at.
 * Node's own functions (fs.readFileSync, a Timeout's refresh, deprecate's
 * wrapper) are named too: their scripts' sources are external strings,
 * read from where V8 cached their data and compared byte for byte with
 * what node gives (process.binding('natives')); their start lines are the
 * ones frames.js finds in those sources, and the wrapper, waiting in its
 * call below the Sparkplug frame, names its call's line from its offset.
 * Two strings V8's externalizeString made: the cached one is read, the
 * uncached one (no resource_data) refused.  Node not installed is a skip
 * naming it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "elf/elfobj.h"
#include "fs/procmaps.h"
#include "node/v8_heap.h"
#include "node/v8_layout.h"
#include "node/v8_names.h"
#include "node/v8_script.h"
#include "node/v8_sfi.h"
#include "testlib.h"
#include "testutil.h"

#define WORKLOAD "tests/workloads/node"
#define OUT_MAX (1u << 20)
#define STACK_MAX (8u << 20)

/* A function of the workload: its label, the name V8 gives it, its file, its SFI. */
struct fn {
	const char *label, *name, *file;
	uint64_t sfi;
	uint32_t line; /* of "// @label" in its file */
};

static struct fn fns[] = {
	{ "named", "named", "frames.js", 0, 0 }, { "arrow", "arrow", "frames.js", 0, 0 },
	{ "anon", "(anonymous)", "frames.js", 0, 0 }, { "inferred", "o.prop", "frames.js", 0, 0 },
	{ "method", "method", "frames.js", 0, 0 }, { "static", "st", "frames.js", 0, 0 },
	{ "inner", "inner", "frames.js", 0, 0 }, { "fe", "fe", "frames.js", 0, 0 },
	{ "pi", "\xcf\x80", "frames.js", 0, 0 }, { "lazy", "lazy", "frames.js", 0, 0 },
	{ "many", "many", "frames.js", 0, 0 }, { "waiter", "waiter", "frames.js", 0, 0 },
	{ "bwaiter", "bwaiter", "frames.js", 0, 0 }, { "workerFn", "workerFn", "worker.js", 0, 0 },
};

/* Node's own: file is the script's name; line as frames.js printed it ("line_LABEL N"). */
static struct fn builtins[] = {
	{ "readFileSync", "readFileSync", "node:fs", 0, 0 },
	{ "refresh", "refresh", "node:internal/timers", 0, 0 },
	{ "deprecated", "deprecated", "node:internal/util", 0, 0 },
};

/* The line of deprecate's wrapper's call ("line_deprecatedcall N"). */
static uint32_t call_line;

#define NFNS (sizeof(fns) / sizeof(fns[0]))
#define NBUILTINS (sizeof(builtins) / sizeof(builtins[0]))
#define CHECKS (2 + NFNS + 6 + NBUILTINS + 4)
#define SOURCE_MAX (1u << 20)

static struct fn *by_label(const char *label)
{
	for (size_t i = 0; i < NFNS; i++)
		if (!strcmp(fns[i].label, label))
			return &fns[i];
	for (size_t i = 0; i < NBUILTINS; i++)
		if (!strcmp(builtins[i].label, label))
			return &builtins[i];
	return NULL;
}

/* The line of "// @@label" in @path: 0 when none. */
static uint32_t marked_line(const char *path, const char *label)
{
	char line[1024], *mark = fmt("// @%s", label);
	FILE *f = fopen(path, "r");
	uint32_t n = 0, found = 0;
	size_t ml = strlen(mark);

	while (f && !found && fgets(line, sizeof(line), f)) {
		char *at = strstr(line, mark);

		n++;
		if (at && (at[ml] == '\n' || at[ml] == 0))
			found = n;
	}
	if (f)
		fclose(f);
	return found;
}

/* node in PATH into @out: false when there is none. */
static bool find_node(char *out, size_t cap)
{
	const char *path = getenv("PATH");
	char dir[PATH_MAX];

	while (path && *path) {
		size_t n = strcspn(path, ":");

		snprintf(dir, sizeof(dir), "%.*s/node", (int)n, path);
		if (!access(dir, X_OK)) {
			snprintf(out, cap, "%s", dir);
			return true;
		}
		path += n + (path[n] == ':');
	}
	return false;
}

/* Starts node on frames.js; its output up to "label_ready" into @out. */
static pid_t start_node(const char *node, const char *script, char *out, size_t cap, int *fd_out)
{
	int fd[2];
	size_t got = 0;
	time_t until = time(NULL) + 60;
	pid_t pid;

	if (pipe(fd))
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		execl(node, node, "--allow-natives-syntax", "--expose-externalize-string", script,
		      (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	*fd_out = fd[0];
	while (pid > 0 && time(NULL) < until && got < cap - 1) {
		struct pollfd p = { fd[0], POLLIN, 0 };
		ssize_t n;

		if (poll(&p, 1, 1000) <= 0)
			continue;
		n = read(fd[0], out + got, cap - 1 - got);
		if (n <= 0)
			break;
		got += (size_t)n;
		out[got] = 0;
		if (strstr(out, "label_ready"))
			return pid;
	}
	return -pid;
}

/* Each label's SFI from %DebugPrint's output: "label_X" then " - shared_info: 0x...". */
static void parse_output(const char *out)
{
	struct fn *cur = NULL;
	const char *p = out;

	while (p && *p) {
		const char *lab = strstr(p, "label_"), *si = strstr(p, " - shared_info: 0x");

		if (lab && (!si || lab < si)) {
			char label[64];
			size_t n = strcspn(lab + 6, "\"\n ");

			snprintf(label, sizeof(label), "%.*s", (int)(n < 63 ? n : 63), lab + 6);
			cur = by_label(label);
			p = lab + 6;
		} else if (si) {
			if (cur && !cur->sfi)
				cur->sfi = strtoull(si + 16, NULL, 16);
			cur = NULL;
			p = si + 16;
		} else {
			p = NULL;
		}
	}
}

/* The number frames.js printed after "line_@label ": 0 when none. */
static uint32_t printed_line(const char *out, const char *label)
{
	const char *at = strstr(out, fmt("line_%s ", label));

	return at ? (uint32_t)strtoul(at + strlen(label) + 6, NULL, 10) : 0;
}

static void parse_lines(const char *out)
{
	for (size_t i = 0; i < NBUILTINS; i++)
		builtins[i].line = printed_line(out, builtins[i].label);
	call_line = printed_line(out, "deprecatedcall");
}

/* The object %DebugPrint printed after "label_@label" ("DebugPrint: 0x..."): 0 when none. */
static uint64_t printed_object(const char *out, const char *label)
{
	const char *lab = strstr(out, fmt("label_%s\n", label));
	const char *at = lab ? strstr(lab, "DebugPrint: 0x") : NULL;

	return at ? strtoull(at + 12, NULL, 16) : 0;
}

/* What `node -e @code` writes, into @out (@cap bytes, NUL-terminated): its length. */
static size_t node_eval(const char *node, const char *code, char *out, size_t cap)
{
	FILE *p = popen(fmt("'%s' -e \"%s\"", node, code), "r");
	size_t n = p ? fread(out, 1, cap - 1, p) : 0;

	if (p)
		pclose(p);
	out[n] = 0;
	return n;
}

static void stop(pid_t pid, int fd)
{
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	if (fd >= 0)
		close(fd);
}

/* The V8 of @pid, found as the agent would: every file mapping's object opened. */
static int find_v8(pid_t pid, struct v8proc **vp, struct errbuf *err)
{
	struct vma_list maps = { 0 };
	struct elfobj **objs;
	int e;

	if (procmaps_read("/proc", pid, &maps, err))
		return -ENOENT;
	objs = calloc(maps.n + 1, sizeof(*objs));
	for (size_t i = 0; objs && i < maps.n; i++) {
		const char *p = maps.v[i].path;
		int fd = maps.v[i].kind == VMA_FILE && (maps.v[i].prot & VMA_EXEC) ?
				 open(p, O_RDONLY | O_CLOEXEC) : -1;

		if (fd >= 0 && elfobj_open(&objs[i], fd, NULL))
			objs[i] = NULL;
	}
	e = objs ? v8proc_find(vp, (uint32_t)pid, &maps, objs, err) : -ENOMEM;
	for (size_t i = 0; objs && i < maps.n; i++)
		elfobj_free(objs[i]);
	free(objs);
	procmaps_free(&maps);
	return e;
}

static void check_functions(struct v8proc *vp, const char *dir)
{
	for (size_t i = 0; i < NFNS; i++) {
		struct fn *f = &fns[i];
		const struct v8_frame *fr = NULL;
		char *path = fmt("%s/%s", dir, f->file), *name;
		int e = f->sfi ? v8_frame_name(&vp->names, &vp->layout, &vp->mem, f->sfi, -1, &fr) : -ENOENT;

		f->line = marked_line(path, f->label);
		name = fmt("%s (%s:%u): named \"%s\", its file and start line", f->label, f->file,
			   f->line, f->name);
		CHECK(!e && !fr->err && !strcmp(fr->function, f->name) && !strcmp(fr->script, path) &&
			      fr->start_line == f->line && f->line,
		      name, "sfi %#llx: %d/%d \"%s\" \"%s\" line %u (%d)", (unsigned long long)f->sfi, e,
		      fr ? fr->err : 0, fr ? fr->function : "", fr ? fr->script : "",
		      fr ? fr->start_line : 0, fr ? fr->start_err : 0);
	}
}

/* Node's own functions: name, script and start line from its external source: NBUILTINS checks. */
static void check_builtins(struct v8proc *vp)
{
	for (size_t i = 0; i < NBUILTINS; i++) {
		struct fn *f = &builtins[i];
		const struct v8_frame *fr = NULL;
		int e = f->sfi ? v8_frame_name(&vp->names, &vp->layout, &vp->mem, f->sfi, -1, &fr) :
				 -ENOENT;

		CHECK(!e && !fr->err && !strcmp(fr->function, f->name) &&
			      !strcmp(fr->script, f->file) && fr->start_line == f->line && f->line,
		      fmt("%s (%s:%u): named, its start line from its script's external source",
			  f->label, f->file, f->line),
		      "sfi %#llx: %d/%d \"%s\" \"%s\" line %u (%d)", (unsigned long long)f->sfi, e,
		      fr ? fr->err : 0, fr ? fr->function : "", fr ? fr->script : "",
		      fr ? fr->start_line : 0, fr ? fr->start_err : 0);
	}
}

/*
 * The source of @label's script, read from node's memory, against what
 * node gives for @module (process.binding('natives')), byte for byte: an
 * external string, two-byte or not as @two_byte says.  1 check.
 */
static void check_source(struct v8proc *vp, const char *node, const char *label,
			 const char *module, bool two_byte)
{
	const struct v8_layout *l = &vp->layout;
	char *ours = malloc(SOURCE_MAX), *theirs = malloc(SOURCE_MAX);
	struct v8_sfi s;
	uint64_t src = 0;
	uint16_t t = 0;
	size_t n = 0, got = 0;
	int e = ours && theirs ? v8_sfi_read(l, &vp->mem, by_label(label)->sfi, &s) : -ENOMEM;

	if (!e)
		e = v8_field(l, &vp->mem, s.script, l->script_source, &src);
	if (!e)
		e = v8_type(l, &vp->mem, src, &t);
	if (!e)
		e = v8_string(l, &vp->mem, src, ours, SOURCE_MAX);
	if (!e) {
		got = strlen(ours);
		n = node_eval(node,
			      fmt("process.stdout.write(process.binding('natives')['%s'])", module),
			      theirs, SOURCE_MAX);
	}
	CHECK(!e && (t & l->rep_mask) == l->external_tag &&
		      ((t & l->encoding_mask) == l->two_byte_tag) == two_byte && n > 4096 &&
		      got == n && !memcmp(ours, theirs, n),
	      fmt("node:%s's source, an external %s string, read whole: node's own, byte for byte",
		  module, two_byte ? "two-byte" : "one-byte"),
	      "%d: type %u, %zu bytes read, node gives %zu", e, t, got, n);
	free(ours);
	free(theirs);
}

/* The [stack] of @pid, read whole (at most STACK_MAX): its start in *@lo. */
static uint8_t *read_stack(pid_t pid, uint64_t *lo, size_t *len)
{
	struct vma_list maps = { 0 };
	uint8_t *buf = NULL;

	if (procmaps_read("/proc", pid, &maps, NULL))
		return NULL;
	for (size_t i = 0; i < maps.n && !buf; i++) {
		const struct vma *v = &maps.v[i];

		if (!v->path || strcmp(v->path, "[stack]"))
			continue;
		*lo = v->end - v->start > STACK_MAX ? v->end - STACK_MAX : v->start;
		*len = (size_t)(v->end - *lo);
		buf = malloc(*len);
		if (buf && procmem_read((uint32_t)pid, *lo, buf, *len)) {
			free(buf);
			buf = NULL;
		}
	}
	procmaps_free(&maps);
	return buf;
}

/* The frame pointer of the frame of @sfi's function on the stack @st (from @lo); 0: none. */
static uint64_t frame_of(struct v8proc *vp, const uint8_t *st, uint64_t lo, size_t len, uint64_t sfi)
{
	const struct v8_layout *l = &vp->layout;

	for (size_t off = 0; off + 8 <= len; off += 8) {
		uint64_t w, shared;
		uint16_t t;

		memcpy(&w, st + off, 8);
		if (v8_is_heap(w) && !v8_type(l, &vp->mem, w, &t) && t == l->t_jsfunction &&
		    !v8_field(l, &vp->mem, w, l->fn_shared, &shared) && shared == sfi)
			return lo + off - (uint64_t)(int64_t)l->fp_function;
	}
	return 0;
}

static uint64_t slot_at(const uint8_t *st, uint64_t lo, size_t len, uint64_t fp, int off)
{
	uint64_t a = fp + (uint64_t)(int64_t)off, w = 0;

	if (a >= lo && a + 8 <= lo + len)
		memcpy(&w, st + (a - lo), 8);
	return w;
}

/* The waiting frames, read as BPF reads them: 3 checks. */
static void check_frames(struct v8proc *vp, pid_t pid)
{
	const struct v8_layout *l = &vp->layout;
	struct fn *w = by_label("waiter"), *b = by_label("bwaiter");
	uint64_t lo = 0, fp = 0, bfp = 0, ctx = 0, arr = 0, off = 0, boff = 0;
	const struct v8_frame *fr = NULL;
	uint32_t want = marked_line(fmt("%s/frames.js", WORKLOAD), "wait");
	uint8_t *st = NULL;
	size_t len = 0;
	int32_t raw = -1;
	uint16_t t = 0, bt = 0;
	int e = -1;

	/* the thread may not be in its wait yet: looked for again for up to 10 s */
	for (int tries = 0; tries < 100 && !(fp && bfp); tries++) {
		free(st);
		st = read_stack(pid, &lo, &len);
		fp = st ? frame_of(vp, st, lo, len, w->sfi) : 0;
		bfp = st ? frame_of(vp, st, lo, len, b->sfi) : 0;
		if (!(fp && bfp))
			usleep(100000);
	}
	if (fp) {
		ctx = slot_at(st, lo, len, fp, l->fp_context);
		arr = slot_at(st, lo, len, fp, l->fp_bytecode_array);
		off = slot_at(st, lo, len, fp, l->fp_bytecode_offset);
		v8_type(l, &vp->mem, arr, &t);
	}
	CHECK(fp && v8_is_heap(ctx) && t == l->t_bytecode && !v8_smi(off, &raw) && raw > 0,
	      "waiter's interpreted frame: fp[-8] its context, fp[-32] a BytecodeArray, fp[-40] a Smi",
	      "fp %#llx: context %#llx, array %#llx (type %u), offset word %#llx",
	      (unsigned long long)fp, (unsigned long long)ctx, (unsigned long long)arr, t,
	      (unsigned long long)off);
	/* the slot holds the offset from the array's tagged pointer */
	if (raw > 0)
		e = v8_frame_name(&vp->names, l, &vp->mem, w->sfi, raw - (l->bytecode_data - 1), &fr);
	CHECK(!e && !fr->err && fr->line == want && want,
	      "waiter's bytecode offset (fp[-40] less the array's header) names the line it waits at",
	      "%d: offset %d: line %u (%d), expected %u", e, raw - (l->bytecode_data - 1),
	      fr ? fr->line : 0, fr ? fr->line_err : 0, want);
	if (bfp) {
		boff = slot_at(st, lo, len, bfp, l->fp_bytecode_offset);
		v8_type(l, &vp->mem, boff, &bt);
	}
	CHECK(bfp && !v8_is_smi(boff) && v8_is_heap(boff) && bt != l->t_bytecode,
	      "bwaiter's Sparkplug frame keeps a heap object (its feedback vector), no Smi, at fp[-40]",
	      "fp %#llx: %#llx (type %u)", (unsigned long long)bfp, (unsigned long long)boff, bt);
	free(st);
}

/*
 * deprecate's wrapper (node:internal/util), waiting in its call below
 * bwaiter: an interpreted frame whose offset names its call's line, in
 * node's own source.  1 check.
 */
static void check_builtin_frame(struct v8proc *vp, pid_t pid)
{
	const struct v8_layout *l = &vp->layout;
	struct fn *d = by_label("deprecated");
	uint64_t lo = 0, fp = 0, arr = 0, off = 0;
	const struct v8_frame *fr = NULL;
	size_t len = 0;
	uint8_t *st = read_stack(pid, &lo, &len);
	int32_t raw = -1;
	uint16_t t = 0;
	int e = -1;

	fp = st && d->sfi ? frame_of(vp, st, lo, len, d->sfi) : 0;
	if (fp) {
		arr = slot_at(st, lo, len, fp, l->fp_bytecode_array);
		off = slot_at(st, lo, len, fp, l->fp_bytecode_offset);
		v8_type(l, &vp->mem, arr, &t);
	}
	/* the slot holds the offset from the array's tagged pointer, as waiter's */
	if (t == l->t_bytecode && !v8_smi(off, &raw) && raw > l->bytecode_data - 1)
		e = v8_frame_name(&vp->names, l, &vp->mem, d->sfi, raw - (l->bytecode_data - 1),
				  &fr);
	CHECK(!e && !fr->err && !strcmp(fr->script, d->file) && fr->line == call_line && call_line,
	      "deprecate's wrapper, interpreted: its offset names its call's line in "
	      "node:internal/util",
	      "fp %#llx, array type %u, offset word %#llx: %d: \"%s\" line %u (%d), expected %u",
	      (unsigned long long)fp, t, (unsigned long long)off, e, fr ? fr->script : "",
	      fr ? fr->line : 0, fr ? fr->line_err : 0, call_line);
	free(st);
}

/* Strings externalizeString made: the cached one read, the uncached one refused. 1 check. */
static void check_externalized(struct v8proc *vp, const char *out)
{
	const struct v8_layout *l = &vp->layout;
	uint64_t c = printed_object(out, "extcached"), u = printed_object(out, "extuncached");
	char buf[128] = "", want[101] = "";
	uint16_t tc = 0, tu = 0;
	int ec = -1, eu = -1;

	for (int i = 0; i < 50; i++)
		memcpy(want + 2 * i, "xy", 2);
	if (c && u && !v8_type(l, &vp->mem, c, &tc) && !v8_type(l, &vp->mem, u, &tu)) {
		ec = v8_string(l, &vp->mem, c, buf, sizeof(buf));
		eu = v8_string(l, &vp->mem, u, &(char[8]){ 0 }[0], 8);
	}
	CHECK(!ec && !strcmp(buf, want) && eu == -ENOTSUP &&
		      (tc & l->rep_mask) == l->external_tag &&
		      (tc & l->uncached_mask) != l->uncached_tag &&
		      (tu & l->rep_mask) == l->external_tag &&
		      (tu & l->uncached_mask) == l->uncached_tag,
	      "externalizeString's strings: the cached one (100 characters) read, the uncached one "
	      "(6) refused (-ENOTSUP)",
	      "%#llx type %u: %d \"%s\"; %#llx type %u: %d", (unsigned long long)c, tc, ec, buf,
	      (unsigned long long)u, tu, eu);
}

/* Which way each script's lines were read: 1 check. */
static void check_scripts(struct v8proc *vp)
{
	const struct v8_layout *l = &vp->layout;
	struct v8_sfi main_sfi, worker_sfi;
	uint64_t le_main = 0, le_worker = 0;
	uint16_t tm = 0, tw = 0;
	int e = v8_sfi_read(l, &vp->mem, by_label("named")->sfi, &main_sfi);

	if (!e)
		e = v8_sfi_read(l, &vp->mem, by_label("workerFn")->sfi, &worker_sfi);
	if (!e && !v8_field(l, &vp->mem, main_sfi.script, l->script_line_ends, &le_main) &&
	    !v8_field(l, &vp->mem, worker_sfi.script, l->script_line_ends, &le_worker)) {
		v8_type(l, &vp->mem, le_main, &tm);
		v8_type(l, &vp->mem, le_worker, &tw);
	}
	CHECK(!e && tm == l->t_fixed_array && tw != l->t_fixed_array,
	      "frames.js's lines came from V8's line ends, worker.js's from its source (both ways read)",
	      "%d: types %u and %u", e, tm, tw);
}

/* Pointers that are no SFI, an offset past the bytecode, the cache: 2 checks. */
static void check_refusals(struct v8proc *vp)
{
	const struct v8_layout *l = &vp->layout;
	uint64_t sfi = by_label("named")->sfi;
	struct v8_sfi s;
	const struct v8_frame *fr = NULL, *again = NULL;
	int e1 = v8_sfi_read(l, &vp->mem, sfi, &s), e2 = -1, e3 = -1, e4 = -1, e5;
	size_t named = vp->names.st.named;

	if (!e1) {
		e2 = v8_sfi_read(l, &vp->mem, s.script, &s);
		e3 = v8_sfi_read(l, &vp->mem, sfi + 8, &s);
		e4 = v8_sfi_read(l, &vp->mem, sfi - 1, &s);
	}
	CHECK(!e1 && e2 == -EINVAL && e3 && e4 == -EINVAL,
	      "a Script, an SFI's middle, an untagged SFI: each refused as no SFI", "%d %d %d %d", e1,
	      e2, e3, e4);
	e5 = v8_frame_name(&vp->names, l, &vp->mem, sfi, 100000, &fr);
	if (!e5)
		e5 = v8_frame_name(&vp->names, l, &vp->mem, sfi, 100000, &again);
	CHECK(!e5 && fr == again && fr->line == 0 && fr->line_err == -ERANGE &&
		      fr->start_line == by_label("named")->line && vp->names.st.named == named + 1,
	      "an offset past the bytecode: no line (-ERANGE), the rest named, kept once",
	      "%d: line %u (%d), %zu named", e5, fr ? fr->line : 0, fr ? fr->line_err : 0,
	      vp->names.st.named - named);
}

/*
 * Whether @node runs the V8 release the reader knows (11.3: Node.js 20);
 * another (Debian 12's own nodejs is 18, V8 10.2) is a machine without
 * the runtime this tests, not the reader failing.
 */
static bool node_v8_known(const char *node, char *v, size_t len)
{
	char cmd[PATH_MAX + 64];
	FILE *f;

	snprintf(cmd, sizeof(cmd), "'%s' -p process.versions.v8 2>/dev/null", node);
	v[0] = '\0';
	if (!(f = popen(cmd, "r")))
		return false;
	if (!fgets(v, (int)len, f))
		v[0] = '\0';
	pclose(f);
	v[strcspn(v, "\n")] = '\0';
	return !strncmp(v, "11.3.", 5);
}

int main(void)
{
	char node[PATH_MAX], dir[PATH_MAX], *out = malloc(OUT_MAX);
	struct errbuf err = { "" };
	struct v8proc *vp = NULL;
	int fd = -1, e;
	pid_t pid;

	char v8[64];

	if (!find_node(node, sizeof(node))) {
		T_SKIP("V8: node's frames named", "node is not installed (no node in PATH)");
		free(out);
		return T_EXIT();
	}
	if (!node_v8_known(node, v8, sizeof(v8))) {
		T_SKIP("V8: node's frames named", "node's V8 is %s, not 11.3 (Node.js 20)", v8[0] ? v8 : "unknown");
		free(out);
		return T_EXIT();
	}
	T_PLAN((int)CHECKS);
	if (!realpath(WORKLOAD, dir))
		snprintf(dir, sizeof(dir), "%s", WORKLOAD);
	pid = start_node(node, fmt("%s/frames.js", dir), out, OUT_MAX, &fd);
	if (pid > 0) {
		parse_output(out);
		parse_lines(out);
	}
	e = pid > 0 ? find_v8(pid, &vp, &err) : -ECHILD;
	CHECK(!e && vp->layout.major == 11 && vp->layout.minor == 3,
	      "node's V8 found, its layout read (V8 11.3)", "%d: %s", e, err.msg);
	CHECK(pid > 0 && by_label("workerFn")->sfi, "every function printed, the worker's too",
	      "pid %d", (int)pid);
	if (!e) {
		check_functions(vp, dir);
		check_frames(vp, pid);
		check_scripts(vp);
		check_refusals(vp);
		check_builtins(vp);
		check_source(vp, node, "readFileSync", "fs", false);
		check_source(vp, node, "refresh", "internal/timers", true);
		check_builtin_frame(vp, pid);
		check_externalized(vp, out);
	} else {
		for (size_t i = 2; i < CHECKS; i++)
			CHECK(0, fmt("V8 check %zu", i + 1), "no V8 read");
	}
	v8proc_free(vp);
	stop(pid > 0 ? pid : -pid, fd);
	free(out);
	return T_EXIT();
}
