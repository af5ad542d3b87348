// SPDX-License-Identifier: MIT
/*
 * countlog.c: the loader's side of the count logs (countlog.h).
 */
#include <stddef.h>

#include "sampling/countlog.h"

uint32_t countlog_slots(unsigned int hz, int ncpus, uint32_t counts_max)
{
	uint64_t cpus = ncpus > 0 ? (uint64_t)ncpus : 1;
	uint64_t per_slot = 2 * sizeof(struct cprof_count_slot) * cpus;
	uint32_t slots = CPROF_COUNT_LOG_MIN;

	while (slots < CPROF_COUNT_LOG_MAX && slots <= 2 * (uint64_t)hz)
		slots *= 2;
	while (slots > CPROF_COUNT_LOG_MIN && slots * per_slot > CPROF_COUNT_LOG_BYTES)
		slots /= 2;
	if (counts_max) {
		while (slots >= CPROF_COUNT_LOG_MIN && slots * cpus > counts_max)
			slots /= 2;
		if (slots < CPROF_COUNT_LOG_MIN)
			return 0;
	}
	return slots;
}

int countlog_drain(struct cprof_count_slot *log, int ncpus, uint32_t slots,
		   int (*fn)(void *ctx, const struct cprof_sample_key *key, uint64_t n),
		   void *ctx)
{
	int ret = 0;

	if (!log || !slots)
		return 0; /* no log */
	for (int cpu = 0; cpu < ncpus; cpu++) {
		struct cprof_count_slot *part = log + (size_t)cpu * slots;
		uint64_t used = part[0].n;

		part[0].n = 0;
		if (used > slots - 1)
			used = slots - 1;
		for (uint64_t i = 1; i <= used && !ret; i++)
			if (part[i].n)
				ret = fn(ctx, &part[i].key, part[i].n);
	}
	return ret;
}
