// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "util/grow.h"
#include "fs/procstat.h"
#include "process/proctab.h"

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
		 const char *proc_root, struct rootfs_roots *roots, struct fdlru *lru)
{
	memset(t, 0, sizeof(*t));
	hmap_init(&t->by_pid, sizeof(uint64_t), sizeof(struct pid_entry));
	t->objs = objs;
	t->vdso = vdso;
	t->proc_root = proc_root;
	t->roots = roots;
	t->lru = lru;
	return 0;
}

static void release_objs(struct proctab *t, struct process *p);

static void process_free(struct proctab *t, struct process *p)
{
	if (!p)
		return;
	release_objs(t, p);
	procmaps_free(&p->maps);
	aggregate_free(&p->samples);
	perfmap_file_close(&p->perfmap);
	pyproc_free(p->py);
	jvmproc_free(p->jvm);
	v8proc_free(p->v8);
	if (t->roots)
		rootfs_root_put(t->roots, p->root);
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
	if (t->roots)
		rootfs_root_put(t->roots, t->self_root);
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

/* What a mapping's file must be: regular, with the maps line's device and inode. */
static struct rootfs_want want_of(const struct vma *v)
{
	return (struct rootfs_want){
		.have_ident = v->inode != 0,
		.dev_major = v->dev_major,
		.dev_minor = v->dev_minor,
		.ino = v->inode,
	};
}

/*
 * Opens the file behind a mapping as the process sees it: map_files/ gives
 * the very file mapped (deleted, in another mount namespace...) but needs
 * CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE; else its path inside the
 * process's root.  Never the bare path, which may name another file in our
 * own namespace, and never the path of a deleted file.
 */
static int open_mapped_file(struct proctab *t, const struct process *p, const struct vma *v)
{
	const struct rootfs_want want = want_of(v);
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/%u/map_files/%" PRIx64 "-%" PRIx64, t->proc_root, p->pid,
		 v->start, v->end);
	fd = rootfs_open_magic(path, &want, NULL);
	/* The kernel's own answer: the file mapped there now is not the one seen. */
	if (fd >= 0 || fd == -EINVAL || fd == -ESTALE)
		return fd;
	if (v->deleted)
		return -ENOLINK;
	if (!p->root)
		return -ENXIO;
	t->st.by_path++;
	return rootfs_open_in(rootfs_root_fd(p->root), v->path, &want, NULL);
}

static enum proctab_refusal refusal_of(int err)
{
	switch (err) {
	case -EINVAL:
		return REFUSED_NOT_REGULAR;
	case -ESTALE:
		return REFUSED_NOT_MAPPED;
	case -ENOLINK:
		return REFUSED_DELETED;
	case -ENOSYS:
		return REFUSED_NO_OPENAT2;
	case -ENXIO:
		return REFUSED_NO_ROOT;
	default:
		return REFUSED_OTHER;
	}
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

/* A file seen earlier in the same snapshot, by its maps line's identity. */
struct seen_key {
	uint64_t ino;
	uint32_t dev_major, dev_minor;
};

struct seen_entry {
	struct seen_key key;
	struct elfobj *obj; /* NULL: it could not be opened */
};

/* The object of an executable file mapping; NULL when none could be had. */
static struct elfobj *mapping_object(struct proctab *t, struct process *p, const struct vma *v,
				     struct hmap *seen)
{
	struct seen_key key = { .ino = v->inode, .dev_major = v->dev_major,
				.dev_minor = v->dev_minor };
	struct seen_entry *se = NULL;
	struct elfobj *o = NULL;
	bool created = false;
	int fd;

	/*
	 * Mappings of one file (its segments; or 60,000 of them) share the
	 * first one's result: one open, not one each.
	 */
	if (v->inode && (se = hmap_insert(seen, &key, &created)) && !created) {
		if (se->obj)
			objcache_ref(t->objs, se->obj);
		return se->obj;
	}
	fd = open_mapped_file(t, p, v);
	if (fd < 0) {
		t->st.refused[refusal_of(fd)]++;
	} else {
		t->st.opened++;
		if (objcache_get(t->objs, fd, &o, NULL))
			o = NULL;
	}
	if (o) {
		const struct objcache_source src = {
			.pid = p->pid,
			.start = v->start,
			.end = v->end,
			.root = v->deleted ? NULL : p->root,
			.path = v->path,
		};

		objcache_add_source(t->objs, o, &src);
	}
	if (v->inode && (se = hmap_find(seen, &key)))
		se->obj = o;
	return o;
}

static void snapshot(struct proctab *t, struct process *p)
{
	struct errbuf err = { "" };
	struct hmap seen;
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
	hmap_init(&seen, sizeof(struct seen_key), sizeof(struct seen_entry));
	for (size_t i = 0; i < p->maps.n; i++) {
		const struct vma *v = &p->maps.v[i];

		if (v->kind == VMA_SPECIAL && v->path && !strcmp(v->path, "[vdso]")) {
			p->objs[i] = t->vdso;
			continue;
		}
		if (v->kind != VMA_FILE)
			continue;
		p->objs[i] = mapping_object(t, p, v, &seen);
		if (!p->objs[i])
			p->obj_errors++;
	}
	hmap_free(&seen);
}

/*
 * The start of the process whose /proc/PID is @dir, in ns since boot (to
 * 1/USER_HZ s, the unit of the stat file), or 0 when unknown.
 */
static uint64_t read_start_time(int dir)
{
	uint64_t ns;

	return procstat_start_ns(dir, "stat", &ns) ? 0 : ns;
}

/*
 * What a process is held by from its first sight: its root directory (so
 * that a reused pid never leads into another container), its owner and its
 * start.  Opened through /proc/PID once: everything after goes through the
 * root.
 */
static void hold_process(struct proctab *t, struct process *p)
{
	char path[64];
	struct stat st;
	int dir;

	p->uid = UINT32_MAX;
	snprintf(path, sizeof(path), "%s/%u", t->proc_root, p->pid);
	dir = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return;
	/* /proc/PID belongs to the process's effective uid while it is dumpable. */
	if (fstat(dir, &st) == 0)
		p->uid = st.st_uid;
	p->start_time = read_start_time(dir);
	if (t->roots)
		rootfs_root_get(t->roots, dir, &p->root, NULL);
	close(dir);
}

/*
 * The start of @p on CLOCK_REALTIME, the clock of file times, from its start
 * since boot: false when unknown.  Converted at each use, so that a step of
 * the clock since (NTP, settimeofday) is followed.
 */
static bool born_at(const struct process *p, struct timespec *born)
{
	struct timespec real, boot;
	int64_t ns;

	if (!p->start_time || clock_gettime(CLOCK_REALTIME, &real) ||
	    clock_gettime(CLOCK_BOOTTIME, &boot))
		return false;
	ns = (int64_t)p->start_time + (real.tv_sec - boot.tv_sec) * 1000000000LL +
	     (real.tv_nsec - boot.tv_nsec);
	born->tv_sec = ns / 1000000000LL;
	born->tv_nsec = ns % 1000000000LL;
	return true;
}

/*
 * Opens (again) the perf map of @p, from its root, if it has one that it
 * wrote (-ESTALE: one older than the process, another's of its pid).  The
 * start is known to a tick, 1/USER_HZ s, rounded down; perfmap allows a
 * jiffy more for the coarse clock of file times.  So a stale map is taken
 * only if the pid's last holder wrote it within a tick and a jiffy (at most
 * 20 ms) of the new start: the pid freed and handed out again within that
 * time, which the cyclic pid allocator does only after going round all
 * other free pids.
 */
static int update_perfmap(struct process *p, struct errbuf *err)
{
	struct timespec born;

	if (!p->root)
		return errf(err, -ENXIO, "no root held for pid %u", p->pid);
	return perfmap_file_update(&p->perfmap, rootfs_root_fd(p->root),
				   p->ns_pid ? p->ns_pid : p->pid, p->uid,
				   born_at(p, &born) ? &born : NULL, err);
}

int proctab_perfmap(struct process *p, struct errbuf *err)
{
	int ret = update_perfmap(p, err);

	return ret ? ret : perfmap_file_fd(&p->perfmap);
}

static int retire(struct proctab *t, struct process *p)
{
	if (grow((void **)&t->retired, &t->retired_cap, t->nretired, sizeof(*t->retired), 16,
		 GROW_NO_MAX))
		return -ENOMEM;
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
	aggregate_init(&p->samples);
	perfmap_file_init(&p->perfmap, t->lru);
	if (comm && *comm)
		snprintf(p->comm, sizeof(p->comm), "%s", comm);
	else if (take_snapshot)
		read_comm(t->proc_root, pid, p->comm, sizeof(p->comm));
	if (take_snapshot) {
		/* Labels first: they stay true after the process exits. */
		cgroup_read(t->proc_root, pid, &p->cgroup, NULL);
		cgroup_read_nspid(t->proc_root, pid, &p->ns_pid, NULL);
		hold_process(t, p);
		snapshot(t, p);
		if (update_perfmap(p, NULL) == -ESTALE)
			t->st.perfmap_stale++;
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

int proctab_refresh(struct proctab *t, struct process *p, double now,
		    enum proctab_refresh_why why)
{
	struct process fresh = { .pid = p->pid, .root = p->root };

	if (why == REFRESH_EXEC) {
		p->refresh_asks = 0;
		p->refresh_gap = 0;
		p->next_refresh = 0;
	}
	if (why == REFRESH_NEW_CODE && now < p->next_refresh) {
		p->refresh_pending = true;
		t->st.deferred++;
		return -EAGAIN;
	}
	/* once a program start, or once after a read: no ask against the backoff */
	if (why == REFRESH_STARTUP)
		t->st.startup++;
	else if (why == REFRESH_RACED)
		t->st.raced++;
	else if (++p->refresh_asks >= PROCTAB_REFRESH_FREE) {
		p->refresh_gap = p->refresh_gap ? 2 * p->refresh_gap : PROCTAB_REFRESH_GAP_MIN;
		if (p->refresh_gap > PROCTAB_REFRESH_GAP_MAX)
			p->refresh_gap = PROCTAB_REFRESH_GAP_MAX;
		p->next_refresh = now + p->refresh_gap;
	}
	p->refresh_pending = false;
	t->st.refreshes++;
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
	/* New code may be JIT code whose perf map appeared since. */
	update_perfmap(p, NULL);
	return 0;
}

/* The object of a mapping an exit record told, known by its identity only. */
static struct elfobj *exit_object(struct proctab *t, const struct cprof_exit_maps *rec,
				  const struct vma *v)
{
	struct objcache_file_id id = { .dev = makedev(v->dev_major, v->dev_minor),
				       .ino = v->inode };

	for (uint32_t i = 0; i < rec->n && i < CPROF_EXIT_MAPS; i++) {
		const struct cprof_file_key *k = &rec->m[i].key;

		if (rec->m[i].start == v->start && k->ino) {
			id.size = k->size;
			id.mtime_sec = k->mtime_sec;
			id.mtime_nsec = k->mtime_nsec;
			return objcache_find(t->objs, &id);
		}
	}
	return NULL;
}

void proctab_exit_maps(struct proctab *t, const struct cprof_exit_maps *rec)
{
	struct process *p = proctab_find(t, rec->pid);
	struct vma_list maps;
	struct elfobj **objs;

	if (!p || p->gen != rec->gen)
		p = find_retired(t, rec->pid, rec->gen);
	if (!p || procmaps_from_exit(rec, &maps, NULL))
		return;
	/*
	 * Read while it ran: what it showed then is what its samples were
	 * in, unless the record shows all that and more (the libraries it
	 * mapped after a read at its exec: BPF sends the record then).
	 */
	objs = p->have_maps && p->maps.n && !procmaps_extends(&maps, &p->maps) ? NULL :
		calloc(maps.n ? maps.n : 1, sizeof(*objs));
	if (!objs) {
		procmaps_free(&maps);
		return;
	}
	release_objs(t, p);
	procmaps_free(&p->maps);
	p->maps = maps;
	p->objs = objs;
	p->obj_errors = 0;
	for (size_t i = 0; i < maps.n; i++) {
		if (maps.v[i].kind == VMA_SPECIAL) { /* the vDSO or [uprobes] (procmaps_from_exit()) */
			objs[i] = strcmp(maps.v[i].path, CPROF_EXIT_VDSO) ? NULL : t->vdso;
			continue;
		}
		objs[i] = exit_object(t, rec, &maps.v[i]);
		if (!objs[i]) {
			p->obj_errors++;
			t->st.exit_unknown++;
		}
	}
	p->have_maps = true;
	p->maps_error = 0;
	t->st.exit_named++;
	/* its cgroup's label, which /proc/PID/cgroup could not give either */
	if (!p->cgroup.path[0] && rec->cgroup)
		cgroup_path_of_id(rec->cgroup, &p->cgroup, NULL);
}

/* Our own root and mount namespace, found once: what an exit file's must be. */
static struct rootfs_root *self_root(struct proctab *t)
{
	char path[64];
	struct stat st;
	int dir;

	if (t->self_tried || !t->roots)
		return t->self_root;
	t->self_tried = true;
	snprintf(path, sizeof(path), "%s/self/ns/mnt", t->proc_root);
	if (stat(path, &st))
		return NULL;
	snprintf(path, sizeof(path), "%s/self", t->proc_root);
	dir = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return NULL;
	if (!rootfs_root_get(t->roots, dir, &t->self_root, NULL))
		t->self_mnt_ns = st.st_ino;
	close(dir);
	return t->self_root;
}

/* Whether @st is the file the kernel's key names (rootfs_ident_matches did device and inode). */
static bool key_matches(const struct cprof_file_key *k, const struct stat *st)
{
	return (uint64_t)st->st_size == k->size && st->st_mtim.tv_sec == k->mtime_sec &&
	       (uint64_t)st->st_mtim.tv_nsec == k->mtime_nsec;
}

/* Whether @v maps the file the kernel's key @k names. */
static bool maps_key(const struct vma *v, const struct cprof_file_key *k)
{
	return v->kind == VMA_FILE && v->inode == k->ino && v->dev_major == k->dev >> 20 &&
	       v->dev_minor == (k->dev & 0xfffff);
}

/*
 * Opens the file @ev names in our root, its path into @path (@len bytes),
 * or says why not (a negative errno; -EXDEV: not our root).
 */
static int open_exit_file(struct proctab *t, const struct cprof_exit_file *ev, char *path,
			  size_t len)
{
	struct rootfs_root *root = self_root(t);
	struct rootfs_want want = {
		.no_symlinks = true, /* the kernel's path has none: one now is planted */
		.have_ident = true,
		.dev_major = ev->key.dev >> 20,
		.dev_minor = ev->key.dev & 0xfffff,
		.ino = ev->key.ino,
	};
	struct stat st;
	int fd, ret;

	if (!root || ev->mnt_ns != t->self_mnt_ns ||
	    !rootfs_root_is(root, ev->root_mnt, makedev(ev->root_dev >> 20, ev->root_dev & 0xfffff),
			    ev->root_ino))
		return -EXDEV;
	ret = rootfs_path_from_leaf(ev->path, ev->len < sizeof(ev->path) ? ev->len : 0, path, len);
	if (ret)
		return ret;
	fd = rootfs_open_in(rootfs_root_fd(root), path, &want, &st);
	if (fd >= 0 && !key_matches(&ev->key, &st)) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

struct process *proctab_exit_file(struct proctab *t, const struct cprof_exit_file *ev)
{
	struct process *p = proctab_find(t, ev->pid);
	char path[CPROF_EXIT_PATH + 1];
	struct elfobj *o = NULL;
	bool wanted = false;
	int fd;

	if (!p || p->gen != ev->gen)
		p = find_retired(t, ev->pid, ev->gen);
	for (size_t i = 0; p && p->objs && i < p->maps.n; i++)
		wanted |= !p->objs[i] && maps_key(&p->maps.v[i], &ev->key);
	if (!wanted)
		return NULL;
	fd = open_exit_file(t, ev, path, sizeof(path));
	if (fd == -EXDEV) {
		t->st.exit_other_root++;
		return NULL;
	}
	if (fd < 0 || objcache_get(t->objs, fd, &o, NULL) || !o) {
		t->st.exit_refused++;
		return NULL;
	}
	t->st.exit_opened++;
	/* reopened from there if its descriptor is closed (objcache_set_lru) */
	objcache_add_source(t->objs, o, &(struct objcache_source){ .root = t->self_root,
								  .path = path });
	for (size_t i = 0; i < p->maps.n; i++) {
		if (p->objs[i] || !maps_key(&p->maps.v[i], &ev->key))
			continue;
		objcache_ref(t->objs, o);
		p->objs[i] = o;
		p->obj_errors--;
	}
	objcache_put(t->objs, o);
	return p;
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
			aggregate_reset(&e->proc->samples);
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
