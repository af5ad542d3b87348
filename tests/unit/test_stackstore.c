// SPDX-License-Identifier: MIT
/*
 * Tests for a sample's user stack stored apart from its leaf pc
 * (cprof_sample_key.uleaf), and its Python stack apart from its innermost
 * position (pyleaf): stackstore_leaf() joins them, and aggregate_add() counts
 * the joined stacks as BPF would have counted the whole ones.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "process/aggregate.h"
#include "util/stackstore.h"
#include "testlib.h"

#define REST (CPROF_STACK_HASHED | 0x1234)

/* Stores the stack [0, 0x2000, 0x3000] as BPF leaves it: leaf pc apart. */
static void store_rest(struct stackstore *s)
{
	const uint64_t rest[] = { 0, 0x2000, 0x3000 };

	stackstore_add(s, REST, rest, 3, CPROF_STACK_F_DWARF | CPROF_UNWIND_NO_ROW);
}

static bool frames_are(const struct stackstore *s, uint64_t hash, uint64_t leaf)
{
	uint32_t nr = 0, status = 0;
	const uint64_t *ip = stackstore_get(s, hash, &nr, &status);

	return ip && nr == 3 && ip[0] == leaf && ip[1] == 0x2000 && ip[2] == 0x3000 &&
	       status == (CPROF_STACK_F_DWARF | CPROF_UNWIND_NO_ROW);
}

static void test_leaf(void)
{
	struct stackstore s;
	uint64_t a = 0, b = 0, again = 0, none = 0;
	uint32_t nr;
	size_t frames;
	bool all = true;

	stackstore_init(&s);
	store_rest(&s);
	CHECK(stackstore_leaf(&s, REST, 0, 0x1111, &a) == 0 && (a & CPROF_STACK_HASHED) && a != REST,
	      "leaf: a stack of its own, named by a hash", "%llx", (unsigned long long)a);
	CHECK(frames_are(&s, a, 0x1111), "leaf: its frames are the leaf and the stored callers",
	      "differ");
	frames = s.nframes;
	CHECK(stackstore_leaf(&s, REST, 0, 0x1111, &again) == 0 && again == a && s.nframes == frames,
	      "leaf: the same leaf again names the same stack, stored once", "%llx, %zu frames",
	      (unsigned long long)again, s.nframes);
	CHECK(stackstore_leaf(&s, REST, 0, 0x1112, &b) == 0 && b != a && frames_are(&s, b, 0x1112) &&
		      frames_are(&s, a, 0x1111),
	      "leaf: another leaf, another stack; the first unchanged", "%llx %llx",
	      (unsigned long long)a, (unsigned long long)b);
	CHECK(frames_are(&s, REST, 0),
	      "leaf: the stored callers keep their 0 leaf", "changed");
	/* the frames array grows (moves) while a stored stack is copied from it */
	for (uint64_t pc = 0x5000; pc < 0x5000 + 3000; pc++) {
		uint64_t h = 0;

		if (stackstore_leaf(&s, REST, 0, pc, &h) || !frames_are(&s, h, pc))
			all = false;
	}
	CHECK(all && frames_are(&s, a, 0x1111),
	      "leaf: stacks copied right while the store grows under them", "a stack differs");
	CHECK(stackstore_leaf(&s, CPROF_STACK_HASHED | 0x999, 0, 0x1111, &none) == 0 &&
		      !stackstore_get(&s, none, &nr, NULL),
	      "leaf: callers not stored: a hash of nothing (an unknown stack)", "found %u", nr);
	stackstore_free(&s);
}

static void test_aggregate(void)
{
	struct cprof_sample_key k = { .pid = 1, .tid = 2, .ustack = REST, .uleaf = 0x1111 };
	struct cprof_sample_key other = k, whole = k;
	struct stackstore s;
	struct aggregate_entry *e;
	struct aggregate a;
	size_t it = 0, n = 0;
	bool right = true;

	other.uleaf = 0x2222;
	whole.uleaf = 0;
	stackstore_init(&s);
	store_rest(&s);
	aggregate_init(&a);
	CHECK(aggregate_add(&a, &s, &k, 1) == 0 && aggregate_add(&a, &s, &k, 2) == 0 &&
		      aggregate_add(&a, &s, &other, 5) == 0 &&
		      aggregate_add(&a, &s, &whole, 7) == 0,
	      "aggregate: samples with leaves apart added", "failed");
	while ((e = hmap_next(&a.map, &it))) {
		n++;
		if (e->count == 3)
			right &= frames_are(&s, e->key.ustack, 0x1111);
		else if (e->count == 5)
			right &= frames_are(&s, e->key.ustack, 0x2222);
		else if (e->count == 7) /* no leaf apart: the stack as stored */
			right &= e->key.ustack == REST;
		else
			right = false;
	}
	CHECK(n == 3 && right && a.samples == 15,
	      "aggregate: one entry a whole stack, named by its joined frames", "%zu entries, %s",
	      n, right ? "right" : "wrong stacks or counts");
	aggregate_free(&a);
	stackstore_free(&s);
}

#define PYREST (CPROF_STACK_HASHED | 0x5678)

/* A Python stack as BPF leaves it: {code, position} a frame, the innermost position 0. */
static void store_pyrest(struct stackstore *s)
{
	const uint64_t rest[] = { 0xc0de1, 0, 0xc0de2, 0x44 };

	stackstore_add(s, PYREST, rest, 4, CPROF_UNWIND_OK);
}

static bool py_frames_are(const struct stackstore *s, uint64_t hash, uint64_t pos)
{
	uint32_t nr = 0;
	const uint64_t *ip = stackstore_get(s, hash, &nr, NULL);

	return ip && nr == 4 && ip[0] == 0xc0de1 && ip[1] == pos && ip[2] == 0xc0de2 &&
	       ip[3] == 0x44;
}

static void test_python_leaf(void)
{
	struct cprof_sample_key k = { .pid = 1, .tid = 2, .pystack = PYREST, .pyleaf = 0x1a };
	struct cprof_sample_key other = k, whole = k, both = k;
	const uint64_t one[] = { 0xc0de9 };
	uint64_t h = 0, lone = CPROF_STACK_HASHED | 0x9abc;
	struct stackstore s;
	struct aggregate_entry *e;
	struct aggregate a;
	size_t it = 0, n = 0;
	bool right = true;
	uint32_t nr;

	other.pyleaf = 0x1c;
	whole.pyleaf = 0;
	both.ustack = REST;
	both.uleaf = 0x1111;
	stackstore_init(&s);
	store_rest(&s);
	store_pyrest(&s);
	stackstore_add(&s, lone, one, 1, CPROF_UNWIND_OK);
	CHECK(stackstore_leaf(&s, PYREST, 1, 0x1a, &h) == 0 && h != PYREST &&
		      py_frames_are(&s, h, 0x1a) && py_frames_are(&s, PYREST, 0),
	      "python leaf: frame 1 filled in, the stored callers unchanged", "differ");
	CHECK(stackstore_leaf(&s, lone, 1, 0x1a, &h) == 0 && !stackstore_get(&s, h, &nr, NULL),
	      "python leaf: a stack with no frame 1 gives a hash of nothing", "found %u", nr);
	aggregate_init(&a);
	CHECK(aggregate_add(&a, &s, &k, 1) == 0 && aggregate_add(&a, &s, &k, 2) == 0 &&
		      aggregate_add(&a, &s, &other, 5) == 0 &&
		      aggregate_add(&a, &s, &whole, 7) == 0 &&
		      aggregate_add(&a, &s, &both, 11) == 0,
	      "python leaf: samples with positions apart added", "failed");
	while ((e = hmap_next(&a.map, &it))) {
		n++;
		if (e->count == 3)
			right &= py_frames_are(&s, e->key.pystack, 0x1a) && e->key.ustack == 0;
		else if (e->count == 5)
			right &= py_frames_are(&s, e->key.pystack, 0x1c);
		else if (e->count == 7) /* no position apart: the stack as stored */
			right &= e->key.pystack == PYREST;
		else if (e->count == 11) /* both leaves apart, each joined to its own stack */
			right &= py_frames_are(&s, e->key.pystack, 0x1a) &&
				 frames_are(&s, e->key.ustack, 0x1111);
		else
			right = false;
	}
	CHECK(n == 4 && right && a.samples == 26,
	      "python leaf: one entry a whole Python stack, named by its joined frames",
	      "%zu entries, %s", n, right ? "right" : "wrong stacks or counts");
	aggregate_free(&a);
	stackstore_free(&s);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	T_PLAN(13);
	test_leaf();
	test_aggregate();
	test_python_leaf();
	return T_EXIT();
}
