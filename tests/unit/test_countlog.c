// SPDX-License-Identifier: MIT
/*
 * test_countlog: the count logs, BPF's side (counts.bpf.h, built as plain
 * C) writing and the loader's (countlog.c) reading: every sample is
 * counted once, in a log or (its CPU's part full) left for the counts
 * map, over flips of the pairs; a key repeated is counted in place;
 * the loader trusts no part's count beyond its size.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/bpfunwind.h"
#include "sampling/countlog.h"
#include "testlib.h"

#define NCPUS 2
#define SLOTS 64
#define NKEYS 300   /* distinct keys: tid is the index */
#define NHOT 8      /* of which repeated most */
#define SAMPLES 20000
#define FLIP_EVERY 700 /* samples between flips */

static struct cprof_count_slot logs[2][NCPUS * SLOTS];
static struct cprof_sample_key keys[NKEYS];
static uint64_t sampled[NKEYS], counted[NKEYS];
static uint64_t slots_read, bad_keys;

static void make_keys(void)
{
	for (uint32_t i = 0; i < NKEYS; i++) {
		struct cprof_sample_key *k = &keys[i];

		memset(k, 0, sizeof(*k));
		k->pid = 1000 + i % 3;
		k->tid = i;
		k->gen = 77;
		k->ustack = CPROF_STACK_HASHED | (0x9e3779b97f4a7c15ull * (i / 5 + 1));
		k->uleaf = 0x400000 + 16 * i;
		k->kstack = i % 4 ? CPROF_STACK_NONE : CPROF_STACK_HASHED | i;
		k->pystack = CPROF_STACK_HASHED | (i / 2);
		k->pyleaf = 2 * i;
		memcpy(k->comm, "worker", 6);
	}
}

/* The drain's callback: the loader's side adds what a slot holds. */
static int add(void *ctx, const struct cprof_sample_key *k, uint64_t n)
{
	(void)ctx;
	slots_read++;
	if (k->tid >= NKEYS || memcmp(k, &keys[k->tid], sizeof(*k))) {
		bad_keys++;
		return 0;
	}
	counted[k->tid] += n;
	return 0;
}

static int stop(void *ctx, const struct cprof_sample_key *k, uint64_t n)
{
	(*(int *)ctx)++;
	(void)k;
	(void)n;
	return 7;
}

static void test_slots(void)
{
	uint32_t a = countlog_slots(99, 2, 0), b = countlog_slots(999, 2, 0);
	uint32_t c = countlog_slots(20000, 2, 0), d = countlog_slots(999, 256, 0);
	uint32_t e = countlog_slots(999, 100000, 0);
	uint32_t f = countlog_slots(999, 2, 1000), g = countlog_slots(999, 2, 16);
	uint32_t h = countlog_slots(999, 2, 100000);

	CHECK(a == 256 && b == 2048 && c == CPROF_COUNT_LOG_MAX, "slots: a power of two over twice the rate, bounded",
	      "99 Hz %u, 999 Hz %u, 20000 Hz %u", a, b, c);
	CHECK(2ull * 256 * d * sizeof(struct cprof_count_slot) <= CPROF_COUNT_LOG_BYTES &&
		      d >= CPROF_COUNT_LOG_MIN && (d & (d - 1)) == 0,
	      "slots: both pairs of 256 CPUs within the bytes allowed", "%u slots", d);
	CHECK(e == CPROF_COUNT_LOG_MIN, "slots: never under the least", "%u slots", e);
	CHECK(f == 256 && g == 0 && h == b,
	      "slots: --counts-max bounds all CPUs' together, no log under the least",
	      "--counts-max 1000: %u, 16: %u, 100000: %u", f, g, h);
}

static void test_exact(void)
{
	uint64_t to_map = 0, in_place_samples = 0, total = 0;
	unsigned int seed = 12345, pair = 0;
	bool ok = true;

	make_keys();
	bpfu_set_count_logs(logs[0], logs[1], NCPUS, SLOTS);
	for (uint32_t s = 0; s < SAMPLES; s++) {
		/* three samples in four of a hot key, the rest spread over all */
		uint32_t r = (uint32_t)rand_r(&seed);
		uint32_t i = r % 4 ? r / 4 % NHOT : r / 4 % NKEYS;
		unsigned int cpu = (r >> 20) % NCPUS;

		sampled[i]++;
		if (!bpfu_count_log_add(pair, cpu, &keys[i])) {
			to_map++;
			counted[i]++; /* the counts map's part, as the program falls back */
		}
		if (s % FLIP_EVERY == FLIP_EVERY - 1) {
			/* the loader flips, then drains the pair now idle */
			pair ^= 1;
			countlog_drain(logs[pair ^ 1], NCPUS, SLOTS, add, NULL);
		}
	}
	countlog_drain(logs[0], NCPUS, SLOTS, add, NULL);
	countlog_drain(logs[1], NCPUS, SLOTS, add, NULL);
	for (uint32_t i = 0; i < NKEYS; i++) {
		ok &= sampled[i] == counted[i];
		total += counted[i];
		if (i < NHOT)
			in_place_samples += sampled[i];
	}
	CHECK(ok && total == SAMPLES && !bad_keys, "every sample counted once, under its own key",
	      "total %llu of %d, %llu bad keys", (unsigned long long)total, SAMPLES,
	      (unsigned long long)bad_keys);
	CHECK(to_map > 0, "a CPU's full part leaves samples for the counts map", "%llu to the map",
	      (unsigned long long)to_map);
	CHECK(slots_read < SAMPLES - to_map - in_place_samples / 2,
	      "repeated keys are counted in place", "%llu slots read for %llu samples",
	      (unsigned long long)slots_read, (unsigned long long)(SAMPLES - to_map));
	for (int p = 0; p < 2; p++)
		for (int c = 0; c < NCPUS; c++)
			ok &= logs[p][c * SLOTS].n == 0;
	CHECK(ok, "a drained log is empty", "a part still says it holds slots");
}

static void test_bounds(void)
{
	static struct cprof_count_slot log[NCPUS * SLOTS];
	int calls = 0, rc;

	make_keys();
	memset(counted, 0, sizeof(counted));
	for (int c = 0; c < NCPUS; c++) {
		log[c * SLOTS].n = 1000000; /* more than the part holds */
		for (int i = 1; i < SLOTS; i++) {
			log[c * SLOTS + i].key = keys[i];
			log[c * SLOTS + i].n = 1;
		}
	}
	slots_read = 0;
	countlog_drain(log, NCPUS, SLOTS, add, NULL);
	CHECK(slots_read == NCPUS * (SLOTS - 1) && log[0].n == 0 && log[SLOTS].n == 0,
	      "a part's count is trusted only as far as its size", "%llu slots read",
	      (unsigned long long)slots_read);
	for (int c = 0; c < NCPUS; c++)
		log[c * SLOTS].n = 3;
	rc = countlog_drain(log, NCPUS, SLOTS, stop, &calls);
	CHECK(rc == 7 && calls == 1 && log[0].n == 0 && log[SLOTS].n == 0,
	      "a callback's error stops the reading, every part emptied", "rc %d, %d calls", rc,
	      calls);
}

int main(void)
{
	T_PLAN(10);
	test_slots();
	test_exact();
	test_bounds();
	return T_EXIT();
}
