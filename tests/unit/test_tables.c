// SPDX-License-Identifier: MIT
/*
 * Tests for tables: unwind tables placed in the shared rows array, given to
 * processes, evicted and pruned, against a fake of the BPF side.
 *
 * The fake keeps the rows array and the per-process entries, and checks on
 * every write of rows the contract the BPF unwinder relies on (its row
 * cache, and programs still running with an entry they read): slots are
 * rewritten only when no entry points at them, and only after a retire()
 * that came after the last entry pointing at them was removed.  At the
 * end, every entry must point at its own object's rows, laid out as
 * unwind_layout() lays them, built here separately.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "objcache.h"
#include "proctab.h"
#include "tables.h"
#include "testlib.h"
#include "testutil.h"
#include "unwind.h"

#define MAX_PIDS 8

/* The BPF side, faked. */
struct fake {
	union cprof_table_slot *rows;
	uint32_t cap;
	uint32_t *drop_retire; /* per slot: retires when its last entry went */
	uint32_t *refs;        /* per slot: entries pointing at it now */
	uint32_t retires;
	bool fail_retire;      /* the next retires fail, as a failed RCU wait would */
	size_t writes, rewrites, violations;
	char why[256];         /* the first violation */
	struct {
		bool live;
		struct cprof_proc_maps pm;
	} proc[MAX_PIDS];
};

/* Counts (+1) or uncounts (-1) the slots of the tables an entry points at. */
static void each_range(struct fake *f, const struct cprof_proc_maps *pm, int delta)
{
	for (uint32_t i = 0; i < pm->n; i++) {
		const struct cprof_proc_map *m = &pm->m[i];
		uint32_t lo, hi;

		if (!m->nrows)
			continue;
		lo = m->first_row - CPROF_INDEX_SLOTS(m->npages);
		hi = m->first_row + m->nrows;
		for (uint32_t s = lo; s < hi && s < f->cap; s++) {
			f->refs[s] += delta;
			if (delta < 0 && !f->refs[s])
				f->drop_retire[s] = f->retires;
		}
	}
}

static int fake_write_rows(void *ctx, uint32_t first, const union cprof_table_slot *rows,
			   uint32_t n)
{
	struct fake *f = ctx;

	if ((uint64_t)first + n > f->cap)
		return -ERANGE;
	f->writes++;
	for (uint32_t s = first; s < first + n; s++) {
		/* drop_retire is UINT32_MAX for a slot never written */
		if (f->drop_retire[s] == UINT32_MAX)
			continue;
		f->rewrites++;
		if (f->refs[s] || f->retires <= f->drop_retire[s]) {
			if (!f->violations++)
				snprintf(f->why, sizeof(f->why),
					 "slot %u rewritten with %u entries on it, %u retires, "
					 "last entry gone at %u", s, f->refs[s], f->retires,
					 f->drop_retire[s]);
		}
	}
	memcpy(&f->rows[first], rows, (size_t)n * sizeof(*rows));
	for (uint32_t s = first; s < first + n; s++)
		if (f->drop_retire[s] == UINT32_MAX)
			f->drop_retire[s] = 0;
	return 0;
}

static int fake_retire(void *ctx)
{
	struct fake *f = ctx;

	if (f->fail_retire)
		return -EIO;
	f->retires++;
	return 0;
}

static int fake_set_proc(void *ctx, uint32_t pid, const struct cprof_proc_maps *pm)
{
	struct fake *f = ctx;

	if (pid >= MAX_PIDS)
		return -E2BIG;
	if (f->proc[pid].live)
		each_range(f, &f->proc[pid].pm, -1);
	f->proc[pid].live = pm != NULL;
	if (pm) {
		f->proc[pid].pm = *pm;
		each_range(f, pm, +1);
	}
	return 0;
}

/* A host object with CFI, and its table as built here. */
struct obj {
	const char *path;
	struct elfobj *o;
	uint64_t exec_off; /* file offset of its executable segment */
	union cprof_table_slot *slots;
	size_t nslots, nrows;
};

static int exec_segment_offset(int fd, uint64_t *off)
{
	Elf64_Ehdr eh;

	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG))
		return -1;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;

		if (pread(fd, &ph, sizeof(ph), eh.e_phoff + (uint64_t)i * eh.e_phentsize) !=
		    sizeof(ph))
			return -1;
		if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
			*off = ph.p_offset & ~(uint64_t)4095;
			return 0;
		}
	}
	return -1;
}

static int obj_open(struct obj *ob, struct objcache *oc)
{
	struct unwind_table ut = { 0 };
	struct errbuf err = { 0 };
	int fd = open(ob->path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (exec_segment_offset(fd, &ob->exec_off) || unwind_build_fd(fd, &ut, &err) || !ut.n) {
		close(fd);
		unwind_table_free(&ut);
		return -1;
	}
	ob->nslots = unwind_slots(&ut);
	ob->nrows = ut.n;
	ob->slots = calloc(ob->nslots, sizeof(*ob->slots));
	if (ob->slots)
		unwind_layout(&ut, ob->slots);
	unwind_table_free(&ut);
	/* objcache_get takes the fd */
	if (!ob->slots || objcache_get(oc, fd, &ob->o, &err))
		return -1;
	return 0;
}

/* A process mapping @n objects, each at its own made-up address. */
static void make_process(struct process *p, uint32_t pid, struct obj **obs, size_t n,
			 struct vma *v, struct elfobj **objs)
{
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->have_maps = true;
	for (size_t i = 0; i < n; i++) {
		v[i] = (struct vma){ .start = 0x100000000ULL * (i + 1),
				     .end = 0x100000000ULL * (i + 1) + 0x100000,
				     .offset = obs[i]->exec_off, .prot = VMA_EXEC,
				     .kind = VMA_FILE, .path = obs[i]->path };
		objs[i] = obs[i]->o;
	}
	p->maps.v = v;
	p->maps.n = n;
	p->objs = objs;
}

static int add(struct tables *t, uint32_t pid, struct obj **obs, size_t n)
{
	struct vma v[4];
	struct elfobj *objs[4];
	struct process p;
	struct errbuf err = { 0 };

	make_process(&p, pid, obs, n, v, objs);
	return tables_add_process(t, &p, &err);
}

/* Mapping @i of @pid's entry has @ob's rows, index and all. */
static bool entry_holds(const struct fake *f, uint32_t pid, uint32_t i, const struct obj *ob)
{
	const struct cprof_proc_map *m;
	uint32_t lo;

	if (!f->proc[pid].live || i >= f->proc[pid].pm.n)
		return false;
	m = &f->proc[pid].pm.m[i];
	if (m->nrows != ob->nrows)
		return false;
	lo = m->first_row - CPROF_INDEX_SLOTS(m->npages);
	return lo + ob->nslots == (uint64_t)m->first_row + m->nrows && lo + ob->nslots <= f->cap &&
	       !memcmp(&f->rows[lo], ob->slots, ob->nslots * sizeof(*ob->slots));
}

int main(void)
{
	struct obj ob[] = {
		{ .path = "/usr/bin/ls" },
		{ .path = "/usr/bin/sort" },
		{ .path = "/usr/bin/cat" },
	};
	struct obj *a = &ob[0], *b = &ob[1], *c = &ob[2];
	struct objcache *oc = objcache_new();
	static struct fake f;
	struct tables_maps maps = { .write_rows = fake_write_rows, .retire = fake_retire,
				    .set_proc = fake_set_proc, .ctx = &f };
	struct tables *t = NULL;
	struct tables_stats st;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (size_t i = 0; i < sizeof(ob) / sizeof(ob[0]); i++) {
		if (!oc || obj_open(&ob[i], oc)) {
			T_SKIP("tables", "%s: not there or no CFI", ob[i].path);
			return T_EXIT();
		}
	}
	/* cat's table must fit where ls's was, and sort's must not fit beside both */
	CHECK(c->nslots <= a->nslots && b->nslots > c->nslots, "fixtures: table sizes",
	      "ls %zu, sort %zu, cat %zu slots", a->nslots, b->nslots, c->nslots);

	/* Room for ls and sort; cat only by evicting one of them. */
	f.cap = (uint32_t)(a->nslots + b->nslots + c->nslots / 2);
	f.rows = calloc(f.cap, sizeof(*f.rows));
	f.refs = calloc(f.cap, sizeof(*f.refs));
	f.drop_retire = malloc(f.cap * sizeof(*f.drop_retire));
	if (!f.rows || !f.refs || !f.drop_retire)
		return 1;
	memset(f.drop_retire, 0xff, f.cap * sizeof(*f.drop_retire));
	maps.capacity = f.cap;
	{
		struct tables_maps no_retire = maps;

		no_retire.retire = NULL;
		CHECK(tables_new(&t, &no_retire, oc) == -EINVAL && !t,
		      "tables_new: every callback is required", "accepted no retire");
	}
	CHECK(tables_new(&t, &maps, oc) == 0, "tables_new", "failed");
	if (!t)
		return T_EXIT();

	CHECK(add(t, 1, (struct obj *[]){ a }, 1) == 0 && add(t, 2, (struct obj *[]){ b }, 1) == 0,
	      "two processes, two tables", "tables_add_process failed");
	CHECK(entry_holds(&f, 1, 0, a) && entry_holds(&f, 2, 0, b),
	      "each entry points at its own object's rows", "rows differ");

	/* A second process of ls shares its table: nothing written. */
	f.writes = 0;
	CHECK(add(t, 3, (struct obj *[]){ a }, 1) == 0 && f.writes == 0 && entry_holds(&f, 3, 0, a),
	      "a table is shared by the processes mapping the object", "%zu writes", f.writes);

	/* ls unused: cat evicts it, after a retire, into its slots. */
	tables_remove_process(t, 1);
	tables_remove_process(t, 3);
	CHECK(!f.proc[1].live && !f.proc[3].live, "removed processes lose their entries",
	      "entries still there");
	/* Rows that cannot be retired are not reused: cat goes without. */
	f.fail_retire = true;
	f.rewrites = 0;
	CHECK(add(t, 4, (struct obj *[]){ c }, 1) == 0, "cat's process, retire failing", "failed");
	tables_get_stats(t, &st);
	CHECK(st.evicted == 0 && st.no_room == 1 && f.rewrites == 0 && f.proc[4].live &&
	      f.proc[4].pm.m[0].nrows == 0 && entry_holds(&f, 2, 0, b),
	      "a failed retire evicts nothing: the object is left to frame pointers",
	      "evicted %zu, no_room %zu, rewrites %zu", st.evicted, st.no_room, f.rewrites);
	tables_prune(t);
	tables_get_stats(t, &st);
	CHECK(st.objects == 2, "a failed retire prunes nothing", "%zu objects", st.objects);
	f.fail_retire = false;
	CHECK(add(t, 4, (struct obj *[]){ c }, 1) == 0, "cat's process", "failed");
	tables_get_stats(t, &st);
	CHECK(st.evicted == 1 && f.rewrites > 0 && f.retires > 0 && entry_holds(&f, 4, 0, c),
	      "an unused table is evicted and its slots reused for another",
	      "evicted %zu, rewrites %zu, retires %u", st.evicted, f.rewrites, f.retires);
	CHECK(entry_holds(&f, 2, 0, b), "a table in use is kept", "sort's rows gone");

	/* ls again: no room beside sort and cat, both in use. */
	CHECK(add(t, 5, (struct obj *[]){ a, b }, 2) == 0, "a process when the budget is full",
	      "failed");
	tables_get_stats(t, &st);
	CHECK(st.no_room == 2 && f.proc[5].live && f.proc[5].pm.n == 2 &&
	      f.proc[5].pm.m[0].nrows == 0 && entry_holds(&f, 5, 1, b),
	      "an object without room is left to frame pointers, the rest keep their tables",
	      "no_room %zu, nrows %u", st.no_room, f.proc[5].pm.m[0].nrows);

	/* Everything exits; pruning frees every row. */
	tables_remove_process(t, 2);
	tables_remove_process(t, 4);
	tables_remove_process(t, 5);
	tables_prune(t);
	tables_get_stats(t, &st);
	CHECK(st.rows_used == 0 && st.objects == 0 && st.processes == 0,
	      "pruning after the last exit frees every row",
	      "rows_used %llu, objects %zu, processes %zu", (unsigned long long)st.rows_used,
	      st.objects, st.processes);

	/* And ls loads again into freed slots, after the retire of pruning. */
	CHECK(add(t, 6, (struct obj *[]){ a }, 1) == 0 && entry_holds(&f, 6, 0, a),
	      "a pruned object loads again", "failed");

	/* sort's bytes under ls's build ID: its own object, its own rows. */
	{
		char forged_path[] = "/tmp/cprof-test-tables-XXXXXX";
		struct obj forged = { .path = forged_path };
		size_t idlen, sortlen, n = 0;
		const uint8_t *id_ls = elfobj_build_id_raw(a->o, &idlen);
		const uint8_t *id_sort = elfobj_build_id_raw(b->o, &sortlen);
		uint8_t *img = slurp("/usr/bin/sort", &n), *at;
		int fd = mkstemp(forged_path);

		at = img && idlen && idlen == sortlen ? memmem(img, n, id_sort, idlen) : NULL;
		if (fd < 0 || !at || (memcpy(at, id_ls, idlen), write(fd, img, n) != (ssize_t)n) ||
		    obj_open(&forged, oc)) {
			T_SKIP("a forged build ID gets its own table", "could not forge sort");
		} else {
			f.writes = 0;
			CHECK(forged.o != a->o && !strcmp(elfobj_build_id(forged.o), elfobj_build_id(a->o)) &&
			      add(t, 7, (struct obj *[]){ &forged }, 1) == 0 && f.writes == 1 &&
			      entry_holds(&f, 7, 0, &forged) && entry_holds(&f, 6, 0, a),
			      "a forged build ID gets its own table, not the real object's",
			      "%zu writes", f.writes);
			tables_remove_process(t, 7);
			objcache_put(oc, forged.o);
		}
		free(img);
		free(forged.slots);
		if (fd >= 0) {
			close(fd);
			unlink(forged_path);
		}
	}

	/* More executable mappings than an entry holds: cut, and BPF told so. */
	{
		static struct vma many[CPROF_MAX_PROC_MAPS + 44];
		static struct elfobj *none[CPROF_MAX_PROC_MAPS + 44];
		struct process p = { .pid = 7, .have_maps = true, .objs = none };
		struct errbuf err = { 0 };

		for (size_t i = 0; i < CPROF_MAX_PROC_MAPS + 44; i++)
			many[i] = (struct vma){ .start = 0x10000 * (i + 1), .end = 0x10000 * (i + 1) + 0x1000,
						.prot = VMA_EXEC, .kind = VMA_ANON };
		p.maps.v = many;
		p.maps.n = CPROF_MAX_PROC_MAPS + 44;
		CHECK(tables_add_process(t, &p, &err) == 0 && f.proc[7].pm.n == CPROF_MAX_PROC_MAPS &&
		      (f.proc[7].pm.flags & CPROF_PROC_MAPS_TRUNCATED),
		      "an entry cut at CPROF_MAX_PROC_MAPS says so", "n %u, flags %#x",
		      f.proc[7].pm.n, f.proc[7].pm.flags);
		p.maps.n = 2;
		tables_get_stats(t, &st);
		CHECK(tables_add_process(t, &p, &err) == 0 && f.proc[7].pm.n == 2 &&
		      !f.proc[7].pm.flags && st.truncated == 1,
		      "an entry that fits is not marked", "flags %#x, truncated %zu",
		      f.proc[7].pm.flags, st.truncated);
		tables_remove_process(t, 7);
	}

	CHECK(f.violations == 0, "rows are rewritten only after a retire that follows their last entry",
	      "%zu violations; first: %s", f.violations, f.why);

	tables_remove_process(t, 6);
	tables_free(t);
	for (size_t i = 0; i < sizeof(ob) / sizeof(ob[0]); i++) {
		objcache_put(oc, ob[i].o);
		free(ob[i].slots);
	}
	objcache_free(oc);
	free(f.rows);
	free(f.refs);
	free(f.drop_retire);
	return T_EXIT();
}
