// SPDX-License-Identifier: MIT
/*
 * test_secread: a section read again a chunk at a time (user/elf/secread.c), and
 * unwind tables made that way: the same rows as from the whole section.
 *
 * Every byte is checked against the file it came from; the unwind tables of
 * the big objects at hand (cc1 and libLLVM-14: CI installs both, and their
 * .eh_frame is over the size that is read again) are built from the file
 * (read again) and from a copy of the whole file in memory (the section in
 * place, never read again), and must be identical row by row.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../testlib.h"
#include "elf/elfsrc.h"
#include "elf/secread.h"
#include "unwind/unwind.h"

#define FILE_LEN (1u << 20)

static uint8_t byte_at(uint64_t off)
{
	return (uint8_t)(off * 2654435761u >> 13);
}

static int make_file(char *path)
{
	uint8_t *buf = malloc(FILE_LEN);
	int fd = mkstemp(path);

	if (fd < 0 || !buf) {
		free(buf);
		return -1;
	}
	for (uint64_t i = 0; i < FILE_LEN; i++)
		buf[i] = byte_at(i);
	if (write(fd, buf, FILE_LEN) != FILE_LEN) {
		close(fd);
		fd = -1;
	}
	free(buf);
	return fd;
}

/* Whether [@off, @off + @len) of a section at @at came back right. */
static bool right(const uint8_t *p, uint64_t at, uint64_t off, size_t len)
{
	if (!p)
		return false;
	for (size_t i = 0; i < len; i++)
		if (p[i] != byte_at(at + off + i))
			return false;
	return true;
}

static void test_chunks(void)
{
	char path[] = "/tmp/cprof-secread-XXXXXX";
	int fd = make_file(path);
	const uint64_t at = 4096 + 7, len = FILE_LEN - 4096 - 100;
	struct elfsrc src;
	struct secread r;
	size_t bad = 0, reads;

	if (fd < 0 || elfsrc_from_fd(&src, fd)) {
		CHECK(false, "secread: a test file", "%s", strerror(errno));
		return;
	}
	secread_init(&r, &src, at, len);

	/* In order, 40 bytes at a time, as sorted FDEs mostly come. */
	for (uint64_t off = 0; off + 40 <= len; off += 40)
		bad += !right(secread_get(&r, off, 40), at, off, 40);
	CHECK(bad == 0 && r.reads <= len / SECREAD_CHUNK_SIZE * 4 / 3 + 2,
	      "secread: a section read in order comes back byte for byte, a chunk at a time",
	      "%zu spans wrong, %zu chunks read for %llu bytes", bad,
	      r.reads, (unsigned long long)len);

	/* Two streams far apart (hot and cold code), taken in turn. */
	reads = r.reads;
	for (uint64_t k = 0; k < 2000; k++) {
		uint64_t hot = k * 37, cold = len / 2 + k * 29;

		bad += !right(secread_get(&r, hot, 30), at, hot, 30);
		bad += !right(secread_get(&r, cold, 30), at, cold, 30);
	}
	CHECK(bad == 0 && r.reads - reads <= 8,
	      "secread: two interleaved streams are each kept in a chunk",
	      "%zu spans wrong, %zu chunks read", bad, r.reads - reads);

	/* Wider than a chunk, and at the very end. */
	CHECK(right(secread_get(&r, 1000, SECREAD_CHUNK_SIZE * 3), at, 1000,
		    SECREAD_CHUNK_SIZE * 3),
	      "secread: a span wider than a chunk is read whole", "wrong bytes");
	CHECK(right(secread_get(&r, len - 5, 5), at, len - 5, 5),
	      "secread: the section's last bytes", "wrong bytes");
	CHECK(!secread_get(&r, len - 5, 6) && !secread_get(&r, len + 1, 0) &&
		      !secread_get(&r, UINT64_MAX - 2, 4),
	      "secread: a span past the section's end is refused", "a pointer given");

	/* The file shrank since the section was read whole: no bytes, no crash. */
	if (ftruncate(fd, FILE_LEN / 2) == 0) {
		secread_free(&r);
		secread_init(&r, &src, at, len);
		CHECK(right(secread_get(&r, 100, 10), at, 100, 10) &&
			      !secread_get(&r, len - 64, 32),
		      "secread: after the file is truncated, what is left reads and what is gone "
		      "is NULL",
		      "wrong");
	}
	secread_free(&r);
	close(fd);
	unlink(path);
}

static bool same_tables(const struct unwind_table *a, const struct unwind_table *b,
			size_t *row)
{
	*row = 0;
	if (a->n != b->n || a->nrules != b->nrules || a->base != b->base)
		return false;
	if (memcmp(a->rules, b->rules, a->nrules * sizeof(*a->rules)))
		return false;
	for (*row = 0; *row < a->n; (*row)++)
		if (a->pcs[*row] != b->pcs[*row] || a->ids[*row] != b->ids[*row])
			return false;
	return true;
}

/* The file at @path whole in memory, or NULL. */
static uint8_t *slurp(const char *path, size_t *len)
{
	struct stat st;
	uint8_t *buf;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st) || !(buf = malloc((size_t)st.st_size + 1))) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	*len = (size_t)st.st_size;
	for (size_t got = 0; got < *len;) {
		ssize_t n = pread(fd, buf + got, *len - got, (off_t)got);

		if (n <= 0) {
			free(buf);
			close(fd);
			return NULL;
		}
		got += (size_t)n;
	}
	close(fd);
	return buf;
}

static void test_tables(const char *name, const char *path)
{
	struct unwind_table reread = { 0 }, whole = { 0 };
	struct errbuf err = { "" };
	size_t len = 0, row;
	uint8_t *image;
	int fd;

	if (access(path, R_OK)) {
		CHECK(false, name, "%s: %s (make deps installs it)", path, strerror(errno));
		return;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	image = slurp(path, &len);
	if (fd < 0 || !image || unwind_build_fd(fd, &reread, &err) ||
	    unwind_build_mem(image, len, &whole, &err)) {
		CHECK(false, name, "%s: %s", path, err.msg);
	} else {
		bool same = same_tables(&reread, &whole, &row);

		CHECK(same && reread.n > 100000 && reread.fdes == whole.fdes &&
			      reread.skipped == whole.skipped,
		      name, "%zu and %zu rows, first difference at row %zu; FDEs %zu/%zu",
		      reread.n, whole.n, row, reread.fdes, whole.fdes);
	}
	if (fd >= 0)
		close(fd);
	free(image);
	unwind_table_free(&reread);
	unwind_table_free(&whole);
}

int main(void)
{
	T_PLAN(8);
	test_chunks();
	test_tables("secread: cc1's table, its .eh_frame read again, is row for row the one "
		    "made from the whole file",
		    "/usr/lib/gcc/x86_64-linux-gnu/12/cc1");
	test_tables("secread: libLLVM-14's table, its .eh_frame read again, is row for row the "
		    "one made from the whole file",
		    "/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1");
	return T_EXIT();
}
