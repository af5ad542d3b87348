/* SPDX-License-Identifier: MIT */
/*
 * dwarfkeep: the DWARF reader's objects kept after the agent closed them,
 * so that the next window, which asks for the same files again, finds
 * their debug sections read and decompressed already (decompressing them
 * anew was most of a window's cost in the reader: issue 36).
 *
 * An object is kept under its files' identity as fstat() gives it for the
 * descriptors the agent sent: device, inode, size, modification and
 * change times (the change time no user can set back), and the DWARF bound
 * it was read with.  What is kept together takes at most a budget of
 * bytes (dwarfinfo_bytes()); past it the least recently kept goes.
 */
#ifndef CPROF_DWARFKEEP_H
#define CPROF_DWARFKEEP_H

#include <stdbool.h>
#include <stdint.h>

#include "dwarf/dwarfinfo.h"

#define DWARFKEEP_MAX 32

struct dwarfkeep_id {
	bool valid;
	uint64_t dev[2], ino[2], size[2];
	int64_t mtime_ns[2], ctime_ns[2];
	uint64_t max_bytes;
};

struct dwarfkeep {
	uint64_t budget, bytes;
	unsigned long tick;
	size_t n;
	struct {
		struct dwarfkeep_id id;
		struct dwarfinfo *d;
		uint64_t bytes;
		unsigned long tick;
	} e[DWARFKEEP_MAX];
};

/* An empty keep holding at most @budget bytes (0: nothing is kept). */
void dwarfkeep_init(struct dwarfkeep *k, uint64_t budget);

/*
 * The identity of the object open at @fd (and its debug file at @alt_fd,
 * or -1) read with @max_bytes; not valid (never matched, never kept) when
 * either cannot be stat'ed.
 */
void dwarfkeep_id(int fd, int alt_fd, uint64_t max_bytes, struct dwarfkeep_id *id);

/* The object kept under @id, now the caller's, or NULL. */
struct dwarfinfo *dwarfkeep_take(struct dwarfkeep *k, const struct dwarfkeep_id *id);

/* Keeps @d under @id (the least recently kept go to make room), or frees it. */
void dwarfkeep_put(struct dwarfkeep *k, const struct dwarfkeep_id *id, struct dwarfinfo *d);

void dwarfkeep_free(struct dwarfkeep *k);

#endif
