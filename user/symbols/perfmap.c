// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/grow.h"
#include "util/hexnum.h"
#include "util/addrsearch.h"
#include "symbols/perfmap.h"
#include "fs/rootfs.h"

#define CHUNK 65536u

struct resolver {
	uint64_t *q;       /* sorted, unique queries */
	size_t m, open;    /* count, and how many are not settled yet */
	size_t *next;      /* skip-list: next[i] is i if unsettled, else a later index */
	size_t *name_off;  /* per query: offset in strings, SIZE_MAX when none */
	uint64_t *start;
	char *strings;
	size_t slen, scap;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The first unsettled query at index >= i (m when none), compressing the path. */
static size_t next_open(size_t *next, size_t i)
{
	size_t root = i;

	while (next[root] != root)
		root = next[root];
	while (next[i] != root) {
		size_t up = next[i];

		next[i] = root;
		i = up;
	}
	return root;
}

/* A hex number, with an optional 0x: the end of it, or NULL. */
static const char *perfmap_hex(const char *p, const char *end, uint64_t *out)
{
	if (end - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	return parse_hex(&p, end, UINT64_MAX, out) ? p : NULL;
}

static const char *skip_blanks(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

/* Copies a name, cleaned of control bytes, into the string buffer. */
static int store_name(struct resolver *r, const char *name, size_t len, size_t *off)
{
	if (len > PERFMAP_NAME_MAX - 1)
		len = PERFMAP_NAME_MAX - 1;
	if (grow_to((void **)&r->strings, &r->scap, r->slen + len + 1, 1, 4096, GROW_NO_MAX))
		return -ENOMEM;
	*off = r->slen;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];

		r->strings[r->slen++] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
	}
	r->strings[r->slen++] = '\0';
	return 0;
}

/* One line, newest first: settles the open queries it covers. */
static int take_line(struct resolver *r, const char *p, size_t len)
{
	const char *end = p + len, *name;
	uint64_t start, size, last;
	size_t i, off = SIZE_MAX;
	int ret;

	while (end > p && (end[-1] == '\r' || end[-1] == ' ' || end[-1] == '\t'))
		end--;
	p = perfmap_hex(skip_blanks(p, end), end, &start);
	if (!p || p == end || (*p != ' ' && *p != '\t'))
		return 0;
	p = perfmap_hex(skip_blanks(p, end), end, &size);
	if (!p || p == end || (*p != ' ' && *p != '\t') || size == 0)
		return 0;
	name = skip_blanks(p, end);
	if (name == end)
		return 0;
	/* The region's last byte; a region running past 2^64 ends there. */
	last = size - 1 > UINT64_MAX - start ? UINT64_MAX : start + (size - 1);
	for (i = next_open(r->next, addrsearch_below(r->q, r->m, ADDRSEARCH_BARE(uint64_t), start));
	     i < r->m && r->q[i] <= last; i = next_open(r->next, i + 1)) {
		if (off == SIZE_MAX) {
			ret = store_name(r, name, (size_t)(end - name), &off);
			if (ret)
				return ret;
		}
		r->name_off[i] = off;
		r->start[i] = start;
		r->next[i] = i + 1;
		r->open--;
	}
	return 0;
}

static int pread_full(int fd, char *buf, size_t len, uint64_t off)
{
	while (len) {
		ssize_t n = pread(fd, buf, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO; /* the file shrank */
		buf += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/*
 * Reads [lo, size) of @fd backwards in chunks, feeding complete lines to
 * take_line(), newest first.  The part of a chunk before its first newline
 * is carried over and completed by the next (earlier) chunk.  A line
 * without its newline at the end of the file may be half-written and is
 * dropped, as are lines longer than PERFMAP_LINE_MAX and, when the file was
 * read from @lo > 0, the line cut at lo.
 */
static int scan_backwards(struct resolver *r, int fd, uint64_t lo, uint64_t size)
{
	char *buf = malloc(CHUNK + PERFMAP_LINE_MAX);
	size_t carry = 0; /* bytes at buf + CHUNK */
	bool drop = true; /* the segment before the next newline found is dropped */
	uint64_t pos = size;
	int ret = 0;

	if (!buf)
		return -ENOMEM;
	while (pos > lo && r->open && !ret) {
		size_t n = (size_t)(pos - lo < CHUNK ? pos - lo : CHUNK);
		char *data = buf + CHUNK - n;
		size_t end = n + carry;
		bool newline = false;

		pos -= n;
		ret = pread_full(fd, data, n, pos);
		if (ret)
			break;
		for (size_t i = end; i-- > 0 && r->open && !ret;) {
			if (data[i] != '\n')
				continue;
			if (!drop && end - i - 1 <= PERFMAP_LINE_MAX)
				ret = take_line(r, data + i + 1, end - i - 1);
			drop = false;
			newline = true;
			end = i;
		}
		if ((drop && !newline) || end > PERFMAP_LINE_MAX) {
			drop = true;
			carry = 0;
		} else {
			memmove(buf + CHUNK, data, end);
			carry = end;
		}
	}
	if (!ret && pos == 0 && !drop && carry && r->open)
		ret = take_line(r, buf + CHUNK, carry);
	free(buf);
	return ret;
}

static void resolver_free(struct resolver *r)
{
	free(r->q);
	free(r->next);
	free(r->name_off);
	free(r->start);
	free(r->strings);
}

int perfmap_resolve(int fd, const uint64_t *addrs, size_t n, struct perfmap_table *out,
		    struct errbuf *err)
{
	struct resolver r = { 0 };
	struct stat st;
	size_t m = 0;
	int ret;

	memset(out, 0, sizeof(*out));
	if (n == 0)
		return 0;
	if (fstat(fd, &st))
		return errf(err, -errno, "perf map: %s", strerror(errno));
	if (!S_ISREG(st.st_mode))
		return errf(err, -EINVAL, "perf map: not a regular file");
	if (n > SIZE_MAX / sizeof(uint64_t) - 1)
		return errf(err, -ENOMEM, "perf map: too many addresses");
	r.q = malloc(n * sizeof(*r.q));
	if (!r.q)
		return errf(err, -ENOMEM, "perf map: out of memory");
	memcpy(r.q, addrs, n * sizeof(*r.q));
	qsort(r.q, n, sizeof(*r.q), cmp_u64);
	for (size_t i = 0; i < n; i++)
		if (i == 0 || r.q[i] != r.q[m - 1])
			r.q[m++] = r.q[i];
	r.m = r.open = m;
	r.next = malloc((m + 1) * sizeof(*r.next));
	r.name_off = malloc(m * sizeof(*r.name_off));
	r.start = calloc(m, sizeof(*r.start));
	out->syms = calloc(m, sizeof(*out->syms));
	if (!r.next || !r.name_off || !r.start || !out->syms) {
		resolver_free(&r);
		perfmap_free(out);
		return errf(err, -ENOMEM, "perf map: out of memory");
	}
	for (size_t i = 0; i <= m; i++)
		r.next[i] = i;
	for (size_t i = 0; i < m; i++)
		r.name_off[i] = SIZE_MAX;

	ret = scan_backwards(&r, fd, (uint64_t)st.st_size > PERFMAP_MAX_BYTES
					     ? (uint64_t)st.st_size - PERFMAP_MAX_BYTES : 0,
			     (uint64_t)st.st_size);
	if (ret) {
		resolver_free(&r);
		perfmap_free(out);
		return errf(err, ret, "perf map: %s", strerror(-ret));
	}
	/* The string buffer no longer moves: names can point into it. */
	out->strings = r.strings;
	r.strings = NULL;
	out->n = m;
	for (size_t i = 0; i < m; i++) {
		out->syms[i].addr = r.q[i];
		if (r.name_off[i] != SIZE_MAX) {
			out->syms[i].name = out->strings + r.name_off[i];
			out->syms[i].start = r.start[i];
		}
	}
	resolver_free(&r);
	return 0;
}

const struct perfmap_sym *perfmap_find(const struct perfmap_table *t, uint64_t addr)
{
	return addrsearch_find(t->syms, t->n, ADDRSEARCH_KEY(struct perfmap_sym, addr), addr);
}

void perfmap_free(struct perfmap_table *t)
{
	if (!t)
		return;
	free(t->syms);
	free(t->strings);
	memset(t, 0, sizeof(*t));
}

/* --- finding the file ---------------------------------------------------- */

/*
 * Whether a file last modified at @mtime was written before @born.  File
 * times are stamped from the kernel's coarse clock, which lags by up to its
 * resolution (a jiffy): a map written just after the start can carry a time
 * before it, so the start is moved back by that much and no more.
 */
static bool written_before(const struct timespec *mtime, const struct timespec *born)
{
	struct timespec res, from = *born;
	long slack = 10000000; /* the coarsest jiffy, HZ=100, if the kernel won't say */

	if (clock_getres(CLOCK_REALTIME_COARSE, &res) == 0 && res.tv_sec == 0)
		slack = res.tv_nsec;
	from.tv_nsec -= slack;
	if (from.tv_nsec < 0) {
		from.tv_sec--;
		from.tv_nsec += 1000000000;
	}
	/* Compared field by field: a process may set any time on its file. */
	return mtime->tv_sec < from.tv_sec ||
	       (mtime->tv_sec == from.tv_sec && mtime->tv_nsec < from.tv_nsec);
}

int perfmap_open_at(int root_fd, uint32_t nspid, uint32_t uid, const struct timespec *born,
		    int *fd, struct stat *st, struct errbuf *err)
{
	const struct rootfs_want want = { .no_symlinks = true };
	struct stat sb;
	char rel[64];
	int f;

	*fd = -1;
	snprintf(rel, sizeof(rel), "tmp/perf-%u.map", nspid);
	f = rootfs_open_in(root_fd, rel, &want, &sb);
	if (f < 0)
		return errf(err, f, "/tmp/perf-%u.map: %s", nspid,
			    f == -EINVAL ? "not a regular file" : strerror(-f));
	/* Another user's file (one the process can't read, say) names nothing of it. */
	if (sb.st_uid != uid && sb.st_uid != 0) {
		close(f);
		return errf(err, -EPERM, "/tmp/perf-%u.map: owned by uid %u, not the process's %u",
			    nspid, (unsigned)sb.st_uid, uid);
	}
	/* Not written since the process started: an earlier process's of that pid. */
	if (born && written_before(&sb.st_mtim, born)) {
		close(f);
		return errf(err, -ESTALE, "/tmp/perf-%u.map: last written before the process started",
			    nspid);
	}
	if (st)
		*st = sb;
	*fd = f;
	return 0;
}

static void file_evict(struct fdlru_node *n)
{
	struct perfmap_file *f = (struct perfmap_file *)((char *)n - offsetof(struct perfmap_file, node));

	close(f->fd);
	f->fd = -1;
}

void perfmap_file_init(struct perfmap_file *f, struct fdlru *lru)
{
	*f = (struct perfmap_file){ .lru = lru, .fd = -1 };
	f->node.evict = file_evict;
}

int perfmap_file_update(struct perfmap_file *f, int root_fd, uint32_t nspid, uint32_t uid,
			const struct timespec *born, struct errbuf *err)
{
	struct stat st;
	int fd, ret;

	ret = perfmap_open_at(root_fd, nspid, uid, born, &fd, &st, err);
	if (ret)
		return f->fd >= 0 ? 0 : ret;
	if (f->fd >= 0 && f->dev == (uint64_t)st.st_dev && f->ino == (uint64_t)st.st_ino) {
		close(fd); /* the same file: keep the one held */
		if (f->lru)
			fdlru_touch(f->lru, &f->node);
		return 0;
	}
	perfmap_file_close(f);
	f->fd = fd;
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	if (f->lru)
		fdlru_hold(f->lru, &f->node);
	return 0;
}

int perfmap_file_fd(struct perfmap_file *f)
{
	if (f->fd >= 0 && f->lru)
		fdlru_touch(f->lru, &f->node);
	return f->fd;
}

void perfmap_file_close(struct perfmap_file *f)
{
	if (f->fd < 0)
		return;
	if (f->lru)
		fdlru_drop(f->lru, &f->node);
	close(f->fd);
	f->fd = -1;
}
