// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "unwind_table.h"

#define ROWS_MAX (16u << 20) /* rows of one table (128 MiB) */

static inline bool same_row(const struct cprof_unwind_row *a, const struct cprof_unwind_row *b)
{
	return a->rules == b->rules && a->cfa_off == b->cfa_off && a->rbp_off == b->rbp_off;
}

int rows_emit(struct rowbuf *b, uint64_t vaddr, struct cprof_unwind_row r)
{
	int rc;

	r.pc = (uint32_t)(vaddr - b->base);
	if (b->n) {
		struct cprof_unwind_row *last = &b->rows[b->n - 1];

		if (last->pc == r.pc) {
			*last = r;
			if (b->n >= 2 && same_row(last - 1, last))
				b->n--;
			return 0;
		}
		if (same_row(last, &r))
			return 0;
	}
	rc = grow((void **)&b->rows, &b->cap, b->n, sizeof(r), 1024, ROWS_MAX);
	if (rc)
		return errf(b->err, rc, "more than %u unwind rows", ROWS_MAX);
	b->rows[b->n++] = r;
	return 0;
}

void rows_cut(struct rowbuf *b, uint64_t vaddr)
{
	uint32_t rel = (uint32_t)(vaddr - b->base);

	while (b->n && b->rows[b->n - 1].pc >= rel)
		b->n--;
}

/* ---- the page index (bpf/cprof.h) --------------------------------------- */

/*
 * Pages of 1 KiB, coarser when the rows are spread thin (code far apart in
 * an odd object) so that the index stays within the size of the rows.
 */
static int build_index(struct unwind_table *t)
{
	uint32_t last, shift = CPROF_INDEX_SHIFT;
	size_t r = 0;

	if (!t->n)
		return 0;
	last = t->rows[t->n - 1].pc;
	while (shift < 31 && (last >> shift) + 1 > t->n + 64)
		shift++;
	t->index_shift = shift;
	t->npages = (last >> shift) + 1;
	t->index = malloc(((size_t)t->npages + 1) * sizeof(*t->index));
	if (!t->index)
		return -ENOMEM;
	for (uint64_t k = 0; k <= t->npages; k++) {
		while (r < t->n && t->rows[r].pc < (k << shift))
			r++;
		t->index[k] = (uint32_t)r;
	}
	return 0;
}

size_t unwind_slots(const struct unwind_table *t)
{
	return t->n ? CPROF_INDEX_SLOTS(t->npages) + t->n : 0;
}

void unwind_layout(const struct unwind_table *t, union cprof_table_slot *out)
{
	size_t islots = CPROF_INDEX_SLOTS(t->npages);

	if (!t->n)
		return;
	memset(out, 0, islots * sizeof(*out));
	for (size_t k = 0; k <= t->npages; k++)
		out[k / 2].index[k & 1] = t->index[k];
	for (size_t i = 0; i < t->n; i++)
		out[islots + i].row = t->rows[i];
}

int rows_finish(struct rowbuf *b, struct unwind_table *out)
{
	struct cprof_unwind_row *rows;

	rows = b->n ? realloc(b->rows, b->n * sizeof(*rows)) : NULL;
	if (b->n && !rows)
		rows = b->rows; /* keep the slack rather than fail */
	if (!b->n)
		free(b->rows);
	out->rows = rows;
	out->n = b->n;
	out->base = b->base;
	memset(b, 0, sizeof(*b));
	return build_index(out);
}

void rows_free(struct rowbuf *b)
{
	free(b->rows);
	memset(b, 0, sizeof(*b));
}

void unwind_table_free(struct unwind_table *t)
{
	if (!t)
		return;
	free(t->rows);
	free(t->index);
	memset(t, 0, sizeof(*t));
}
