// SPDX-License-Identifier: MIT
/*
 * Tests for symsel: for random symbol records (many at the same addresses,
 * of every binding, with and without sizes, offered in random order) and
 * random sets of addresses, what symsel keeps names every address as a
 * whole table, deduplicated as elfobj does, would: checked against a plain
 * sort of all records.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "elf/symsel.h"
#include "testlib.h"

static uint64_t rng = 88172645463325252ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The record naming @addr in @v (n records, sorted and deduplicated), or NULL. */
static const struct symrec *below(const struct symrec *v, size_t n, uint64_t addr)
{
	const struct symrec *found = NULL;

	for (size_t i = 0; i < n && v[i].start <= addr; i++)
		found = &v[i];
	return found;
}

/* Sort and dedupe as elfobj does with a full table. */
static size_t reference(struct symrec *v, size_t n)
{
	size_t out = 0;

	qsort(v, n, sizeof(*v), symsel_rec_cmp);
	for (size_t i = 0; i < n; i++) {
		if (out && v[out - 1].start == v[i].start) {
			if (!v[out - 1].size)
				v[out - 1].size = v[i].size;
			continue;
		}
		v[out++] = v[i];
	}
	return out;
}

static bool same(const struct symrec *a, const struct symrec *b)
{
	if (!a || !b)
		return a == b;
	return a->start == b->start && a->size == b->size && a->name_off == b->name_off &&
	       a->tab == b->tab && a->rank == b->rank;
}

/* One trial: @nrec records over [0, @span), @naddr addresses. */
static bool trial(size_t nrec, size_t naddr, uint64_t span, size_t *checked)
{
	struct symrec *recs = calloc(nrec + 1, sizeof(*recs)), *all = calloc(nrec + 1, sizeof(*all));
	struct symrec *kept = calloc(naddr + 1, sizeof(*kept));
	uint64_t *addrs = calloc(naddr + 1, sizeof(*addrs));
	struct symsel sel;
	size_t nk, nall, na = 0;
	bool ok = true;

	for (size_t i = 0; i < nrec; i++)
		recs[i] = (struct symrec){
			.start = 1 + rnd() % span,
			.size = rnd() % 3 ? 0 : 1 + rnd() % 16,
			.name_off = (uint32_t)(rnd() % 50),
			.rank = (uint8_t)(rnd() % 3),
			.tab = (uint8_t)(rnd() % 2),
		};
	for (size_t i = 0; i < naddr; i++)
		addrs[i] = rnd() % (span + 8);
	qsort(addrs, naddr, sizeof(*addrs), cmp_u64);
	for (size_t i = 0; i < naddr; i++)
		if (!na || addrs[na - 1] != addrs[i])
			addrs[na++] = addrs[i];

	if (symsel_init(&sel, addrs, na))
		return false;
	for (size_t i = 0; i < nrec; i++)
		symsel_offer(&sel, &recs[i]);
	nk = symsel_result(&sel, kept);
	memcpy(all, recs, nrec * sizeof(*recs));
	nall = reference(all, nrec);
	for (size_t i = 1; i < nk; i++)
		ok &= kept[i - 1].start < kept[i].start;
	ok &= nk <= na;
	for (size_t i = 0; i < na && ok; i++) {
		const struct symrec *want = below(all, nall, addrs[i]);
		const struct symrec *got = below(kept, nk, addrs[i]);

		if (!same(want, got)) {
			printf("# address %llu: want start %llu size %llu name %u, got %llu %llu %u\n",
			       (unsigned long long)addrs[i],
			       want ? (unsigned long long)want->start : 0,
			       want ? (unsigned long long)want->size : 0, want ? want->name_off : 0,
			       got ? (unsigned long long)got->start : 0,
			       got ? (unsigned long long)got->size : 0, got ? got->name_off : 0);
			ok = false;
		}
		(*checked)++;
	}
	symsel_free(&sel);
	free(recs);
	free(all);
	free(kept);
	free(addrs);
	return ok;
}

int main(void)
{
	size_t checked = 0, failed = 0;
	struct symsel empty;
	struct symrec out[1];

	T_PLAN(3);
	for (int t = 0; t < 2000; t++) {
		size_t nrec = rnd() % 300, naddr = 1 + rnd() % 40;
		/* Small spans: many records share an address. */
		uint64_t span = t % 2 ? 50 : 5000;

		if (!trial(nrec, naddr, span, &checked))
			failed++;
	}
	CHECK(!failed && checked > 10000,
	      "2000 random tables: every address named by the record a full table gives it",
	      "%zu trials failed, %zu addresses checked", failed, checked);

	CHECK(symsel_init(&empty, NULL, 0) == 0 && symsel_result(&empty, out) == 0,
	      "no addresses: nothing kept", "kept something");
	symsel_offer(&empty, &(struct symrec){ .start = 5 });
	CHECK(symsel_result(&empty, out) == 0, "no addresses: a record offered is not kept",
	      "kept");
	symsel_free(&empty);
	return T_EXIT();
}
