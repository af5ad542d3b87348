// SPDX-License-Identifier: MIT
/*
 * The BPF unwinder, walking real stacks: the code of bpf/unwind.bpf.h
 * (built as plain C, user/unwind/bpfunwind.h) over tables the loader's own code
 * built (proctab's snapshot of a live process, bpftables.c laying them out
 * into a rows array) and stacks that process recorded (stackshot.c, built
 * without frame pointers: PIE, non-PIE, static).  Each walk must give
 * exactly the frames glibc's backtrace() gave in the same place: libgcc's
 * DWARF unwinder, an implementation independent of ours.
 *
 * Also: find_mapping over the process's entry; a stack cut short ends the
 * walk as a read failure after the frames it had; a pc in no mapping
 * sends one NEW_CODE event.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unwind/bpfunwind.h"
#include "elf/objcache.h"
#include "process/proctab.h"
#include "stackshot.h"
#include "sampling/bpftables.h"
#include "testlib.h"
#include "testutil.h"

#define ROWS_CAP (1u << 20) /* slots of the rows array: libc takes ~30k */

struct shot {
	struct shot_header h;
	const uint64_t *frames; /* backtrace()'s, h.nframes of them */
	const uint8_t *stack;   /* h.stack_len bytes from h.sp on */
};

struct shots {
	struct shot v[16];
	size_t n;
	uint8_t *buf;
};

/* The records of @path, checked for size; false when there are none. */
static bool load_shots(const char *path, struct shots *s)
{
	size_t len = 0, off = 0;

	memset(s, 0, sizeof(*s));
	s->buf = slurp(path, &len);
	while (s->buf && off + sizeof(struct shot_header) <= len && s->n < 16) {
		struct shot *sh = &s->v[s->n];

		memcpy(&sh->h, s->buf + off, sizeof(sh->h));
		off += sizeof(sh->h);
		if (memcmp(sh->h.magic, SHOT_MAGIC, sizeof(sh->h.magic)) ||
		    sh->h.nframes > SHOT_MAX_FRAMES || sh->h.stack_len > len ||
		    off + sh->h.nframes * 8 + sh->h.stack_len > len)
			break;
		sh->h.place[sizeof(sh->h.place) - 1] = '\0';
		sh->frames = (const uint64_t *)(s->buf + off);
		off += sh->h.nframes * 8;
		sh->stack = s->buf + off;
		off += sh->h.stack_len;
		s->n++;
	}
	return s->n > 0 && off == len;
}

/* The fixture, running until its stdin (@hold) closes. */
struct fixture {
	pid_t pid;
	int hold;
};

/* Runs @exe with @out as its file and waits for its "ready". */
static bool start_fixture(const char *exe, const char *out, struct fixture *f)
{
	int in[2], ready[2];
	char buf[8] = "";
	ssize_t n;

	f->pid = -1;
	if (pipe2(in, O_CLOEXEC) || pipe2(ready, O_CLOEXEC))
		return false;
	f->pid = fork();
	if (f->pid == 0) {
		dup2(in[0], 0);
		dup2(ready[1], 1);
		execl(exe, exe, out, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(ready[1]);
	f->hold = in[1];
	n = f->pid > 0 ? read(ready[0], buf, sizeof(buf) - 1) : -1;
	close(ready[0]);
	return n == 6 && strcmp(buf, "ready\n") == 0;
}

static int stop_fixture(struct fixture *f)
{
	int status = 0;

	if (f->pid <= 0)
		return -1;
	close(f->hold);
	if (waitpid(f->pid, &status, 0) != f->pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/*
 * The BPF side bpftables.c writes to: the rows array, the files' entries (in
 * the BPF code's own unwind_files map) and one process's entry; and the
 * loader's side that answers the unwinder's requests for tables.
 */
struct bpf_side {
	union cprof_table_slot *rows;
	struct cprof_proc_maps pm;
	bool have_pm;
	struct objcache *oc;
	struct proctab pt;
	struct bpftables *tb;
};

static int side_write_rows(void *ctx, uint32_t first, const union cprof_table_slot *rows,
			   uint32_t n)
{
	struct bpf_side *s = ctx;

	if (!n)
		return 0; /* the end of a table's writes */
	if ((uint64_t)first + n > ROWS_CAP)
		return -ERANGE;
	memcpy(&s->rows[first], rows, (size_t)n * sizeof(*rows));
	return 0;
}

static int side_set_proc(void *ctx, uint32_t pid, const struct cprof_proc_maps *pm)
{
	struct bpf_side *s = ctx;

	s->have_pm = pm != NULL;
	if (pm)
		s->pm = *pm;
	return 0;
}

static int side_set_file(void *ctx, uint32_t file, const struct cprof_file *f)
{
	bpfu_set_file(file, f);
	return 0;
}

static int side_set_file_key(void *ctx, const struct cprof_file_key *k,
			     const struct cprof_file_ref *ref)
{
	bpfu_set_file_key(k, ref);
	return 0;
}

/*
 * The process's executable file mappings as the kernel's VMAs name them:
 * device and inode as /proc/PID/maps gives them (the kernel's own), size
 * and mtime of the file at the path.
 */
static void set_vmas(const struct process *p)
{
	static struct bpfu_vma v[BPFU_VMAS_MAX];
	size_t n = 0;

	for (size_t i = 0; i < p->maps.n && n < BPFU_VMAS_MAX; i++) {
		const struct vma *m = &p->maps.v[i];
		struct stat st;

		if (!m->path || m->kind != VMA_FILE || stat(m->path, &st))
			continue;
		v[n++] = (struct bpfu_vma){
			.start = m->start, .end = m->end, .pgoff = m->offset >> 12,
			.key = { .ino = m->inode, .size = (uint64_t)st.st_size,
				 .mtime_sec = st.st_mtim.tv_sec,
				 .mtime_nsec = (uint32_t)st.st_mtim.tv_nsec,
				 .dev = m->dev_major << 20 | m->dev_minor },
		};
	}
	bpfu_set_vmas(v, n, true);
}

/* As the loader's retire: the row cache forgets (rows_gen advances). */
static int side_retire(void *ctx)
{
	struct bpf_side *s = ctx;

	bpfu_set_rows(s->rows, ROWS_CAP);
	return 0;
}

/*
 * The entry the loader gives the running process @pid, with the numbers of
 * its files and no table built: they are built as walks ask for them.
 */
static bool load_tables(uint32_t pid, struct bpf_side *side, struct errbuf *err)
{
	struct bpftables_maps maps = { .capacity = ROWS_CAP, .set_proc = side_set_proc,
				    .write_rows = side_write_rows, .set_file = side_set_file,
				    .set_file_key = side_set_file_key, .retire = side_retire,
				    .ctx = side };
	struct process *p;

	side->have_pm = false;
	side->oc = objcache_new();
	if (!side->oc || proctab_init(&side->pt, side->oc, NULL, "/proc", NULL, NULL))
		return false;
	p = proctab_get(&side->pt, pid, 1, "stackshot", NULL);
	bpfu_set_rows(side->rows, ROWS_CAP);
	if (p && p->have_maps)
		set_vmas(p);
	return p && p->have_maps && bpftables_new(&side->tb, &maps, side->oc) == 0 &&
	       bpftables_add_process(side->tb, p, err) == 0 && side->have_pm;
}

static void unload_tables(struct bpf_side *side)
{
	bpftables_free(side->tb);
	side->tb = NULL;
	if (side->oc)
		proctab_free(&side->pt);
	objcache_free(side->oc);
	side->oc = NULL;
}

/* How many leading frames of @w are @s's backtrace() frames. */
static size_t agreeing(const struct bpfu_walk *w, const struct shot *s)
{
	size_t k = 0;

	while (k < w->st.nr && k < s->h.nframes && w->st.ip[k] == s->frames[k])
		k++;
	return k;
}

static int walk(uint32_t pid, const struct cprof_proc_maps *pm, const struct shot *s,
		size_t stack_len, struct bpfu_walk *w)
{
	struct bpfu_regs regs = { s->h.pc, s->h.sp, s->h.bp };
	struct bpfu_memory mem = { s->h.sp, s->stack, stack_len };

	return bpfu_walk(pid, pm, &regs, &mem, w);
}

/*
 * Walks @s as samples of it would come, the loader answering the tables
 * the walks ask for between them, until a walk asks for none (at most one
 * walk per file).  Returns the walks taken; *@asked: the tables asked for.
 */
static int walk_until_built(uint32_t pid, struct bpf_side *side, const struct shot *s,
			    struct bpfu_walk *w, size_t *asked)
{
	int walks = 0;

	*asked = 0;
	do {
		if (walk(pid, &side->pm, s, s->h.stack_len, w))
			return -1;
		walks++;
		*asked += w->asked;
		for (size_t i = 0; i < w->asked && i < 16; i++)
			bpftables_want(side->tb, w->asked_file[i]);
		bpftables_build_pending(side->tb);
	} while (w->asked && walks < 8);
	return walks;
}

static void check_shot(const char *variant, uint32_t pid, struct bpf_side *side,
		       const struct shot *s)
{
	static struct bpfu_walk w;
	const char *name = fmt("%s %s", variant, s->h.place);
	size_t same, asked;
	int rc;

	CHECK(s->h.nframes > 3 && s->frames[0] == s->h.pc,
	      fmt("%s: backtrace() reached the capture point", name), "%llu frames",
	      (unsigned long long)s->h.nframes);
	rc = walk_until_built(pid, side, s, &w, &asked) < 0 ? -1 : 0;
	printf("# %s: %zu tables asked for\n", name, asked);
	same = agreeing(&w, s);
	CHECK(rc == 0 && w.status == CPROF_UNWIND_OK && same == s->h.nframes &&
		      w.st.nr == s->h.nframes,
	      fmt("%s: the BPF walk gives backtrace()'s %llu frames", name,
		  (unsigned long long)s->h.nframes),
	      "rc %d, status %u, %u frames; frame %zu: ours %#llx, backtrace() %#llx", rc,
	      w.status, w.st.nr, same,
	      (unsigned long long)(same < w.st.nr ? w.st.ip[same] : 0),
	      (unsigned long long)(same < s->h.nframes ? s->frames[same] : 0));
	CHECK((w.st.status & CPROF_STACK_F_DWARF) && !(w.st.status & CPROF_STACK_F_FP) &&
		      w.new_code == 0,
	      fmt("%s: every frame by CFI, every pc in a mapping", name),
	      "stack flags %#x, %zu NEW_CODE events", w.st.status, w.new_code);
	printf("# %s: %u frames, %zu stack reads for %llu bytes of stack\n", name, w.st.nr,
	       w.reads, (unsigned long long)s->h.stack_len);

	/* Half the stack the walk took: the frames up to there, then a read failure. */
	rc = walk(pid, &side->pm, s, (w.sp - s->h.sp) / 2, &w);
	same = agreeing(&w, s);
	CHECK(rc == 0 && w.status == CPROF_UNWIND_READ && w.st.nr > 0 && same == w.st.nr &&
		      w.st.nr < s->h.nframes,
	      fmt("%s: half the stack: backtrace()'s first frames, then READ", name),
	      "status %u, %u frames, %zu of them right", w.status, w.st.nr, same);
}

/*
 * Deferred walks (bpf/defer.bpf.h, user/unwind/deferred.c): with the table of
 * frame @k's file still to come, the walk notes the first frame in that
 * file; walked on from the note over a copy of the stack from its sp, as
 * the loader does once the table is built, it gives the frames, status and
 * name of the walk that had every table from the start.
 */
/* The file of frame @k of @w (a return address's: the call's), CPROF_NO_FILE: none. */
static uint32_t file_of_frame(const struct cprof_proc_maps *pm, const struct bpfu_walk *w,
			      uint32_t k)
{
	int idx = bpfu_find_mapping(pm, k ? w->st.ip[k] - 1 : w->st.ip[0]);

	return idx < 0 ? CPROF_NO_FILE : pm->m[idx].file;
}

static void check_deferred(const char *variant, uint32_t pid, struct bpf_side *side,
			   const struct shot *s, uint32_t k)
{
	static struct bpfu_walk whole, w, on;
	static struct cprof_deferred rec;
	const char *name = fmt("%s %s, frame %u", variant, s->h.place, k);
	struct cprof_file loaded, queued;
	uint32_t file, first = 0;
	int rc;
	uint64_t off;

	if (walk(pid, &side->pm, s, s->h.stack_len, &whole) || whole.status != CPROF_UNWIND_OK ||
	    k >= whole.st.nr) {
		CHECK(false, fmt("%s: a whole walk first", name), "status %u, %u frames",
		      whole.status, whole.st.nr);
		return;
	}
	file = file_of_frame(&side->pm, &whole, k);
	if (file == CPROF_NO_FILE) {
		CHECK(false, fmt("%s: the frame is in a mapping", name), "%#llx",
		      (unsigned long long)whole.st.ip[k]);
		return;
	}
	/* the first frame in that file is where the walk waits */
	while (first < k && file_of_frame(&side->pm, &whole, first) != file)
		first++;
	bpfu_get_file(file, &loaded);
	queued = (struct cprof_file){ .state = CPROF_FILE_QUEUED, .asked = 1 };
	bpfu_set_file(file, &queued);
	bpfu_set_defer(true);
	rc = walk(pid, &side->pm, s, s->h.stack_len, &w);
	bpfu_set_defer(false);
	bpfu_set_file(file, &loaded);
	memset(&rec, 0, sizeof(rec));
	bpfu_defer_note(&rec);
	CHECK(rc == 0 && w.deferred && rec.nr == first && rec.file == file &&
		      rec.pc == whole.st.ip[first] && rec.exact == (first == 0) &&
		      !memcmp(rec.ip, whole.st.ip, first * sizeof(rec.ip[0])),
	      fmt("%s: the walk notes the first frame whose table is to come", name),
	      "rc %d, deferred %d, frame %u of file %u (want %u of %u), pc %#llx", rc, w.deferred,
	      rec.nr, rec.file, first, file, (unsigned long long)rec.pc);
	off = rec.sp - s->h.sp;
	if (rec.sp < s->h.sp || off > s->h.stack_len)
		return;
	rec.stack_lo = rec.sp;
	rec.stack_len = (uint32_t)(s->h.stack_len - off);
	if (rec.stack_len > CPROF_DEFER_STACK)
		rec.stack_len = CPROF_DEFER_STACK;
	rc = bpfu_resume(pid, &side->pm, &rec, s->stack + off, &on);
	CHECK(rc == 0 && on.status == whole.status && on.st.nr == whole.st.nr &&
		      !memcmp(on.st.ip, whole.st.ip, whole.st.nr * sizeof(on.st.ip[0])) &&
		      on.hash == whole.hash &&
		      bpfu_stack_hash(&on.st, on.hash) == bpfu_stack_hash(&whole.st, whole.hash) &&
		      !(on.st.status & CPROF_STACK_F_FP),
	      fmt("%s: walked on from there once the table is built: the whole walk's stack", name),
	      "rc %d, status %u (%u), %u frames (%u), flags %#x, hash %s", rc, on.status,
	      whole.status, on.st.nr, whole.st.nr, on.st.status,
	      on.hash == whole.hash ? "same" : "differs");
	/* a copy cut short: the frames it holds, then a read failure, as in BPF */
	rec.stack_len = (uint32_t)((whole.sp - rec.sp) / 2);
	rc = bpfu_resume(pid, &side->pm, &rec, s->stack + off, &on);
	CHECK(rc == 0 && on.status == CPROF_UNWIND_READ && on.st.nr > first &&
		      on.st.nr < whole.st.nr &&
		      !memcmp(on.st.ip, whole.st.ip, on.st.nr * sizeof(on.st.ip[0])),
	      fmt("%s: half the copy: the whole walk's first frames, then READ", name),
	      "rc %d, status %u, %u frames", rc, on.status, on.st.nr);
}

/*
 * A process the loader has no entry for (its first samples), mapping the
 * files whose tables are known: the walk finds them from the kernel's VMAs
 * and gives backtrace()'s frames, by CFI.
 */
static void check_first_sample(const char *variant, uint32_t pid, const struct shot *s)
{
	static struct bpfu_walk w;
	const char *name = fmt("%s %s", variant, s->h.place);
	size_t same;
	int rc = walk(pid + 1, NULL, s, s->h.stack_len, &w);

	/* The kernel names one file a sample: the leaf's, walked by its table. */
	same = agreeing(&w, s);
	CHECK(rc == 0 && same >= 1 && (w.st.status & CPROF_STACK_F_DWARF) && w.asked == 0 &&
		      !w.unknown_file,
	      fmt("%s: without an entry, the first sample by the leaf's file's table", name),
	      "rc %d, status %u, %u frames, %zu right, flags %#x, %zu asked, unknown file %d",
	      rc, w.status, w.st.nr, same, w.st.status, w.asked, w.unknown_file);
	/* The next samples find the files the earlier ones did, and one more each. */
	for (int i = 0; i < 4 && rc == 0 && same < s->h.nframes; i++) {
		rc = walk(pid + 1, BPFU_KEPT, s, s->h.stack_len, &w);
		same = agreeing(&w, s);
	}
	CHECK(rc == 0 && w.status == CPROF_UNWIND_OK && same == s->h.nframes &&
		      w.st.nr == s->h.nframes && (w.st.status & CPROF_STACK_F_DWARF) &&
		      !(w.st.status & CPROF_STACK_F_FP) && w.asked == 0 && w.new_code == 0,
	      fmt("%s: without an entry, a later sample by its files' tables: backtrace()'s frames",
		  name),
	      "rc %d, status %u, %u frames, %zu right, flags %#x, %zu asked, %zu NEW_CODE", rc,
	      w.status, w.st.nr, same, w.st.status, w.asked, w.new_code);
}

/* find_mapping over the entry: each mapping's first and last byte, and the gaps. */
static void check_mappings(const char *variant, const struct cprof_proc_maps *pm)
{
	size_t bad = 0, n = pm->n;

	for (size_t i = 0; i < n; i++) {
		const struct cprof_proc_map *m = &pm->m[i];

		bad += bpfu_find_mapping(pm, m->start) != (int)i;
		bad += bpfu_find_mapping(pm, m->end - 1) != (int)i;
		if (i + 1 == n || m->end < pm->m[i + 1].start)
			bad += bpfu_find_mapping(pm, m->end) != -1;
	}
	bad += n && bpfu_find_mapping(pm, pm->m[0].start - 1) != -1;
	CHECK(n > 0 && bad == 0,
	      fmt("%s: find_mapping finds each of %zu mappings and nothing between", variant, n),
	      "%zu wrong", bad);
}

/*
 * Without the mapping of the shot's second frame (libc's qsort, say): one
 * NEW_CODE event for the process, and the kernel's VMA (one look a
 * sample) names the file for qsort and again for __libc_start_call_main
 * under main: every frame, by CFI.
 */
static void check_new_code(const char *variant, uint32_t pid, struct bpf_side *side,
			   const struct shot *s)
{
	static struct cprof_proc_maps pm;
	static struct bpfu_walk w;
	int gone = bpfu_find_mapping(&side->pm, s->frames[1] - 1);
	int rc;

	if (gone < 0) {
		CHECK(false, fmt("%s: the second frame of %s is in a mapping", variant, s->h.place),
		      "%#llx in none", (unsigned long long)s->frames[1]);
		return;
	}
	pm = side->pm;
	memmove(&pm.m[gone], &pm.m[gone + 1], (pm.n - (uint32_t)gone - 1) * sizeof(pm.m[0]));
	pm.n--;
	rc = walk(pid, &pm, s, s->h.stack_len, &w);
	CHECK(rc == 0 && w.new_code == 1 && w.new_code_pid == pid && agreeing(&w, s) >= 2,
	      fmt("%s %s: a pc in no mapping sends one NEW_CODE event", variant, s->h.place),
	      "rc %d, %zu events (pid %u), %zu frames right", rc, w.new_code, w.new_code_pid,
	      agreeing(&w, s));
	CHECK(rc == 0 && w.status == CPROF_UNWIND_OK && agreeing(&w, s) == s->h.nframes &&
		      w.st.nr == s->h.nframes && !(w.st.status & CPROF_STACK_F_FP),
	      fmt("%s %s: back into the file the kernel's VMA named: every frame by CFI", variant,
		  s->h.place),
	      "status %u, %u frames, %zu right, flags %#x", w.status, w.st.nr, agreeing(&w, s),
	      w.st.status);
	/*
	 * The mapping there, added by an mmap since the loader's read: the
	 * walk goes through it, and asks for a snapshot that names it.
	 * Another pid: the first one's NEW_CODE holds its next for 200 ms.
	 */
	pm = side->pm;
	pm.m[gone].flags = CPROF_MAP_ADDED;
	pm.flags |= CPROF_PROC_MAPS_GROWN;
	rc = walk(pid + 1, &pm, s, s->h.stack_len, &w);
	CHECK(rc == 0 && w.new_code == 1 && w.new_code_pid == pid + 1 &&
		      w.status == CPROF_UNWIND_OK && agreeing(&w, s) == s->h.nframes &&
		      !(w.st.status & CPROF_STACK_F_FP),
	      fmt("%s %s: through a mapping an mmap added, every frame by CFI and one NEW_CODE",
		  variant, s->h.place),
	      "rc %d, %zu events (pid %u), status %u, %zu right, flags %#x", rc, w.new_code,
	      w.new_code_pid, w.status, agreeing(&w, s), w.st.status);
}

static void test_variant(const char *dir, const char *tmp, const char *variant,
			 struct bpf_side *side)
{
	char exe[PATH_MAX], out[PATH_MAX];
	struct errbuf err = { "" };
	struct fixture f;
	struct shots s = { 0 };
	bool tables;
	int rc;

	if (snprintf(exe, sizeof(exe), "%s/stackshot-%s", dir, variant) >= (int)sizeof(exe) ||
	    snprintf(out, sizeof(out), "%s/%s.shots", tmp, variant) >= (int)sizeof(out) ||
	    !start_fixture(exe, out, &f)) {
		CHECK(false, fmt("%s: the fixture records its stacks", variant),
		      "%s did not say ready (built by make unit-bins?)", exe);
		stop_fixture(&f);
		return;
	}
	tables = load_tables((uint32_t)f.pid, side, &err);
	rc = stop_fixture(&f);
	CHECK(tables && rc == 0, fmt("%s: tables of the live process, by the loader's code", variant),
	      "tables %d (%s), fixture exit %d", tables, err.msg, rc);
	if (!tables || !load_shots(out, &s)) {
		CHECK(false, fmt("%s: records read", variant), "%s: %zu records", out, s.n);
		unload_tables(side);
		free(s.buf);
		return;
	}
	check_mappings(variant, &side->pm);
	for (size_t i = 0; i < s.n; i++) {
		check_shot(variant, (uint32_t)f.pid, side, &s.v[i]);
		if (strcmp(variant, "pie") == 0 && strcmp(s.v[i].h.place, "qsort") == 0)
			check_new_code(variant, (uint32_t)f.pid, side, &s.v[i]);
		/* the leaf's file waiting, and the next frame's (libc's, where it is another) */
		check_deferred(variant, (uint32_t)f.pid, side, &s.v[i], 0);
		check_deferred(variant, (uint32_t)f.pid, side, &s.v[i], 1);
	}
	for (size_t i = 0; i < s.n; i++)
		check_first_sample(variant, (uint32_t)f.pid, &s.v[i]);
	{
		/* Without the file_tables setting, no look at the VMAs: frame pointers. */
		static struct bpfu_walk w;

		bpfu_set_vmas(NULL, 0, false);
		rc = s.n ? walk((uint32_t)f.pid + 1, NULL, &s.v[0], s.v[0].h.stack_len, &w) : -1;
		CHECK(rc == 0 && !(w.st.status & CPROF_STACK_F_DWARF),
		      fmt("%s: no entry and no file tables: no CFI", variant), "rc %d, flags %#x",
		      rc, w.st.status);
	}
	if (s.n) {
		/*
		 * The leaf's file as the kernel has it, but another identity
		 * than any the loader told: a program no read process maps.
		 * Its frames go by frame pointers, and the walk says why.
		 */
		static struct bpfu_walk w;
		struct bpfu_vma v = { .start = s.v[0].h.pc & ~0xfffULL,
				      .end = (s.v[0].h.pc & ~0xfffULL) + 0x1000,
				      .key = { .ino = 1, .size = 1, .dev = 1 } };

		bpfu_set_vmas(&v, 1, true);
		rc = walk((uint32_t)f.pid + 2, NULL, &s.v[0], s.v[0].h.stack_len, &w);
		CHECK(rc == 0 && w.unknown_file && !(w.st.status & CPROF_STACK_F_DWARF) &&
			      w.asked == 0,
		      fmt("%s: no entry, the leaf's file not numbered: no CFI, counted", variant),
		      "rc %d, unknown file %d, flags %#x, %zu asked", rc, w.unknown_file,
		      w.st.status, w.asked);
	}
	CHECK(s.n == 5, fmt("%s: all five places recorded", variant), "%zu", s.n);
	{
		struct bpftables_stats st;

		/*
		 * ld.so, say, is mapped but no frame is in it: its table is never
		 * built (the static binary maps nothing else)
		 */
		bpftables_get_stats(side->tb, &st);
		CHECK(st.built > 0 && st.built == st.asked && (st.built < st.files || st.files == 1),
		      fmt("%s: tables built for the files frames landed in only, once each", variant),
		      "%zu built, %zu asked for, %zu files", st.built, st.asked, st.files);
	}
	unload_tables(side);
	free(s.buf);
}

int main(void)
{
	static const char *const variants[] = { "pie", "nopie", "static" };
	char self[PATH_MAX], tmpl[] = "/tmp/test_unwind_walk.XXXXXX";
	struct bpf_side side = { 0 };
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	setvbuf(stdout, NULL, _IOLBF, 0);
	T_PLAN(201);
	if (n <= 0 || !mkdtemp(tmpl)) {
		printf("not ok - test_unwind_walk: no /proc/self/exe or temporary directory\n");
		return 1;
	}
	self[n] = '\0';
	*strrchr(self, '/') = '\0'; /* the fixtures are built beside this test */
	side.rows = calloc(ROWS_CAP, sizeof(*side.rows));
	if (!side.rows)
		return 2;
	for (size_t i = 0; i < sizeof(variants) / sizeof(variants[0]); i++)
		test_variant(self, tmpl, variants[i], &side);
	free(side.rows);
	sh(fmt("rm -rf '%s'", tmpl));
	return T_EXIT();
}
