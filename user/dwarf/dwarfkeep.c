// SPDX-License-Identifier: MIT
#include <string.h>
#include <sys/stat.h>

#include "dwarf/dwarfkeep.h"

void dwarfkeep_init(struct dwarfkeep *k, uint64_t budget)
{
	memset(k, 0, sizeof(*k));
	k->budget = budget;
}

static void id_of(const struct stat *st, struct dwarfkeep_id *id, int i)
{
	id->dev[i] = st->st_dev;
	id->ino[i] = st->st_ino;
	id->size[i] = (uint64_t)st->st_size;
	id->mtime_ns[i] = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
	id->ctime_ns[i] = (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec;
}

void dwarfkeep_id(int fd, int alt_fd, uint64_t max_bytes, struct dwarfkeep_id *id)
{
	struct stat st;

	memset(id, 0, sizeof(*id));
	id->max_bytes = max_bytes;
	if (fstat(fd, &st))
		return;
	id_of(&st, id, 0);
	if (alt_fd >= 0) {
		if (fstat(alt_fd, &st))
			return;
		id_of(&st, id, 1);
	}
	id->valid = true;
}

static bool same(const struct dwarfkeep_id *a, const struct dwarfkeep_id *b)
{
	if (!a->valid || !b->valid || a->max_bytes != b->max_bytes)
		return false;
	for (int i = 0; i < 2; i++)
		if (a->dev[i] != b->dev[i] || a->ino[i] != b->ino[i] || a->size[i] != b->size[i] ||
		    a->mtime_ns[i] != b->mtime_ns[i] || a->ctime_ns[i] != b->ctime_ns[i])
			return false;
	return true;
}

static void drop(struct dwarfkeep *k, size_t i)
{
	k->bytes -= k->e[i].bytes;
	k->e[i] = k->e[--k->n];
}

struct dwarfinfo *dwarfkeep_take(struct dwarfkeep *k, const struct dwarfkeep_id *id)
{
	for (size_t i = 0; i < k->n; i++) {
		if (same(&k->e[i].id, id)) {
			struct dwarfinfo *d = k->e[i].d;

			drop(k, i);
			return d;
		}
	}
	return NULL;
}

void dwarfkeep_put(struct dwarfkeep *k, const struct dwarfkeep_id *id, struct dwarfinfo *d)
{
	uint64_t bytes = dwarfinfo_bytes(d);

	if (!id->valid || bytes > k->budget) {
		dwarfinfo_free(d);
		return;
	}
	/* Room: the least recently kept go first. */
	while (k->n && (k->n == DWARFKEEP_MAX || k->bytes + bytes > k->budget)) {
		size_t old = 0;

		for (size_t i = 1; i < k->n; i++)
			if (k->e[i].tick < k->e[old].tick)
				old = i;
		dwarfinfo_free(k->e[old].d);
		drop(k, old);
	}
	k->e[k->n].id = *id;
	k->e[k->n].d = d;
	k->e[k->n].bytes = bytes;
	k->e[k->n].tick = ++k->tick;
	k->bytes += bytes;
	k->n++;
}

void dwarfkeep_free(struct dwarfkeep *k)
{
	for (size_t i = 0; i < k->n; i++)
		dwarfinfo_free(k->e[i].d);
	k->n = 0;
	k->bytes = 0;
}
