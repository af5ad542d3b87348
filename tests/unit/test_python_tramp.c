// SPDX-License-Identifier: MIT
/*
 * test_python_tramp: CPython's perf trampolines (python_tramp.h, the
 * tramp_row of bpf/pytramp.bpf.h).
 *
 *  - match: arenas laid out as 3.12 (copies end to end) and 3.13 (16-byte
 *    aligned) do, two merged into one mapping give two runs, and a byte
 *    wrong anywhere, or code after the copies, makes the mapping none.
 *  - live: the arenas of pyenv's 3.12 and 3.13 run with -X perf are found
 *    in the process and told page by page, and removed again.
 *  - walk: the BPF unwinder steps a leaf and a return address in a
 *    trampoline by its rule, and refuses a return address that is not
 *    right after a copy's call, and a pc in a copy's padding.
 */
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unwind/bpfunwind.h"
#include "fs/procmaps.h"
#include "pyenv.h"
#include "python/python.h"
#include "python/python_tramp.h"
#include "testlib.h"

#define ARENA 0x10000u

/* sub $8,%rsp; call *%rcx; add $8,%rsp; ret */
static const uint8_t code[] = { 0x48, 0x83, 0xec, 0x08, 0xff, 0xd1, 0x48, 0x83, 0xc4, 0x08, 0xc3 };

/* Fills @buf (@len bytes) with copies of the code at @period, as CPython does. */
static size_t fill(uint8_t *buf, size_t len, size_t period)
{
	size_t n = len / period;

	memset(buf, 0, len);
	for (size_t i = 0; i < n; i++)
		memcpy(buf + i * period, code, sizeof(code));
	return n;
}

static void test_match(void)
{
	static uint8_t buf[2 * ARENA];
	struct cprof_py_tramp runs[8];
	uint64_t at = 0x7f0000010000;
	size_t n, copies;

	copies = fill(buf, ARENA, 11);
	n = py_tramp_match(buf, ARENA, at, runs, 8);
	CHECK(n == 1 && runs[0].start == at && runs[0].end == at + copies * 11 &&
		      runs[0].period == 11 && runs[0].len == 11 && runs[0].lo == 4 &&
		      runs[0].hi == 10 && runs[0].ret == 6 && !runs[0].flags,
	      "match: a 3.12 arena (11-byte copies end to end) is one run of its rule",
	      "%zu runs, period %u, end %+lld", n, n ? runs[0].period : 0,
	      n ? (long long)(runs[0].end - at) : 0LL);

	fill(buf, ARENA, 16);
	n = py_tramp_match(buf, ARENA, at, runs, 8);
	CHECK(n == 1 && runs[0].period == 16 && runs[0].end == at + ARENA,
	      "match: a 3.13 arena (copies 16 bytes apart, zeros between) is one run",
	      "%zu runs, period %u", n, n ? runs[0].period : 0);

	fill(buf, ARENA, 11);
	fill(buf + ARENA, ARENA, 16);
	n = py_tramp_match(buf, 2 * ARENA, at, runs, 8);
	CHECK(n == 2 && runs[0].period == 11 && runs[1].start == at + ARENA &&
		      runs[1].period == 16,
	      "match: two arenas the kernel merged into one mapping are two runs", "%zu runs", n);
	CHECK(py_tramp_match(buf, 2 * ARENA, at, runs, 1) == 0,
	      "match: more runs than room for is no match", "matched");

	fill(buf, ARENA, 11);
	buf[100 * 11 + 5] ^= 1;
	CHECK(py_tramp_match(buf, ARENA, at, runs, 8) == 0,
	      "match: one byte of one copy wrong and the mapping is none", "matched");
	fill(buf, ARENA, 11);
	buf[ARENA - 2] = 0xc3;
	CHECK(py_tramp_match(buf, ARENA, at, runs, 8) == 0,
	      "match: code after the copies and the mapping is none", "matched");
	fill(buf, ARENA, 16);
	buf[16 * 7 + 12] = 0x90;
	CHECK(py_tramp_match(buf, ARENA, at, runs, 8) == 0,
	      "match: a byte in a copy's padding and the mapping is none", "matched");
	fill(buf, ARENA, 11);
	CHECK(py_tramp_match(buf, ARENA, at + 8, runs, 8) == 0,
	      "match: a mapping not on a page is none", "matched");
	memset(buf, 0, ARENA);
	CHECK(py_tramp_match(buf, ARENA, at, runs, 8) == 0, "match: zeros are no arena", "matched");
	for (size_t i = 0; i < ARENA; i++)
		buf[i] = (uint8_t)(i * 2654435761u >> 13);
	CHECK(py_tramp_match(buf, ARENA, at, runs, 8) == 0, "match: other code is no arena",
	      "matched");
}

/* A sink that counts the entries set and removed. */
struct count_sink {
	size_t set, removed;
	struct cprof_py_tramp last;
};

static int count_set(void *ctx, const struct cprof_py_tramp_key *k, const struct cprof_py_tramp *t)
{
	struct count_sink *c = ctx;

	(void)k;
	if (t) {
		c->set++;
		c->last = *t;
	} else {
		c->removed++;
	}
	return 0;
}

/* The pyenv interpreter of @v ("3.12"), or NULL. */
static const char *python_of(const char *v, char *buf, size_t len)
{
	char dir[400];

	if (!pyenv_install(v, dir, sizeof(dir)))
		return NULL;
	snprintf(buf, len, "%s/bin/python%s", dir, v);
	return buf;
}

static void test_live(const char *v)
{
	char py[512], name[128];
	int pipefd[2];
	pid_t pid;
	struct vma_list maps = { 0 };
	struct errbuf err = { "" };
	struct count_sink cs = { 0 };
	struct py_tramp_sink sink = { count_set, &cs };
	struct py_tramps *t = NULL;
	struct py_tramp_stats st;
	char c;

	snprintf(name, sizeof(name), "live: python %s -X perf: its arena found and told", v);
	if (!python_of(v, py, sizeof(py))) {
		T_SKIP(name, "CPython %s is not installed under " PYENV, v);
		return;
	}
	if (pipe(pipefd))
		return;
	pid = fork();
	if (pid == 0) {
		dup2(pipefd[1], 1);
		execl(py, py, "-X", "perf", "-c",
		      "import sys, time\nprint('x', flush=True)\ntime.sleep(30)", (char *)NULL);
		_exit(127);
	}
	close(pipefd[1]);
	if (read(pipefd[0], &c, 1) != 1 || procmaps_read("/proc", pid, &maps, &err) ||
	    py_tramps_new(&t, &sink)) {
		CHECK(false, name, "could not start %s or read its maps: %s", py, err.msg);
	} else {
		int ret = py_tramps_update(t, (uint32_t)pid, &maps, &err);

		py_tramps_get_stats(t, &st);
		CHECK(ret == 0 && st.arenas >= 1 && cs.set == st.pages && cs.set >= 16 &&
			      cs.last.lo == 4 && cs.last.hi == 10 && cs.last.ret == 6,
		      name, "ret %d (%s), %zu arenas, %zu pages, %zu set", ret, err.msg, st.arenas,
		      st.pages, cs.set);
		snprintf(name, sizeof(name), "live: python %s -X perf: a second look reads nothing anew",
			 v);
		ret = py_tramps_update(t, (uint32_t)pid, &maps, &err);
		py_tramps_get_stats(t, &st);
		CHECK(ret == 0 && st.arenas == 1 && cs.removed == 0, name, "%zu arenas, %zu removed",
		      st.arenas, cs.removed);
		snprintf(name, sizeof(name), "live: python %s -X perf: its pages removed when it goes", v);
		py_tramps_remove(t, (uint32_t)pid);
		py_tramps_get_stats(t, &st);
		CHECK(st.pages == 0 && cs.removed >= cs.set, name, "%zu pages left, %zu removed of %zu",
		      st.pages, cs.removed, cs.set);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	/* CPython's -X perf map outlives it: runs would pile them up in /tmp. */
	snprintf(py, sizeof(py), "/tmp/perf-%d.map", (int)pid);
	unlink(py);
	close(pipefd[0]);
	py_tramps_free(t);
	procmaps_free(&maps);
}

/* Walks from @pc at @sp over a stack whose words are @w (from sp on). */
static void walk(uint64_t pc, const uint64_t *w, size_t n, struct bpfu_walk *out)
{
	static uint8_t stack[256];
	const uint64_t sp = 0x7ffd00001000;
	struct cprof_proc_maps pm = { .n = 1 };
	struct bpfu_regs regs = { .pc = pc, .sp = sp, .bp = 1 /* no frame-pointer chain */ };
	struct bpfu_memory mem = { sp, stack, sizeof(stack) };

	pm.m[0] = (struct cprof_proc_map){ .start = 0x7f0000010000, .end = 0x7f0000020000 };
	memset(stack, 0, sizeof(stack));
	memcpy(stack, w, n * sizeof(*w));
	bpfu_walk(42, &pm, &regs, &mem, out);
}

static void test_walk(void)
{
	const uint64_t at = 0x7f0000010000;
	struct cprof_py_tramp t = { .start = at, .end = at + 5957 * 11, .period = 11, .len = 11,
				    .lo = 4, .hi = 10, .ret = 6 };
	struct bpfu_walk w;

	if (bpfu_set_tramp(42, &t)) {
		CHECK(false, "walk: trampolines set", "the shim took no entry");
		return;
	}
	/* leaf after its sub (sp + 8 is its return address), then a copy's caller */
	{
		uint64_t words[] = { 0, at + 5 * 11 + 6, 0, 0 };

		walk(at + 3 * 11 + 6, words, 4, &w);
		CHECK(w.status == CPROF_UNWIND_OK && w.st.nr == 2 && w.st.ip[1] == at + 5 * 11 + 6 &&
			      (w.st.status & CPROF_STACK_F_DWARF),
		      "walk: a leaf and a return address in trampolines stepped by their rule",
		      "status %u, %u frames", w.status, w.st.nr);
	}
	/* at the first instruction, before the sub: the return address at sp */
	{
		uint64_t words[] = { 0 };

		walk(at + 7 * 11, words, 1, &w);
		CHECK(w.status == CPROF_UNWIND_OK && w.st.nr == 1,
		      "walk: a leaf before its sub finds its return address at sp", "status %u, %u frames",
		      w.status, w.st.nr);
	}
	/* a return address that no call of a copy pushes: not stepped */
	{
		uint64_t words[] = { 0, at + 5 * 11 + 3, 0, 0 };

		walk(at + 3 * 11 + 6, words, 4, &w);
		CHECK(w.status == CPROF_UNWIND_BAD_CFA && w.st.nr == 2,
		      "walk: a return address not right after a copy's call is refused",
		      "status %u, %u frames", w.status, w.st.nr);
	}
	/* 3.13's padding is no code */
	t.period = 16;
	t.end = at + ARENA;
	bpfu_set_tramp(42, &t);
	{
		uint64_t words[] = { 0, 0 };

		walk(at + 16 * 3 + 12, words, 2, &w);
		CHECK(w.status == CPROF_UNWIND_BAD_CFA && w.st.nr == 1,
		      "walk: a pc in a copy's padding is refused", "status %u, %u frames", w.status,
		      w.st.nr);
	}
}

int main(void)
{
	T_PLAN(20);
	test_match();
	test_live("3.12");
	test_live("3.13");
	test_walk();
	return T_EXIT();
}
