// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/hmap.h"
#include "fs/procmaps.h"
#include "fs/procmem.h"
#include "python/python.h"
#include "python/python_tramp.h"

#define PAGE 4096u

/*
 * Trampoline code this knows, and its rule: the pcs [lo, hi) run with the
 * return address at sp + 8, the call's return address is at ret.
 */
struct tramp_code {
	uint8_t len, lo, hi, ret;
	uint32_t flags;
	uint8_t bytes[16];
};

static const struct tramp_code codes[] = {
	/* sub $8,%rsp; call *%rcx; add $8,%rsp; ret (3.12, 3.13) */
	{ 11, 4, 10, 6, 0,
	  { 0x48, 0x83, 0xec, 0x08, 0xff, 0xd1, 0x48, 0x83, 0xc4, 0x08, 0xc3 } },
	/* the same after endbr64 (built for CET) */
	{ 15, 8, 14, 10, 0,
	  { 0xf3, 0x0f, 0x1e, 0xfa, 0x48, 0x83, 0xec, 0x08, 0xff, 0xd1, 0x48, 0x83, 0xc4, 0x08,
	    0xc3 } },
	/* push %rbp; mov %rsp,%rbp; call *%rcx; pop %rbp; ret (a frame pointer kept) */
	{ 8, 1, 7, 6, CPROF_PY_TRAMP_RBP, { 0x55, 0x48, 0x89, 0xe5, 0xff, 0xd1, 0x5d, 0xc3 } },
};

/* One anonymous executable mapping looked at: an arena's pages told, or not one. */
struct seen {
	uint64_t start, end;
	size_t told; /* pages with an entry; 0: not an arena (or refused) */
};

struct tramp_proc {
	uint64_t pid; /* key */
	struct seen *v;
	size_t n;
};

struct py_tramps {
	struct py_tramp_sink sink;
	struct hmap by_pid; /* pid -> struct tramp_proc */
	struct py_tramp_stats st;
	uint8_t *buf;       /* PY_TRAMP_ARENA_MAX bytes, for reading arenas */
};

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* How many whole copies of @c at period @period begin @buf (@len bytes). */
static size_t copies(const uint8_t *buf, size_t len, const struct tramp_code *c, size_t period)
{
	size_t n = 0;

	while ((n + 1) * period <= len && !memcmp(buf + n * period, c->bytes, c->len) &&
	       all_zero(buf + n * period + c->len, period - c->len))
		n++;
	return n;
}

size_t py_tramp_match(const uint8_t *buf, size_t len, uint64_t start, struct cprof_py_tramp *out,
		      size_t max)
{
	size_t pos = 0, runs = 0;

	if (start % PAGE || len % PAGE)
		return 0;
	while (pos < len && !all_zero(buf + pos, len - pos)) {
		const struct tramp_code *best = NULL;
		size_t n = 0, period = 0, end;

		/* CPython copies its code end to end (3.12) or 16-byte aligned (3.13). */
		for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
			for (size_t p = codes[i].len; p; p = p % 16 ? (p + 15) / 16 * 16 : 0) {
				size_t k = copies(buf + pos, len - pos, &codes[i], p);

				if (k > n) {
					best = &codes[i];
					n = k;
					period = p;
				}
			}
		if (!best || runs == max)
			return 0;
		end = pos + n * period;
		out[runs++] = (struct cprof_py_tramp){
			.start = start + pos, .end = start + end, .period = (uint32_t)period,
			.len = best->len, .lo = best->lo, .hi = best->hi, .ret = best->ret,
			.flags = best->flags,
		};
		pos = (end + PAGE - 1) / PAGE * PAGE;
		if (pos > len || !all_zero(buf + end, pos - end))
			return 0;
	}
	return runs;
}

int py_tramps_new(struct py_tramps **out, const struct py_tramp_sink *sink)
{
	struct py_tramps *t = calloc(1, sizeof(*t));

	*out = NULL;
	if (!t)
		return -ENOMEM;
	t->buf = malloc(PY_TRAMP_ARENA_MAX);
	if (!t->buf) {
		free(t);
		return -ENOMEM;
	}
	t->sink = *sink;
	hmap_init(&t->by_pid, sizeof(uint64_t), sizeof(struct tramp_proc));
	*out = t;
	return 0;
}

void py_tramps_free(struct py_tramps *t)
{
	struct tramp_proc *tp;
	size_t it = 0;

	if (!t)
		return;
	while ((tp = hmap_next(&t->by_pid, &it)))
		free(tp->v);
	hmap_free(&t->by_pid);
	free(t->buf);
	free(t);
}

/* Whether @p (16 bytes) begins with code this knows. */
static bool known_start(const uint8_t *p)
{
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		if (!memcmp(p, codes[i].bytes, codes[i].len))
			return true;
	return false;
}

/* Removes the entries of the pages of @s, an arena of @pid. */
static void untell(struct py_tramps *t, uint32_t pid, struct seen *s)
{
	struct cprof_py_tramp_key k = { .pid = pid };

	if (!s->told)
		return;
	for (k.page = s->start / PAGE; k.page < s->end / PAGE; k.page++)
		t->sink.set(t->sink.ctx, &k, NULL);
	t->st.pages -= s->told;
	s->told = 0;
}

/* Reads the mapping @s of @pid and, when it is all arenas, tells BPF of its pages. */
static void look_at(struct py_tramps *t, uint32_t pid, struct seen *s)
{
	struct cprof_py_tramp runs[PY_TRAMP_ARENA_MAX / PAGE];
	struct cprof_py_tramp_key k = { .pid = pid };
	size_t len = s->end - s->start, n, r = 0;
	uint8_t head[16];

	/* Most anonymous code is no arena: one small read tells. */
	if (procmem_read(pid, s->start, head, sizeof(head)) || !known_start(head))
		return;
	if (procmem_read(pid, s->start, t->buf, len))
		return;
	n = py_tramp_match(t->buf, len, s->start, runs, sizeof(runs) / sizeof(runs[0]));
	if (!n)
		return;
	if (t->st.pages + len / PAGE > CPROF_PY_TRAMP_PAGES) {
		t->st.refused++;
		return;
	}
	for (k.page = s->start / PAGE; k.page < s->end / PAGE; k.page++) {
		while (r + 1 < n && runs[r].end <= k.page * PAGE)
			r++;
		if (runs[r].end <= k.page * PAGE || runs[r].start >= (k.page + 1) * PAGE)
			continue; /* zeros only */
		if (t->sink.set(t->sink.ctx, &k, &runs[r])) {
			untell(t, pid, s);
			t->st.refused++;
			return;
		}
		s->told++;
		t->st.pages++;
	}
	t->st.arenas++;
}

static bool arena_candidate(const struct vma *v)
{
	/* CPython makes an arena executable once it is written. */
	return v->kind == VMA_ANON && (v->prot & VMA_EXEC) && !(v->prot & VMA_WRITE) &&
	       v->end - v->start <= PY_TRAMP_ARENA_MAX && !(v->start % PAGE) && !(v->end % PAGE);
}

static const struct seen *seen_find(const struct tramp_proc *tp, const struct vma *v)
{
	for (size_t i = 0; tp && i < tp->n; i++)
		if (tp->v[i].start == v->start && tp->v[i].end == v->end)
			return &tp->v[i];
	return NULL;
}

int py_tramps_update(struct py_tramps *t, uint32_t pid, const struct vma_list *maps,
		     struct errbuf *err)
{
	uint64_t key = pid;
	struct tramp_proc *tp = hmap_find(&t->by_pid, &key);
	struct seen *now;
	size_t n = 0;

	for (size_t i = 0; i < maps->n; i++)
		n += arena_candidate(&maps->v[i]);
	if (!n && (!tp || !tp->n))
		return 0; /* the common case: no anonymous code */
	now = calloc(n ? n : 1, sizeof(*now));
	if (!now)
		return errf(err, -ENOMEM, "out of memory");
	n = 0;
	for (size_t i = 0; i < maps->n; i++) {
		const struct vma *v = &maps->v[i];
		const struct seen *old;

		if (!arena_candidate(v))
			continue;
		old = seen_find(tp, v);
		if (old) {
			now[n++] = *old; /* read once: its pages are told, or it is none */
			continue;
		}
		now[n] = (struct seen){ .start = v->start, .end = v->end };
		look_at(t, pid, &now[n++]);
	}
	/* Arenas gone (or changed): their entries go. */
	for (size_t i = 0; tp && i < tp->n; i++) {
		bool kept = false;

		for (size_t j = 0; j < n && !kept; j++)
			kept = now[j].start == tp->v[i].start && now[j].end == tp->v[i].end;
		if (!kept)
			untell(t, pid, &tp->v[i]);
	}
	tp = hmap_insert(&t->by_pid, &key, NULL);
	if (!tp) {
		for (size_t j = 0; j < n; j++)
			untell(t, pid, &now[j]);
		free(now);
		return errf(err, -ENOMEM, "out of memory");
	}
	free(tp->v);
	tp->v = now;
	tp->n = n;
	return 0;
}

static bool no_arenas(const void *entry)
{
	return ((const struct tramp_proc *)entry)->v == NULL;
}

void py_tramps_remove(struct py_tramps *t, uint32_t pid)
{
	uint64_t key = pid;
	struct tramp_proc *tp = hmap_find(&t->by_pid, &key);

	if (!tp)
		return;
	for (size_t i = 0; i < tp->n; i++)
		untell(t, pid, &tp->v[i]);
	free(tp->v);
	tp->v = NULL;
	tp->n = 0;
	hmap_compact(&t->by_pid, no_arenas);
}

void py_tramps_get_stats(const struct py_tramps *t, struct py_tramp_stats *st)
{
	*st = t->st;
}
