// SPDX-License-Identifier: MIT
/* gzbatch: gzip files published together (see gzbatch.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/grow.h"
#include "output/gzbatch.h"
#include "output/gzfile_internal.h"

struct gzbatch {
	int dirfd;
	size_t n, cap;
	struct {
		char name[NAME_MAX + 1];
		char tmp[NAME_MAX + 1];
		struct gzfile_owner *owner;
		uint64_t dev, ino;
	} *files;
};

int gzbatch_new(struct gzbatch **out, int dirfd)
{
	struct gzbatch *b = calloc(1, sizeof(*b));

	*out = b;
	if (!b)
		return -ENOMEM;
	b->dirfd = dirfd;
	return 0;
}

int gzbatch_add(struct gzbatch *b, struct gzfile *f, struct errbuf *err)
{
	if (!f || !b)
		return errf(err, -EINVAL, "gzbatch_add: no file or batch");
	if (f->err || gzfile_finish(f))
		goto fail;
	if (grow((void **)&b->files, &b->cap, b->n, sizeof(*b->files), 64, GROW_NO_MAX)) {
		gzfile_set_error(f, -ENOMEM, "queueing");
		goto fail;
	}
	if (gzfile_close_tmp(f) < 0) {
		gzfile_set_error(f, -errno, "close");
		goto fail;
	}
	memcpy(b->files[b->n].name, f->name, sizeof(f->name));
	memcpy(b->files[b->n].tmp, f->tmp, sizeof(f->tmp));
	b->files[b->n].owner = f->owner;
	b->files[b->n].dev = f->dev;
	b->files[b->n].ino = f->ino;
	b->n++;
	gzfile_free(f);
	return 0;
fail:
	return gzfile_fail(f, err);
}

int gzbatch_publish(struct gzbatch *b, struct errbuf *err)
{
	int ret = 0, published = 0;

	if (!b)
		return 0;
	/* The data must be on disk before the names point at it. */
	if (b->n && syncfs(b->dirfd) < 0) {
		ret = errf(err, -errno, "syncing %zu new profiles: %s", b->n, strerror(errno));
		for (size_t i = 0; i < b->n; i++)
			unlinkat(b->dirfd, b->files[i].tmp, 0);
		goto out;
	}
	for (size_t i = 0; i < b->n; i++) {
		if (renameat(b->dirfd, b->files[i].tmp, b->dirfd, b->files[i].name) < 0) {
			if (!ret)
				ret = errf(err, -errno, "%s: rename: %s", b->files[i].name,
					   strerror(errno));
			unlinkat(b->dirfd, b->files[i].tmp, 0);
			continue;
		}
		gzfile_tell_owner(b->files[i].owner, b->files[i].name, b->files[i].dev,
				  b->files[i].ino);
		published++;
	}
	/* The renames too; EINVAL: the filesystem cannot sync directories. */
	if (published && fsync(b->dirfd) < 0 && errno != EINVAL && !ret)
		ret = errf(err, -errno, "fsync of the output directory: %s", strerror(errno));
out:
	free(b->files);
	free(b);
	return ret < 0 && !published ? ret : published;
}
