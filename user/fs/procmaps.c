// SPDX-License-Identifier: MIT
/*
 * procmaps: a parser for /proc/<pid>/maps.
 *
 * A line is "start-end perms offset major:minor inode [spaces] [name]".
 * How a line is classified follows from how the kernel prints it
 * (fs/proc/task_mmu.c, show_map_vma()):
 *
 *  - a name is printed without brackets exactly when the VMA has a struct
 *    file, so any such name is VMA_FILE.  The inode is then normally != 0
 *    ("/memfd:x (deleted)" and "/dev/zero (deleted)" included); if a line
 *    names a file with inode 0 anyway we still call it VMA_FILE, because the
 *    name is what /proc/<pid>/map_files/<range> and the output need, and an
 *    inode of 0 only makes the (dev, inode) pair useless as an identity -
 *    objcache identifies files by fstat() of the opened file, not by this.
 *  - "[...]" names come from VMAs without a file ([vdso], [heap], [stack],
 *    [anon:name], [uprobes], ...): VMA_SPECIAL.
 *  - no name: VMA_ANON (malloc arenas, JIT code, huge-page text copies).
 *
 * The kernel escapes '\n' in names as "\012" but not '\\', so unescaping is
 * ambiguous; names are kept exactly as printed.  A file whose real name ends
 * in " (deleted)" is indistinguishable from a deleted file; we strip it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <stdio.h>

#include "cprof.h"
#include "util/addrsearch.h"
#include "util/grow.h"
#include "util/hexnum.h"
#include "fs/procmaps.h"

/* A name is at most PATH_MAX; the fixed fields take well under 128 bytes. */
#define MAPS_MAX_LINE (PATH_MAX + 128)
/* A real maps file is at most a few MiB (65530 VMAs by default). */
#define MAPS_MAX_FILE (64u << 20)
#define MAPS_READ_CHUNK (64u << 10)

static const char deleted_suffix[] = " (deleted)";

/* Paths are collected in one buffer; VMAs record offsets until it stops moving. */
struct pathbuf {
	char *buf;
	size_t len, cap;
	size_t last_off, last_len; /* the previous path, for de-duplication */
	bool have_last;
};

#define NO_PATH SIZE_MAX

static bool is_space(char c)
{
	return c == ' ' || c == '\t';
}

static bool parse_dec(const char **pp, const char *end, uint64_t *out)
{
	const char *p = *pp;
	uint64_t v = 0;

	if (p == end || *p < '0' || *p > '9')
		return false;
	for (; p < end && *p >= '0' && *p <= '9'; p++) {
		uint64_t d = (uint64_t)(*p - '0');

		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*pp = p;
	*out = v;
	return true;
}

static bool expect(const char **pp, const char *end, char c)
{
	if (*pp == end || **pp != c)
		return false;
	(*pp)++;
	return true;
}

/* Field separators: one or more blanks. */
static bool skip_blanks(const char **pp, const char *end)
{
	const char *p = *pp;

	while (p < end && is_space(*p))
		p++;
	if (p == *pp)
		return false;
	*pp = p;
	return true;
}

static bool parse_perms(const char **pp, const char *end, uint8_t *prot)
{
	const char *p = *pp;

	if (end - p < 4)
		return false;
	*prot = 0;
	if (p[0] == 'r')
		*prot |= VMA_READ;
	else if (p[0] != '-')
		return false;
	if (p[1] == 'w')
		*prot |= VMA_WRITE;
	else if (p[1] != '-')
		return false;
	if (p[2] == 'x')
		*prot |= VMA_EXEC;
	else if (p[2] != '-')
		return false;
	if (p[3] == 's')
		*prot |= VMA_SHARED;
	else if (p[3] != 'p')
		return false;
	*pp = p + 4;
	return true;
}

static int pathbuf_add(struct pathbuf *a, const char *s, size_t n, size_t *off)
{
	/* Consecutive VMAs of one object (text, rodata, data, ...) share a path. */
	if (a->have_last && a->last_len == n &&
	    memcmp(a->buf + a->last_off, s, n) == 0) {
		*off = a->last_off;
		return 0;
	}
	if (grow_to((void **)&a->buf, &a->cap, a->len + n + 1, 1, 4096, GROW_NO_MAX))
		return -ENOMEM;
	memcpy(a->buf + a->len, s, n);
	a->buf[a->len + n] = '\0';
	*off = a->last_off = a->len;
	a->last_len = n;
	a->have_last = true;
	a->len += n + 1;
	return 0;
}

/*
 * Parses one line (without its '\n') into @v; the name, if any, is returned
 * through @name/@name_len.  False when the line is malformed.
 */
static bool parse_line(const char *p, const char *end, struct vma *v,
		       const char **name, size_t *name_len)
{
	uint64_t major, minor;

	memset(v, 0, sizeof(*v));
	if (!parse_hex(&p, end, UINT64_MAX, &v->start) || !expect(&p, end, '-') ||
	    !parse_hex(&p, end, UINT64_MAX, &v->end) || !skip_blanks(&p, end) ||
	    !parse_perms(&p, end, &v->prot) || !skip_blanks(&p, end) ||
	    !parse_hex(&p, end, UINT64_MAX, &v->offset) ||
	    !skip_blanks(&p, end) ||
	    !parse_hex(&p, end, UINT32_MAX, &major) || !expect(&p, end, ':') ||
	    !parse_hex(&p, end, UINT32_MAX, &minor) || !skip_blanks(&p, end) ||
	    !parse_dec(&p, end, &v->inode))
		return false;
	if (v->start >= v->end)
		return false;
	v->dev_major = (uint32_t)major;
	v->dev_minor = (uint32_t)minor;

	/* The name follows padding blanks; a file name never starts with one. */
	if (p < end && !is_space(*p))
		return false;
	while (p < end && is_space(*p))
		p++;
	*name = p;
	*name_len = (size_t)(end - p);
	if (*name_len >= sizeof(deleted_suffix) - 1 &&
	    memcmp(end - (sizeof(deleted_suffix) - 1), deleted_suffix,
		   sizeof(deleted_suffix) - 1) == 0) {
		v->deleted = true;
		*name_len -= sizeof(deleted_suffix) - 1;
	}

	if (*name_len == 0)
		v->kind = VMA_ANON;
	else if (*name_len >= 2 && (*name)[0] == '[' &&
		 (*name)[*name_len - 1] == ']')
		v->kind = VMA_SPECIAL;
	else
		v->kind = VMA_FILE;
	return true;
}

static int cmp_vma(const void *a, const void *b)
{
	const struct vma *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return 0;
}

/*
 * The kernel prints VMAs sorted and disjoint; procmaps_find() relies on
 * both, so enforce them for any other input: sort, then drop a VMA that
 * overlaps its predecessor (counted as skipped).
 */
static void sort_and_check(struct vma_list *l)
{
	size_t i, w;
	bool sorted = true;

	for (i = 1; i < l->n && sorted; i++)
		sorted = l->v[i - 1].start <= l->v[i].start;
	if (!sorted)
		qsort(l->v, l->n, sizeof(*l->v), cmp_vma);
	for (i = 1, w = 1; i < l->n; i++) {
		if (l->v[i].start < l->v[w - 1].end) {
			l->skipped++;
			continue;
		}
		l->v[w++] = l->v[i];
	}
	if (l->n > 1)
		l->n = w;
}

/* Room for one more VMA and its name's offset: both arrays grow alike. */
static int grow_vmas(struct vma **v, size_t **offs, size_t n, size_t *cap)
{
	size_t vcap = *cap;

	if (grow((void **)v, &vcap, n, sizeof(**v), 64, GROW_NO_MAX) ||
	    grow((void **)offs, cap, n, sizeof(**offs), 64, GROW_NO_MAX))
		return -ENOMEM;
	return 0;
}

int procmaps_parse(const char *text, size_t len, struct vma_list *out,
		   struct errbuf *err)
{
	struct pathbuf a = { 0 };
	struct vma *v = NULL;
	size_t *offs = NULL; /* path offset into a.buf per VMA, or NO_PATH */
	size_t n = 0, cap = 0, skipped = 0, i;
	const char *p = text, *end;

	memset(out, 0, sizeof(*out));
	if (len == 0) /* also keeps NULL + 0 out of the pointer arithmetic */
		return 0;
	end = text + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;
		const char *name;
		size_t name_len;
		struct vma tmp;

		if (eol == p) { /* blank line: not data, not an error either */
			p = eol + 1;
			continue;
		}
		if ((size_t)(eol - p) > MAPS_MAX_LINE ||
		    memchr(p, '\0', (size_t)(eol - p)) ||
		    !parse_line(p, eol, &tmp, &name, &name_len)) {
			skipped++;
			p = nl ? nl + 1 : end;
			continue;
		}
		if (grow_vmas(&v, &offs, n, &cap) < 0)
			goto nomem;
		offs[n] = NO_PATH;
		if (tmp.kind != VMA_ANON &&
		    pathbuf_add(&a, name, name_len, &offs[n]) < 0)
			goto nomem;
		v[n++] = tmp;
		p = nl ? nl + 1 : end;
	}

	/* Settle the buffer's final address first, then turn offsets into pointers. */
	if (a.buf && a.len < a.cap) {
		char *b = realloc(a.buf, a.len);

		if (b)
			a.buf = b;
	}
	for (i = 0; i < n; i++)
		v[i].path = offs[i] == NO_PATH ? NULL : a.buf + offs[i];
	free(offs);

	out->v = v;
	out->n = n;
	out->skipped = skipped;
	out->strings = a.buf;
	sort_and_check(out);
	return 0;

nomem:
	free(v);
	free(offs);
	free(a.buf);
	return errf(err, -ENOMEM, "maps: out of memory after %zu lines", n);
}

/*
 * Reads all of @fd.  A process that exits while we read makes read() fail
 * with ESRCH (or just end early); what was read so far is still valid
 * (seq_file hands out whole lines), so that is not an error.  ESRCH before
 * any data means the process is gone and is reported as such; an empty file
 * (a kernel thread) is not an error.
 */
static int read_all(int fd, const char *path, char **buf, size_t *len,
		    struct errbuf *err)
{
	char *b = NULL;
	size_t n = 0, cap = 0;

	for (;;) {
		ssize_t r;

		r = grow((void **)&b, &cap, n, 1, MAPS_READ_CHUNK, MAPS_MAX_FILE);
		if (r == -E2BIG) {
			free(b);
			return errf(err, -EFBIG, "%s: larger than %u MiB", path,
				    MAPS_MAX_FILE >> 20);
		}
		if (r) {
			free(b);
			return errf(err, -ENOMEM, "%s: out of memory", path);
		}
		r = read(fd, b + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == ESRCH && n > 0)
			break;
		if (r < 0) {
			int e = errno;

			free(b);
			return errf(err, -e, "%s: %s", path, strerror(e));
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	*buf = b;
	*len = n;
	return 0;
}

int procmaps_read(const char *proc_root, int pid, struct vma_list *out,
		  struct errbuf *err)
{
	char path[PATH_MAX];
	char *buf = NULL;
	size_t len = 0;
	int fd, ret, n;

	memset(out, 0, sizeof(*out));
	n = snprintf(path, sizeof(path), "%s/%d/maps", proc_root, pid);
	if (n < 0 || (size_t)n >= sizeof(path))
		return errf(err, -ENAMETOOLONG, "%s/%d/maps: path too long",
			    proc_root, pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		/* ESRCH: the pid directory exists but the process is exiting. */
		return errf(err, -e, "%s: %s", path, strerror(e));
	}
	ret = read_all(fd, path, &buf, &len, err);
	close(fd);
	if (ret < 0)
		return ret;
	ret = procmaps_parse(buf, len, out, err);
	free(buf);
	return ret;
}

const struct vma *procmaps_find(const struct vma_list *l, uint64_t addr)
{
	const struct vma *v = addrsearch_floor(l->v, l->n, ADDRSEARCH_KEY(struct vma, start), addr);

	return v && addr < v->end ? v : NULL;
}

bool procmaps_extends(const struct vma_list *wider, const struct vma_list *l)
{
	size_t shown = 0;

	for (size_t i = 0; i < l->n; i++) {
		const struct vma *a = &l->v[i], *b = procmaps_find(wider, a->start);

		/* [vsyscall]: in the kernel's half, no VMA of the process's */
		if (a->kind == VMA_SPECIAL && a->start >> 63)
			continue;
		/* [uprobes] where a record has none (a kernel without the field) */
		if (!b && a->kind == VMA_SPECIAL && a->path && !strcmp(a->path, CPROF_EXIT_UPROBES))
			continue;
		if (!b || a->end > b->end || a->kind != b->kind ||
		    (a->kind != VMA_FILE && a->kind != VMA_SPECIAL) ||
		    (a->kind == VMA_FILE && (a->inode != b->inode || a->dev_major != b->dev_major ||
					     a->dev_minor != b->dev_minor)))
			return false;
		shown++;
	}
	return wider->n > shown;
}

int procmaps_from_exit(const struct cprof_exit_maps *rec, struct vma_list *out,
		       struct errbuf *err)
{
	uint32_t n = rec->n < CPROF_EXIT_MAPS ? rec->n : CPROF_EXIT_MAPS;

	memset(out, 0, sizeof(*out));
	out->v = calloc(n ? n : 1, sizeof(*out->v));
	out->strings = malloc((size_t)(n ? n : 1) * (CPROF_EXIT_NAME + 1));
	if (!out->v || !out->strings) {
		procmaps_free(out);
		return errf(err, -ENOMEM, "exit record: out of memory");
	}
	for (uint32_t i = 0; i < n; i++) {
		const struct cprof_exit_map *m = &rec->m[i];
		char *name = out->strings + (size_t)i * (CPROF_EXIT_NAME + 1);
		size_t len = strnlen(m->name, CPROF_EXIT_NAME);

		if (m->end <= m->start || m->pgoff > UINT64_MAX >> 12) {
			out->skipped++;
			continue;
		}
		for (size_t k = 0; k < len; k++)
			name[k] = (unsigned char)m->name[k] < 0x20 || m->name[k] == 0x7f ? '?' :
										    m->name[k];
		name[len] = '\0';
		if (!m->key.ino && !m->key.dev &&
		    (!strcmp(name, CPROF_EXIT_VDSO) || !strcmp(name, CPROF_EXIT_UPROBES))) {
			out->v[out->n++] = (struct vma){ .start = m->start, .end = m->end,
							 .prot = VMA_READ | VMA_EXEC,
							 .kind = VMA_SPECIAL, .path = name };
			continue;
		}
		out->v[out->n++] = (struct vma){
			.start = m->start,
			.end = m->end,
			.offset = m->pgoff << 12,
			.inode = m->key.ino,
			/* the kernel's dev_t: 12 bits of major, 20 of minor */
			.dev_major = m->key.dev >> 20,
			.dev_minor = m->key.dev & 0xfffff,
			.prot = VMA_READ | VMA_EXEC,
			.kind = VMA_FILE,
			.path = name,
		};
	}
	sort_and_check(out);
	return 0;
}

void procmaps_free(struct vma_list *l)
{
	if (!l)
		return;
	free(l->v);
	free(l->strings);
	memset(l, 0, sizeof(*l));
}
