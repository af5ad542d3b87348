// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"
#include "unwind/rows.h"

#define ROWS_MAX (16u << 20) /* rows of one table (96 MiB while building) */

static const struct cprof_unwind_rule invalid_rule = {
	.rules = CPROF_ROW_RULES(CPROF_CFA_INVALID, CPROF_RBP_SAME),
};

static uint64_t rule_key(struct cprof_unwind_rule r)
{
	uint64_t k;

	memcpy(&k, &r, sizeof(k));
	return k;
}

static size_t rule_hash(uint64_t key, size_t nslots)
{
	return (size_t)(((key ^ key >> 29) * 0x9e3779b97f4a7c15ull) >> 32) & (nslots - 1);
}

/* Room for one more rule in the open-addressed set: kept under half full. */
static int rules_room(struct rowbuf *b)
{
	size_t nslots = b->nslots ? b->nslots * 2 : 64;
	uint32_t *slots;
	int rc;

	rc = grow((void **)&b->rules, &b->cap_rules, b->nrules, sizeof(*b->rules), 64,
		  CPROF_MAX_RULES);
	if (rc)
		return rc;
	if (2 * (b->nrules + 1) <= b->nslots)
		return 0;
	slots = calloc(nslots, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < b->nrules; i++) {
		size_t h = rule_hash(rule_key(b->rules[i]), nslots);

		while (slots[h])
			h = (h + 1) & (nslots - 1);
		slots[h] = (uint32_t)i + 1;
	}
	free(b->slots);
	b->slots = slots;
	b->nslots = nslots;
	return 0;
}

/*
 * The number of rule @r, added if new.  Past CPROF_MAX_RULES distinct
 * rules (only a hostile object has that many) new ones become INVALID,
 * which is always there: it is the first rule added.
 */
static int rule_number(struct rowbuf *b, struct cprof_unwind_rule r)
{
	uint64_t key = rule_key(r);
	size_t h;
	int rc;

	if (!b->nrules && rule_key(r) != rule_key(invalid_rule)) {
		rc = rule_number(b, invalid_rule);
		if (rc < 0)
			return rc;
	}
	for (h = b->nslots ? rule_hash(key, b->nslots) : 0; b->nslots && b->slots[h];
	     h = (h + 1) & (b->nslots - 1))
		if (rule_key(b->rules[b->slots[h] - 1]) == key)
			return (int)b->slots[h] - 1;
	if (b->nrules == CPROF_MAX_RULES) {
		b->skipped++;
		return rule_number(b, invalid_rule);
	}
	rc = rules_room(b);
	if (rc)
		return errf(b->err, rc, "out of memory for unwind rules");
	for (h = rule_hash(key, b->nslots); b->slots[h]; h = (h + 1) & (b->nslots - 1))
		;
	b->rules[b->nrules] = r;
	b->slots[h] = (uint32_t)++b->nrules;
	return (int)b->nrules - 1;
}

/* Room for one more row in both arrays. */
static int rows_room(struct rowbuf *b)
{
	size_t cap = b->cap;
	int rc;

	if (b->n < b->cap)
		return 0;
	rc = grow((void **)&b->pcs, &cap, b->n, sizeof(*b->pcs), 1024, ROWS_MAX);
	if (rc)
		return rc;
	cap = b->cap;
	rc = grow((void **)&b->ids, &cap, b->n, sizeof(*b->ids), 1024, ROWS_MAX);
	if (rc)
		return rc; /* pcs has room to spare, harmless */
	b->cap = cap;
	return 0;
}

int rows_emit(struct rowbuf *b, uint64_t vaddr, struct cprof_unwind_rule r)
{
	uint32_t pc = (uint32_t)(vaddr - b->base);
	int id = rule_number(b, r), rc;

	if (id < 0)
		return id;
	if (b->n) {
		if (b->pcs[b->n - 1] == pc) {
			b->ids[b->n - 1] = (uint16_t)id;
			if (b->n >= 2 && b->ids[b->n - 2] == id)
				b->n--;
			return 0;
		}
		if (b->ids[b->n - 1] == id)
			return 0;
	}
	rc = rows_room(b);
	if (rc)
		return errf(b->err, rc, "more than %u unwind rows, or out of memory", ROWS_MAX);
	b->pcs[b->n] = pc;
	b->ids[b->n++] = (uint16_t)id;
	return 0;
}

void rows_cut(struct rowbuf *b, uint64_t vaddr)
{
	uint32_t rel = (uint32_t)(vaddr - b->base);

	while (b->n && b->pcs[b->n - 1] >= rel)
		b->n--;
}

/* Gives back what doubling left unused; keeps it when realloc cannot. */
static void *shrink(void *p, size_t size)
{
	void *q = size ? realloc(p, size) : NULL;

	if (!size) {
		free(p);
		return NULL;
	}
	return q ? q : p;
}

void rows_finish(struct rowbuf *b, struct unwind_table *out)
{
	out->pcs = shrink(b->pcs, b->n * sizeof(*b->pcs));
	out->ids = shrink(b->ids, b->n * sizeof(*b->ids));
	out->n = b->n;
	out->rules = b->n ? shrink(b->rules, b->nrules * sizeof(*b->rules)) : NULL;
	out->nrules = b->n ? b->nrules : 0;
	if (!b->n)
		free(b->rules);
	out->base = b->base;
	out->skipped += b->skipped;
	free(b->slots);
	memset(b, 0, sizeof(*b));
}

void rows_free(struct rowbuf *b)
{
	free(b->pcs);
	free(b->ids);
	free(b->rules);
	free(b->slots);
	memset(b, 0, sizeof(*b));
}
