// SPDX-License-Identifier: MIT
/*
 * Tests for perfmap: the "START SIZE NAME" format as JITs write it, the
 * last line covering an address winning, hostile lines, reading backwards
 * across chunk boundaries (checked against a straightforward forward
 * reading of random files), and opening the file inside a process's root:
 * no symlink, no FIFO, no other user's file; held past its removal.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/perfmap.h"
#include "testlib.h"

/* A file holding @len bytes of @text, read from its start. */
static int file_of(const char *text, size_t len)
{
	int fd = memfd_create("perfmap", MFD_CLOEXEC);

	if (fd < 0 || write(fd, text, len) != (ssize_t)len) {
		perror("memfd");
		exit(1);
	}
	return fd;
}

/* @root/@rel into @buf. */
static char *fmt_path(char *buf, const char *root, const char *rel)
{
	snprintf(buf, PATH_MAX, "%s/%s", root, rel);
	return buf;
}

static const char *name_at(const struct perfmap_table *t, uint64_t a)
{
	const struct perfmap_sym *s = perfmap_find(t, a);

	return s ? s->name : "(not queried)";
}

static void expect(const struct perfmap_table *t, uint64_t a, const char *want, const char *what)
{
	const char *got = name_at(t, a);

	if (want)
		CHECK(got && strcmp(got, want) == 0, what, "%#" PRIx64 " -> %s, expected %s", a,
		      got ? got : "(null)", want);
	else
		CHECK(!got, what, "%#" PRIx64 " -> %s, expected no name", a, got);
}

static void test_formats(void)
{
	static const char text[] =
		"7f0000001000 40 LazyCompile:~main /app/index.js:1\n"      /* Node */
		"0x7f0000002000 0x20 Interpreted:java/lang/String.hashCode\n" /* 0x forms */
		"7f0000003000\t10\tpy::spin:/app/x.py\r\n"                /* tabs, CRLF */
		"7f0000004000 10 name with  spaces  \n"
		"7f0000005000 0 zero_size\n"
		"zzzz 10 not_hex\n"
		"7f0000006000 10\n"                                         /* no name */
		"7f0000007000 10      \n"                                   /* blank name */
		"17f0000008000 10 seventeen_digits\n"
		"7f0000009000 10 ctrl\001chars\033[31m\n"
		"\n"
		"ffffffffffffff00 1000 wraps_past_end\n"
		"7f000000a000 10 unterminated_last_line";
	const uint64_t q[] = { 0x7f0000001000, 0x7f000000103f, 0x7f0000001040, 0x7f0000002010,
			       0x7f0000003005, 0x7f0000004000, 0x7f0000005000, 0x7f0000006000,
			       0x7f0000007000, 0x7f0000008000, 0x7f0000009000, 0xffffffffffffffff,
			       0x7f000000a000, 0x7f0000001000 /* duplicate */ };
	struct perfmap_table t;
	struct errbuf err;
	int fd = file_of(text, sizeof(text) - 1), ret;

	ret = perfmap_resolve(fd, q, sizeof(q) / sizeof(q[0]), &t, &err);
	CHECK(ret == 0 && t.n == 13, "resolve: one entry per distinct address", "ret %d n %zu: %s",
	      ret, t.n, err.msg);
	expect(&t, 0x7f0000001000, "LazyCompile:~main /app/index.js:1", "Node line: region start");
	expect(&t, 0x7f000000103f, "LazyCompile:~main /app/index.js:1", "region's last byte");
	expect(&t, 0x7f0000001040, NULL, "one past the region: unnamed");
	expect(&t, 0x7f0000002010, "Interpreted:java/lang/String.hashCode", "0x-prefixed fields");
	expect(&t, 0x7f0000003005, "py::spin:/app/x.py", "tab separators and CRLF");
	expect(&t, 0x7f0000004000, "name with  spaces", "name keeps inner spaces, loses trailing");
	expect(&t, 0x7f0000005000, NULL, "size 0: ignored");
	expect(&t, 0x7f0000006000, NULL, "line without a name: ignored");
	expect(&t, 0x7f0000007000, NULL, "blank name: ignored");
	expect(&t, 0x7f0000008000, NULL, "17 hex digits: ignored");
	expect(&t, 0x7f0000009000, "ctrl?chars?[31m", "control bytes replaced");
	expect(&t, 0xffffffffffffffff, "wraps_past_end", "region running past 2^64 ends there");
	expect(&t, 0x7f000000a000, NULL, "unterminated last line (half-written): ignored");
	CHECK(perfmap_find(&t, 0x7f0000001000)->start == 0x7f0000001000,
	      "start of the region reported", "%#" PRIx64,
	      perfmap_find(&t, 0x7f0000001000)->start);
	perfmap_free(&t);
	close(fd);
}

static void test_last_wins(void)
{
	static const char text[] =
		"1000 100 old_a\n"
		"2000 100 old_b\n"
		"1000 80 new_a\n"  /* code freed and recompiled over part of old_a */
		"0 ffffffff huge_early\n";
	const uint64_t q[] = { 0x1010, 0x10a0, 0x2010, 0x50 };
	struct perfmap_table t;
	int fd = file_of(text, sizeof(text) - 1);

	CHECK(perfmap_resolve(fd, q, 4, &t, NULL) == 0, "last-wins: resolve", "failed");
	expect(&t, 0x1010, "huge_early", "the last line covering an address wins");
	expect(&t, 0x10a0, "huge_early", "... even over a narrower earlier one");
	perfmap_free(&t);
	close(fd);

	static const char text2[] = "1000 100 old_a\n2000 100 old_b\n1000 80 new_a\n";
	fd = file_of(text2, sizeof(text2) - 1);
	CHECK(perfmap_resolve(fd, q, 4, &t, NULL) == 0, "last-wins: resolve 2", "failed");
	expect(&t, 0x1010, "new_a", "recompiled region: newest name");
	expect(&t, 0x10a0, "old_a", "rest of the old region keeps its name");
	expect(&t, 0x2010, "old_b", "untouched region");
	expect(&t, 0x50, NULL, "address in no region");
	perfmap_free(&t);
	close(fd);
}

static void test_long_lines(void)
{
	size_t cap = 3 * PERFMAP_LINE_MAX + 4096, n = 0;
	char *text = malloc(cap);
	const uint64_t q[] = { 0x1000, 0x2000, 0x3000, 0x4000 };
	struct perfmap_table t;
	int fd;

	n += (size_t)snprintf(text + n, cap - n, "1000 10 before\n2000 10 ");
	memset(text + n, 'L', PERFMAP_LINE_MAX + 10);
	n += PERFMAP_LINE_MAX + 10;
	n += (size_t)snprintf(text + n, cap - n, "\n3000 10 ");
	memset(text + n, 'n', PERFMAP_NAME_MAX + 100);
	n += PERFMAP_NAME_MAX + 100;
	n += (size_t)snprintf(text + n, cap - n, "\n4000 10 after\n");
	fd = file_of(text, n);
	CHECK(perfmap_resolve(fd, q, 4, &t, NULL) == 0, "long lines: resolve", "failed");
	expect(&t, 0x1000, "before", "line before an over-long line intact");
	expect(&t, 0x2000, NULL, "over-long line skipped");
	CHECK(name_at(&t, 0x3000) && strlen(name_at(&t, 0x3000)) == PERFMAP_NAME_MAX - 1,
	      "long name truncated to PERFMAP_NAME_MAX - 1", "%zu",
	      name_at(&t, 0x3000) ? strlen(name_at(&t, 0x3000)) : 0);
	expect(&t, 0x4000, "after", "line after an over-long line intact");
	perfmap_free(&t);
	close(fd);
	free(text);
}

/* Random files across many read chunks, against a forward last-wins reading. */
static void test_random(void)
{
	enum { LINES = 40000, QUERIES = 3000 };
	uint64_t *start = malloc(LINES * sizeof(*start)), *size = malloc(LINES * sizeof(*size));
	uint64_t *q = malloc(QUERIES * sizeof(*q));
	size_t cap = (size_t)LINES * 64 + PERFMAP_LINE_MAX * 8, n = 0, bad = 0, named = 0;
	char *text = malloc(cap);
	struct perfmap_table t;
	int fd;

	srand(12345);
	for (int i = 0; i < LINES; i++) {
		start[i] = 0x10000 + (uint64_t)(rand() % 200000) * 16;
		size[i] = 16 + (uint64_t)(rand() % 64) * 16;
		/* Now and then an over-long line, which must not disturb the rest. */
		if (i % 5000 == 4999) {
			n += (size_t)snprintf(text + n, cap - n, "%" PRIx64 " %" PRIx64 " ",
					      start[i], size[i]);
			memset(text + n, 'x', PERFMAP_LINE_MAX);
			n += PERFMAP_LINE_MAX;
			text[n++] = '\n';
			size[i] = 0;
			continue;
		}
		n += (size_t)snprintf(text + n, cap - n, "%" PRIx64 " %" PRIx64 " fn_%d\n", start[i],
				      size[i], i);
	}
	for (int i = 0; i < QUERIES; i++)
		q[i] = 0x10000 + (uint64_t)(rand() % 3300000);
	fd = file_of(text, n);
	CHECK(perfmap_resolve(fd, q, QUERIES, &t, NULL) == 0, "random: resolve", "failed");
	for (int i = 0; i < QUERIES; i++) {
		char want[32] = "";
		const char *got = name_at(&t, q[i]);

		for (int j = LINES - 1; j >= 0; j--)
			if (size[j] && q[i] >= start[j] && q[i] < start[j] + size[j]) {
				snprintf(want, sizeof(want), "fn_%d", j);
				break;
			}
		if (want[0] ? !got || strcmp(got, want) : got != NULL)
			bad++;
		named += want[0] != 0;
	}
	CHECK(bad == 0 && named > QUERIES / 2,
	      "random 2.5 MB file: backwards reading agrees with forward last-wins",
	      "%zu of %d differ (%zu named)", bad, QUERIES, named);
	perfmap_free(&t);
	close(fd);
	free(text);
	free(start);
	free(size);
	free(q);
}

/* Writes @text to @path; false when it could not be written. */
static bool put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return false;
	fputs(text, f);
	return fclose(f) == 0;
}

static const char *first_name(int fd, uint64_t addr)
{
	static char name[64];
	struct perfmap_table t;

	snprintf(name, sizeof(name), "(unreadable)");
	if (perfmap_resolve(fd, &addr, 1, &t, NULL) == 0) {
		snprintf(name, sizeof(name), "%s", name_at(&t, addr) ? name_at(&t, addr) : "(none)");
		perfmap_free(&t);
	}
	return name;
}

static void test_open(void)
{
	char root[] = "/tmp/cprof-perfmap-XXXXXX", path[PATH_MAX];
	uint32_t me = (uint32_t)geteuid();
	struct errbuf err;
	int fd, ret, rootfd;

	if (!mkdtemp(root)) {
		T_SKIP("open: perf map in a process root", "mkdtemp: %s", strerror(errno));
		return;
	}
	snprintf(path, sizeof(path), "%s/tmp", root);
	mkdir(path, 0755);
	put(fmt_path(path, root, "tmp/perf-42.map"), "1000 10 inside\n");
	/* Symlinks lead nowhere: not to the host, not even inside the root. */
	ret = symlink("/etc/hostname", fmt_path(path, root, "tmp/perf-43.map"));
	ret |= symlink("perf-42.map", fmt_path(path, root, "tmp/perf-46.map"));
	mkfifo(fmt_path(path, root, "tmp/perf-44.map"), 0600);
	put(fmt_path(path, root, "tmp/perf-47.map"), "1000 10 not-the-process's\n");
	rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);

	ret = perfmap_open_at(rootfd, 42, me, NULL, &fd, NULL, &err);
	CHECK(ret == 0, "open: /tmp/perf-<nspid>.map inside the root", "%d %s", ret, err.msg);
	if (ret == 0) {
		CHECK(!strcmp(first_name(fd, 0x1005), "inside"),
		      "open: the root's file is the one read", "%s", first_name(fd, 0x1005));
		close(fd);
	}
	ret = perfmap_open_at(rootfd, 43, me, NULL, &fd, NULL, &err);
	CHECK(ret == -ELOOP && fd < 0, "open: a symlink to a host path is refused",
	      "ret %d", ret);
	ret = perfmap_open_at(rootfd, 46, me, NULL, &fd, NULL, &err);
	CHECK(ret == -ELOOP && fd < 0, "open: a symlink inside the root is refused too",
	      "ret %d", ret);
	ret = perfmap_open_at(rootfd, 44, me, NULL, &fd, NULL, &err);
	CHECK(ret == -EINVAL, "open: a FIFO is refused without blocking", "ret %d", ret);
	ret = perfmap_open_at(rootfd, 45, me, NULL, &fd, NULL, &err);
	CHECK(ret == -ENOENT, "open: no perf map is -ENOENT", "ret %d", ret);
	if (me == 0 && chown(fmt_path(path, root, "tmp/perf-47.map"), 65534, 65534) == 0) {
		ret = perfmap_open_at(rootfd, 47, 1000, NULL, &fd, NULL, &err);
		CHECK(ret == -EPERM && strstr(err.msg, "owned by uid 65534"),
		      "open: another user's file is refused", "ret %d: %s", ret, err.msg);
		ret = perfmap_open_at(rootfd, 47, 65534, NULL, &fd, NULL, &err);
		CHECK(ret == 0, "open: the process's own file is read", "ret %d: %s", ret, err.msg);
		if (ret == 0)
			close(fd);
	} else {
		T_SKIP("open: another user's file is refused", "needs root to chown");
	}
	ret = perfmap_open_at(-1, 42, me, NULL, &fd, NULL, &err);
	CHECK(ret < 0 && fd < 0, "open: no root, no perf map", "ret %d", ret);

	/* Held: outlives the file; replaced by a new file at the path. */
	{
		struct fdlru lru;
		struct perfmap_file pf;

		fdlru_init(&lru, 0);
		perfmap_file_init(&pf, &lru);
		ret = perfmap_file_update(&pf, rootfd, 42, me, NULL, &err);
		CHECK(ret == 0 && perfmap_file_fd(&pf) >= 0 && lru.st.held == 1,
		      "held: found at first sight", "ret %d: %s", ret, err.msg);
		unlink(fmt_path(path, root, "tmp/perf-42.map"));
		ret = perfmap_file_update(&pf, rootfd, 42, me, NULL, &err);
		CHECK(ret == 0 && !strcmp(first_name(perfmap_file_fd(&pf), 0x1005), "inside"),
		      "held: names survive the file's removal", "ret %d: %s", ret,
		      first_name(perfmap_file_fd(&pf), 0x1005));
		put(fmt_path(path, root, "tmp/perf-42.map"), "1000 10 rewritten\n");
		ret = perfmap_file_update(&pf, rootfd, 42, me, NULL, &err);
		CHECK(ret == 0 && !strcmp(first_name(perfmap_file_fd(&pf), 0x1005), "rewritten") &&
		      lru.st.held == 1,
		      "held: a new file at the path replaces it", "ret %d: %s, %zu held", ret,
		      first_name(perfmap_file_fd(&pf), 0x1005), lru.st.held);
		perfmap_file_close(&pf);
		CHECK(perfmap_file_fd(&pf) < 0 && lru.st.held == 0, "held: closed",
		      "%zu held", lru.st.held);
	}

	/*
	 * Written before the process started: refused until written again.
	 * File times come from a coarse clock (a jiffy, 1 to 10 ms, behind),
	 * so 1 ms before the start may be a map written just after it; 20 ms
	 * before is not.
	 */
	{
		const char *p48 = fmt_path(path, root, "tmp/perf-48.map");
		const struct timespec born = { .tv_sec = 1700000000, .tv_nsec = 5000000 };
		const struct timespec older[2] = { { born.tv_sec - 1, 985000000 },
						   { born.tv_sec - 1, 985000000 } };
		const struct timespec jiffy[2] = { { born.tv_sec, 4000000 },
						   { born.tv_sec, 4000000 } };
		const struct timespec far[2] = { { 0, 0 }, { INT32_MIN, 0 } };
		struct perfmap_file pf;

		perfmap_file_init(&pf, NULL);
		put(p48, "1000 10 stale\n");
		ret = utimensat(AT_FDCWD, p48, older, 0);
		ret = ret ? ret : perfmap_open_at(rootfd, 48, me, &born, &fd, NULL, &err);
		CHECK(ret == -ESTALE && fd < 0 && strstr(err.msg, "before the process started"),
		      "stale: a map last written 20 ms before the start is refused", "ret %d: %s",
		      ret, err.msg);
		ret = perfmap_file_update(&pf, rootfd, 48, me, &born, &err);
		CHECK(ret == -ESTALE && perfmap_file_fd(&pf) < 0, "stale: none held for it",
		      "ret %d", ret);
		ret = perfmap_open_at(rootfd, 48, me, NULL, &fd, NULL, &err);
		CHECK(ret == 0, "stale: without a start known, taken as before", "ret %d", ret);
		if (ret == 0)
			close(fd);
		ret = utimensat(AT_FDCWD, p48, far, 0);
		ret = ret ? ret : perfmap_open_at(rootfd, 48, me, &born, &fd, NULL, &err);
		CHECK(ret == -ESTALE, "stale: a time long before the epoch is refused too",
		      "ret %d", ret);
		ret = utimensat(AT_FDCWD, p48, jiffy, 0);
		ret = ret ? ret : perfmap_open_at(rootfd, 48, me, &born, &fd, NULL, &err);
		CHECK(ret == 0, "stale: 1 ms before the start is within a jiffy: taken", "ret %d",
		      ret);
		if (ret == 0)
			close(fd);
		ret = utimensat(AT_FDCWD, p48, older, 0);
		ret = ret ? ret : perfmap_file_update(&pf, rootfd, 48, me, &born, &err);
		ret = ret != -ESTALE ? -1 : utimensat(AT_FDCWD, p48, NULL, 0);
		ret = ret ? ret : perfmap_file_update(&pf, rootfd, 48, me, &born, &err);
		CHECK(ret == 0 && !strcmp(first_name(perfmap_file_fd(&pf), 0x1005), "stale"),
		      "stale: refused, then written again (touched), it is taken", "ret %d: %s",
		      ret, err.msg);
		perfmap_file_close(&pf);
	}
	close(rootfd);
	snprintf(path, sizeof(path), "rm -rf '%s'", root);
	if (system(path))
		fprintf(stderr, "# cleanup failed: %s\n", root);
}

int main(void)
{
	T_PLAN(49);
	test_formats();
	test_last_wins();
	test_long_lines();
	test_random();
	test_open();
	return T_EXIT();
}
