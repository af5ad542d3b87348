// SPDX-License-Identifier: MIT
/* secread: see secread.h. */
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"
#include "elf/secread.h"

void secread_init(struct secread *r, const struct elfsrc *src, uint64_t at, uint64_t len)
{
	memset(r, 0, sizeof(*r));
	r->src = src;
	r->at = at;
	r->len = len;
}

/* The chunk to refill: an empty one, else the least recently used. */
static size_t victim(const struct secread *r)
{
	size_t v = 0;

	for (size_t i = 0; i < SECREAD_CHUNKS; i++) {
		if (!r->chunk[i].n)
			return i;
		if (r->chunk[i].used < r->chunk[v].used)
			v = i;
	}
	return v;
}

const uint8_t *secread_get(struct secread *r, uint64_t off, size_t len)
{
	uint64_t start;
	size_t i, n;

	if (off > r->len || len > r->len - off)
		return NULL;
	r->tick++;
	for (i = 0; i < SECREAD_CHUNKS; i++) {
		if (r->chunk[i].n && off >= r->chunk[i].off &&
		    off + len <= r->chunk[i].off + r->chunk[i].n) {
			r->chunk[i].used = r->tick;
			return r->chunk[i].buf + (off - r->chunk[i].off);
		}
	}
	if (len > SECREAD_CHUNK_SIZE / 2) {
		/* Rare (an FDE's program is tens of bytes): read it alone. */
		if (grow_to((void **)&r->big, &r->big_cap, len, 1, len, GROW_NO_MAX))
			return NULL;
		r->reads++;
		return elfsrc_read(r->src, r->at + off, r->big, len) ? NULL : r->big;
	}
	i = victim(r);
	if (!r->chunk[i].buf && !(r->chunk[i].buf = malloc(SECREAD_CHUNK_SIZE)))
		return NULL;
	/* From a little before: the FDE before this one may be asked next. */
	start = off > SECREAD_CHUNK_SIZE / 4 ? off - SECREAD_CHUNK_SIZE / 4 : 0;
	n = r->len - start < SECREAD_CHUNK_SIZE ? (size_t)(r->len - start) : SECREAD_CHUNK_SIZE;
	r->chunk[i].n = 0;
	r->reads++;
	if (elfsrc_read(r->src, r->at + start, r->chunk[i].buf, n))
		return NULL;
	r->chunk[i] = (struct secread_chunk){ r->chunk[i].buf, start, n, r->tick };
	return r->chunk[i].buf + (off - start);
}

void secread_free(struct secread *r)
{
	for (size_t i = 0; i < SECREAD_CHUNKS; i++)
		free(r->chunk[i].buf);
	free(r->big);
	memset(r, 0, sizeof(*r));
}
