// SPDX-License-Identifier: MIT
/*
 * Tests for bpftables: files numbered for the processes that map them, their
 * tables built when the BPF unwinder asks, placed in the shared rows array,
 * shared, evicted and pruned, against a fake of the BPF side.
 *
 * The fake keeps the rows array, the files' entries and the per-process
 * entries, and checks on every write of rows the contract the BPF
 * unwinder relies on (its row cache, and programs still running with a
 * table they read): slots are rewritten only when no file's entry points
 * at them, and only after a retire() that came after the last entry
 * pointing at them was changed.  Every process's entry must name, for
 * each mapping, a file whose table is its own object's, laid out as
 * unwind_plan() and unwind_emit() lay it, built here separately.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "elf/objcache.h"
#include "process/proctab.h"
#include "sampling/bpftables.h"
#include "testlib.h"
#include "testutil.h"
#include "unwind/unwind.h"

#define MAX_PIDS 8
#define MAX_FILES 16
#define MAX_KEYS 64

/* The BPF side, faked. */
struct fake {
	union cprof_table_slot *rows;
	uint32_t cap;
	uint32_t *drop_retire; /* per slot: retires when the last entry on it went */
	uint32_t *refs;        /* per slot: file entries pointing at it now */
	uint32_t retires;
	bool fail_retire;      /* the next retires fail, as a failed RCU wait would */
	size_t writes, rewrites, violations;
	char why[256];         /* the first violation */
	struct cprof_file file[MAX_FILES];
	struct {
		struct cprof_file_key k;
		struct cprof_file_ref ref;
		bool live;
	} key[MAX_KEYS];
	struct {
		bool live;
		struct cprof_proc_maps pm;
	} proc[MAX_PIDS];
};

static int fake_write_rows(void *ctx, uint32_t first, const union cprof_table_slot *rows,
			   uint32_t n)
{
	struct fake *f = ctx;

	if (!n)
		return 0; /* the end of a table's writes */
	if ((uint64_t)first + n > f->cap || first == 0)
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
	f->proc[pid].live = pm != NULL;
	if (pm)
		f->proc[pid].pm = *pm;
	return 0;
}

static int fake_get_proc(void *ctx, uint32_t pid, struct cprof_proc_maps *pm)
{
	struct fake *f = ctx;

	if (pid >= MAX_PIDS || !f->proc[pid].live)
		return -ENOENT;
	*pm = f->proc[pid].pm;
	return 0;
}

/* Counts (+1) or uncounts (-1) the slots of a file entry's table. */
static void each_slot(struct fake *f, const struct cprof_file *cf, int delta)
{
	if (cf->state != CPROF_FILE_LOADED)
		return;
	for (uint64_t s = cf->t.first; s < cf->t.first + (uint64_t)CPROF_TABLE_SLOTS(&cf->t) &&
					 s < f->cap; s++) {
		f->refs[s] += delta;
		if (delta < 0 && !f->refs[s])
			f->drop_retire[s] = f->retires;
	}
}

static int fake_set_file(void *ctx, uint32_t file, const struct cprof_file *cf)
{
	struct fake *f = ctx;

	if (file >= MAX_FILES)
		return -E2BIG;
	each_slot(f, &f->file[file], -1);
	f->file[file] = *cf;
	each_slot(f, cf, +1);
	return 0;
}

static int fake_set_file_key(void *ctx, const struct cprof_file_key *k,
			     const struct cprof_file_ref *ref)
{
	struct fake *f = ctx;
	int free_at = -1;

	for (int i = 0; i < MAX_KEYS; i++) {
		if (f->key[i].live && !memcmp(&f->key[i].k, k, sizeof(*k))) {
			f->key[i].live = ref != NULL;
			if (ref)
				f->key[i].ref = *ref;
			return 0;
		}
		if (!f->key[i].live && free_at < 0)
			free_at = i;
	}
	if (!ref)
		return -ENOENT;
	if (free_at < 0)
		return -E2BIG;
	f->key[free_at].k = *k;
	f->key[free_at].ref = *ref;
	f->key[free_at].live = true;
	return 0;
}

/*
 * The number BPF finds for the file at @path from its identity as the
 * kernel has it (the device as /proc/PID/maps and the kernel encode it);
 * CPROF_NO_FILE: none.
 */
static uint32_t file_by_identity(const struct fake *f, const char *path)
{
	struct stat st;
	struct cprof_file_key k;

	if (stat(path, &st))
		return CPROF_NO_FILE;
	k = (struct cprof_file_key){ .ino = st.st_ino, .size = (uint64_t)st.st_size,
				     .mtime_sec = st.st_mtim.tv_sec,
				     .mtime_nsec = (uint32_t)st.st_mtim.tv_nsec,
				     .dev = major(st.st_dev) << 20 | minor(st.st_dev) };
	for (int i = 0; i < MAX_KEYS; i++)
		if (f->key[i].live && !memcmp(&f->key[i].k, &k, sizeof(k)))
			return f->key[i].ref.file;
	return CPROF_NO_FILE;
}

/* A host object with CFI, and its table as laid out here. */
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

static int copy_out(void *ctx, uint32_t off, const union cprof_table_slot *slots, uint32_t n)
{
	struct obj *ob = ctx;

	memcpy(&ob->slots[off], slots, (size_t)n * sizeof(*slots));
	return 0;
}

static int obj_open(struct obj *ob, struct objcache *oc)
{
	struct unwind_table ut = { 0 };
	struct unwind_layout lay = { 0 };
	struct errbuf err = { 0 };
	int fd = open(ob->path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (exec_segment_offset(fd, &ob->exec_off) || unwind_build_fd(fd, &ut, &err) || !ut.n ||
	    unwind_plan(&ut, &lay)) {
		close(fd);
		unwind_table_free(&ut);
		return -1;
	}
	ob->nslots = lay.nslots;
	ob->nrows = ut.n;
	ob->slots = calloc(ob->nslots, sizeof(*ob->slots));
	if (!ob->slots || unwind_emit(&ut, &lay, copy_out, ob))
		ob->nslots = 0;
	unwind_layout_free(&lay);
	unwind_table_free(&ut);
	/* objcache_get takes the fd */
	if (!ob->nslots || objcache_get(oc, fd, &ob->o, &err))
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

/* A process's entry written, no table asked for. */
static int add(struct bpftables *t, uint32_t pid, struct obj **obs, size_t n)
{
	struct vma v[4];
	struct elfobj *objs[4];
	struct process p;
	struct errbuf err = { 0 };

	make_process(&p, pid, obs, n, v, objs);
	return bpftables_add_process(t, &p, &err);
}

/* The file of mapping @i of @pid's entry, or CPROF_NO_FILE. */
static uint32_t file_at(const struct fake *f, uint32_t pid, uint32_t i)
{
	if (!f->proc[pid].live || i >= f->proc[pid].pm.n)
		return CPROF_NO_FILE;
	return f->proc[pid].pm.m[i].file;
}

/* As samples landing in each of @pid's mappings: their tables asked for and built. */
static int add_sampled(struct bpftables *t, const struct fake *f, uint32_t pid, struct obj **obs,
		       size_t n)
{
	int rc = add(t, pid, obs, n);

	for (uint32_t i = 0; !rc && i < n; i++)
		bpftables_want(t, file_at(f, pid, i));
	bpftables_build_pending(t);
	return rc;
}

/* Mapping @i of @pid's entry names a file whose table is @ob's, whole. */
static bool entry_holds(const struct fake *f, uint32_t pid, uint32_t i, const struct obj *ob)
{
	uint32_t file = file_at(f, pid, i);
	const struct cprof_file *cf;

	if (file >= MAX_FILES)
		return false;
	cf = &f->file[file];
	return cf->state == CPROF_FILE_LOADED && cf->t.nrows == ob->nrows &&
	       CPROF_TABLE_SLOTS(&cf->t) == ob->nslots && cf->t.first + ob->nslots <= f->cap &&
	       !memcmp(&f->rows[cf->t.first], ob->slots, ob->nslots * sizeof(*ob->slots));
}

/* Mapping @i of @pid's entry names a file BPF walks by frame pointers, in state @state. */
static bool entry_without(const struct fake *f, uint32_t pid, uint32_t i, uint32_t state)
{
	uint32_t file = file_at(f, pid, i);

	return file < MAX_FILES && f->file[file].state == state && f->file[file].t.nrows == 0;
}

/* The state BPF is told of mapping @i's file of @pid's entry; UINT32_MAX: no file. */
static uint32_t state_at(const struct fake *f, uint32_t pid, uint32_t i)
{
	uint32_t file = file_at(f, pid, i);

	return file < MAX_FILES ? f->file[file].state : UINT32_MAX;
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
	struct bpftables_maps maps = { .write_rows = fake_write_rows, .retire = fake_retire,
				    .set_proc = fake_set_proc, .get_proc = fake_get_proc,
				    .set_file = fake_set_file,
				    .set_file_key = fake_set_file_key,
				    .ctx = &f };
	struct bpftables *t = NULL;
	struct bpftables_stats st;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (size_t i = 0; i < sizeof(ob) / sizeof(ob[0]); i++) {
		if (!oc || obj_open(&ob[i], oc)) {
			T_SKIP("bpftables", "%s: not there or no CFI", ob[i].path);
			return T_EXIT();
		}
	}
	T_PLAN(42);
	/* cat's table must fit where ls's was, and sort's must not fit beside both */
	CHECK(c->nslots <= a->nslots && b->nslots > c->nslots, "fixtures: table sizes",
	      "ls %zu, sort %zu, cat %zu slots", a->nslots, b->nslots, c->nslots);

	/* Room for ls and sort (slot 0 is never used); cat only by evicting one of them. */
	f.cap = (uint32_t)(1 + a->nslots + b->nslots + c->nslots / 2);
	f.rows = calloc(f.cap, sizeof(*f.rows));
	f.refs = calloc(f.cap, sizeof(*f.refs));
	f.drop_retire = malloc(f.cap * sizeof(*f.drop_retire));
	if (!f.rows || !f.refs || !f.drop_retire)
		return 1;
	memset(f.drop_retire, 0xff, f.cap * sizeof(*f.drop_retire));
	maps.capacity = f.cap;
	{
		struct bpftables_maps no_set_file = maps;

		no_set_file.set_file = NULL;
		CHECK(bpftables_new(&t, &no_set_file, oc) == -EINVAL && !t,
		      "bpftables_new: every callback is required", "accepted no set_file");
	}
	CHECK(bpftables_new(&t, &maps, oc) == 0, "bpftables_new", "failed");
	if (!t)
		return T_EXIT();

	/* A process's entry names its files; nothing is built until a sample asks. */
	CHECK(add(t, 1, (struct obj *[]){ a }, 1) == 0 && f.writes == 0 &&
		      entry_without(&f, 1, 0, CPROF_FILE_UNBUILT) && !bpftables_pending(t),
	      "a new process's files are numbered, their tables not built",
	      "%zu writes, file %u", f.writes, file_at(&f, 1, 0));
	CHECK(file_at(&f, 1, 0) != CPROF_NO_FILE &&
		      file_by_identity(&f, a->path) == file_at(&f, 1, 0),
	      "a numbered file is named to BPF by its identity in the kernel",
	      "entry's file %u, by identity %u", file_at(&f, 1, 0), file_by_identity(&f, a->path));
	bpftables_want(t, file_at(&f, 1, 0));
	CHECK(bpftables_pending(t) && entry_without(&f, 1, 0, CPROF_FILE_QUEUED),
	      "a table asked for is queued, and BPF told so", "state %u",
	      f.file[file_at(&f, 1, 0)].state);
	bpftables_want(t, file_at(&f, 1, 0));
	bpftables_build_pending(t);
	bpftables_get_stats(t, &st);
	CHECK(entry_holds(&f, 1, 0, a) && st.built == 1 && st.asked == 1 && !bpftables_pending(t),
	      "asked for twice, built once", "built %zu, asked %zu", st.built, st.asked);
	bpftables_want(t, 4000); /* a number never given: ignored */
	bpftables_want(t, CPROF_NO_FILE);
	CHECK(!bpftables_pending(t), "numbers never given are not queued", "queued");

	CHECK(add_sampled(t, &f, 2, (struct obj *[]){ b }, 1) == 0 && entry_holds(&f, 1, 0, a) &&
		      entry_holds(&f, 2, 0, b),
	      "two processes, two tables", "rows differ");

	/* A second process of ls shares its file and table: nothing written. */
	f.writes = 0;
	CHECK(add_sampled(t, &f, 3, (struct obj *[]){ a }, 1) == 0 && f.writes == 0 &&
		      file_at(&f, 3, 0) == file_at(&f, 1, 0) && entry_holds(&f, 3, 0, a),
	      "a table belongs to the file, shared by the processes mapping it",
	      "%zu writes", f.writes);

	/* ls unused: cat evicts it, after a retire, into its slots. */
	bpftables_remove_process(t, 1);
	bpftables_remove_process(t, 3);
	CHECK(!f.proc[1].live && !f.proc[3].live, "removed processes lose their entries",
	      "entries still there");
	/* Rows that cannot be retired are not reused: cat goes without. */
	f.fail_retire = true;
	f.rewrites = 0;
	CHECK(add_sampled(t, &f, 4, (struct obj *[]){ c }, 1) == 0, "cat's process, retire failing",
	      "failed");
	bpftables_get_stats(t, &st);
	CHECK(st.no_room == 1 && f.rewrites == 0 && f.proc[4].live &&
	      entry_without(&f, 4, 0, CPROF_FILE_NONE) && entry_holds(&f, 2, 0, b),
	      "a failed retire frees nothing: the object is left to frame pointers",
	      "evicted %zu, no_room %zu, rewrites %zu", st.evicted, st.no_room, f.rewrites);
	bpftables_prune(t);
	bpftables_get_stats(t, &st);
	CHECK(st.files == 3, "a failed retire prunes nothing", "%zu files", st.files);
	f.fail_retire = false;
	/* The prune told BPF ls and its table were gone, so cat may be asked for again. */
	bpftables_prune(t);
	bpftables_get_stats(t, &st);
	CHECK(st.objects == 1 && st.files == 2 && entry_without(&f, 4, 0, CPROF_FILE_UNBUILT),
	      "pruned: ls's file and table freed, cat's to be asked for again",
	      "%zu objects, %zu files, cat's state %u", st.objects, st.files,
	      f.file[file_at(&f, 4, 0)].state);
	CHECK(file_by_identity(&f, a->path) == CPROF_NO_FILE &&
		      file_by_identity(&f, c->path) == file_at(&f, 4, 0),
	      "a pruned file's identity is forgotten, a live one's kept", "ls %u, cat %u",
	      file_by_identity(&f, a->path), file_by_identity(&f, c->path));
	bpftables_want(t, file_at(&f, 4, 0));
	bpftables_build_pending(t);
	bpftables_get_stats(t, &st);
	CHECK(f.rewrites > 0 && f.retires > 0 && entry_holds(&f, 4, 0, c),
	      "cat's table goes into the slots ls's table had", "rewrites %zu, retires %u",
	      f.rewrites, f.retires);
	CHECK(entry_holds(&f, 2, 0, b), "a table in use is kept", "sort's rows gone");

	/* ls again: no room beside sort and cat, both in use. */
	CHECK(add_sampled(t, &f, 5, (struct obj *[]){ a, b }, 2) == 0,
	      "a process when the budget is full", "failed");
	bpftables_get_stats(t, &st);
	CHECK(st.no_room == 2 && f.proc[5].live && f.proc[5].pm.n == 2 &&
	      entry_without(&f, 5, 0, CPROF_FILE_NONE) && entry_holds(&f, 5, 1, b),
	      "an object without room is left to frame pointers, the rest keep their tables",
	      "no_room %zu", st.no_room);

	/* cat exits: ls, asked for again, evicts its table. */
	bpftables_remove_process(t, 4);
	bpftables_prune(t); /* cat's file goes; ls may be asked for again */
	bpftables_want(t, file_at(&f, 5, 0));
	bpftables_build_pending(t);
	bpftables_get_stats(t, &st);
	CHECK(entry_holds(&f, 5, 0, a) && entry_holds(&f, 5, 1, b),
	      "once room is freed, a file without room is built when asked for again",
	      "ls state %u", f.file[file_at(&f, 5, 0)].state);

	/* Everything exits; pruning frees every row. */
	bpftables_remove_process(t, 2);
	bpftables_remove_process(t, 5);
	bpftables_prune(t);
	bpftables_get_stats(t, &st);
	CHECK(st.rows_used == 0 && st.objects == 0 && st.processes == 0 && st.files == 0,
	      "pruning after the last exit frees every row and number",
	      "rows_used %llu, objects %zu, processes %zu, files %zu",
	      (unsigned long long)st.rows_used, st.objects, st.processes, st.files);

	/* And ls loads again into freed slots, after the retire of pruning. */
	CHECK(add_sampled(t, &f, 6, (struct obj *[]){ a }, 1) == 0 && entry_holds(&f, 6, 0, a),
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
			CHECK(forged.o != a->o && !strcmp(elfobj_build_id(forged.o), elfobj_build_id(a->o)) &&
			      add_sampled(t, &f, 7, (struct obj *[]){ &forged }, 1) == 0 &&
			      file_at(&f, 7, 0) != file_at(&f, 6, 0) &&
			      entry_holds(&f, 7, 0, &forged) && entry_holds(&f, 6, 0, a),
			      "a forged build ID gets its own file and table, not the real object's",
			      "files %u and %u", file_at(&f, 7, 0), file_at(&f, 6, 0));
			bpftables_remove_process(t, 7);
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
		CHECK(bpftables_add_process(t, &p, &err) == 0 &&
			      f.proc[7].pm.n == CPROF_MAX_PROC_MAPS &&
			      (f.proc[7].pm.flags & CPROF_PROC_MAPS_TRUNCATED),
		      "an entry cut at CPROF_MAX_PROC_MAPS says so", "n %u, flags %#x",
		      f.proc[7].pm.n, f.proc[7].pm.flags);
		p.maps.n = 2;
		bpftables_get_stats(t, &st);
		CHECK(bpftables_add_process(t, &p, &err) == 0 && f.proc[7].pm.n == 2 &&
		      !f.proc[7].pm.flags && st.truncated == 1,
		      "an entry that fits is not marked", "flags %#x, truncated %zu",
		      f.proc[7].pm.flags, st.truncated);
		bpftables_remove_process(t, 7);
	}

	/*
	 * Mappings BPF added to an entry while the snapshot replacing it was
	 * read: kept, and the snapshot to be read again; kept once only.
	 */
	{
		struct obj *two[] = { a, b };
		struct cprof_proc_maps *pm = &f.proc[7].pm;
		struct cprof_proc_map lib;
		int rc;

		rc = add(t, 7, two, 2);
		CHECK(rc == 0, "an entry over none: nothing lost", "rc %d", rc);
		/* an mmap since the read, above the snapshot's mappings (make_process) */
		lib = (struct cprof_proc_map){ .start = 0x500000000ULL, .end = 0x500100000ULL,
					       .file = pm->m[1].file, .flags = CPROF_MAP_ADDED };
		pm->m[pm->n++] = lib;
		pm->flags |= CPROF_PROC_MAPS_GROWN;
		rc = add(t, 7, two, 2);
		CHECK(rc == BPFTABLES_RACED && pm->n == 3 && pm->flags == CPROF_PROC_MAPS_GROWN &&
			      pm->m[2].start == lib.start &&
			      pm->m[2].flags == (CPROF_MAP_ADDED | CPROF_MAP_KEPT),
		      "a mapping BPF added that the new snapshot lacks: kept as added, read again",
		      "rc %d, n %u, flags %#x", rc, pm->n, pm->flags);
		rc = add(t, 7, two, 2);
		CHECK(rc == 0 && pm->n == 2 && !pm->flags,
		      "read again and still lacking it: unmapped, not kept", "rc %d, n %u", rc, pm->n);
		/* one inserted between the snapshot's mappings, in order */
		lib.start = 0x100200000ULL;
		lib.end = 0x100300000ULL;
		pm->m[2] = pm->m[1];
		pm->m[1] = lib;
		pm->n = 3;
		rc = add(t, 7, two, 2);
		CHECK(rc == BPFTABLES_RACED && pm->n == 3 && pm->m[0].end <= pm->m[1].start &&
			      pm->m[1].start == lib.start && pm->m[1].end <= pm->m[2].start,
		      "an addition between the snapshot's mappings: kept in order", "n %u", pm->n);
		/* BPF adds another since: that one is kept, the old one goes */
		pm->m[pm->n] = lib;
		pm->m[pm->n].start = 0x600000000ULL;
		pm->m[pm->n].end = 0x600001000ULL;
		pm->n++;
		rc = add(t, 7, two, 2);
		CHECK(rc == BPFTABLES_RACED && pm->n == 3 && pm->m[2].start == 0x600000000ULL,
		      "a later addition kept, the one kept before gone", "rc %d, n %u", rc, pm->n);
		rc = add(t, 7, two, 2);
		pm->m[1].flags = CPROF_MAP_ADDED;
		rc = add(t, 7, two, 2);
		CHECK(rc == 0 && pm->n == 2 && !pm->m[1].flags,
		      "an addition the new snapshot holds too: nothing lost, the loader's", "rc %d", rc);
		/* BPF's own entry for a process the loader had not read */
		f.proc[6].live = true;
		f.proc[6].pm = (struct cprof_proc_maps){ .n = 1, .flags = CPROF_PROC_MAPS_KERNEL };
		f.proc[6].pm.m[0] = lib;
		f.proc[6].pm.m[0].flags = 0;
		rc = add(t, 6, two, 2);
		CHECK(rc == BPFTABLES_RACED && f.proc[6].pm.n == 3,
		      "a kernel entry's mapping the snapshot lacks: kept, read again", "rc %d", rc);
		f.proc[6].pm = (struct cprof_proc_maps){ .n = 1, .flags = CPROF_PROC_MAPS_KERNEL };
		f.proc[6].pm.m[0] = lib;
		f.proc[6].pm.m[0].flags = 0;
		f.proc[6].pm.m[0].start = 0x100000000ULL;
		f.proc[6].pm.m[0].end = 0x100001000ULL;
		rc = add(t, 6, two, 2);
		CHECK(rc == 0 && f.proc[6].pm.n == 2,
		      "a kernel entry's mapping inside the snapshot's: nothing lost", "rc %d", rc);
		bpftables_remove_process(t, 7);
		bpftables_remove_process(t, 6);
		CHECK(!f.proc[7].live && !f.proc[6].live, "removed entries go from BPF", "%d %d",
		      f.proc[7].live, f.proc[6].live);
	}

	CHECK(f.violations == 0,
	      "rows are rewritten only after a retire that follows the last entry on them",
	      "%zu violations; first: %s", f.violations, f.why);

	/*
	 * A young program whose sample asked for one table gets all of its
	 * files' tables queued: the one asked for (and any asked for since)
	 * built first, the others one a call, so that the loader looks at its
	 * events between two: the small files first (every stack passes
	 * through the program's binary), then the most code first.
	 */
	for (int promote = 0; promote < 2; promote++) {
		static struct fake g;
		struct bpftables_maps gm = maps;
		struct bpftables *y = NULL;
		struct vma v[4];
		struct elfobj *objs[4];
		struct process p;
		bool first_round, all;

		free(g.rows);
		free(g.refs);
		free(g.drop_retire);
		memset(&g, 0, sizeof(g));
		g.cap = (uint32_t)(1 + a->nslots + b->nslots + c->nslots);
		g.rows = calloc(g.cap, sizeof(*g.rows));
		g.refs = calloc(g.cap, sizeof(*g.refs));
		g.drop_retire = malloc(g.cap * sizeof(*g.drop_retire));
		if (!g.rows || !g.refs || !g.drop_retire)
			return 1;
		memset(g.drop_retire, 0xff, g.cap * sizeof(*g.drop_retire));
		gm.ctx = &g;
		gm.capacity = g.cap;
		if (bpftables_new(&y, &gm, oc) || !y) {
			CHECK(0, "a young program's tables", "bpftables_new failed");
			break;
		}
		make_process(&p, 1, (struct obj *[]){ a, b, c }, 3, v, objs);
		if (!promote)
			v[0].end += 8 << 20; /* ls maps more code than cat's 1 MiB, but cat is small */
		bpftables_add_process(y, &p, NULL);
		bpftables_want(y, file_at(&g, 1, 1));
		bpftables_want_process(y, &p);
		if (promote)
			bpftables_want(y, file_at(&g, 1, 2)); /* a sample in c before the build */
		bpftables_get_stats(y, &st);
		CHECK(st.asked == 3 && st.asked_with == (promote ? 1u : 2u) &&
			      entry_without(&g, 1, 0, CPROF_FILE_QUEUED) &&
			      entry_without(&g, 1, 2, CPROF_FILE_QUEUED),
		      promote ? "a young program: a file asked for by a sample since is no longer"
				" counted as queued along" :
				"a young program: a sample's table asked for queues its other files'",
		      "asked %zu, along %zu", st.asked, st.asked_with);
		bpftables_build_pending(y);
		first_round = entry_holds(&g, 1, 1, b) && entry_holds(&g, 1, 2, c) &&
			      (promote ? entry_holds(&g, 1, 0, a) && !bpftables_pending(y) :
					 entry_without(&g, 1, 0, CPROF_FILE_QUEUED) &&
					 bpftables_pending(y));
		CHECK(first_round,
		      promote ? "a young program: the tables samples asked for, then one other" :
				"a young program: the table asked for and the small other before the"
				" one of more code in a round, the rest still queued",
		      "states %u %u %u, pending %d", state_at(&g, 1, 0), state_at(&g, 1, 1),
		      state_at(&g, 1, 2), bpftables_pending(y));
		if (!promote) {
			/* the program exits before ls's turn: no one wants ls's table */
			uint32_t fa = file_at(&g, 1, 0);

			bpftables_remove_process(y, 1);
			bpftables_build_pending(y);
			bpftables_get_stats(y, &st);
			CHECK(!bpftables_pending(y) && st.built == 2 && st.along_dropped == 1 &&
				      st.asked == 2 && st.asked_with == 1 &&
				      fa < MAX_FILES && g.file[fa].state == CPROF_FILE_UNBUILT,
			      "a young program gone before its files' turn: their tables dropped,"
			      " to be asked for again",
			      "built %zu, dropped %zu, asked %zu (%zu along), pending %d",
			      st.built, st.along_dropped, st.asked, st.asked_with,
			      bpftables_pending(y));
		} else {
			bpftables_build_pending(y);
			all = entry_holds(&g, 1, 0, a) && entry_holds(&g, 1, 1, b) &&
			      entry_holds(&g, 1, 2, c) && !bpftables_pending(y);
			bpftables_get_stats(y, &st);
			CHECK(all && st.built == 3 && g.violations == 0,
			      "a young program: all its tables built in the end, once each",
			      "built %zu, pending %d, %zu violations", st.built,
			      bpftables_pending(y), g.violations);
			bpftables_remove_process(y, 1);
		}
		bpftables_free(y);
		if (promote) {
			free(g.rows);
			free(g.refs);
			free(g.drop_retire);
		}
	}

	bpftables_remove_process(t, 6);
	bpftables_free(t);
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
