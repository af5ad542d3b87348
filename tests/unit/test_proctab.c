// SPDX-License-Identifier: MIT
/*
 * Tests for proctab on real processes that do what a hostile one would:
 * map a file, then put a FIFO or a symlink to a host file at its path (the
 * file deleted, or hidden under a mount in its own namespace).  Without
 * CAP_SYS_ADMIN and CAP_CHECKPOINT_RESTORE (dropped from our effective set,
 * as the DaemonSet runs) map_files is unusable and the path is all there
 * is: nothing may block, no other file may be taken for the mapped one, and
 * every refusal is counted.  With them, map_files gives the very file.
 * Also: 60,000-style mappings of one file opened once, re-snapshots backing
 * off, roots and perf maps held past the process's exit.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fs/fdlru.h"
#include "elf/objcache.h"
#include "process/proctab.h"
#include "fs/rootfs.h"
#include "testlib.h"
#include "testutil.h"

static char tmp[PATH_MAX - 64];

/* Sets or clears CAP_SYS_ADMIN and CAP_CHECKPOINT_RESTORE in our effective set. */
static int map_files_caps(bool on)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	const int caps[] = { CAP_SYS_ADMIN, CAP_CHECKPOINT_RESTORE };

	if (syscall(SYS_capget, &h, d))
		return -1;
	for (size_t i = 0; i < 2; i++) {
		if (on)
			d[caps[i] / 32].effective |= 1u << (caps[i] % 32);
		else
			d[caps[i] / 32].effective &= ~(1u << (caps[i] % 32));
	}
	return (int)syscall(SYS_capset, &h, d);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

enum attack { PLAIN, FIFO_DELETED, FIFO_MOUNTED, HOST_LINK_MOUNTED, MANY, PERFMAP };

/*
 * A child that maps a copy of /usr/bin/true (@copies times, apart) and then
 * does @a; it says when it is ready and waits to be killed.
 */
static pid_t attacker(enum attack a, int copies)
{
	int ready[2];
	pid_t pid;
	char c;

	if (pipe(ready))
		return -1;
	pid = fork();
	if (pid == 0) {
		const char *dir = fmt("%s/%d", tmp, (int)getpid());
		const char *file = fmt("%s/lib.so", dir);
		int fd;
		struct stat st;

		mkdir(dir, 0755);
		if (sh(fmt("cp /usr/bin/true '%s'", file)) || (fd = open(file, O_RDONLY)) < 0 ||
		    fstat(fd, &st))
			_exit(1);
		for (int i = 0; i < copies; i++) {
			/* One page apart: mappings that the kernel can't merge. */
			void *at = mmap(NULL, 2 * 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			if (at == MAP_FAILED ||
			    mmap(at, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, fd, 0) ==
				    MAP_FAILED)
				_exit(1);
		}
		close(fd);
		if (a == FIFO_DELETED && (unlink(file) || mkfifo(file, 0600)))
			_exit(1);
		if (a == FIFO_MOUNTED || a == HOST_LINK_MOUNTED) {
			if (unshare(CLONE_NEWNS) || mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
			    mount("tmpfs", dir, "tmpfs", 0, "size=64k"))
				_exit(1);
			if (a == FIFO_MOUNTED ? mkfifo(file, 0600) : symlink("/usr/bin/true", file))
				_exit(1);
		}
		if (a == PERFMAP) {
			FILE *f = fopen(fmt("/tmp/perf-%d.map", (int)getpid()), "w");

			if (!f)
				_exit(1);
			fputs("1000 10 jitted\n", f);
			fclose(f);
		}
		if (write(ready[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(ready[1]);
	if (pid < 0 || read(ready[0], &c, 1) != 1) {
		close(ready[0]);
		if (pid > 0)
			waitpid(pid, NULL, 0);
		return -1;
	}
	close(ready[0]);
	return pid;
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* The object of the first mapping of @p named ".../lib.so". */
static struct elfobj *lib_object(const struct process *p, size_t *nmaps)
{
	struct elfobj *o = NULL;

	*nmaps = 0;
	for (size_t i = 0; p && p->have_maps && i < p->maps.n; i++) {
		const char *path = p->maps.v[i].path;

		if (path && strlen(path) > 7 && !strcmp(path + strlen(path) - 7, "/lib.so")) {
			if (!*nmaps)
				o = p->objs[i];
			(*nmaps)++;
		}
	}
	return o;
}

struct env {
	struct objcache *objs;
	struct rootfs_roots *roots;
	struct fdlru lru;
	struct proctab t;
};

static int env_init(struct env *e)
{
	memset(e, 0, sizeof(*e));
	fdlru_init(&e->lru, 64);
	e->objs = objcache_new();
	if (!e->objs || rootfs_roots_new(&e->roots, 16))
		return -1;
	objcache_set_lru(e->objs, &e->lru, e->roots);
	return proctab_init(&e->t, e->objs, NULL, "/proc", e->roots, &e->lru);
}

static void env_free(struct env *e)
{
	proctab_free(&e->t);
	objcache_free(e->objs);
	rootfs_roots_free(e->roots);
}

/* @a against a proctab without map_files: the refusal it must cause. */
static void check_attack(const char *name, enum attack a, enum proctab_refusal want)
{
	struct env e;
	struct process *p;
	pid_t pid = attacker(a, 1);
	size_t n = 0;
	double t0;

	if (pid < 0 || env_init(&e)) {
		CHECK(false, name, "no attacker or no table");
		return;
	}
	map_files_caps(false);
	t0 = now();
	p = proctab_get(&e.t, (uint32_t)pid, 1, "attacker", NULL);
	map_files_caps(true);
	CHECK(p && p->have_maps && !lib_object(p, &n) && n == 1 && e.t.st.refused[want] == 1 &&
	      now() - t0 < 2,
	      name, "maps %d, lib %zu, refused %zu (%zu %zu %zu %zu), %.1f s",
	      p ? p->have_maps : -1, n, e.t.st.refused[want], e.t.st.refused[0],
	      e.t.st.refused[1], e.t.st.refused[2], e.t.st.refused[5], now() - t0);
	env_free(&e);
	reap(pid);
}

static void test_attacks(void)
{
	struct env e;
	struct process *p;
	pid_t pid;
	size_t n = 0;

	if (geteuid() != 0 || map_files_caps(false) || map_files_caps(true)) {
		T_SKIP("proctab: hostile paths", "needs root (capabilities to drop)");
		return;
	}
	check_attack("proctab: FIFO at a deleted file's path: refused as deleted, no hang",
		     FIFO_DELETED, REFUSED_DELETED);
	check_attack("proctab: FIFO mounted over the path: refused as no regular file, no hang",
		     FIFO_MOUNTED, REFUSED_NOT_REGULAR);
	check_attack("proctab: a symlink to another file under the path: not the mapped file",
		     HOST_LINK_MOUNTED, REFUSED_NOT_MAPPED);

	/* The same with map_files: the very file mapped, deleted or hidden. */
	pid = attacker(FIFO_MOUNTED, 1);
	if (pid > 0 && !env_init(&e)) {
		p = proctab_get(&e.t, (uint32_t)pid, 1, "attacker", NULL);
		CHECK(lib_object(p, &n) && e.t.st.refused[REFUSED_NOT_REGULAR] == 0 &&
		      e.t.st.by_path == 0,
		      "proctab: with map_files, the hidden mapped file itself", "refused %zu",
		      e.t.st.refused[REFUSED_NOT_REGULAR]);
		env_free(&e);
	}
	if (pid > 0)
		reap(pid);

	/* And without map_files, a plain mapping by its path in the root. */
	pid = attacker(PLAIN, 1);
	if (pid > 0 && !env_init(&e)) {
		map_files_caps(false);
		p = proctab_get(&e.t, (uint32_t)pid, 1, "plain", NULL);
		map_files_caps(true);
		CHECK(lib_object(p, &n) && e.t.st.by_path > 0 && p->root,
		      "proctab: without map_files, a file by its path in the process's root",
		      "by path %zu, root %p", e.t.st.by_path, p ? (void *)p->root : NULL);
		env_free(&e);
	}
	if (pid > 0)
		reap(pid);
}

static void test_many_and_backoff(void)
{
	struct env e;
	struct process *p;
	pid_t pid = attacker(MANY, 3000);
	size_t n = 0, objects;
	double t1;
	int r1, r2, r3;

	if (pid < 0 || env_init(&e)) {
		CHECK(false, "proctab: 3000 mappings of one file", "no attacker");
		return;
	}
	p = proctab_get(&e.t, (uint32_t)pid, 1, "many", NULL);
	objects = objcache_count(e.objs);
	/*
	 * Each file of the process opened once (not once a mapping: the
	 * object cache would close the copies at once, so only the count of
	 * opens shows them), and no descriptor held but the objects' and
	 * its perf map's, if a /tmp/perf-PID.map is there that is its own
	 * (written since it started: test_stale).
	 */
	CHECK(lib_object(p, &n) && n == 3000 && e.t.st.opened == objects &&
	      e.lru.st.peak <= objects + (p->perfmap.fd >= 0),
	      "proctab: 3000 mappings of one file, one object and one open",
	      "%zu mappings, %zu objects, %zu opened, %zu held (perf map %s)", n, objects,
	      e.t.st.opened, e.lru.st.peak, p && p->perfmap.fd >= 0 ? "held" : "none");
	for (int i = 0; i < PROCTAB_REFRESH_FREE; i++)
		r1 = proctab_refresh(&e.t, p, now(), REFRESH_NEW_CODE);
	r2 = proctab_refresh(&e.t, p, now(), REFRESH_NEW_CODE);
	CHECK(r1 == 0 && r2 == -EAGAIN && p->refresh_pending &&
	      e.t.st.refreshes == PROCTAB_REFRESH_FREE && e.t.st.deferred == 1,
	      "proctab: the first re-snapshots as asked, then one within the gap deferred",
	      "%d %d, %zu %zu", r1, r2, e.t.st.refreshes, e.t.st.deferred);
	t1 = now() + PROCTAB_REFRESH_GAP_MIN + 0.1;
	r1 = proctab_refresh(&e.t, p, t1, REFRESH_NEW_CODE);
	r2 = proctab_refresh(&e.t, p, t1 + PROCTAB_REFRESH_GAP_MIN + 0.1, REFRESH_NEW_CODE);
	CHECK(r1 == 0 && r2 == -EAGAIN && p->refresh_gap == 2 * PROCTAB_REFRESH_GAP_MIN,
	      "proctab: after the gap, one more; then the gap doubles", "%d %d, gap %.1f", r1, r2,
	      p->refresh_gap);
	r3 = proctab_refresh(&e.t, p, t1, REFRESH_DEFERRED);
	CHECK(r3 == 0 && !p->refresh_pending && e.t.st.refreshes == PROCTAB_REFRESH_FREE + 2,
	      "proctab: a deferred re-snapshot is taken before writing", "%d", r3);
	r3 = proctab_refresh(&e.t, p, t1, REFRESH_EXEC);
	r1 = proctab_refresh(&e.t, p, t1, REFRESH_NEW_CODE);
	CHECK(r3 == 0 && r1 == 0 && p->refresh_gap == 0,
	      "proctab: an exec starts the backoff afresh", "%d %d, gap %.1f", r3, r1,
	      p->refresh_gap);
	env_free(&e);
	reap(pid);
}

static void test_held(void)
{
	struct env e;
	struct process *p;
	pid_t pid = attacker(PERFMAP, 1);
	char buf[32];
	int fd;

	if (pid < 0 || env_init(&e)) {
		CHECK(false, "proctab: perf map held", "no process");
		return;
	}
	p = proctab_get(&e.t, (uint32_t)pid, 1, "jit", NULL);
	reap(pid);
	unlink(fmt("/tmp/perf-%d.map", (int)pid));
	fd = p ? proctab_perfmap(p, NULL) : -1;
	CHECK(p && p->root && fd >= 0 && pread(fd, buf, 6, 8) == 6 && !memcmp(buf, "jitted", 6),
	      "proctab: a perf map found at first sight outlives the process and its file",
	      "fd %d", fd);
	env_free(&e);
}

static struct timespec realtime(double plus)
{
	struct timespec ts;
	long long ns;

	clock_gettime(CLOCK_REALTIME, &ts);
	ns = ts.tv_sec * 1000000000LL + ts.tv_nsec + (long long)(plus * 1e9);
	return (struct timespec){ .tv_sec = ns / 1000000000LL, .tv_nsec = ns % 1000000000LL };
}

/*
 * A perf map an earlier process of the pid left (CPython's -X perf never
 * removes its own, and pids come round): written before the process
 * started, it names another program's code.  Refused, counted, and taken
 * once the process writes it.
 */
static void test_stale(void)
{
	struct timespec before = realtime(-0.5), times[2];
	struct process *p;
	const char *path;
	struct env e;
	pid_t pid;
	int fd, ret;

	pid = fork();
	if (pid == 0) {
		pause();
		_exit(0);
	}
	if (pid < 0 || env_init(&e)) {
		CHECK(false, "proctab: stale perf map", "no process");
		if (pid > 0)
			reap(pid);
		return;
	}
	path = fmt("/tmp/perf-%d.map", (int)pid);
	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	ret = fd >= 0 && write(fd, "1000 10 jitted\n", 15) == 15 ? 0 : -1;
	if (fd >= 0)
		close(fd);
	/* Last written half a second before the process started. */
	times[0] = times[1] = before;
	ret = ret ? ret : utimensat(AT_FDCWD, path, times, 0);
	p = ret ? NULL : proctab_get(&e.t, (uint32_t)pid, 1, "child", NULL);
	fd = p ? proctab_perfmap(p, NULL) : -1;
	CHECK(p && p->start_time && p->perfmap.fd < 0 && fd == -ESTALE &&
	      e.t.st.perfmap_stale == 1,
	      "proctab: a perf map older than its process is refused and counted",
	      "ret %d, start %llu ns, held %d, fd %d, %zu counted", ret,
	      p ? (unsigned long long)p->start_time : 0ULL, p ? p->perfmap.fd : -2, fd,
	      e.t.st.perfmap_stale);
	/* Written since: to now, given exactly (a touch gets the coarse clock's time). */
	times[0] = times[1] = realtime(0);
	ret = p ? utimensat(AT_FDCWD, path, times, 0) : -1;
	fd = ret ? -1 : proctab_perfmap(p, NULL);
	CHECK(fd >= 0 && p->perfmap.fd == fd && e.t.st.perfmap_stale == 1,
	      "proctab: written again by the process, its perf map is taken at the next look",
	      "ret %d, fd %d, %zu counted", ret, fd, e.t.st.perfmap_stale);
	env_free(&e);
	reap(pid);
	unlink(path);
}

/* The exit event for @path as BPF sends it, for a process of ours: the path leaf first. */
static void exit_event(struct cprof_exit_file *ev, uint32_t pid, const char *path,
		       const struct stat *st)
{
	struct statx root;
	struct stat ns;
	size_t len = strlen(path), w = 0;

	memset(ev, 0, sizeof(*ev));
	ev->type = CPROF_EV_EXIT_FILE;
	ev->pid = pid;
	ev->gen = 1;
	ev->key = (struct cprof_file_key){
		.ino = st->st_ino,
		.size = (uint64_t)st->st_size,
		.mtime_sec = st->st_mtim.tv_sec,
		.mtime_nsec = (uint32_t)st->st_mtim.tv_nsec,
		.dev = major(st->st_dev) << 20 | minor(st->st_dev),
	};
	if (!statx(AT_FDCWD, "/", 0, STATX_INO | STATX_MNT_ID, &root)) {
		ev->root_ino = root.stx_ino;
		ev->root_dev = root.stx_dev_major << 20 | root.stx_dev_minor;
		ev->root_mnt = (uint32_t)root.stx_mnt_id;
	}
	if (!stat("/proc/self/ns/mnt", &ns))
		ev->mnt_ns = (uint32_t)ns.st_ino;
	/* components from the last back: "c\0b\0a\0" for /a/b/c */
	while (len) {
		size_t start = len;

		while (start && path[start - 1] != '/')
			start--;
		memcpy(ev->path + w, path + start, len - start);
		w += len - start;
		ev->path[w++] = '\0';
		len = start ? start - 1 : 0;
	}
	ev->len = (uint32_t)w;
}

/*
 * A process gone before it was read, named from its exit record: its file
 * opened by the exit event's path only as the very file, in our root.
 */
static void test_exit_files(void)
{
	const char *lib = fmt("%s/exitlib", tmp), *link = fmt("%s/exitlink", tmp);
	struct cprof_exit_maps rec = { .type = CPROF_EV_EXIT_MAPS, .gen = 1, .n = 1 };
	struct cprof_exit_file ev;
	struct process *p, *q;
	struct env e;
	struct stat st;
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	reap(pid);
	sh(fmt("cp /proc/%d/exe '%s' && ln -s '%s' '%s'", (int)getpid(), lib, lib, link));
	if (pid < 0 || stat(lib, &st) || env_init(&e)) {
		CHECK(false, "proctab: exit files", "no fixture");
		return;
	}
	p = proctab_get(&e.t, (uint32_t)pid, 1, "gone", NULL);
	exit_event(&ev, (uint32_t)pid, lib, &st);
	rec.pid = (uint32_t)pid;
	rec.m[0] = (struct cprof_exit_map){ .start = 0x400000, .end = 0x401000, .key = ev.key };
	snprintf(rec.m[0].name, sizeof(rec.m[0].name), "exitlib");
	proctab_exit_maps(&e.t, &rec);
	CHECK(p && p->have_maps && p->maps.n == 1 && !p->objs[0] && e.t.st.exit_unknown == 1,
	      "proctab: exit files: the record names a file no object held", "unknown %zu",
	      e.t.st.exit_unknown);

	ev.mnt_ns ^= 1;
	q = proctab_exit_file(&e.t, &ev);
	CHECK(!q && e.t.st.exit_other_root == 1 && e.t.st.exit_opened == 0,
	      "proctab: exit files: another mount namespace is not looked into", "other %zu",
	      e.t.st.exit_other_root);
	exit_event(&ev, (uint32_t)pid, lib, &st);
	ev.root_ino++;
	q = proctab_exit_file(&e.t, &ev);
	CHECK(!q && e.t.st.exit_other_root == 2, "proctab: exit files: another root either",
	      "other %zu", e.t.st.exit_other_root);

	exit_event(&ev, (uint32_t)pid, link, &st);
	q = proctab_exit_file(&e.t, &ev);
	CHECK(!q && e.t.st.exit_refused == 1, "proctab: exit files: a symlink at the path is not followed",
	      "refused %zu", e.t.st.exit_refused);
	exit_event(&ev, (uint32_t)pid, lib, &st);
	ev.key.size++;
	q = proctab_exit_file(&e.t, &ev);
	exit_event(&ev, (uint32_t)pid, lib, &st);
	ev.len = 0;
	q = q ? q : proctab_exit_file(&e.t, &ev);
	CHECK(!q && e.t.st.exit_refused == 3 && !p->objs[0],
	      "proctab: exit files: another size, or no path, is refused", "refused %zu",
	      e.t.st.exit_refused);

	exit_event(&ev, (uint32_t)pid, lib, &st);
	q = proctab_exit_file(&e.t, &ev);
	CHECK(q == p && p->objs[0] && e.t.st.exit_opened == 1 && p->obj_errors == 0,
	      "proctab: exit files: the very file, by its path in our root, fills the record",
	      "opened %zu, object %p", e.t.st.exit_opened, p ? (void *)p->objs[0] : NULL);
	q = proctab_exit_file(&e.t, &ev);
	CHECK(!q && e.t.st.exit_opened == 1, "proctab: exit files: a file filled already is not reopened",
	      "opened %zu", e.t.st.exit_opened);
	env_free(&e);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	T_PLAN(20);
	if (!temp_dir(tmp, sizeof(tmp), "proctab")) {
		CHECK(false, "proctab: temp dir", "see above");
		return T_EXIT();
	}
	test_attacks();
	test_many_and_backoff();
	test_held();
	test_stale();
	test_exit_files();
	sh(fmt("rm -rf '%s'", tmp));
	return T_EXIT();
}
