// SPDX-License-Identifier: MIT
/* secread: see secread.h. */
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"
#include "elf/secread.h"

void secread_init(struct secread *w, const struct elfsrc *src, uint64_t at, uint64_t len)
{
	memset(w, 0, sizeof(*w));
	w->src = src;
	w->at = at;
	w->len = len;
}

/* The window to refill: an empty one, else the least recently used. */
static size_t victim(const struct secread *w)
{
	size_t v = 0;

	for (size_t i = 0; i < SECREAD_CHUNKS; i++) {
		if (!w->win[i].n)
			return i;
		if (w->win[i].used < w->win[v].used)
			v = i;
	}
	return v;
}

const uint8_t *secread_get(struct secread *w, uint64_t off, size_t len)
{
	uint64_t start;
	size_t i, n;

	if (off > w->len || len > w->len - off)
		return NULL;
	w->tick++;
	for (i = 0; i < SECREAD_CHUNKS; i++) {
		if (w->win[i].n && off >= w->win[i].off &&
		    off + len <= w->win[i].off + w->win[i].n) {
			w->win[i].used = w->tick;
			return w->win[i].buf + (off - w->win[i].off);
		}
	}
	if (len > SECREAD_CHUNK_SIZE / 2) {
		/* Rare (an FDE's program is tens of bytes): read it alone. */
		if (grow_to((void **)&w->big, &w->big_cap, len, 1, len, GROW_NO_MAX))
			return NULL;
		w->reads++;
		return elfsrc_read(w->src, w->at + off, w->big, len) ? NULL : w->big;
	}
	i = victim(w);
	if (!w->win[i].buf && !(w->win[i].buf = malloc(SECREAD_CHUNK_SIZE)))
		return NULL;
	/* From a little before: the FDE before this one may be asked next. */
	start = off > SECREAD_CHUNK_SIZE / 4 ? off - SECREAD_CHUNK_SIZE / 4 : 0;
	n = w->len - start < SECREAD_CHUNK_SIZE ? (size_t)(w->len - start) : SECREAD_CHUNK_SIZE;
	w->win[i].n = 0;
	w->reads++;
	if (elfsrc_read(w->src, w->at + start, w->win[i].buf, n))
		return NULL;
	w->win[i] = (struct secread_chunk){ w->win[i].buf, start, n, w->tick };
	return w->win[i].buf + (off - start);
}

void secread_free(struct secread *w)
{
	for (size_t i = 0; i < SECREAD_CHUNKS; i++)
		free(w->win[i].buf);
	free(w->big);
	memset(w, 0, sizeof(*w));
}
