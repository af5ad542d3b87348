// SPDX-License-Identifier: MIT
/*
 * bpftables: the files' side of the unwind tables: numbers given to objects
 * and told to BPF, the rows array's allocator and eviction, and the
 * building of tables asked for (the processes' entries: bpftables_procs.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "util/clock.h"
#include "util/grow.h"
#include "util/hmap.h"
#include "sampling/bpftables_internal.h"
#include "unwind/unwind.h"

/* Identities of one object told to BPF: the file and a few copies of it. */
#define KEYS_MAX 8

/* elfobj pointer -> its number. */
struct obj_entry {
	struct elfobj *obj;
	uint32_t file;
	uint32_t pad;
};

int bpftables_new(struct bpftables **out, const struct bpftables_maps *maps, struct objcache *objs)
{
	struct bpftables *t;

	*out = NULL;
	if (!maps->set_proc || !maps->write_rows || !maps->set_file || !maps->set_file_key ||
	    !maps->retire)
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->maps = *maps;
	t->objs = objs;
	hmap_init(&t->by_obj, sizeof(struct elfobj *), sizeof(struct obj_entry));
	hmap_init(&t->by_pid, sizeof(uint64_t), sizeof(struct proc_entry));
	t->free = malloc(sizeof(*t->free));
	t->queue = malloc(CPROF_MAX_FILES * sizeof(*t->queue));
	if (!t->free || !t->queue) {
		free(t->free);
		free(t->queue);
		free(t);
		return -ENOMEM;
	}
	/* Slot 0 is never given out: a table's first slot names it, 0 names none. */
	t->free[0] = (struct slot_range){ 1, maps->capacity ? maps->capacity - 1 : 0 };
	t->nfree = maps->capacity > 1 ? 1 : 0;
	t->free_cap = 1;
	t->st.rows_capacity = maps->capacity;
	*out = t;
	return 0;
}

void bpftables_free(struct bpftables *t)
{
	struct proc_entry *pe;
	size_t it = 0;

	if (!t)
		return;
	while ((pe = hmap_next(&t->by_pid, &it)))
		free(pe->files);
	for (uint32_t i = 0; i < t->nfiles; i++)
		if (t->files[i].obj)
			objcache_put(t->objs, t->files[i].obj);
	hmap_free(&t->by_pid);
	hmap_free(&t->by_obj);
	free(t->files);
	free(t->queue);
	free(t->free);
	free(t->dying);
	free(t);
}

/* ---- the rows array ------------------------------------------------------ */

/* First fit: tables are allocated rarely and freed more rarely. */
static bool slots_alloc(struct bpftables *t, uint32_t n, uint32_t *first)
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

static int slots_release(struct bpftables *t, uint32_t first, uint32_t n)
{
	size_t i = 0;

	while (i < t->nfree && t->free[i].first < first)
		i++;
	/* free ranges lie between ranges in use (tables, dying ones): one more at most */
	if (grow((void **)&t->free, &t->free_cap, t->nfree, sizeof(*t->free), 16,
		 2 * (size_t)CPROF_MAX_FILES + 1))
		return -ENOMEM; /* the range is leaked, not corrupted */
	memmove(&t->free[i + 1], &t->free[i], (t->nfree - i) * sizeof(*t->free));
	t->free[i] = (struct slot_range){ first, n };
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

/* Tells BPF what it may do with file @file now. */
static void publish(struct bpftables *t, uint32_t file)
{
	const struct tfile *f = &t->files[file];
	struct cprof_file cf = { 0 };

	switch (f->state) {
	case T_UNBUILT:
		cf.state = CPROF_FILE_UNBUILT;
		break;
	case T_QUEUED:
		cf.state = CPROF_FILE_QUEUED;
		break;
	case T_LOADED:
		cf.state = CPROF_FILE_LOADED;
		cf.t = f->desc;
		break;
	case T_FAILED:
	case T_NO_ROOM:
		cf.state = CPROF_FILE_NONE;
		break;
	}
	t->maps.set_file(t->maps.ctx, file, &cf);
}

/*
 * Takes file @file's table out of the rows array: BPF is told first, and
 * its slots are given to others only after the next retire (retire()).
 */
static void unload(struct bpftables *t, uint32_t file, enum tstate to)
{
	struct tfile *f = &t->files[file];

	if (f->state != T_LOADED) {
		f->state = to;
		publish(t, file);
		return;
	}
	f->state = to;
	publish(t, file);
	if (!grow((void **)&t->dying, &t->dying_cap, t->ndying, sizeof(*t->dying), 16,
		  CPROF_MAX_FILES))
		t->dying[t->ndying++] = (struct slot_range){ f->first, f->nslots };
	/* else the slots are leaked, never reused while a program may read them */
	t->st.rows_used -= f->nslots;
	t->st.rows -= f->desc.nrows;
	t->st.objects--;
	f->nslots = 0;
	memset(&f->desc, 0, sizeof(f->desc));
}

/*
 * Waits until no program can still read what was unloaded (or cached it),
 * then frees its slots for reuse.
 */
static int retire(struct bpftables *t)
{
	int rc = t->maps.retire(t->maps.ctx);

	if (rc)
		return rc;
	for (size_t i = 0; i < t->ndying; i++)
		slots_release(t, t->dying[i].first, t->dying[i].n);
	t->ndying = 0;
	return 0;
}

static uint64_t slots_in(const struct slot_range *r, size_t n)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < n; i++)
		sum += r[i].n;
	return sum;
}

/*
 * Frees the least recently used tables that no process uses until @n slots
 * fit.  Returns true when they do.
 */
static bool evict_for(struct bpftables *t, uint32_t n, uint32_t *first)
{
	while (!slots_alloc(t, n, first)) {
		struct tfile *victim = NULL;

		/* Enough on its way to free: wait for it (one retire for them all). */
		if (t->ndying &&
		    slots_in(t->free, t->nfree) + slots_in(t->dying, t->ndying) >= n) {
			if (retire(t))
				return false;
			if (slots_alloc(t, n, first))
				return true;
		}
		for (uint32_t i = 0; i < t->nfiles; i++) {
			struct tfile *f = &t->files[i];

			if (f->state == T_LOADED && !f->users &&
			    (!victim || f->last_use < victim->last_use))
				victim = f;
		}
		if (!victim)
			return false;
		unload(t, (uint32_t)(victim - t->files), T_UNBUILT);
		t->st.evicted++;
	}
	return true;
}

/* ---- numbers ------------------------------------------------------------- */

/*
 * Tells BPF the identities of file @file's object (@on) so that a process
 * without an entry finds its number from the kernel's VMA, or forgets them
 * (before the number is given to another object).
 */
static void publish_keys(struct bpftables *t, uint32_t file, bool on)
{
	struct tfile *f = &t->files[file];
	struct objcache_file_id ids[KEYS_MAX];
	struct cprof_file_ref ref = { .file = file, .vaddr_off = f->vaddr_off };
	size_t n = objcache_file_ids(t->objs, f->obj, ids, KEYS_MAX);
	uint64_t code;

	/* where its code starts: a new process's binary is found by it */
	if (!elfobj_code_vaddr(f->obj, &code)) {
		ref.code_vaddr = code;
		ref.flags |= CPROF_FILE_REF_CODE;
	}
	if (n > KEYS_MAX)
		n = KEYS_MAX;
	if ((on && (f->keyless || n == f->nkeys)) || (!on && !f->nkeys))
		return; /* told already (copies found since are told anew) */
	for (size_t i = 0; i < n; i++) {
		struct cprof_file_key k = {
			.ino = ids[i].ino,
			.size = ids[i].size,
			.mtime_sec = ids[i].mtime_sec,
			.mtime_nsec = (uint32_t)ids[i].mtime_nsec,
			/* the kernel's dev_t: 12 bits of major, 20 of minor */
			.dev = (uint32_t)(major(ids[i].dev) << 20 | (minor(ids[i].dev) & 0xfffff)),
		};

		/* a full map costs this copy its first samples' tables, nothing more */
		t->maps.set_file_key(t->maps.ctx, &k, on ? &ref : NULL);
	}
	f->nkeys = on ? (uint32_t)n : 0;
}

/*
 * The number of @o, mapped with @vaddr_off between its file offsets and
 * virtual addresses, given now if it has none; CPROF_NO_FILE when all are
 * taken.
 */
uint32_t bpftables_file_of(struct bpftables *t, struct elfobj *o, int64_t vaddr_off)
{
	struct obj_entry *e = hmap_find(&t->by_obj, &o);
	uint32_t file;

	if (e) {
		struct tfile *f = &t->files[e->file];

		if (f->vaddr_off != vaddr_off && !f->keyless) {
			/* segments placed apart: one offset cannot serve them all */
			publish_keys(t, e->file, false);
			f->keyless = true;
		}
		publish_keys(t, e->file, true);
		return e->file;
	}
	for (file = 0; file < t->nfiles && t->files[file].obj; file++)
		;
	if (file == CPROF_MAX_FILES && t->clock != t->pruned_at) {
		/*
		 * All numbers given: a run without windows (no prune between
		 * them) on a host of many short-lived programs.  The files no
		 * process maps any more give theirs back, at most once per
		 * clock tick.
		 */
		t->pruned_at = t->clock;
		bpftables_prune(t);
		for (file = 0; file < t->nfiles && t->files[file].obj; file++)
			;
	}
	if (file == CPROF_MAX_FILES)
		return CPROF_NO_FILE;
	if (file == t->nfiles) {
		if (grow((void **)&t->files, &t->files_cap, t->nfiles, sizeof(*t->files), 64,
			 CPROF_MAX_FILES))
			return CPROF_NO_FILE;
		t->nfiles++;
	}
	e = hmap_insert(&t->by_obj, &o, NULL);
	if (!e)
		return CPROF_NO_FILE;
	e->file = file;
	objcache_ref(t->objs, o);
	t->files[file] = (struct tfile){ .obj = o, .state = T_UNBUILT, .vaddr_off = vaddr_off };
	t->st.files++;
	publish(t, file);
	publish_keys(t, file, true);
	return file;
}

/* ---- building ------------------------------------------------------------ */

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

struct sink {
	struct bpftables *t;
	uint32_t first;
};

static int write_slots(void *ctx, uint32_t off, const union cprof_table_slot *slots, uint32_t n)
{
	struct sink *s = ctx;

	return s->t->maps.write_rows(s->t->maps.ctx, s->first + off, slots, n);
}

/* Builds file @file's table and loads it, or says why not. */
static void build(struct bpftables *t, uint32_t file)
{
	struct tfile *f = &t->files[file];
	struct unwind_table ut = { 0 };
	struct unwind_layout lay = { 0 };
	uint32_t first;
	double t0 = clock_s(CLOCK_MONOTONIC);
	int rc;

	rc = build_rows(f->obj, &ut, NULL);
	if (!rc && ut.n)
		rc = unwind_plan(&ut, &lay);
	t->st.build_seconds += clock_s(CLOCK_MONOTONIC) - t0;
	if (rc || !ut.n) {
		f->state = T_FAILED;
		t->st.failed++;
		goto out;
	}
	t->st.built++;
	if (lay.nslots > t->maps.capacity || !evict_for(t, lay.nslots, &first)) {
		f->state = T_NO_ROOM;
		t->st.no_room++;
		goto out;
	}
	rc = unwind_emit(&ut, &lay, write_slots, &(struct sink){ t, first });
	t->maps.write_rows(t->maps.ctx, 0, NULL, 0); /* the writer may let go of what it holds */
	if (rc) {
		slots_release(t, first, lay.nslots);
		f->state = T_FAILED;
		t->st.failed++;
		goto out;
	}
	f->state = T_LOADED;
	f->first = first;
	f->nslots = lay.nslots;
	f->desc = lay.desc;
	f->desc.first = first;
	t->st.objects++;
	t->st.rows += f->desc.nrows;
	t->st.rows_used += f->nslots;
	if (t->st.rows_used > t->st.rows_peak)
		t->st.rows_peak = t->st.rows_used;
out:
	publish(t, file);
	unwind_layout_free(&lay);
	unwind_table_free(&ut);
}

void bpftables_want(struct bpftables *t, uint32_t file)
{
	struct tfile *f;

	if (file >= t->nfiles || !t->files[file].obj)
		return;
	f = &t->files[file];
	f->last_use = ++t->clock;
	if (f->state == T_QUEUED && f->along) {
		f->along = false; /* a sample landed there: built among the first */
		t->st.asked_with--;
	}
	if (f->state != T_UNBUILT)
		return; /* queued, loaded or given up on: asked more than once */
	t->st.asked++;
	f->state = T_QUEUED;
	f->along = false;
	t->queue[t->nqueue++] = file; /* each number is queued once: room for all */
	publish(t, file);
}

void bpftables_want_at(struct bpftables *t, const struct process *p, uint64_t addr)
{
	for (size_t i = 0; p->have_maps && i < p->maps.n; i++) {
		const struct vma *v = &p->maps.v[i];
		struct obj_entry *e;

		if (addr < v->start || addr >= v->end)
			continue;
		e = p->objs[i] ? hmap_find(&t->by_obj, &p->objs[i]) : NULL;
		if (e)
			bpftables_want(t, e->file);
		return;
	}
}

/* A file to queue with a young program's, and how much of its code it maps. */
struct along {
	uint32_t file;
	uint64_t bytes;
	size_t at; /* its place in the maps: the order of equals */
};

/*
 * Code up to this size is a small file: its table takes a few ms at most
 * (libstdc++: 1 MB of code, 34k rows, 1.2 ms; libz3, 18 MB: 29 ms).
 */
#define ALONG_SMALL (4ull << 20)

static int along_order(const void *a, const void *b)
{
	const struct along *x = a, *y = b;
	bool xs = x->bytes <= ALONG_SMALL, ys = y->bytes <= ALONG_SMALL;

	if (xs != ys)
		return xs ? -1 : 1;
	if (x->bytes != y->bytes)
		return (x->bytes < y->bytes) == xs ? -1 : 1;
	return x->at < y->at ? -1 : x->at > y->at;
}

void bpftables_want_process(struct bpftables *t, const struct process *p)
{
	struct along *q;
	size_t n = 0;

	if (!p->have_maps || !p->objs || !p->maps.n)
		return;
	q = calloc(p->maps.n, sizeof(*q));
	if (!q)
		return; /* only what samples ask for, then */
	for (size_t i = 0; i < p->maps.n; i++) {
		struct obj_entry *e = p->objs[i] ? hmap_find(&t->by_obj, &p->objs[i]) : NULL;

		if (e && e->file < t->nfiles && t->files[e->file].state == T_UNBUILT)
			q[n++] = (struct along){ e->file, p->maps.v[i].end - p->maps.v[i].start, i };
	}
	/*
	 * The small files first, smallest first: a stack is whole only once
	 * every file it passes through has its table, and every stack passes
	 * through the program's binary, which in clang is 130 KB of code, but
	 * was built after libLLVM-14, libclang-cpp and libz3 (clang never runs
	 * z3): 20 ms of clang's first samples on an idle host, 80 under a
	 * make -j2, stopped short of main.  Then the
	 * largest first: where a program like clang spends its time (libLLVM,
	 * libclang-cpp), and the tables that take longest.
	 */
	qsort(q, n, sizeof(*q), along_order);
	for (size_t i = 0; i < n; i++) {
		size_t asked = t->st.asked;

		bpftables_want(t, q[i].file); /* a file mapped twice is queued once */
		if (t->st.asked == asked)
			continue;
		t->files[q[i].file].along = true;
		t->st.asked_with++;
	}
	free(q);
}

bool bpftables_pending(const struct bpftables *t)
{
	return t->nqueue > 0;
}

/* Whether queue entry @file is still to be built. */
static bool queued(const struct bpftables *t, uint32_t file)
{
	return file < t->nfiles && t->files[file].obj && t->files[file].state == T_QUEUED;
}

void bpftables_build_pending(struct bpftables *t)
{
	size_t n = 0;
	bool one = false;

	/* What samples landed in first, in the order asked. */
	for (size_t i = 0; i < t->nqueue; i++)
		if (queued(t, t->queue[i]) && !t->files[t->queue[i]].along)
			build(t, t->queue[i]);
	/*
	 * Then one of the files queued along with them: the caller looks at
	 * its events between two, so a table a sample asks for meanwhile
	 * waits for one build, not for all of a program's.
	 */
	for (size_t i = 0; i < t->nqueue; i++) {
		uint32_t file = t->queue[i];

		if (!queued(t, file))
			continue;
		if (!t->files[file].users) {
			/* the program is gone, and no other maps it: not wanted */
			t->files[file].state = T_UNBUILT;
			t->files[file].along = false;
			t->st.asked--;
			t->st.asked_with--;
			t->st.along_dropped++;
			publish(t, file);
			continue;
		}
		if (!one) {
			build(t, file);
			one = true;
			continue;
		}
		t->queue[n++] = file;
	}
	t->nqueue = n;
}

/* ---- pruning ------------------------------------------------------------- */

/* An entry bpftables_procs.c emptied: its process exited. */
static bool empty_proc(const void *entry)
{
	return ((const struct proc_entry *)entry)->files == NULL;
}

void bpftables_prune(struct bpftables *t)
{
	bool dead = false;

	for (uint32_t i = 0; i < t->nfiles; i++) {
		struct tfile *f = &t->files[i];

		if (!f->obj || f->users)
			continue;
		/*
		 * BPF forgets the file first: no entry names it, no identity
		 * leads to it, nothing will ask for it.
		 */
		publish_keys(t, i, false);
		unload(t, i, T_UNBUILT);
		dead = true;
	}
	/*
	 * No program may still read a table of these files, nor find their
	 * numbers: only then are numbers and rows given to others.
	 */
	if (!dead || retire(t))
		return; /* kept until a later prune can retire them */
	for (uint32_t i = 0; i < t->nfiles; i++) {
		struct tfile *f = &t->files[i];

		if (!f->obj || f->users)
			continue;
		objcache_put(t->objs, f->obj);
		f->obj = NULL;
		t->st.files--;
	}
	hmap_clear(&t->by_obj);
	for (uint32_t i = 0; i < t->nfiles; i++) {
		struct obj_entry *e;

		if (!t->files[i].obj)
			continue;
		e = hmap_insert(&t->by_obj, &t->files[i].obj, NULL);
		if (e)
			e->file = i;
	}
	/* Files without room may fit now. */
	for (uint32_t i = 0; i < t->nfiles; i++) {
		if (t->files[i].obj && t->files[i].state == T_NO_ROOM) {
			t->files[i].state = T_UNBUILT;
			publish(t, i);
		}
	}
	/* Processes that exited leave empty entries behind. */
	hmap_compact(&t->by_pid, empty_proc);
}

void bpftables_get_stats(const struct bpftables *t, struct bpftables_stats *st)
{
	*st = t->st;
}
