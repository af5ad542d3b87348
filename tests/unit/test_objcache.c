// SPDX-License-Identifier: MIT
/*
 * Tests for objcache's identity of files (never a build ID alone: a forged
 * one gets its own object; identical root-owned copies share one) and for
 * the global bound on descriptors (fdlru): evicted files are reopened
 * through their sources, map_files or the path in the process's root, and
 * only when they are still the same file.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs/fdlru.h"
#include "elf/objcache.h"
#include "fs/rootfs.h"
#include "testlib.h"
#include "testutil.h"

static char tmp[PATH_MAX - 64];

/* --- fdlru ------------------------------------------------------------------ */

struct holder {
	struct fdlru_node node;
	bool open;
};

static void holder_evict(struct fdlru_node *n)
{
	((struct holder *)n)->open = false;
}

static void test_fdlru(void)
{
	struct holder h[4] = { 0 };
	struct fdlru l;

	fdlru_init(&l, 2);
	for (int i = 0; i < 4; i++)
		h[i].node.evict = holder_evict;
	h[0].open = h[1].open = true;
	fdlru_hold(&l, &h[0].node);
	fdlru_hold(&l, &h[1].node);
	CHECK(l.st.held == 2 && l.st.evicted == 0 && h[0].open && h[1].open,
	      "fdlru: within the bound nothing is closed", "held %zu, evicted %zu", l.st.held,
	      l.st.evicted);
	fdlru_touch(&l, &h[0].node); /* now 1 is the least recently used */
	h[2].open = true;
	fdlru_hold(&l, &h[2].node);
	CHECK(l.st.held == 2 && l.st.evicted == 1 && h[0].open && !h[1].open && h[2].open &&
	      !fdlru_holds(&h[1].node),
	      "fdlru: beyond the bound the least recently used is closed",
	      "open %d %d %d, evicted %zu", h[0].open, h[1].open, h[2].open, l.st.evicted);
	fdlru_drop(&l, &h[0].node);
	h[0].open = false;
	h[3].open = true;
	fdlru_hold(&l, &h[3].node);
	CHECK(l.st.held == 2 && l.st.evicted == 1 && h[2].open && h[3].open && l.st.peak == 2,
	      "fdlru: a dropped node frees its place", "held %zu, evicted %zu", l.st.held,
	      l.st.evicted);
	fdlru_hold(&l, &h[3].node); /* again: a touch, not a second place */
	CHECK(l.st.held == 2 && h[2].open, "fdlru: holding twice counts once", "held %zu",
	      l.st.held);

	fdlru_init(&l, 0);
	for (int i = 0; i < 4; i++) {
		h[i] = (struct holder){ .node.evict = holder_evict, .open = true };
		fdlru_hold(&l, &h[i].node);
	}
	CHECK(l.st.held == 4 && l.st.evicted == 0, "fdlru: no bound, nothing closed", "held %zu",
	      l.st.held);
}

/* --- identity --------------------------------------------------------------- */

static int get(struct objcache *c, const char *path, struct elfobj **o)
{
	struct errbuf err = { "" };
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	*o = NULL;
	if (fd < 0)
		return -errno;
	return objcache_get(c, fd, o, &err);
}

/* A copy of @src at @dst whose build ID bytes are replaced by @id's. */
static bool forge(const char *src, const char *dst, const uint8_t *old, const uint8_t *id,
		  size_t len)
{
	size_t n;
	uint8_t *b = slurp(src, &n), *at;
	bool ok;

	at = b ? memmem(b, n, old, len) : NULL;
	if (at)
		memcpy(at, id, len);
	ok = at && spit(dst, b, n);
	free(b);
	return ok && chmod(dst, 0755) == 0;
}

static void test_identity(void)
{
	struct objcache *c = objcache_new();
	struct elfobj *ls, *ls2, *copy, *forged, *sort, *gw, *gwcopy;
	struct objcache_stats st;
	const uint8_t *id_ls, *id_sort;
	size_t n_ls, n_sort;
	int rc;

	if (!c) {
		CHECK(false, "objcache: new", "out of memory");
		return;
	}
	rc = get(c, "/usr/bin/ls", &ls) | get(c, "/usr/bin/ls", &ls2) |
	     get(c, "/usr/bin/sort", &sort);
	if (access("/usr/bin/ls", R_OK) || access("/usr/bin/sort", R_OK)) {
		T_SKIP("objcache: identity", "/usr/bin/ls or sort unreadable");
		objcache_free(c);
		return;
	}
	/* readable files the cache cannot give: the product failing */
	if (rc || !ls || !sort) {
		CHECK(false, "objcache: identity", "get failed on readable files (rc %d)", rc);
		objcache_free(c);
		return;
	}
	CHECK(ls == ls2 && objcache_count(c) == 2, "objcache: one file, one object",
	      "%p %p, %zu objects", (void *)ls, (void *)ls2, objcache_count(c));
	{
		/* by identity alone (an exit record's): the same file only */
		struct stat sb;
		struct objcache_file_id id = { 0 };
		struct elfobj *found = NULL, *other;

		if (stat("/usr/bin/ls", &sb) == 0) {
			id = (struct objcache_file_id){ sb.st_dev, sb.st_ino, (uint64_t)sb.st_size,
							sb.st_mtim.tv_sec, sb.st_mtim.tv_nsec };
			found = objcache_find(c, &id);
		}
		id.mtime_nsec ^= 1; /* rewritten since: not the object read */
		other = objcache_find(c, &id);
		CHECK(found == ls && !other, "objcache: found by identity, not by a near one",
		      "%s, %s", found == ls ? "ls" : "not ls", other ? "found a near one" : "none");
		if (found)
			objcache_put(c, found);
	}
	id_ls = elfobj_build_id_raw(ls, &n_ls);
	id_sort = elfobj_build_id_raw(sort, &n_sort);
	if (n_ls != n_sort || !n_ls) {
		T_SKIP("objcache: identity", "ls and sort need build IDs of one length");
		goto out;
	}

	/* A copy with the same bytes: shared, once compared. */
	if (sh(fmt("cp /usr/bin/ls '%s/ls.copy' && chmod 0755 '%s/ls.copy'", tmp, tmp)) == 0 &&
	    get(c, fmt("%s/ls.copy", tmp), &copy) == 0) {
		objcache_get_stats(c, &st);
		CHECK(copy == ls && st.compared == 1 && st.shared == 1,
		      "objcache: an identical copy of a root-owned file shares its object",
		      "%s, compared %zu, shared %zu", copy == ls ? "same" : "another",
		      st.compared, st.shared);
		objcache_put(c, copy);
	}

	/* sort's bytes under ls's build ID: never ls's object. */
	if (!forge("/usr/bin/sort", fmt("%s/forged", tmp), id_sort, id_ls, n_ls)) {
		CHECK(false, "objcache: forged build ID fixture", "could not write it");
		goto out;
	}
	rc = get(c, fmt("%s/forged", tmp), &forged);
	objcache_get_stats(c, &st);
	CHECK(rc == 0 && forged && forged != ls && forged != sort &&
	      !strcmp(elfobj_build_id(forged), elfobj_build_id(ls)) && st.shared == 1,
	      "objcache: another file with the same build ID gets its own object",
	      "rc %d, %s, shared %zu", rc, forged == ls ? "ls's object" : "its own", st.shared);
	objcache_put(c, forged);

	/* ls's size and build ID, one byte of its code changed: compared, apart. */
	{
		size_t n;
		uint8_t *b = slurp("/usr/bin/ls", &n);
		struct elfobj *patched = NULL;
		size_t compared;

		objcache_get_stats(c, &st);
		compared = st.compared;
		if (b) {
			b[n / 2] ^= 0xff;
			spit(fmt("%s/ls.patched", tmp), b, n);
			chmod(fmt("%s/ls.patched", tmp), 0755);
		}
		free(b);
		rc = get(c, fmt("%s/ls.patched", tmp), &patched);
		objcache_get_stats(c, &st);
		CHECK(rc == 0 && patched && patched != ls && st.compared == compared + 1 &&
		      st.shared == 1,
		      "objcache: same size and build ID, other bytes: compared, not shared",
		      "rc %d, %s, compared %zu", rc, patched == ls ? "ls's object" : "its own",
		      st.compared - compared);
		objcache_put(c, patched);
	}

	/*
	 * Only a file no user can change is read for others: a group-writable
	 * one first seen is no candidate, its identical copy gets its own.
	 */
	if (sh(fmt("cp /usr/bin/sort '%s/gw' && chmod 0775 '%s/gw' && cp /usr/bin/sort '%s/gw2'",
		   tmp, tmp, tmp)) == 0) {
		struct objcache *c2 = objcache_new();

		if (c2 && get(c2, fmt("%s/gw", tmp), &gw) == 0 &&
		    get(c2, fmt("%s/gw2", tmp), &gwcopy) == 0) {
			objcache_get_stats(c2, &st);
			CHECK(gw != gwcopy && st.compared == 0,
			      "objcache: a copy of a file others can write is not shared",
			      "%s, compared %zu", gw == gwcopy ? "shared" : "apart", st.compared);
		}
		objcache_free(c2);
	}
out:
	objcache_put(c, ls);
	objcache_put(c, ls2);
	objcache_put(c, sort);
	CHECK(objcache_count(c) == 0, "objcache: empty after every put", "%zu objects",
	      objcache_count(c));
	objcache_free(c);
}

/* --- the descriptor bound ------------------------------------------------------ */

static void test_bound(void)
{
	struct objcache *c = objcache_new();
	struct rootfs_roots *roots = NULL;
	struct rootfs_root *self_root = NULL;
	struct elfobj *o[3] = { 0 };
	struct objcache_stats st;
	struct fdlru lru;
	const void *img;
	size_t len, maplen = 0;
	void *map = MAP_FAILED;
	int piddir, fd;

	fdlru_init(&lru, 2);
	piddir = open("/proc/self", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (!c || rootfs_roots_new(&roots, 4) || rootfs_root_get(roots, piddir, &self_root, NULL)) {
		CHECK(false, "objcache bound: setup", "no cache or root");
		goto out;
	}
	objcache_set_lru(c, &lru, roots);
	if (sh(fmt("cp /usr/bin/ls '%s/a' && cp /usr/bin/sort '%s/b' && cp /usr/bin/cat '%s/m'",
		   tmp, tmp, tmp))) {
		CHECK(false, "objcache bound: fixtures", "cp failed");
		goto out;
	}
	/* a and b: found by their path in our root; m: mapped here, then deleted. */
	for (int i = 0; i < 2; i++) {
		const char *path = fmt("%s/%c", tmp, "ab"[i]);

		if (get(c, path, &o[i]))
			goto out;
		objcache_add_source(c, o[i], &(struct objcache_source){ .root = self_root,
									.path = path });
	}
	fd = open(fmt("%s/m", tmp), O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		struct stat sb;

		if (fstat(fd, &sb) == 0) {
			maplen = (size_t)sb.st_size;
			map = mmap(NULL, maplen, PROT_READ, MAP_PRIVATE, fd, 0);
		}
		if (map == MAP_FAILED || objcache_get(c, fd, &o[2], NULL)) {
			CHECK(false, "objcache bound: a mapped file", "mmap or parse failed");
			goto out;
		}
		unlink(fmt("%s/m", tmp));
		maplen = (maplen + 4095) & ~(size_t)4095;
		objcache_add_source(c, o[2], &(struct objcache_source){
						      .pid = (uint32_t)getpid(),
						      .start = (uint64_t)(uintptr_t)map,
						      .end = (uint64_t)(uintptr_t)map + maplen });
	}
	CHECK(lru.st.held == 2 && lru.st.evicted == 1, "objcache bound: the third file closes the first",
	      "held %zu, evicted %zu", lru.st.held, lru.st.evicted);

	/* a is reopened through its path, closing b. */
	elfobj_source(o[0], &fd, &img, &len);
	objcache_get_stats(c, &st);
	CHECK(fd >= 0 && st.reopened == 1 && lru.st.held == 2 && lru.st.evicted == 2,
	      "objcache bound: a closed file is reopened by its path in the root",
	      "fd %d, reopened %zu, evicted %zu", fd, st.reopened, lru.st.evicted);

	/* m, deleted, only through map_files (needs CAP_SYS_ADMIN). */
	elfobj_source(o[1], &fd, &img, &len); /* closes m */
	elfobj_source(o[0], &fd, &img, &len); /* ... and keeps a recent */
	elfobj_source(o[2], &fd, &img, &len);
	objcache_get_stats(c, &st);
	if (geteuid() == 0)
		CHECK(fd >= 0 && st.reopen_failed == 0,
		      "objcache bound: a deleted mapped file is reopened through map_files",
		      "fd %d, failed %zu", fd, st.reopen_failed);
	else
		T_SKIP("objcache bound: a deleted mapped file is reopened through map_files",
		       "needs root");

	/* b replaced at its path: another file, not reopened. */
	elfobj_source(o[0], &fd, &img, &len); /* b is the oldest: closed */
	if (sh(fmt("cp /usr/bin/sort '%s/b.new' && mv '%s/b.new' '%s/b'", tmp, tmp, tmp)) == 0) {
		size_t failed = st.reopen_failed;

		elfobj_source(o[1], &fd, &img, &len);
		objcache_get_stats(c, &st);
		CHECK(fd < 0 && !img && st.reopen_failed == failed + 1,
		      "objcache bound: a file replaced at its path is not taken for it",
		      "fd %d, failed %zu", fd, st.reopen_failed);
	}
out:
	for (int i = 0; i < 3; i++)
		objcache_put(c, o[i]);
	CHECK(lru.st.held == 0, "objcache bound: freed objects leave the list", "held %zu",
	      lru.st.held);
	if (map != MAP_FAILED)
		munmap(map, maplen);
	rootfs_root_put(roots, self_root);
	objcache_free(c);
	rootfs_roots_free(roots);
	if (piddir >= 0)
		close(piddir);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	T_PLAN(17);
	if (!temp_dir(tmp, sizeof(tmp), "objcache")) {
		CHECK(false, "objcache: temp dir", "see above");
		return T_EXIT();
	}
	test_fdlru();
	test_identity();
	test_bound();
	sh(fmt("rm -rf '%s'", tmp));
	return T_EXIT();
}
