// SPDX-License-Identifier: MIT
/*
 * Tests for debugfile, the one finder of separate debug files: candidates
 * come in gdb's order (build ID, then .gnu_debuglink next to the object,
 * in its .debug/, under the debug root), a candidate must carry the
 * object's build ID or match the link's CRC before the caller sees it,
 * and a link is followed only inside the process's root.  Files are made
 * with synth_elf.h; candidates are told apart by inode.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "elf/debugfile.h"
#include "fuzz/synth_elf.h"
#include "testlib.h"
#include "testutil.h"

static char tmp[1024];
static const uint8_t id[20] = "0123456789abcdefghi";
static const uint8_t other_id[20] = "XXXXXXXXXXXXXXXXXXX";

/* An image with the GNU build ID @bid in a note section, and a .gnu_debuglink when @link. */
static uint8_t *image(const uint8_t *bid, const char *link, uint32_t crc, size_t *len)
{
	uint8_t note[40], dl[64] = { 0 };
	uint32_t h[3] = { 4, 20, NT_GNU_BUILD_ID };
	struct synth s;

	memcpy(note, h, sizeof(h));
	memcpy(note + 12, "GNU", 4);
	memcpy(note + 16, bid, 20);
	synth_init(&s, ET_DYN);
	synth_section(&s, ".note.gnu.build-id", &(Elf64_Shdr){
		.sh_type = SHT_NOTE, .sh_offset = synth_blob(&s, note, 36, 4), .sh_size = 36,
		.sh_addralign = 4 });
	if (link) {
		size_t n = strlen(link), crc_off = (n + 1 + 3) & ~(size_t)3;

		memcpy(dl, link, n);
		memcpy(dl + crc_off, &crc, 4);
		synth_section(&s, ".gnu_debuglink", &(Elf64_Shdr){
			.sh_type = SHT_PROGBITS, .sh_offset = synth_blob(&s, dl, crc_off + 4, 4),
			.sh_size = crc_off + 4, .sh_addralign = 4 });
	}
	return synth_finish(&s, len);
}

/* What accept() saw: candidates' inodes in order; it keeps the @keep-th (1-based; 0: none). */
struct seen {
	ino_t ino[8];
	size_t n, keep;
};

static bool accept(const struct elfsrc *s, Elf *e, void *ctx)
{
	struct seen *v = ctx;
	struct stat st;

	(void)e;
	if (v->n < 8 && !fstat(s->fd, &st))
		v->ino[v->n] = st.st_ino;
	return ++v->n == v->keep;
}

static ino_t ino_of(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : st.st_ino;
}

struct fixture {
	char obj[PATH_MAX], root[PATH_MAX];
	char by_id[PATH_MAX], next[PATH_MAX], dotdebug[PATH_MAX], under_root[PATH_MAX];
	uint8_t *img;
	size_t len;
	struct elfsrc src;
};

/* Writes @bytes to @path, making its directories. */
static bool put(const char *path, const void *bytes, size_t len)
{
	return !sh(fmt("mkdir -p \"$(dirname '%s')\"", path)) && spit(path, bytes, len);
}

/* The object at <tmp>/lib/obj.so linking to obj.debug, and that debug file in all four places. */
static bool make_fixture(struct fixture *f, const char *link)
{
	size_t dlen, n;
	uint8_t *dbg = image(id, NULL, 0, &dlen);
	bool ok;

	snprintf(f->obj, sizeof(f->obj), "%s/lib/obj.so", tmp);
	snprintf(f->root, sizeof(f->root), "%s/debug", tmp);
	n = (size_t)snprintf(f->by_id, sizeof(f->by_id), "%s/.build-id/%02x/", f->root, id[0]);
	for (size_t i = 1; i < sizeof(id); i++)
		n += (size_t)snprintf(f->by_id + n, sizeof(f->by_id) - n, "%02x", id[i]);
	snprintf(f->by_id + n, sizeof(f->by_id) - n, ".debug");
	snprintf(f->next, sizeof(f->next), "%s/lib/obj.debug", tmp);
	snprintf(f->dotdebug, sizeof(f->dotdebug), "%s/lib/.debug/obj.debug", tmp);
	snprintf(f->under_root, sizeof(f->under_root), "%s/debug%s/lib/obj.debug", tmp, tmp);
	f->img = dbg ? image(id, link, (uint32_t)crc32(0, dbg, (uInt)dlen), &f->len) : NULL;
	ok = f->img && put(f->obj, f->img, f->len) && put(f->by_id, dbg, dlen) &&
	     put(f->next, dbg, dlen) && put(f->dotdebug, dbg, dlen) &&
	     put(f->under_root, dbg, dlen);
	f->src = elfsrc_from_mem(f->img, f->len);
	free(dbg);
	return ok;
}

static int find(const struct fixture *f, const char *path, int root_fd, struct seen *v)
{
	struct debugfile_query q = {
		.debug_root = f->root, .build_id = id, .build_id_len = sizeof(id),
		.obj = &f->src, .path = path, .root_fd = root_fd,
	};
	int fd = debugfile_find(&q, accept, v);

	if (fd >= 0)
		close(fd);
	return fd;
}

static void test_order(int hostroot)
{
	struct fixture f;
	struct seen v = { .keep = 0 };
	size_t dlen;
	uint8_t *bad;
	int fd;

	if (!make_fixture(&f, "obj.debug")) {
		CHECK(false, "order: fixture", "cannot write it under %s", tmp);
		free(f.img);
		return;
	}
	fd = find(&f, f.obj, hostroot, &v);
	CHECK(fd == -ENOENT && v.n == 4 && v.ino[0] == ino_of(f.by_id) &&
		      v.ino[1] == ino_of(f.next) && v.ino[2] == ino_of(f.dotdebug) &&
		      v.ino[3] == ino_of(f.under_root),
	      "order: build ID, next to the object, its .debug/, under the debug root (gdb's)",
	      "fd %d, %zu candidates", fd, v.n);

	v = (struct seen){ .keep = 1 };
	fd = find(&f, f.obj, hostroot, &v);
	CHECK(fd >= 0 && v.n == 1 && v.ino[0] == ino_of(f.by_id),
	      "order: the first candidate kept is the one returned", "fd %d, %zu", fd, v.n);

	/* The build-ID path holding another object's debug file, and a CRC that fails. */
	bad = image(other_id, NULL, 0, &dlen);
	put(f.by_id, bad, dlen);
	free(bad);
	bad = image(id, "changed", 0, &dlen);
	put(f.next, bad, dlen);
	free(bad);
	v = (struct seen){ .keep = 0 };
	fd = find(&f, f.obj, hostroot, &v);
	CHECK(fd == -ENOENT && v.n == 2 && v.ino[0] == ino_of(f.dotdebug) &&
		      v.ino[1] == ino_of(f.under_root),
	      "checks: another build ID, or a CRC that differs: never offered", "fd %d, %zu",
	      fd, v.n);

	/* Without the object's path or root, only the build-ID path and the debug root. */
	v = (struct seen){ .keep = 0 };
	fd = find(&f, NULL, hostroot, &v);
	CHECK(fd == -ENOENT && v.n == 0, "checks: no path: no link followed", "%zu", v.n);
	v = (struct seen){ .keep = 0 };
	fd = find(&f, f.obj, 0, &v);
	CHECK(fd == -ENOENT && v.n == 1 && v.ino[0] == ino_of(f.under_root),
	      "checks: no root: the link only under the debug root", "%zu", v.n);
	free(f.img);

	/* A link naming a path is not followed: it could lead anywhere. */
	sh(fmt("rm -rf '%s/lib' '%s/debug'", tmp, tmp));
	if (make_fixture(&f, "../lib/obj.debug")) {
		v = (struct seen){ .keep = 0 };
		sh(fmt("rm -f '%s'", f.by_id));
		fd = find(&f, f.obj, hostroot, &v);
		CHECK(fd == -ENOENT && v.n == 0, "checks: a link with a '/' is not followed",
		      "%zu candidates", v.n);
	}
	free(f.img);
	sh(fmt("rm -rf '%s/lib' '%s/debug'", tmp, tmp));
}

static void test_confined(void)
{
	struct fixture f;
	struct seen v = { .keep = 1 };
	char croot[PATH_MAX];
	int root_fd, fd;

	snprintf(croot, sizeof(croot), "%s/container", tmp);
	if (!make_fixture(&f, "obj.debug") ||
	    sh(fmt("mkdir -p '%s/lib/.debug' && ln -s '%s' '%s/lib/obj.debug' && "
		   "cp '%s' '%s/lib/.debug/obj.debug' && rm -f '%s'",
		   croot, f.next, croot, f.dotdebug, croot, f.by_id)) ||
	    (root_fd = open(croot, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0) {
		CHECK(false, "confined: fixture", "cannot make %s", croot);
		free(f.img);
		return;
	}
	/* The process sees its object at /lib/obj.so inside its root. */
	fd = find(&f, "/lib/obj.so", root_fd, &v);
	CHECK(fd >= 0 && v.n == 1 && v.ino[0] == ino_of(fmt("%s/lib/.debug/obj.debug", croot)),
	      "confined: a link planted to a host file is not followed; the root's own file is",
	      "fd %d, %zu candidates", fd, v.n);
	close(root_fd);

	/* A FIFO at the build-ID path: refused at once, never blocking. */
	sh(fmt("mkdir -p \"$(dirname '%s')\" && mkfifo '%s'", f.by_id, f.by_id));
	v = (struct seen){ .keep = 0 };
	fd = find(&f, NULL, -1, &v);
	CHECK(fd == -ENOENT && v.n == 0, "confined: a FIFO where a debug file should be: refused",
	      "fd %d", fd);
	free(f.img);
}

int main(void)
{
	int hostroot = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);

	T_PLAN(8);
	if (!temp_dir(tmp, sizeof(tmp), "debugfile") || hostroot < 0) {
		CHECK(false, "debugfile: temporary directory", "cannot make one");
		return T_EXIT();
	}
	test_order(hostroot);
	test_confined();
	close(hostroot);
	sh(fmt("rm -rf '%s'", tmp));
	return T_EXIT();
}
