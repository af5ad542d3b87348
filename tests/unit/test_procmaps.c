// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <gnu/libc-version.h>
#endif

#include "cprof.h"
#include "fs/procmaps.h"
#include "testlib.h"

static const char crafted[] =
	"00400000-00452000 r-xp 00000000 08:02 173521                             /usr/bin/dbus-daemon\n"
	"00651000-00652000 r--p 00051000 08:02 173521                             /usr/bin/dbus-daemon\n"
	"00652000-00655000 rw-p 00052000 08:02 173521                             /usr/bin/dbus-daemon\n"
	"01000000-01100000 rw-p 00000000 00:00 0                                  [heap]\n"
	"zz400000-00452000 r-xp 00000000 08:02 1  /bad/hex\n"
	"02000000-02001000 r-xp\n"
	"03000000-03000000 r-xp 00000000 00:00 0\n"
	"04000000-03000000 r-xp 00000000 00:00 0\n"
	"10000000000000000-10000000000000001 r-xp 00000000 00:00 0\n"
	"05000000-05001000 rwzp 00000000 00:00 0\n"
	"06000000-06001000 r-xp 00000000 00:00 12x /inode/junk\n"
	"07000000-07001000 r-xp 00000000 100000000:00 1 /dev/overflow\n"
	"\n"
	"7f0000000000-7f0000021000 r-xp 00001000 fd:01 1234                       /opt/my app/lib with  spaces.so\n"
	"7f0000100000-7f0000101000 r-xp 00000000 fd:01 5678                       /tmp/old.so (deleted)\n"
	"7f0000200000-7f0000300000 rwxp 00000000 00:00 0 \n"
	"7f0000400000-7f0000600000 r-xp 00000000 00:00 0\n"
	"7f0000700000-7f0000701000 r-xs 00000000 00:01 4242                       /memfd:jit-code (deleted)\n"
	"7f0000800000-7f0000801000 rw-s 00000000 00:01 99                         /dev/zero (deleted)\n"
	"7f0000900000-7f0000901000 rw-p 00000000 00:00 0                          [anon:foo bar]\n"
	"7f0000a00000-7f0000a01000 r--p 00000000 00:05 0                          /weird/inode-zero\n"
	"7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]\n"
	"7ffd00100000-7ffd00102000 r-xp 00000000 00:00 0                          [vdso]\n"
	"7ffff7ff0000-7ffff7ff1000 --xp 00000000 00:00 0                          [uprobes]\n"
	"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]";
/* 16 good lines, 8 malformed ones and a blank one (not counted). */

static const struct vma *find_start(const struct vma_list *l, uint64_t start)
{
	const struct vma *v = procmaps_find(l, start);

	return v && v->start == start ? v : NULL;
}

static void test_crafted(void)
{
	struct errbuf err = { "" };
	struct vma_list l;
	const struct vma *v;
	char *text = malloc(sizeof(crafted) + PATH_MAX + 400);
	size_t i;
	int ret;

	/* An overlong line (a path longer than PATH_MAX) in the middle. */
	size_t k = (size_t)(strstr(crafted, "\n7f00") + 1 - crafted), at;

	memcpy(text, crafted, k);
	at = k + (size_t)sprintf(text + k, "08000000-08001000 r-xp 00000000 fd:01 1 /");
	memset(text + at, 'a', PATH_MAX + 200);
	at += PATH_MAX + 200;
	text[at++] = '\n';
	strcpy(text + at, crafted + k);

	ret = procmaps_parse(text, strlen(text), &l, &err);
	CHECK(ret == 0, "crafted: parses", "ret %d: %s", ret, err.msg);
	CHECK(l.n == 16, "crafted: 16 good lines", "n = %zu", l.n);
	CHECK(l.skipped == 9, "crafted: malformed and overlong lines skipped",
	      "skipped = %zu", l.skipped);
	for (i = 1; i < l.n; i++)
		if (l.v[i - 1].end > l.v[i].start)
			break;
	CHECK(i == l.n, "crafted: sorted and disjoint", "entry %zu", i);

	v = find_start(&l, 0x400000);
	CHECK(v && v->end == 0x452000 && v->kind == VMA_FILE &&
	      v->prot == (VMA_READ | VMA_EXEC) && v->inode == 173521 &&
	      v->dev_major == 8 && v->dev_minor == 2 && !v->deleted,
	      "crafted: library text fields", "bad entry");
	CHECK_STR(v ? v->path : NULL, "/usr/bin/dbus-daemon", "crafted: library path");
	v = find_start(&l, 0x651000);
	CHECK(v && v->offset == 0x51000 && v->prot == VMA_READ,
	      "crafted: rodata offset and prot", "bad entry");
	v = find_start(&l, 0x652000);
	CHECK(v && v->prot == (VMA_READ | VMA_WRITE), "crafted: data prot", "bad entry");

	v = find_start(&l, 0x1000000);
	CHECK(v && v->kind == VMA_SPECIAL, "crafted: [heap] is special", "bad entry");
	CHECK_STR(v ? v->path : NULL, "[heap]", "crafted: [heap] name");

	v = find_start(&l, 0x7f0000000000);
	CHECK(v && v->kind == VMA_FILE && v->offset == 0x1000 &&
	      v->dev_major == 0xfd && v->dev_minor == 1,
	      "crafted: path with spaces is a file", "bad entry");
	CHECK_STR(v ? v->path : NULL, "/opt/my app/lib with  spaces.so",
		  "crafted: path with spaces kept whole");

	v = find_start(&l, 0x7f0000100000);
	CHECK(v && v->deleted && v->kind == VMA_FILE, "crafted: (deleted) flagged",
	      "bad entry");
	CHECK_STR(v ? v->path : NULL, "/tmp/old.so", "crafted: (deleted) stripped");

	v = find_start(&l, 0x7f0000200000);
	CHECK(v && v->kind == VMA_ANON && !v->path &&
	      v->prot == (VMA_READ | VMA_WRITE | VMA_EXEC),
	      "crafted: rwx JIT region is anonymous", "bad entry");
	v = find_start(&l, 0x7f0000400000);
	CHECK(v && v->kind == VMA_ANON && !v->path && v->inode == 0,
	      "crafted: huge-page text copy is anonymous", "bad entry");

	v = find_start(&l, 0x7f0000700000);
	CHECK(v && v->kind == VMA_FILE && v->deleted && v->inode == 4242 &&
	      (v->prot & VMA_SHARED),
	      "crafted: memfd is a deleted shared file", "bad entry");
	CHECK_STR(v ? v->path : NULL, "/memfd:jit-code", "crafted: memfd name");
	v = find_start(&l, 0x7f0000800000);
	CHECK(v && v->kind == VMA_FILE && v->deleted, "crafted: /dev/zero (deleted)",
	      "bad entry");
	CHECK_STR(v ? v->path : NULL, "/dev/zero", "crafted: /dev/zero name");
	v = find_start(&l, 0x7f0000a00000);
	CHECK(v && v->kind == VMA_FILE && v->inode == 0,
	      "crafted: named mapping with inode 0 is a file", "bad entry");

	v = find_start(&l, 0x7f0000900000);
	CHECK(v && v->kind == VMA_SPECIAL, "crafted: [anon:...] is special", "bad entry");
	CHECK_STR(v ? v->path : NULL, "[anon:foo bar]", "crafted: [anon:...] name");
	v = find_start(&l, 0x7ffd00000000);
	CHECK_STR(v && v->kind == VMA_SPECIAL ? v->path : NULL, "[stack]",
		  "crafted: [stack]");
	v = find_start(&l, 0x7ffd00100000);
	CHECK_STR(v && v->kind == VMA_SPECIAL ? v->path : NULL, "[vdso]",
		  "crafted: [vdso]");
	v = find_start(&l, 0x7ffff7ff0000);
	CHECK_STR(v && v->kind == VMA_SPECIAL ? v->path : NULL, "[uprobes]",
		  "crafted: [uprobes]");
	v = find_start(&l, 0xffffffffff600000);
	CHECK(v && v->prot == VMA_EXEC, "crafted: [vsyscall] (last line, no newline)",
	      "bad entry");
	CHECK_STR(v ? v->path : NULL, "[vsyscall]", "crafted: [vsyscall] name");

	/* procmaps_find at the edges. */
	v = procmaps_find(&l, 0x400000);
	CHECK(v && v->start == 0x400000, "find: at start", "not found");
	v = procmaps_find(&l, 0x451fff);
	CHECK(v && v->start == 0x400000, "find: at end - 1", "not found");
	CHECK(procmaps_find(&l, 0x452000) == NULL, "find: at end is outside",
	      "found something");
	CHECK(procmaps_find(&l, 0x500000) == NULL, "find: in a gap", "found something");
	CHECK(procmaps_find(&l, 0x3fffff) == NULL, "find: below the first", "found something");
	CHECK(procmaps_find(&l, 0x7f0000300000) == NULL, "find: right after the JIT region",
	      "found something");
	CHECK(procmaps_find(&l, UINT64_MAX) == NULL, "find: above the last", "found something");
	v = procmaps_find(&l, 0xffffffffff600fff);
	CHECK(v && v->start == 0xffffffffff600000, "find: last byte of the last", "not found");

	procmaps_free(&l);
	free(text);
}

static void test_edge_inputs(void)
{
	static const char unsorted[] =
		"3000-4000 r-xp 00000000 00:00 0\n"
		"1000-2000 r-xp 00000000 fd:01 7 /b\n"
		"1800-2800 r-xp 00000000 fd:01 7 /overlap\n"
		"2000-3000 r-xp 00000000 fd:01 8 /c\n";
	const char *one = "1000-2000 r-xp 00000000 fd:01 7 /lib/x.so\n2000-3000";
	struct errbuf err = { "" };
	struct vma_list l;
	int ret;

	ret = procmaps_parse(unsorted, strlen(unsorted), &l, &err);
	CHECK(ret == 0 && l.n == 3 && l.skipped == 1 && l.v[0].start == 0x1000 &&
	      l.v[1].start == 0x2000 && l.v[2].start == 0x3000,
	      "unsorted input sorted, overlap dropped", "n %zu skipped %zu", l.n,
	      l.skipped);
	CHECK(procmaps_find(&l, 0x2500) && strcmp(procmaps_find(&l, 0x2500)->path, "/c") == 0,
	      "unsorted input: find after sorting", "wrong entry");
	procmaps_free(&l);

	/* Not NUL-terminated: the length bounds the parse, mid-line too. */
	ret = procmaps_parse(one, strlen("1000-2000 r-xp 00000000 fd:01 7 /lib/x"), &l, &err);
	CHECK(ret == 0 && l.n == 1 && l.skipped == 0, "length-bounded parse",
	      "ret %d n %zu", ret, l.n);
	CHECK_STR(l.n ? l.v[0].path : NULL, "/lib/x", "length-bounded path");
	procmaps_free(&l);

	ret = procmaps_parse("", 0, &l, &err);
	CHECK(ret == 0 && l.n == 0 && l.skipped == 0 && procmaps_find(&l, 0) == NULL,
	      "empty text", "ret %d n %zu", ret, l.n);
	procmaps_free(&l);
}

static void test_self(void)
{
	struct errbuf err = { "" };
	struct vma_list l;
	const struct vma *v;
	uint64_t main_addr = (uint64_t)(uintptr_t)&test_self;
#ifdef __GLIBC__
	/* Not intercepted by sanitizers, unlike printf. */
	uint64_t libc_addr = (uint64_t)(uintptr_t)&gnu_get_libc_version;
#else
	uint64_t libc_addr = (uint64_t)(uintptr_t)&getpid;
#endif
	char self[PATH_MAX];
	ssize_t n;
	int ret;

	ret = procmaps_read("/proc", getpid(), &l, &err);
	CHECK(ret == 0 && l.n > 5, "self: reads /proc/<pid>/maps", "ret %d n %zu: %s",
	      ret, l.n, err.msg);
	CHECK(l.skipped == 0, "self: nothing skipped", "skipped %zu", l.skipped);
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[n > 0 ? n : 0] = '\0';
	v = procmaps_find(&l, main_addr);
	CHECK(v && v->kind == VMA_FILE && (v->prot & VMA_EXEC) && v->inode != 0,
	      "self: test code is in an executable file mapping", "not found");
	CHECK_STR(v ? v->path : NULL, self, "self: mapping path is /proc/self/exe");
	v = procmaps_find(&l, libc_addr);
	CHECK(v && v->kind == VMA_FILE && (v->prot & VMA_EXEC) && v->path &&
	      strstr(v->path, "libc"),
	      "self: libc function is in libc", "%s", v && v->path ? v->path : "not found");
	v = procmaps_find(&l, (uint64_t)(uintptr_t)&v);
	CHECK_STR(v ? v->path : NULL, "[stack]", "self: a local is on [stack]");
	procmaps_free(&l);
}

static void test_errors_and_fake_root(void)
{
	struct errbuf err = { "" };
	struct vma_list l;
	char dir[] = "/tmp/test_procmaps.XXXXXX";
	char path[PATH_MAX];
	FILE *f;
	int ret;

	ret = procmaps_read("/proc", INT_MAX, &l, &err);
	CHECK(ret == -ENOENT, "missing pid: -ENOENT", "ret %d", ret);
	CHECK_STR(err.msg, "/proc/2147483647/maps: No such file or directory",
		  "missing pid: message names the path");
	CHECK(l.n == 0 && l.v == NULL, "missing pid: empty list", "n %zu", l.n);
	procmaps_free(&l);

	if (!mkdtemp(dir)) {
		T_SKIP("fake proc root", "mkdtemp: %s", strerror(errno));
		return;
	}
	snprintf(path, sizeof(path), "%s/42", dir);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/42/maps", dir);
	f = fopen(path, "w");
	if (f) {
		fputs(crafted, f);
		fclose(f);
	}
	ret = procmaps_read(dir, 42, &l, &err);
	CHECK(ret == 0 && l.n == 16 && l.skipped == 8, "fake proc root: reads maps",
	      "ret %d n %zu skipped %zu: %s", ret, l.n, l.skipped, err.msg);
	CHECK_STR(l.n ? l.v[0].path : NULL, "/usr/bin/dbus-daemon",
		  "fake proc root: first path");
	procmaps_free(&l);

	f = fopen(path, "w"); /* empty, like a kernel thread */
	if (f)
		fclose(f);
	ret = procmaps_read(dir, 42, &l, &err);
	CHECK(ret == 0 && l.n == 0, "fake proc root: empty maps", "ret %d", ret);
	procmaps_free(&l);

	unlink(path);
	snprintf(path, sizeof(path), "%s/42", dir);
	rmdir(path);
	rmdir(dir);
}

static void test_large(void)
{
	enum { LINES = 100000 };
	struct errbuf err = { "" };
	struct vma_list l;
	size_t cap = (size_t)LINES * 128, len = 0, i, bad = 0;
	char *text = malloc(cap);
	int ret;

	for (i = 0; i < LINES; i++) {
		uint64_t start = 0x10000000ull + (uint64_t)i * 0x2000;

		/* Five mappings per distinct file: the arena grows many times. */
		len += (size_t)snprintf(text + len, cap - len,
					"%llx-%llx r-xp %08llx fd:01 %zu                  /usr/lib/x86_64-linux-gnu/libfoo%zu.so\n",
					(unsigned long long)start,
					(unsigned long long)start + 0x1000,
					(unsigned long long)(i % 5) * 0x1000,
					1000 + i / 5, i / 5);
	}
	ret = procmaps_parse(text, len, &l, &err);
	CHECK(ret == 0 && l.n == LINES && l.skipped == 0, "large: 100k lines parse",
	      "ret %d n %zu skipped %zu", ret, l.n, l.skipped);
	for (i = 0; ret == 0 && i < LINES; i += 997) {
		char want[64];
		uint64_t a = 0x10000000ull + (uint64_t)i * 0x2000 + 0x123;
		const struct vma *v = procmaps_find(&l, a);

		snprintf(want, sizeof(want), "/usr/lib/x86_64-linux-gnu/libfoo%zu.so", i / 5);
		if (!v || !v->path || strcmp(v->path, want) != 0 ||
		    procmaps_find(&l, a + 0x1000) != NULL)
			bad++;
	}
	CHECK(ret == 0 && bad == 0, "large: lookups and paths survive arena growth",
	      "%zu bad", bad);
	procmaps_free(&l);
	free(text);
}

/* An exit record as BPF fills it: out of order, overlapping, bad, hostile names. */
static void test_exit_record(void)
{
	static struct cprof_exit_maps rec;
	struct vma_list l;
	const struct vma *v;
	int ret;

	memset(&rec, 0xa5, sizeof(rec)); /* what the ring held before */
	rec.n = 5;
	rec.m[0] = (struct cprof_exit_map){ .start = 0x7f0000000000, .end = 0x7f0000020000,
					    .pgoff = 0x28,
					    .key = { .ino = 1234, .dev = 259u << 20 | 3 } };
	memcpy(rec.m[0].name, "libc.so.6", 10);
	rec.m[1] = (struct cprof_exit_map){ .start = 0x555500001000, .end = 0x555500002000,
					    .pgoff = 1, .key = { .ino = 99, .dev = 8u << 20 | 2 } };
	memcpy(rec.m[1].name, "a\nb\033c", 6);
	/* overlaps the first: dropped */
	rec.m[2] = (struct cprof_exit_map){ .start = 0x7f0000010000, .end = 0x7f0000030000 };
	memcpy(rec.m[2].name, "x", 2);
	/* empty range: dropped */
	rec.m[3] = (struct cprof_exit_map){ .start = 0x1000, .end = 0x1000 };
	/* a name with no NUL in its bytes: cut at CPROF_EXIT_NAME */
	rec.m[4] = (struct cprof_exit_map){ .start = 0x400000, .end = 0x401000 };
	memset(rec.m[4].name, 'n', CPROF_EXIT_NAME);
	ret = procmaps_from_exit(&rec, &l, NULL);
	CHECK(ret == 0 && l.n == 3 && l.skipped == 2, "exit record: 3 mappings kept, 2 dropped",
	      "ret %d, n %zu, skipped %zu", ret, l.n, l.skipped);
	CHECK(l.n == 3 && l.v[0].start == 0x400000 && l.v[1].start == 0x555500001000 &&
		      l.v[2].start == 0x7f0000000000,
	      "exit record: sorted by start", "n %zu", l.n);
	v = find_start(&l, 0x7f0000000000);
	CHECK(v && v->offset == 0x28000 && v->inode == 1234 && v->dev_major == 259 &&
		      v->dev_minor == 3 && v->kind == VMA_FILE && (v->prot & VMA_EXEC) &&
		      !strcmp(v->path, "libc.so.6"),
	      "exit record: offset in bytes, the kernel's device split, the name", "%s",
	      v ? v->path : "(none)");
	v = find_start(&l, 0x555500001000);
	CHECK(v && !strcmp(v->path, "a?b?c"), "exit record: control characters replaced", "%s",
	      v ? v->path : "(none)");
	v = find_start(&l, 0x400000);
	CHECK(v && strlen(v->path) == CPROF_EXIT_NAME, "exit record: a name without its NUL cut",
	      "%zu", v ? strlen(v->path) : 0);
	procmaps_free(&l);

	/* the vDSO by its empty key and name only; a file of that name is a file */
	rec.n = 2;
	rec.m[0] = (struct cprof_exit_map){ .start = 0x7ffd00000000, .end = 0x7ffd00002000 };
	memcpy(rec.m[0].name, CPROF_EXIT_VDSO, sizeof(CPROF_EXIT_VDSO));
	rec.m[1] = (struct cprof_exit_map){ .start = 0x7ffe00000000, .end = 0x7ffe00002000,
					    .key = { .ino = 7, .dev = 1 } };
	memcpy(rec.m[1].name, CPROF_EXIT_VDSO, sizeof(CPROF_EXIT_VDSO));
	ret = procmaps_from_exit(&rec, &l, NULL);
	CHECK(ret == 0 && l.n == 2 && l.v[0].kind == VMA_SPECIAL && l.v[1].kind == VMA_FILE &&
		      l.v[1].inode == 7,
	      "exit record: the vDSO special, a file named like it a file", "ret %d, n %zu", ret,
	      l.n);
	procmaps_free(&l);

	/* the uprobe page likewise */
	rec.n = 1;
	rec.m[0] = (struct cprof_exit_map){ .start = 0x7fffffffe000, .end = 0x7ffffffff000 };
	memcpy(rec.m[0].name, CPROF_EXIT_UPROBES, sizeof(CPROF_EXIT_UPROBES));
	ret = procmaps_from_exit(&rec, &l, NULL);
	CHECK(ret == 0 && l.n == 1 && l.v[0].kind == VMA_SPECIAL &&
		      !strcmp(l.v[0].path, CPROF_EXIT_UPROBES),
	      "exit record: the uprobe page special", "ret %d, n %zu", ret, l.n);
	procmaps_free(&l);

	rec.n = 1000; /* more than a record holds: its own count only */
	ret = procmaps_from_exit(&rec, &l, NULL);
	CHECK(ret == 0 && l.n + l.skipped <= CPROF_EXIT_MAPS, "exit record: n past the record bounded",
	      "ret %d, n %zu, skipped %zu", ret, l.n, l.skipped);
	procmaps_free(&l);
}

/* maps text of an executable file mapping (or the vDSO) at @start. */
#define XLINE(start, end, ino, path) start "-" end " r-xp 00001000 08:02 " ino " " path "\n"

/* A snapshot at exec and an exit record that shows it and the libraries mapped since. */
static void test_extends(void)
{
	static const char at_exec[] =
		XLINE("555500001000", "555500009000", "11", "/usr/bin/as")
		XLINE("7f0000101000", "7f0000120000", "12", "/lib/ld-linux.so")
		"7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0 [vdso]\n"
		"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0 [vsyscall]\n";
	static const char at_exit[] =
		XLINE("555500001000", "555500009000", "11", "/usr/bin/as")
		XLINE("7f0000030000", "7f0000050000", "13", "/lib/libbfd.so")
		XLINE("7f0000100000", "7f0000120000", "12", "/lib/ld-linux.so")
		"7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0 [vdso]\n";
	static const char moved[] =
		XLINE("555500001000", "555500009000", "11", "/usr/bin/as")
		XLINE("7f0000030000", "7f0000050000", "13", "/lib/libbfd.so")
		XLINE("7f0000101000", "7f0000120000", "14", "/lib/other.so")
		"7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0 [vdso]\n";
	/* --ld-probe's first hit maps the uprobe page before ld.so maps the libraries */
	static const char probed[] =
		XLINE("555500001000", "555500009000", "11", "/usr/bin/as")
		XLINE("7f0000101000", "7f0000120000", "12", "/lib/ld-linux.so")
		"7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0 [vdso]\n"
		"7fffffffe000-7ffffffff000 r-xp 00000000 00:00 0 [uprobes]\n";
	static const char probed_exit[] =
		XLINE("555500001000", "555500009000", "11", "/usr/bin/as")
		XLINE("7f0000030000", "7f0000050000", "13", "/lib/libbfd.so")
		XLINE("7f0000100000", "7f0000120000", "12", "/lib/ld-linux.so")
		"7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0 [vdso]\n"
		"7fffffffe000-7ffffffff000 r-xp 00000000 00:00 0 [uprobes]\n";
	struct vma_list a, b, c, p, pe;

	if (procmaps_parse(at_exec, sizeof(at_exec) - 1, &a, NULL) ||
	    procmaps_parse(at_exit, sizeof(at_exit) - 1, &b, NULL) ||
	    procmaps_parse(moved, sizeof(moved) - 1, &c, NULL) ||
	    procmaps_parse(probed, sizeof(probed) - 1, &p, NULL) ||
	    procmaps_parse(probed_exit, sizeof(probed_exit) - 1, &pe, NULL)) {
		CHECK(0, "extends: the maps parse", "no");
		return;
	}
	CHECK(procmaps_extends(&pe, &p), "extends: [uprobes] in both, the libraries since", "no");
	CHECK(procmaps_extends(&b, &p),
	      "extends: [uprobes] in the snapshot only (a record without it) does not stop it", "it does");
	procmaps_free(&p);
	procmaps_free(&pe);
	CHECK(procmaps_extends(&b, &a), "extends: a record with the libraries mapped since extends the snapshot at exec ([vsyscall] aside)",
	      "no");
	CHECK(!procmaps_extends(&a, &b), "extends: a snapshot with less does not extend the record",
	      "it does");
	CHECK(!procmaps_extends(&b, &b), "extends: the same mappings are not more", "they are");
	CHECK(!procmaps_extends(&c, &a), "extends: another file where the snapshot had one does not",
	      "it does");
	procmaps_free(&a);
	procmaps_free(&b);
	procmaps_free(&c);
}

int main(void)
{
	T_PLAN(69);
	test_exit_record();
	test_extends();
	test_crafted();
	test_edge_inputs();
	test_self();
	test_errors_and_fake_root();
	test_large();
	return T_EXIT();
}
