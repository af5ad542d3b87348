/* SPDX-License-Identifier: MIT */
/*
 * secread: a file section's bytes read again, a chunk at a time, after the
 * whole section has been let go.
 *
 * Making a big object's unwind table holds its .eh_frame (5 MB for
 * libLLVM-14), its FDEs and the rows made so far all at once: the agent's
 * peak memory.  The FDEs are run in address order, which is mostly the
 * section's own order (code placed hot and cold makes two or three
 * streams), so a few chunks hold what the next FDEs need.
 */
#ifndef CPROF_SECREAD_H
#define CPROF_SECREAD_H

#include <stddef.h>
#include <stdint.h>

#include "elf/elfsrc.h"

#define SECREAD_CHUNKS 4
#define SECREAD_CHUNK_SIZE (64u << 10)

struct secread_chunk {
	uint8_t *buf;  /* SECREAD_CHUNK_SIZE bytes, or NULL until first used */
	uint64_t off;  /* section offset of buf[0] */
	size_t n;      /* bytes held; 0: none */
	uint64_t used; /* tick of last use: the oldest is refilled */
};

struct secread {
	const struct elfsrc *src;
	uint64_t at, len; /* the section's bytes in the source */
	struct secread_chunk chunk[SECREAD_CHUNKS];
	uint64_t tick;
	uint8_t *big; /* a span wider than a chunk */
	size_t big_cap;
	size_t reads; /* chunks filled: for tests and the bench */
};

/* The section of @len bytes at @at in @src (which must outlive @r). */
void secread_init(struct secread *r, const struct elfsrc *src, uint64_t at, uint64_t len);

/*
 * The bytes [@off, @off + @len) of the section, valid until the next call;
 * NULL when out of the section, unreadable now (the file shrank), or out of
 * memory.
 */
const uint8_t *secread_get(struct secread *r, uint64_t off, size_t len);

void secread_free(struct secread *r);

#endif
