// SPDX-License-Identifier: MIT
/*
 * symsel: see symsel.h.
 *
 * Gap i holds the symbols starting in (addrs[i-1], addrs[i]] (gap 0: at or
 * below addrs[0]).  For address i the full table's answer is the highest
 * start at or below it, which lies in the last non-empty gap at or before
 * i: so each gap keeps only its highest start, and among records starting
 * there the preferred one and the preferred one with a size.  O(log n) per
 * record offered.
 */
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/addrsearch.h"
#include "elf/symsel.h"

int symsel_rec_cmp(const void *pa, const void *pb)
{
	const struct symrec *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	if (!a->size != !b->size)
		return a->size ? -1 : 1;
	if (a->tab != b->tab)
		return a->tab < b->tab ? -1 : 1;
	return a->name_off < b->name_off ? -1 : a->name_off > b->name_off;
}

uint8_t symsel_rec_rank(unsigned char bind)
{
	switch (bind) {
	case STB_GLOBAL:
	case STB_GNU_UNIQUE:
		return 0;
	case STB_WEAK:
		return 1;
	default:
		return 2;
	}
}

int symsel_init(struct symsel *s, const uint64_t *addrs, size_t n)
{
	s->addrs = addrs;
	s->n = n;
	s->gaps = calloc(n ? n : 1, sizeof(*s->gaps));
	return s->gaps ? 0 : -ENOMEM;
}

void symsel_offer(struct symsel *s, const struct symrec *r)
{
	/* The first address at or above the symbol's start: its gap. */
	size_t lo = addrsearch_below(s->addrs, s->n, ADDRSEARCH_BARE(uint64_t), r->start);
	struct symsel_gap *g;

	if (lo == s->n)
		return; /* above every address: names none */
	g = &s->gaps[lo];
	if (g->have && r->start < g->best.start)
		return;
	if (!g->have || r->start > g->best.start) {
		g->best = *r;
		g->have = true;
		g->have_sized = false;
	} else if (symsel_rec_cmp(r, &g->best) < 0) {
		g->best = *r;
	}
	/* The size of the first sized record in preference order, as a full table dedupes. */
	if (r->size && (!g->have_sized || symsel_rec_cmp(r, &g->sized) < 0)) {
		g->sized = *r;
		g->have_sized = true;
	}
}

size_t symsel_result(const struct symsel *s, struct symrec *out)
{
	size_t k = 0;

	for (size_t i = 0; i < s->n; i++) {
		if (!s->gaps[i].have)
			continue;
		out[k] = s->gaps[i].best;
		out[k].size = s->gaps[i].have_sized ? s->gaps[i].sized.size : 0;
		k++;
	}
	return k;
}

void symsel_free(struct symsel *s)
{
	free(s->gaps);
	s->gaps = NULL;
	s->n = 0;
}
