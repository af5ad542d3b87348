// SPDX-License-Identifier: MIT
/*
 * debugfile: the separate debug file of an object.  See debugfile.h.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "elf/debugfile.h"
#include "fs/rootfs.h"
#include "util/hexnum.h"

#define LINK_BYTES 4096u  /* .gnu_debuglink examined */
#define CRC_CHUNK  65536u

/* What a candidate must match: a build ID, or a link's CRC. */
struct want {
	const uint8_t *id;
	size_t idlen;
	const uint32_t *crc;
};

/* zlib's crc32 is the CRC-32 that .gnu_debuglink records. */
static bool crc_matches(const struct elfsrc *s, uint32_t want)
{
	uint8_t *buf = malloc(CRC_CHUNK);
	uLong crc = crc32(0L, Z_NULL, 0);
	bool ok = buf != NULL;

	for (uint64_t off = 0; ok && off < s->size;) {
		size_t n = s->size - off < CRC_CHUNK ? (size_t)(s->size - off) : CRC_CHUNK;

		ok = elfsrc_read(s, off, buf, n) == 0;
		crc = crc32(crc, buf, (uInt)n);
		off += n;
	}
	free(buf);
	return ok && (uint32_t)crc == want;
}

/*
 * Takes @fd (from a confined open, or its -errno) and returns it when the
 * file is a debug file matching @w that @accept keeps; else closes it.
 */
static int try_fd(int fd, const struct want *w, debugfile_accept_fn accept, void *ctx)
{
	struct elfsrc s;
	Elf *e = NULL;
	bool ok;

	if (fd < 0)
		return -ENOENT;
	ok = !elfsrc_from_fd(&s, fd) && s.size <= DEBUGFILE_MAX &&
	     !elfsrc_begin(&s, EM_NONE, ELFSRC_SECTIONS, &e, NULL);
	if (ok && w->crc)
		ok = crc_matches(&s, *w->crc);
	if (ok && w->id) {
		uint8_t id[ELFSRC_BUILD_ID_MAX];
		size_t n = elfsrc_build_id(e, &s, true, id);

		ok = n == w->idlen && !memcmp(id, w->id, n);
	}
	ok = ok && accept(&s, e, ctx);
	if (e)
		elf_end(e);
	if (ok)
		return fd;
	close(fd);
	return -ENOENT;
}

static bool build_id_path(char *buf, size_t len, const char *root, const uint8_t *id,
			  size_t idlen)
{
	size_t n;

	if (!root || !*root || idlen < 2 || idlen > ELFSRC_BUILD_ID_MAX)
		return false;
	/* <root>/.build-id/, the first byte's digits and '/', the rest's, ".debug" */
	n = (size_t)snprintf(buf, len, "%s/.build-id/", root);
	if (n + 3 + 2 * idlen + sizeof(".debug") > len)
		return false;
	hexnum_write(buf + n, id, 1);
	buf[n + 2] = '/';
	hexnum_write(buf + n + 3, id + 1, idlen - 1);
	memcpy(buf + n + 1 + 2 * idlen, ".debug", sizeof(".debug"));
	return true;
}

/* The object's .gnu_debuglink: a bare file name and the CRC of its target. */
static bool read_link(const struct elfsrc *s, char *name, size_t name_len, uint32_t *crc)
{
	struct elfsrc_walk w;
	struct elfsrc_scn c;
	char buf[LINK_BYTES];
	size_t len, nlen, crc_off;
	const char *nul;
	bool found = false;
	Elf *e;

	if (elfsrc_begin(s, EM_NONE, 0, &e, NULL))
		return false;
	elfsrc_walk_init(&w, e, s);
	while (!found && elfsrc_walk_next(&w, &c))
		found = c.sh.sh_type == SHT_PROGBITS && !strcmp(c.name, ".gnu_debuglink");
	elf_end(e);
	if (!found)
		return false;
	len = (size_t)elfsrc_avail(s, c.sh.sh_offset, c.sh.sh_size < LINK_BYTES ? c.sh.sh_size
									     : LINK_BYTES);
	if (!len || elfsrc_read(s, c.sh.sh_offset, buf, len))
		return false;
	nul = memchr(buf, 0, len);
	if (!nul || nul == buf)
		return false;
	nlen = (size_t)(nul - buf);
	crc_off = (nlen + 1 + 3) & ~(size_t)3;
	if (crc_off > len || len - crc_off < 4 || nlen >= name_len)
		return false;
	memcpy(name, buf, nlen + 1);
	memcpy(crc, buf + crc_off, 4);
	/* A path would let the link escape the directories we search. */
	return !strchr(name, '/') && strcmp(name, ".") && strcmp(name, "..");
}

int debugfile_find(const struct debugfile_query *q, debugfile_accept_fn accept, void *ctx)
{
	const char *root = q->debug_root, *slash;
	char path[PATH_MAX], name[256];
	uint32_t crc;
	struct want w = { .id = q->build_id, .idlen = q->build_id_len };
	int fd, dirlen;

	if (build_id_path(path, sizeof(path), root, q->build_id, q->build_id_len)) {
		fd = try_fd(rootfs_open_host(path), &w, accept, ctx);
		if (fd >= 0)
			return fd;
	}
	if (!q->obj || !q->path || !(slash = strrchr(q->path, '/')) ||
	    !read_link(q->obj, name, sizeof(name), &crc))
		return -ENOENT;
	w = (struct want){ .crc = &crc };
	dirlen = (int)(slash - q->path);
	if ((size_t)snprintf(path, sizeof(path), "%.*s/%s", dirlen, q->path, name) < sizeof(path) &&
	    (fd = try_fd(rootfs_openat(q->root_fd, path), &w, accept, ctx)) >= 0)
		return fd;
	if ((size_t)snprintf(path, sizeof(path), "%.*s/.debug/%s", dirlen, q->path, name) <
		    sizeof(path) &&
	    (fd = try_fd(rootfs_openat(q->root_fd, path), &w, accept, ctx)) >= 0)
		return fd;
	if (root && *root &&
	    (size_t)snprintf(path, sizeof(path), "%s%.*s/%s", root, dirlen, q->path, name) <
		    sizeof(path) &&
	    (fd = try_fd(rootfs_open_host(path), &w, accept, ctx)) >= 0)
		return fd;
	return -ENOENT;
}
