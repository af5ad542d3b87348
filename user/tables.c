// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hmap.h"
#include "tables.h"
#include "unwind.h"

/* One object's rows in the shared array; keyed by the object pointer. */
struct table {
	struct elfobj *obj; /* key; holds an objcache reference */
	uint32_t first, n;  /* the range in the rows array (n == 0: none) */
	uint32_t nrows;     /* of them rows, after the page index */
	uint32_t npages, index_shift;
	uint64_t base;      /* vaddr of row pc 0 */
	uint64_t last_use;  /* tables->clock when last given to a process */
	uint32_t users;     /* processes whose entry points at the range */
	bool failed;        /* no table could be built: do not retry */
};

/* The objects a process's entry uses, to release on exit. */
struct proc_entry {
	uint64_t pid;
	struct elfobj **objs;
	size_t n;
};

/* A free range of the rows array. */
struct range {
	uint32_t first, n;
};

struct tables {
	struct tables_maps maps;
	struct objcache *objs;
	struct hmap by_obj;  /* struct elfobj * -> struct table */
	struct hmap by_pid;  /* pid -> struct proc_entry */
	struct range *free;  /* sorted by first, coalesced */
	size_t nfree, free_cap;
	uint64_t clock;
	struct tables_stats st;
	struct cprof_proc_maps scratch; /* the entry being written */
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int tables_new(struct tables **out, const struct tables_maps *maps, struct objcache *objs)
{
	struct tables *t;

	*out = NULL;
	if (!maps->set_proc || !maps->write_rows || !maps->retire)
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->maps = *maps;
	t->objs = objs;
	hmap_init(&t->by_obj, sizeof(struct elfobj *), sizeof(struct table));
	hmap_init(&t->by_pid, sizeof(uint64_t), sizeof(struct proc_entry));
	t->free = malloc(sizeof(*t->free));
	if (!t->free) {
		free(t);
		return -ENOMEM;
	}
	t->free[0] = (struct range){ 0, maps->capacity };
	t->nfree = maps->capacity ? 1 : 0;
	t->free_cap = 1;
	t->st.rows_capacity = maps->capacity;
	*out = t;
	return 0;
}

void tables_free(struct tables *t)
{
	struct proc_entry *pe;
	struct table *tb;
	size_t it = 0;

	if (!t)
		return;
	while ((pe = hmap_next(&t->by_pid, &it)))
		free(pe->objs);
	it = 0;
	while ((tb = hmap_next(&t->by_obj, &it)))
		objcache_put(t->objs, tb->obj);
	hmap_free(&t->by_pid);
	hmap_free(&t->by_obj);
	free(t->free);
	free(t);
}

/* First fit: tables are allocated rarely and freed more rarely. */
static bool range_alloc(struct tables *t, uint32_t n, uint32_t *first)
{
	for (size_t i = 0; i < t->nfree; i++) {
		if (t->free[i].n < n)
			continue;
		*first = t->free[i].first;
		t->free[i].first += n;
		t->free[i].n -= n;
		if (!t->free[i].n) {
			memmove(&t->free[i], &t->free[i + 1], (t->nfree - i - 1) * sizeof(*t->free));
			t->nfree--;
		}
		return true;
	}
	return false;
}

static int range_release(struct tables *t, uint32_t first, uint32_t n)
{
	size_t i = 0;

	while (i < t->nfree && t->free[i].first < first)
		i++;
	if (t->nfree == t->free_cap) {
		size_t cap = t->free_cap * 2;
		struct range *r = realloc(t->free, cap * sizeof(*r));

		if (!r)
			return -ENOMEM; /* the range is leaked, not corrupted */
		t->free = r;
		t->free_cap = cap;
	}
	memmove(&t->free[i + 1], &t->free[i], (t->nfree - i) * sizeof(*t->free));
	t->free[i] = (struct range){ first, n };
	t->nfree++;
	/* coalesce with the neighbours */
	if (i + 1 < t->nfree && t->free[i].first + t->free[i].n == t->free[i + 1].first) {
		t->free[i].n += t->free[i + 1].n;
		memmove(&t->free[i + 1], &t->free[i + 2], (t->nfree - i - 2) * sizeof(*t->free));
		t->nfree--;
	}
	if (i > 0 && t->free[i - 1].first + t->free[i - 1].n == t->free[i].first) {
		t->free[i - 1].n += t->free[i].n;
		memmove(&t->free[i], &t->free[i + 1], (t->nfree - i - 1) * sizeof(*t->free));
		t->nfree--;
	}
	return 0;
}

/*
 * Frees the least recently used tables that no process uses until @n rows
 * fit.  Returns true when they do.
 */
static bool evict_for(struct tables *t, uint32_t n, uint32_t *first)
{
	bool retired = false;

	while (!range_alloc(t, n, first)) {
		struct table *victim = NULL, *tb;
		size_t it = 0;

		while ((tb = hmap_next(&t->by_obj, &it)))
			if (tb->n && !tb->users && (!victim || tb->last_use < victim->last_use))
				victim = tb;
		if (!victim)
			return false;
		/*
		 * No program may still be reading a process entry that used
		 * it: rows that cannot be retired are not reused.
		 */
		if (!retired && t->maps.retire(t->maps.ctx))
			return false;
		retired = true;
		range_release(t, victim->first, victim->n);
		t->st.rows_used -= victim->n;
		victim->n = 0;
		t->st.evicted++;
		t->st.objects--;
	}
	return true;
}

static int build_rows(struct elfobj *o, struct unwind_table *ut, struct errbuf *err)
{
	const void *image;
	size_t len;
	int fd;

	elfobj_source(o, &fd, &image, &len);
	if (fd >= 0)
		return unwind_build_fd(fd, ut, err);
	if (!image)
		return errf(err, -EBADF, "the object's file could not be reopened");
	return unwind_build_mem(image, len, ut, err);
}

/* The loaded table of @o, building and loading it first if need be. */
static struct table *table_of(struct tables *t, struct elfobj *o)
{
	struct unwind_table ut = { 0 };
	union cprof_table_slot *slots;
	struct table *tb;
	uint32_t first;
	bool created;
	size_t n;
	double t0;
	int ret;

	tb = hmap_insert(&t->by_obj, &o, &created);
	if (!tb)
		return NULL;
	if (created) {
		objcache_ref(t->objs, o);
		tb->obj = o;
	}
	tb->last_use = ++t->clock;
	if (tb->n || tb->failed)
		return tb;

	t0 = now_s();
	if (build_rows(o, &ut, NULL) || !ut.n) {
		tb->failed = true;
		t->st.failed++;
		unwind_table_free(&ut);
		t->st.build_seconds += now_s() - t0;
		return tb;
	}
	t->st.build_seconds += now_s() - t0;
	t->st.built++;
	n = unwind_slots(&ut);
	slots = n <= t->maps.capacity ? calloc(n, sizeof(*slots)) : NULL;
	if (!slots || !evict_for(t, (uint32_t)n, &first)) {
		t->st.no_room++;
		free(slots);
		unwind_table_free(&ut);
		return tb; /* retried when a later process needs it */
	}
	unwind_layout(&ut, slots);
	ret = t->maps.write_rows(t->maps.ctx, first, slots, (uint32_t)n);
	free(slots);
	if (ret) {
		range_release(t, first, (uint32_t)n);
		tb->failed = true;
		t->st.failed++;
		unwind_table_free(&ut);
		return tb;
	}
	/* @tb is still valid: nothing was inserted into by_obj since. */
	tb->first = first;
	tb->n = (uint32_t)n;
	tb->nrows = (uint32_t)ut.n;
	tb->npages = ut.npages;
	tb->index_shift = ut.index_shift;
	tb->base = ut.base;
	t->st.objects++;
	t->st.rows_used += n;
	if (t->st.rows_used > t->st.rows_peak)
		t->st.rows_peak = t->st.rows_used;
	unwind_table_free(&ut);
	return tb;
}

static bool empty_proc(const void *entry)
{
	return ((const struct proc_entry *)entry)->objs == NULL;
}

static void release_entry(struct tables *t, struct proc_entry *pe)
{
	for (size_t i = 0; i < pe->n; i++) {
		struct table *tb = hmap_find(&t->by_obj, &pe->objs[i]);

		if (tb && tb->users)
			tb->users--;
	}
	free(pe->objs);
	pe->objs = NULL;
	pe->n = 0;
}

void tables_remove_process(struct tables *t, uint32_t pid)
{
	uint64_t key = pid;
	struct proc_entry *pe = hmap_find(&t->by_pid, &key);

	if (!pe || !pe->objs)
		return;
	t->maps.set_proc(t->maps.ctx, pid, NULL);
	release_entry(t, pe);
	t->st.processes--;
}

int tables_add_process(struct tables *t, struct process *p, struct errbuf *err)
{
	struct cprof_proc_maps *pm = &t->scratch;
	struct proc_entry *pe;
	uint64_t key = p->pid;
	struct elfobj **used;
	size_t nused = 0;
	int ret;

	if (!p->have_maps)
		return 0;
	tables_remove_process(t, p->pid);
	used = calloc(p->maps.n + 1, sizeof(*used));
	if (!used)
		return errf(err, -ENOMEM, "out of memory");

	memset(pm, 0, sizeof(pm->n) + sizeof(pm->flags));
	if (p->maps.n > CPROF_MAX_PROC_MAPS) {
		pm->flags |= CPROF_PROC_MAPS_TRUNCATED;
		t->st.truncated++;
	}
	for (size_t i = 0; i < p->maps.n && pm->n < CPROF_MAX_PROC_MAPS; i++) {
		const struct vma *v = &p->maps.v[i];
		struct elfobj *o = p->objs[i];
		struct cprof_proc_map *m;
		struct table *tb;
		uint64_t v0;

		/* BPF's find_mapping orders addresses below 2^63: not [vsyscall]'s. */
		if (v->start >> 63)
			continue;
		m = &pm->m[pm->n++];
		*m = (struct cprof_proc_map){ .start = v->start, .end = v->end };
		if (!o || elfobj_file_to_vaddr(o, v->offset, &v0))
			continue;
		tb = table_of(t, o);
		if (!tb || !tb->n)
			continue;
		/* runtime pc - (start - v0) = vaddr; vaddr - base = row pc */
		m->bias = v->start - v0 + tb->base;
		m->first_row = tb->first + (tb->n - tb->nrows);
		m->nrows = tb->nrows;
		m->npages = tb->npages;
		m->index_shift = tb->index_shift;
		tb->users++;
		used[nused++] = o;
	}
	pe = hmap_insert(&t->by_pid, &key, NULL);
	if (!pe) {
		free(used);
		return errf(err, -ENOMEM, "out of memory");
	}
	pe->objs = used;
	pe->n = nused;
	ret = t->maps.set_proc(t->maps.ctx, p->pid, pm);
	if (ret) {
		release_entry(t, pe);
		return errf(err, ret, "pid %u: loading unwind entry: %s", p->pid, strerror(-ret));
	}
	t->st.processes++;
	return 0;
}

static bool unused_table(const void *entry)
{
	const struct table *tb = entry;

	return tb->users == 0;
}

void tables_prune(struct tables *t)
{
	struct table *tb;
	size_t it = 0, dead = 0;

	while ((tb = hmap_next(&t->by_obj, &it)))
		dead += unused_table(tb);
	if (!dead)
		return;
	/* No program may still read an entry that pointed at these rows. */
	if (t->maps.retire(t->maps.ctx))
		return; /* kept until a later prune can retire them */
	it = 0;
	while ((tb = hmap_next(&t->by_obj, &it))) {
		if (!unused_table(tb))
			continue;
		if (tb->n) {
			range_release(t, tb->first, tb->n);
			t->st.rows_used -= tb->n;
			t->st.objects--;
		}
		objcache_put(t->objs, tb->obj);
	}
	hmap_compact(&t->by_obj, unused_table);
	/* Processes that exited leave empty entries behind. */
	hmap_compact(&t->by_pid, empty_proc);
}

void tables_get_stats(const struct tables *t, struct tables_stats *st)
{
	*st = t->st;
}
