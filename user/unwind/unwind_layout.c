// SPDX-License-Identifier: MIT
/*
 * unwind_layout: a table's rows made into the runs of slots the BPF
 * unwinder reads (bpf/cprof.h: rules, page index, pcs, rule numbers,
 * exceptions), written out a chunk at a time.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/unwind.h"

#define CHUNK 512 /* slots handed to the sink at a time (4 KiB) */

/*
 * Pages of 1 KiB, coarser when the rows are spread thin (code far apart in
 * an odd object) so that the index stays within the size of the rows, up to
 * the 64 KiB that 16-bit pcs within a page allow.
 */
static unsigned index_shift(const struct unwind_table *t)
{
	uint32_t last = t->pcs[t->n - 1];
	unsigned shift = CPROF_INDEX_SHIFT;

	while (shift < CPROF_INDEX_SHIFT_MAX && (last >> shift) + 1 > t->n + 64)
		shift++;
	return shift;
}

/* Orders rules by @uses (rows using each), most used first. */
static int by_use(const void *a, const void *b, void *uses)
{
	const uint32_t *u = uses;
	uint16_t x = *(const uint16_t *)a, y = *(const uint16_t *)b;

	if (u[x] != u[y])
		return u[x] > u[y] ? -1 : 1;
	return x < y ? -1 : x > y;
}

int unwind_plan(const struct unwind_table *t, struct unwind_layout *lay)
{
	uint32_t *uses;
	uint64_t nexc = 0, nslots;

	memset(lay, 0, sizeof(*lay));
	if (!t->n || !t->nrules || t->nrules > CPROF_MAX_RULES)
		return -EINVAL;
	uses = calloc(t->nrules, sizeof(*uses));
	lay->number = malloc(t->nrules * sizeof(*lay->number));
	lay->rule_of = malloc(t->nrules * sizeof(*lay->rule_of));
	if (!uses || !lay->number || !lay->rule_of) {
		free(uses);
		unwind_layout_free(lay);
		return -ENOMEM;
	}
	for (size_t i = 0; i < t->n; i++)
		uses[t->ids[i]]++;
	for (size_t k = 0; k < t->nrules; k++)
		lay->rule_of[k] = (uint16_t)k;
	qsort_r(lay->rule_of, t->nrules, sizeof(*lay->rule_of), by_use, uses);
	for (size_t k = 0; k < t->nrules; k++) {
		lay->number[lay->rule_of[k]] = (uint16_t)k;
		if (k >= CPROF_ID_ESCAPE)
			nexc += uses[lay->rule_of[k]];
	}
	free(uses);

	lay->desc = (struct cprof_table){
		.base = t->base,
		.nrows = (uint32_t)t->n,
		.nexc = (uint32_t)nexc,
		.nrules = (uint16_t)t->nrules,
		.index_shift = (uint8_t)index_shift(t),
	};
	lay->desc.npages = (t->pcs[t->n - 1] >> lay->desc.index_shift) + 1;
	nslots = (uint64_t)CPROF_RULE_SLOTS(t->nrules) + CPROF_INDEX_SLOTS((uint64_t)lay->desc.npages) +
		 CPROF_PC_SLOTS((uint64_t)t->n) + CPROF_ID_SLOTS((uint64_t)t->n) + nexc;
	if (nslots > UINT32_MAX / 2) {
		unwind_layout_free(lay);
		return -E2BIG;
	}
	lay->nslots = (uint32_t)nslots;
	return 0;
}

/* Slots on their way to the sink. */
struct writer {
	union cprof_table_slot buf[CHUNK];
	uint32_t used, off; /* in buf; of buf[0] in the table */
	unwind_sink_fn sink;
	void *ctx;
	int rc;
};

static void flush(struct writer *w)
{
	if (w->used && !w->rc)
		w->rc = w->sink(w->ctx, w->off, w->buf, w->used);
	w->off += w->used;
	w->used = 0;
}

/* The next slot to fill, zeroed. */
static union cprof_table_slot *next_slot(struct writer *w)
{
	union cprof_table_slot *s;

	if (w->used == CHUNK)
		flush(w);
	s = &w->buf[w->used++];
	memset(s, 0, sizeof(*s));
	return s;
}

int unwind_emit(const struct unwind_table *t, const struct unwind_layout *lay,
		unwind_sink_fn sink, void *ctx)
{
	const struct cprof_table *d = &lay->desc;
	uint32_t mask = (1u << d->index_shift) - 1;
	union cprof_table_slot *s = NULL;
	struct writer *w = malloc(sizeof(*w));
	size_t r = 0;
	int rc;

	if (!w)
		return -ENOMEM;
	*w = (struct writer){ .sink = sink, .ctx = ctx };
	for (size_t k = 0; k < t->nrules; k++)
		next_slot(w)->rule = t->rules[lay->rule_of[k]];
	for (uint64_t k = 0; k <= d->npages; k++) {
		while (r < t->n && t->pcs[r] < (k << d->index_shift))
			r++;
		if (k % 2 == 0)
			s = next_slot(w);
		s->index[k % 2] = (uint32_t)r;
	}
	for (size_t i = 0; i < t->n; i++) {
		if (i % 4 == 0)
			s = next_slot(w);
		s->pc[i % 4] = (uint16_t)(t->pcs[i] & mask);
	}
	for (size_t i = 0; i < t->n; i++) {
		uint16_t num = lay->number[t->ids[i]];

		if (i % 8 == 0)
			s = next_slot(w);
		s->id[i % 8] = num < CPROF_ID_ESCAPE ? (uint8_t)num : CPROF_ID_ESCAPE;
	}
	for (size_t i = 0; i < t->n; i++) {
		uint16_t num = lay->number[t->ids[i]];

		if (num >= CPROF_ID_ESCAPE)
			next_slot(w)->exc = (struct cprof_id_exception){ .row = (uint32_t)i, .id = num };
	}
	flush(w);
	rc = w->rc;
	if (!rc && w->off != lay->nslots)
		rc = -EIO; /* a plan for another table */
	free(w);
	return rc;
}

void unwind_layout_free(struct unwind_layout *lay)
{
	free(lay->number);
	free(lay->rule_of);
	memset(lay, 0, sizeof(*lay));
}
