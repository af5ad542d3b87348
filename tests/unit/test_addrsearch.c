// SPDX-License-Identifier: MIT
/*
 * Tests for the sorted search (addrsearch.h): each form on an empty array,
 * a key below the first, equal keys, a key above the last, the extremes of
 * the key's range, a key in the middle of its record, 32-bit keys, and
 * every form against a linear scan over arrays with runs of equal keys.
 */
#include <stdint.h>
#include <stdio.h>

#include "util/addrsearch.h"
#include "testlib.h"

/* A record whose key is not its first member, as a mapping's end is not. */
struct rec {
	uint32_t tag;
	uint64_t key;
	uint16_t pad;
};

#define REC_KEY ADDRSEARCH_KEY(struct rec, key)

/* The index of @p among @v's records, or -1 for NULL. */
static long idx(const struct rec *v, const void *p)
{
	return p ? (long)((const struct rec *)p - v) : -1;
}

static void test_empty(void)
{
	CHECK(addrsearch_below(NULL, 0, REC_KEY, 5) == 0, "empty: below is 0", "not 0");
	CHECK(addrsearch_upto(NULL, 0, REC_KEY, 5) == 0, "empty: upto is 0", "not 0");
	CHECK(!addrsearch_find(NULL, 0, REC_KEY, 5), "empty: find is NULL", "not NULL");
	CHECK(!addrsearch_floor(NULL, 0, REC_KEY, 0), "empty: floor of 0 is NULL", "not NULL");
	CHECK(!addrsearch_floor(NULL, 0, ADDRSEARCH_BARE(uint32_t), UINT64_MAX),
	      "empty: bare floor is NULL", "not NULL");
}

static void test_records(void)
{
	/* keys 10, 20, 20, 20, 30 */
	const struct rec v[] = {
		{ 0, 10, 0 }, { 1, 20, 0 }, { 2, 20, 0 }, { 3, 20, 0 }, { 4, 30, 0 },
	};
	const size_t n = sizeof(v) / sizeof(v[0]);

	CHECK_EQ_U64(addrsearch_below(v, n, REC_KEY, 9), 0, "below the first: below is 0");
	CHECK_EQ_U64(addrsearch_upto(v, n, REC_KEY, 9), 0, "below the first: upto is 0");
	CHECK(!addrsearch_find(v, n, REC_KEY, 9), "below the first: find is NULL", "not NULL");
	CHECK(!addrsearch_floor(v, n, REC_KEY, 9), "below the first: floor is NULL", "not NULL");
	CHECK(!addrsearch_floor(v, n, REC_KEY, 0), "key 0: floor is NULL", "not NULL");

	CHECK_EQ_U64(idx(v, addrsearch_find(v, n, REC_KEY, 10)), 0, "the first: find");
	CHECK_EQ_U64(idx(v, addrsearch_floor(v, n, REC_KEY, 10)), 0, "the first: floor");
	CHECK_EQ_U64(idx(v, addrsearch_floor(v, n, REC_KEY, 19)), 0, "between: floor");
	CHECK(!addrsearch_find(v, n, REC_KEY, 19), "between: find is NULL", "not NULL");

	CHECK_EQ_U64(addrsearch_below(v, n, REC_KEY, 20), 1, "equal keys: below the first of them");
	CHECK_EQ_U64(addrsearch_upto(v, n, REC_KEY, 20), 4, "equal keys: upto past the last");
	CHECK_EQ_U64(idx(v, addrsearch_find(v, n, REC_KEY, 20)), 1, "equal keys: find the first");
	CHECK_EQ_U64(idx(v, addrsearch_floor(v, n, REC_KEY, 20)), 3, "equal keys: floor the last");

	CHECK_EQ_U64(idx(v, addrsearch_find(v, n, REC_KEY, 30)), 4, "the last: find");
	CHECK_EQ_U64(addrsearch_below(v, n, REC_KEY, 31), n, "above the last: below is n");
	CHECK_EQ_U64(addrsearch_upto(v, n, REC_KEY, 31), n, "above the last: upto is n");
	CHECK(!addrsearch_find(v, n, REC_KEY, 31), "above the last: find is NULL", "not NULL");
	CHECK_EQ_U64(idx(v, addrsearch_floor(v, n, REC_KEY, UINT64_MAX)), 4,
		     "key UINT64_MAX: floor the last");
}

static void test_extremes(void)
{
	const uint64_t v[] = { 0, 0, UINT64_MAX - 1, UINT64_MAX, UINT64_MAX };
	const struct addrsearch_key k = ADDRSEARCH_BARE(uint64_t);
	const uint64_t *max = addrsearch_find(v, 5, k, UINT64_MAX);

	CHECK_EQ_U64(addrsearch_below(v, 5, k, 0), 0, "extremes: nothing below 0");
	CHECK_EQ_U64(addrsearch_upto(v, 5, k, 0), 2, "extremes: two at or below 0");
	CHECK_EQ_U64(addrsearch_upto(v, 5, k, UINT64_MAX), 5, "extremes: all at or below the max");
	CHECK_EQ_U64(addrsearch_below(v, 5, k, UINT64_MAX), 3, "extremes: three below the max");
	CHECK(max == &v[3], "extremes: find the max's first", "index %ld", max ? (long)(max - v) : -1);
}

static void test_off32(void)
{
	const uint32_t v[] = { 0, 16, 48, UINT32_MAX };
	const struct addrsearch_key k = ADDRSEARCH_BARE(uint32_t);
	const uint32_t *f = addrsearch_floor(v, 4, k, 47);

	CHECK(f == &v[1], "32-bit: floor between", "index %ld", f ? (long)(f - v) : -1);
	CHECK_EQ_U64(addrsearch_upto(v, 4, k, 48), 3, "32-bit: upto an equal key");
	/* a 64-bit key above every 32-bit one is above them, not cut to 32 bits */
	CHECK_EQ_U64(addrsearch_below(v, 4, k, (uint64_t)UINT32_MAX + 1), 4,
		     "32-bit: a wider key is above all");
	CHECK_EQ_U64(addrsearch_below(v, 4, k, UINT32_MAX), 3, "32-bit: the max");
}

/* Every form against a scan, over sorted arrays with runs of equal keys. */
static void test_against_scan(void)
{
	uint64_t state = 0x9e3779b97f4a7c15ull;
	int bad = 0;

	for (int round = 0; round < 2000 && !bad; round++) {
		struct rec v[24];
		size_t n = (size_t)round % 25;
		uint64_t key = 0, q;

		for (size_t i = 0; i < n; i++) {
			state = state * 6364136223846793005ull + 1442695040888963407ull;
			key += (state >> 60) % 3; /* steps of 0, 1, 2: equal keys often */
			v[i] = (struct rec){ (uint32_t)i, key, 0 };
		}
		state = state * 6364136223846793005ull + 1442695040888963407ull;
		q = (state >> 33) % (key + 3);

		size_t below = 0, upto = 0;

		for (size_t i = 0; i < n; i++) {
			below += v[i].key < q;
			upto += v[i].key <= q;
		}
		const struct rec *want_find = below < n && v[below].key == q ? &v[below] : NULL;
		const struct rec *want_floor = upto ? &v[upto - 1] : NULL;

		if (addrsearch_below(v, n, REC_KEY, q) != below ||
		    addrsearch_upto(v, n, REC_KEY, q) != upto ||
		    addrsearch_find(v, n, REC_KEY, q) != want_find ||
		    addrsearch_floor(v, n, REC_KEY, q) != want_floor)
			bad = round + 1;
	}
	CHECK(!bad, "every form agrees with a scan", "round %d", bad - 1);
}

int main(void)
{
	T_PLAN(33);
	test_empty();
	test_records();
	test_extremes();
	test_off32();
	test_against_scan();
	return T_EXIT();
}
