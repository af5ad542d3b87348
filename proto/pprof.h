/* SPDX-License-Identifier: MIT */
/*
 * pprof: a streaming encoder for pprof's profile.proto (see profile.proto
 * beside this file for the field numbers and what consumers expect).
 *
 * Everything is emitted as soon as it is added: a string the first time it
 * is used (string_table entries may be interleaved with the other repeated
 * fields; readers append them in order), a function, mapping or location
 * when added, a sample when added.  The encoder keeps only what it needs to
 * de-duplicate (the string and function tables) and one small buffer, so
 * memory is bounded by the unique data, never by a second copy of the
 * profile.  Bytes go to a caller-supplied sink (gzip + file in gzfile.c).
 *
 * Ids are 1-based as profile.proto requires; 0 means "none".  Errors are
 * sticky: after the first failure every call returns the same error and
 * pprof_finish() reports it, so callers may check once at the end.
 */
#ifndef CPROF_PPROF_H
#define CPROF_PPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Where encoded bytes go.  Returns 0 or a negative errno. */
struct pprof_sink {
	int (*write)(void *ctx, const void *buf, size_t len);
	void *ctx;
};

struct pprof_value_type {
	const char *type; /* e.g. "samples", "cpu" */
	const char *unit; /* e.g. "count", "nanoseconds" */
};

struct pprof_meta {
	const struct pprof_value_type *sample_types;
	size_t n_sample_types;
	struct pprof_value_type period_type;
	int64_t period;
	int64_t time_nanos;
	int64_t duration_nanos;
	const char *default_sample_type; /* the type pprof shows first; NULL: its own pick */
	const char *const *comments; /* may be NULL */
	size_t n_comments;
};

struct pprof_mapping {
	uint64_t start, limit, offset;
	const char *filename; /* may be NULL */
	const char *build_id; /* hex; may be NULL */
	bool has_functions, has_filenames, has_line_numbers, has_inline_frames;
};

struct pprof_function {
	const char *name;
	const char *system_name; /* NULL: same as name */
	const char *filename;    /* may be NULL */
	int64_t start_line;
};

struct pprof_line {
	uint64_t function_id;
	int64_t line; /* 0 when unknown */
};

/* A label has either a string or a number (with an optional unit). */
struct pprof_label {
	const char *key;
	const char *str; /* NULL for a numeric label */
	int64_t num;
	const char *num_unit; /* may be NULL */
};

struct pprof_enc;

/* Starts a profile: writes sample types, period, times and comments. */
int pprof_enc_new(struct pprof_enc **out, const struct pprof_meta *meta,
		  struct pprof_sink sink);

/* Adds a mapping; returns its id (>0) or a negative errno. */
int64_t pprof_add_mapping(struct pprof_enc *e, const struct pprof_mapping *m);

/* Returns the id of an equal function already added, or adds it. */
int64_t pprof_add_function(struct pprof_enc *e, const struct pprof_function *f);

/*
 * Adds a location (the caller de-duplicates addresses); @lines innermost
 * first.  Returns its id (>0) or a negative errno.
 */
int64_t pprof_add_location(struct pprof_enc *e, uint64_t mapping_id,
			   uint64_t address, const struct pprof_line *lines,
			   size_t n_lines);

/* Adds a sample; @location_ids leaf first, one value per sample type. */
int pprof_add_sample(struct pprof_enc *e, const uint64_t *location_ids,
		     size_t n_locations, const int64_t *values,
		     size_t n_values, const struct pprof_label *labels,
		     size_t n_labels);

/* Flushes the last bytes; returns 0 or the first error seen. */
int pprof_finish(struct pprof_enc *e);

void pprof_enc_free(struct pprof_enc *e);

#endif
