// SPDX-License-Identifier: MIT
/*
 * bpftables_procs: the per-process entries written to BPF's unwind_procs, each
 * mapping of a process with the number of its file, and the files each
 * entry holds, counted out when it is replaced or its process exits.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/addrsearch.h"
#include "sampling/bpftables_internal.h"

static void release_entry(struct bpftables *t, struct proc_entry *pe)
{
	for (size_t i = 0; i < pe->n; i++)
		if (pe->files[i] < t->nfiles && t->files[pe->files[i]].users)
			t->files[pe->files[i]].users--;
	free(pe->files);
	pe->files = NULL;
	pe->n = 0;
}

void bpftables_remove_process(struct bpftables *t, uint32_t pid)
{
	uint64_t key = pid;
	struct proc_entry *pe = hmap_find(&t->by_pid, &key);

	if (!pe || !pe->files)
		return;
	t->maps.set_proc(t->maps.ctx, pid, NULL);
	release_entry(t, pe);
	t->st.processes--;
}

/*
 * The number of the file of mapping @v, object @o (may be NULL), given now
 * if it has none, with the ELF virtual address of its start in *@v0;
 * CPROF_NO_FILE when it gets none.
 */
static uint32_t number_mapping(struct bpftables *t, const struct vma *v, struct elfobj *o,
			       uint64_t *v0)
{
	uint32_t file;

	if (!o || elfobj_file_to_vaddr(o, v->offset, v0))
		return CPROF_NO_FILE;
	file = bpftables_file_of(t, o, (int64_t)(*v0 - v->offset));
	if (file == CPROF_NO_FILE)
		t->st.no_number++;
	return file;
}

void bpftables_add_files(struct bpftables *t, struct process *p)
{
	uint64_t v0;

	for (size_t i = 0; p->have_maps && p->objs && i < p->maps.n; i++) {
		uint32_t file = number_mapping(t, &p->maps.v[i], p->objs[i], &v0);

		if (file != CPROF_NO_FILE)
			t->files[file].last_use = ++t->clock;
	}
}

/*
 * Fills @pm with @p's mappings as its BPF entry holds them: a numbered
 * file's with its bias, the rest with CPROF_NO_FILE.  With @used, each
 * file named gains a user and is noted there (*@nused of them).
 */
static void entry_from_maps(struct bpftables *t, const struct process *p,
			    struct cprof_proc_maps *pm, uint32_t *used, size_t *nused)
{
	pm->n = 0;
	pm->flags = p->maps.n > CPROF_MAX_PROC_MAPS ? CPROF_PROC_MAPS_TRUNCATED : 0;
	for (size_t i = 0; i < p->maps.n && pm->n < CPROF_MAX_PROC_MAPS; i++) {
		const struct vma *v = &p->maps.v[i];
		struct cprof_proc_map *m;
		uint64_t v0;
		uint32_t file;

		/* BPF's find_mapping orders addresses below 2^63: not [vsyscall]'s. */
		if (v->start >> 63)
			continue;
		m = &pm->m[pm->n++];
		*m = (struct cprof_proc_map){ .start = v->start, .end = v->end, .file = CPROF_NO_FILE };
		file = number_mapping(t, v, p->objs[i], &v0);
		if (file == CPROF_NO_FILE)
			continue;
		m->bias = v->start - v0;
		m->file = file;
		t->files[file].last_use = ++t->clock;
		if (used) {
			t->files[file].users++;
			used[(*nused)++] = file;
		}
	}
}

int bpftables_entry_of(struct bpftables *t, struct process *p, struct cprof_proc_maps *pm)
{
	pm->n = 0;
	pm->flags = 0;
	if (!p->have_maps || !p->objs)
		return -ENOENT;
	entry_from_maps(t, p, pm, NULL, NULL);
	return 0;
}

/* Whether [start, end) overlaps a mapping of @pm (sorted, disjoint). */
static bool overlaps(const struct cprof_proc_maps *pm, uint64_t start, uint64_t end)
{
	/* the first mapping ending past start; sorted and disjoint, the ends ascend too */
	size_t i = addrsearch_upto(pm->m, pm->n, ADDRSEARCH_KEY(struct cprof_proc_map, end), start);

	return i < pm->n && pm->m[i].start < end;
}

/*
 * Mappings of files BPF added to @pid's entry (an mmap since the loader's
 * last read, or the entry BPF made for a process the loader had not read)
 * where the snapshot @pm is made from has nothing: mapped while it was
 * read (ld.so mapping a new program's libraries), or unmapped before.
 * They go into @pm, still BPF's additions (the entry marked grown: a walk
 * through one asks for a new snapshot, the exit sends the process's
 * mappings) and marked kept, their files counted in @used: written as it
 * is, the entry would lose them.  One kept before that this snapshot lacks
 * too was unmapped: it goes, or it would stand for a file mapped there
 * later.  Whether any was kept.
 */
static bool keep_additions(struct bpftables *t, uint32_t pid, struct cprof_proc_maps *pm,
			   uint32_t *used, size_t *nused)
{
	const struct cprof_proc_maps *old = &t->before;
	bool kept = false;

	if (!t->maps.get_proc || t->maps.get_proc(t->maps.ctx, pid, &t->before))
		return false;
	for (uint32_t i = 0; i < old->n && i < CPROF_MAX_PROC_MAPS; i++) {
		const struct cprof_proc_map *m = &old->m[i];
		uint32_t at = 0;

		if (m->file == CPROF_NO_FILE || m->start >= m->end || (m->flags & CPROF_MAP_KEPT) ||
		    !((m->flags & CPROF_MAP_ADDED) || (old->flags & CPROF_PROC_MAPS_KERNEL)) ||
		    overlaps(pm, m->start, m->end) || pm->n >= CPROF_MAX_PROC_MAPS ||
		    m->file >= t->nfiles || !t->files[m->file].obj)
			continue;
		while (at < pm->n && pm->m[at].start < m->start)
			at++;
		memmove(&pm->m[at + 1], &pm->m[at], (pm->n - at) * sizeof(pm->m[0]));
		pm->m[at] = *m;
		pm->m[at].flags = CPROF_MAP_ADDED | CPROF_MAP_KEPT;
		pm->n++;
		pm->flags |= CPROF_PROC_MAPS_GROWN;
		t->files[m->file].users++;
		used[(*nused)++] = m->file;
		kept = true;
	}
	return kept;
}

int bpftables_add_process(struct bpftables *t, struct process *p, struct errbuf *err)
{
	struct cprof_proc_maps *pm = &t->scratch;
	struct proc_entry *pe, old = { 0 };
	uint64_t key = p->pid;
	uint32_t *used, *fit;
	size_t nused = 0;
	bool raced;
	int ret;

	if (!p->have_maps)
		return 0;
	used = calloc(CPROF_MAX_PROC_MAPS, sizeof(*used));
	if (!used) {
		bpftables_remove_process(t, p->pid);
		return errf(err, -ENOMEM, "out of memory");
	}

	entry_from_maps(t, p, pm, used, &nused);
	if (pm->flags & CPROF_PROC_MAPS_TRUNCATED)
		t->st.truncated++;
	/*
	 * The old entry is replaced in BPF, not removed first (BPF would make
	 * one of its own meanwhile), and its files are counted out only then:
	 * no number it names is handed out again while BPF may walk by it.
	 */
	pe = hmap_insert(&t->by_pid, &key, NULL);
	if (!pe) {
		ret = errf(err, -ENOMEM, "out of memory");
		goto fail;
	}
	old = *pe;
	raced = keep_additions(t, p->pid, pm, used, &nused);
	ret = t->maps.set_proc(t->maps.ctx, p->pid, pm);
	if (ret) {
		errf(err, ret, "pid %u: loading unwind entry: %s", p->pid, strerror(-ret));
		goto fail;
	}
	/* held as long as the process lives: no bigger than it needs */
	fit = realloc(used, (nused ? nused : 1) * sizeof(*used));
	pe->files = fit ? fit : used;
	pe->n = nused;
	if (old.files)
		release_entry(t, &old);
	else
		t->st.processes++;
	return raced ? BPFTABLES_RACED : 0;
fail:
	for (size_t i = 0; i < nused; i++)
		t->files[used[i]].users--;
	free(used);
	/* nothing of the old entry may stay: its files are counted out */
	t->maps.set_proc(t->maps.ctx, p->pid, NULL);
	if (pe && old.files) {
		release_entry(t, pe);
		t->st.processes--;
	}
	return ret;
}
