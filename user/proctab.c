// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proctab.h"

struct pid_entry {
	uint32_t pid;
	uint32_t pad;
	struct process *proc; /* NULL: freed, slot to be compacted */
};

static bool empty_entry(const void *entry)
{
	return ((const struct pid_entry *)entry)->proc == NULL;
}

int proctab_init(struct proctab *t, struct objcache *objs, struct elfobj *vdso,
		 const char *proc_root)
{
	memset(t, 0, sizeof(*t));
	hmap_init(&t->by_pid, sizeof(uint64_t), sizeof(struct pid_entry));
	t->objs = objs;
	t->vdso = vdso;
	t->proc_root = proc_root;
	return 0;
}

static void release_objs(struct proctab *t, struct process *p);

static void process_free(struct proctab *t, struct process *p)
{
	if (!p)
		return;
	release_objs(t, p);
	procmaps_free(&p->maps);
	agg_free(&p->samples);
	free(p);
}

void proctab_free(struct proctab *t)
{
	size_t it = 0;
	struct pid_entry *e;

	while ((e = hmap_next(&t->by_pid, &it)))
		process_free(t, e->proc);
	for (size_t i = 0; i < t->nretired; i++)
		process_free(t, t->retired[i]);
	free(t->retired);
	hmap_free(&t->by_pid);
}

static uint64_t pid_key(uint32_t pid)
{
	return pid;
}

struct process *proctab_find(struct proctab *t, uint32_t pid)
{
	uint64_t key = pid_key(pid);
	struct pid_entry *e = hmap_find(&t->by_pid, &key);

	return e ? e->proc : NULL;
}

/* Reads a one-line /proc file such as comm, without its newline. */
static void read_comm(const char *proc_root, uint32_t pid, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%u/comm", proc_root, pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

/*
 * Opens the file behind a mapping as the process sees it: map_files/ works
 * for deleted files and other mount namespaces; root/<path> is the fallback
 * (map_files needs CAP_SYS_ADMIN in the init user namespace).  Never the
 * bare path, which may name another file in our own namespace.
 */
static int open_mapped_file(const char *proc_root, uint32_t pid, const struct vma *v)
{
	char path[PATH_MAX + 64];
	int fd;

	snprintf(path, sizeof(path), "%s/%u/map_files/%" PRIx64 "-%" PRIx64, proc_root, pid,
		 v->start, v->end);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 || !v->path)
		return fd >= 0 ? fd : -errno;
	snprintf(path, sizeof(path), "%s/%u/root%s", proc_root, pid, v->path);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd >= 0 ? fd : -errno;
}

/* Keeps only the executable mappings: the only ones a PC can fall in. */
static void keep_exec_only(struct vma_list *l)
{
	size_t j = 0;

	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].prot & VMA_EXEC)
			l->v[j++] = l->v[i];
	l->n = j;
}

static void release_objs(struct proctab *t, struct process *p)
{
	for (size_t i = 0; p->objs && i < p->maps.n; i++)
		if (p->objs[i] && p->objs[i] != t->vdso)
			objcache_put(t->objs, p->objs[i]);
	free(p->objs);
	p->objs = NULL;
}

static void snapshot(struct proctab *t, struct process *p)
{
	struct errbuf err = { "" };
	int ret;

	ret = procmaps_read(t->proc_root, (int)p->pid, &p->maps, &err);
	if (ret) {
		p->maps_error = ret;
		snprintf(p->maps_errmsg, sizeof(p->maps_errmsg), "%s", err.msg);
		return;
	}
	keep_exec_only(&p->maps);
	p->objs = calloc(p->maps.n ? p->maps.n : 1, sizeof(*p->objs));
	if (!p->objs) {
		p->maps_error = -ENOMEM;
		return;
	}
	p->have_maps = true;
	for (size_t i = 0; i < p->maps.n; i++) {
		const struct vma *v = &p->maps.v[i];
		int fd;

		if (v->kind == VMA_SPECIAL && v->path && !strcmp(v->path, "[vdso]")) {
			p->objs[i] = t->vdso;
			continue;
		}
		if (v->kind != VMA_FILE)
			continue;
		fd = open_mapped_file(t->proc_root, p->pid, v);
		if (fd < 0 || objcache_get(t->objs, fd, &p->objs[i], NULL)) {
			p->objs[i] = NULL;
			p->obj_errors++;
		}
	}
}

static int retire(struct proctab *t, struct process *p)
{
	if (t->nretired == t->retired_cap) {
		size_t cap = t->retired_cap ? t->retired_cap * 2 : 16;
		struct process **r = realloc(t->retired, cap * sizeof(*r));

		if (!r)
			return -ENOMEM;
		t->retired = r;
		t->retired_cap = cap;
	}
	t->retired[t->nretired++] = p;
	return 0;
}

static struct process *new_process(struct proctab *t, uint32_t pid, uint64_t gen,
				   const char *comm, bool take_snapshot)
{
	struct process *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->pid = pid;
	p->gen = gen;
	agg_init(&p->samples);
	if (comm && *comm)
		snprintf(p->comm, sizeof(p->comm), "%s", comm);
	else if (take_snapshot)
		read_comm(t->proc_root, pid, p->comm, sizeof(p->comm));
	if (take_snapshot) {
		/* Labels first: they stay true after the process exits. */
		cgroup_read(t->proc_root, pid, &p->cgroup, NULL);
		cgroup_read_nspid(t->proc_root, pid, &p->ns_pid, NULL);
		snapshot(t, p);
	}
	return p;
}

static struct process *find_retired(struct proctab *t, uint32_t pid, uint64_t gen)
{
	for (size_t i = 0; i < t->nretired; i++)
		if (t->retired[i]->pid == pid && t->retired[i]->gen == gen)
			return t->retired[i];
	return NULL;
}

struct process *proctab_get(struct proctab *t, uint32_t pid, uint64_t gen, const char *comm,
			    bool *created_out)
{
	uint64_t key = pid_key(pid);
	struct pid_entry *e;
	struct process *p;

	if (created_out)
		*created_out = false;
	e = hmap_insert(&t->by_pid, &key, NULL);
	if (!e)
		return NULL;
	if (e->proc && e->proc->gen == gen) {
		if (comm && *comm)
			snprintf(e->proc->comm, sizeof(e->proc->comm), "%s", comm);
		return e->proc;
	}
	p = find_retired(t, pid, gen);
	if (p)
		return p;
	if (e->proc && gen < e->proc->gen) {
		/*
		 * Samples of an image replaced before we heard of it: its
		 * mappings are gone, so its frames stay unnamed.
		 */
		p = new_process(t, pid, gen, comm, false);
		if (p && retire(t, p)) {
			process_free(t, p);
			p = NULL;
		}
		return p;
	}
	p = new_process(t, pid, gen, comm, true);
	if (!p)
		return NULL;
	/* A newer image in this pid (exec, or pid reuse): keep the old one's samples. */
	/*
	 * Retired even without samples yet: those of the old image may still
	 * be in the maps, to be drained after this event.
	 */
	if (e->proc && retire(t, e->proc)) {
		process_free(t, p);
		return NULL;
	}
	e->proc = p;
	t->created++;
	if (created_out)
		*created_out = true;
	return p;
}

int proctab_refresh(struct proctab *t, struct process *p)
{
	struct process fresh = { .pid = p->pid };

	snapshot(t, &fresh);
	if (!fresh.have_maps) {
		release_objs(t, &fresh);
		procmaps_free(&fresh.maps);
		return fresh.maps_error ? fresh.maps_error : -ENOENT;
	}
	release_objs(t, p);
	procmaps_free(&p->maps);
	p->maps = fresh.maps;
	p->objs = fresh.objs;
	p->obj_errors = fresh.obj_errors;
	p->have_maps = true;
	p->maps_error = 0;
	p->refreshes++;
	return 0;
}

void proctab_exited(struct proctab *t, uint32_t pid, uint64_t gen)
{
	struct process *p = proctab_find(t, pid);

	if (p && p->gen == gen)
		p->exited = true;
}

void proctab_end_window(struct proctab *t)
{
	struct pid_entry *e;
	size_t it = 0;

	for (size_t i = 0; i < t->nretired; i++)
		process_free(t, t->retired[i]);
	t->nretired = 0;
	while ((e = hmap_next(&t->by_pid, &it))) {
		if (e->proc && e->proc->exited) {
			process_free(t, e->proc);
			e->proc = NULL;
		} else if (e->proc) {
			agg_reset(&e->proc->samples);
		}
	}
	hmap_compact(&t->by_pid, empty_entry);
}

struct process **proctab_list(struct proctab *t, size_t *n)
{
	struct process **all = malloc((t->by_pid.n + t->nretired + 1) * sizeof(*all));
	struct pid_entry *e;
	size_t it = 0, k = 0;

	*n = 0;
	if (!all)
		return NULL;
	while ((e = hmap_next(&t->by_pid, &it)))
		if (e->proc)
			all[k++] = e->proc;
	for (size_t i = 0; i < t->nretired; i++)
		all[k++] = t->retired[i];
	*n = k;
	return all;
}
