/* SPDX-License-Identifier: MIT */
/*
 * profile: turns one process's aggregated samples into a pprof file.
 *
 * Addresses are symbolized first (so each Mapping can say truthfully
 * whether all its locations have functions), then mappings, locations,
 * functions and samples are streamed through the pprof encoder into a
 * gzip file that appears atomically.
 */
#ifndef CPROF_PROFILE_H
#define CPROF_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "util/errbuf.h"
#include "process/proctab.h"
#include "util/stackstore.h"
#include "symbols/symbolize.h"

struct gzbatch;
struct outdir;

struct profile_meta {
	int64_t time_nanos;     /* start of sampling, Unix ns */
	int64_t duration_nanos;
	int64_t period;         /* ns of CPU per sample: 1e9 / frequency */
	bool off_cpu;           /* a third sample type: off_cpu/nanoseconds */
	struct gzbatch *batch;  /* publish with the batch; NULL: at once */
};

struct profile_stats {
	uint64_t samples;       /* samples written, pseudo-frames included */
	uint64_t locations;
	uint64_t unsymbolized;  /* user locations without a function name */
};

/*
 * The values of @e's sample, one per sample type: samples/count,
 * cpu/nanoseconds (@period per sample) and, with @off_cpu,
 * off_cpu/nanoseconds.  A sample sets only what it has; the rest are 0.
 * Returns the number of values (2 or 3).
 */
#define PROFILE_MAX_VALUES 3
size_t profile_values(const struct aggregate_entry *e, int64_t period, bool off_cpu,
		      int64_t values[PROFILE_MAX_VALUES]);

/* "<comm>-<pid>.pb.gz" with comm made safe for a file name. */
void profile_filename(const struct process *p, char *buf, size_t len);

/*
 * Writes @p's profile as @name in @out.  Symbolizes through @sym and then
 * tells it @p is done (symbolizer_done()), whether or not writing succeeded.
 */
int profile_write(struct outdir *out, const char *name, struct process *p,
		  const struct stackstore *stacks, struct symbolizer *sym,
		  const struct profile_meta *meta, struct profile_stats *st,
		  struct errbuf *err);

#endif
