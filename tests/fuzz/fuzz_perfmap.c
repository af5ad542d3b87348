// SPDX-License-Identifier: MIT
/*
 * fuzz_perfmap: any bytes as a JIT's /tmp/perf-<pid>.map, resolved by
 * perfmap_resolve() through a file descriptor, as the agent reads it.
 *
 * The resolver reads the file backwards in 64 KiB chunks and settles each
 * query by the newest line covering it.  That is easy to get subtly wrong
 * at chunk boundaries, so the answers are compared with a naive forward
 * reader written here from the format in perfmap.h: lines ending in '\n'
 * (a last line without one may be half-written and is ignored) of at most
 * PERFMAP_LINE_MAX bytes, "START SIZE NAME" in hex with an optional 0x,
 * blanks around, trailing blanks and '\r' trimmed, SIZE > 0; the last line
 * covering an address wins; names cut to PERFMAP_NAME_MAX - 1 bytes with
 * control bytes shown as '?'.
 *
 * Input: u16 len, then the body; the file is the body repeated up to
 * len * 4 bytes (at least once), so that small inputs still make files
 * that cross chunk boundaries anywhere in a line.
 */
#include <stdbool.h>
#include <stdint.h>

#include "fuzz_common.h"
#include "symbols/perfmap.h"

#define MAX_QUERIES 2048
#define MAX_FILE (256u << 10) /* four 64 KiB chunks of perfmap.c */

struct line {
	uint64_t start, last;
	const char *name;
	size_t name_len;
};

static const char *hex(const char *p, const char *end, uint64_t *out)
{
	uint64_t v = 0;
	int digits = 0;

	if (end - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	for (; p < end; p++, digits++) {
		int c = (unsigned char)*p, d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			break;
		if (v >> 60)
			return NULL; /* past 64 bits */
		v = v << 4 | (uint64_t)d;
	}
	*out = v;
	return digits ? p : NULL;
}

static const char *blanks(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

static bool parse(const char *p, const char *end, struct line *l)
{
	uint64_t size;

	while (end > p && (end[-1] == '\r' || end[-1] == ' ' || end[-1] == '\t'))
		end--;
	p = hex(blanks(p, end), end, &l->start);
	if (!p || p == end || (*p != ' ' && *p != '\t'))
		return false;
	p = hex(blanks(p, end), end, &size);
	if (!p || p == end || (*p != ' ' && *p != '\t') || size == 0)
		return false;
	p = blanks(p, end);
	if (p == end)
		return false;
	l->last = size - 1 > UINT64_MAX - l->start ? UINT64_MAX : l->start + (size - 1);
	l->name = p;
	l->name_len = (size_t)(end - p);
	return true;
}

static bool same_name(const char *got, const struct line *l)
{
	size_t n = l->name_len < PERFMAP_NAME_MAX - 1 ? l->name_len : PERFMAP_NAME_MAX - 1;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)l->name[i];

		if (got[i] != ((c < 0x20 || c == 0x7f) ? '?' : (char)c))
			return false;
	}
	return got[n] == '\0';
}

static size_t next[MAX_QUERIES + 1], ans[MAX_QUERIES];

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The first unsettled query at index >= i, compressing the path. */
static size_t find(size_t i)
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint64_t q[MAX_QUERIES];
	/* A valid line takes at least 6 bytes ("0 1 x\n"): room for all of them. */
	static struct line lines[MAX_FILE / 6 + 1];
	struct fdp f = fdp_init(data, size);
	size_t want = (size_t)fdp_u16(&f) * 4, blen, flen = 0, nl = 0, nq = 0, m = 0;
	const uint8_t *body = fdp_bytes(&f, f.left, &blen);
	struct perfmap_table t;
	char *file;
	int fd;

	if (!blen)
		return 0;
	if (want < blen)
		want = blen;
	if (want > MAX_FILE)
		want = MAX_FILE;
	file = malloc(want);
	if (!file)
		return 0;
	while (flen < want) {
		size_t k = want - flen < blen ? want - flen : blen;

		memcpy(file + flen, body, k);
		flen += k;
	}

	/* The reference: every complete line, in file order. */
	for (size_t a = 0; a < flen;) {
		const char *nlp = memchr(file + a, '\n', flen - a);
		size_t b;

		if (!nlp)
			break; /* no newline: possibly half-written, ignored */
		b = (size_t)(nlp - file);
		if (b - a <= PERFMAP_LINE_MAX && parse(file + a, file + b, &lines[nl])) {
			if (nq + 4 <= MAX_QUERIES) {
				q[nq++] = lines[nl].start;
				q[nq++] = lines[nl].last;
				q[nq++] = lines[nl].start - 1;
				q[nq++] = lines[nl].last + 1;
			}
			nl++;
		}
		a = b + 1;
	}
	if (nq + 2 <= MAX_QUERIES) {
		q[nq++] = 0;
		q[nq++] = UINT64_MAX;
	}

	/*
	 * The reference answer per distinct query: the newest line covering
	 * it.  Lines newest first, each settling the unsettled queries in its
	 * range (next[] skips settled ones), so that wide lines repeated
	 * thousands of times cost no more than the queries they settle.
	 */
	qsort(q, nq, sizeof(q[0]), cmp_u64);
	for (size_t i = 0; i < nq; i++)
		if (i == 0 || q[i] != q[m - 1])
			q[m++] = q[i];
	for (size_t i = 0; i <= m; i++)
		next[i] = i;
	for (size_t i = 0; i < m; i++)
		ans[i] = SIZE_MAX;
	for (size_t j = nl; j-- > 0;) {
		size_t lo = 0, hi = m;

		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (q[mid] < lines[j].start)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (size_t i = find(lo); i < m && q[i] <= lines[j].last; i = find(i + 1)) {
			ans[i] = j;
			next[i] = i + 1;
		}
	}

	fd = fuzz_memfd(file, flen);
	if (fd >= 0 && perfmap_resolve(fd, q, m, &t, NULL) == 0) {
		FUZZ_ASSERT(t.n == m);
		for (size_t i = 0; i < m; i++) {
			const struct perfmap_sym *s = &t.syms[i];

			FUZZ_ASSERT(s->addr == q[i] && perfmap_find(&t, q[i]) == s);
			if (ans[i] == SIZE_MAX) {
				FUZZ_ASSERT(s->name == NULL);
				continue;
			}
			FUZZ_ASSERT(s->name != NULL);
			FUZZ_ASSERT(s->start == lines[ans[i]].start);
			FUZZ_ASSERT(same_name(s->name, &lines[ans[i]]));
		}
		perfmap_free(&t);
	}
	if (fd >= 0)
		close(fd);
	free(file);
	return 0;
}
