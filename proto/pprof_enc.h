/* SPDX-License-Identifier: MIT */
/*
 * pprof_enc: the inside of the pprof encoder, shared by its message API
 * (pprof.c) and its string and function tables (pprof_tables.c).  Not for
 * use outside proto/.
 */
#ifndef CPROF_PPROF_ENC_H
#define CPROF_PPROF_ENC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/arena.h"
#include "util/hmap.h"
#include "pbwire.h"
#include "pprof.h"

/* Field numbers, from profile.proto. */
enum {
	PROFILE_SAMPLE_TYPE = 1,
	PROFILE_SAMPLE = 2,
	PROFILE_MAPPING = 3,
	PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5,
	PROFILE_STRING_TABLE = 6,
	PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10,
	PROFILE_PERIOD_TYPE = 11,
	PROFILE_PERIOD = 12,
	PROFILE_COMMENT = 13,
	PROFILE_DEFAULT_SAMPLE_TYPE = 14,

	VALUE_TYPE_TYPE = 1,
	VALUE_TYPE_UNIT = 2,

	SAMPLE_LOCATION_ID = 1,
	SAMPLE_VALUE = 2,
	SAMPLE_LABEL = 3,

	LABEL_KEY = 1,
	LABEL_STR = 2,
	LABEL_NUM = 3,
	LABEL_NUM_UNIT = 4,

	MAPPING_ID = 1,
	MAPPING_MEMORY_START = 2,
	MAPPING_MEMORY_LIMIT = 3,
	MAPPING_FILE_OFFSET = 4,
	MAPPING_FILENAME = 5,
	MAPPING_BUILD_ID = 6,
	MAPPING_HAS_FUNCTIONS = 7,
	MAPPING_HAS_FILENAMES = 8,
	MAPPING_HAS_LINE_NUMBERS = 9,
	MAPPING_HAS_INLINE_FRAMES = 10,

	LOCATION_ID = 1,
	LOCATION_MAPPING_ID = 2,
	LOCATION_ADDRESS = 3,
	LOCATION_LINE = 4,

	LINE_FUNCTION_ID = 1,
	LINE_LINE = 2,

	FUNCTION_ID = 1,
	FUNCTION_NAME = 2,
	FUNCTION_SYSTEM_NAME = 3,
	FUNCTION_FILENAME = 4,
	FUNCTION_START_LINE = 5,
};

/*
 * Small messages made only of varint fields are built on the stack; these
 * are their worst-case sizes (every field present, 10-byte varints).
 */
#define VALUE_TYPE_MAX (2 * FIELD_MAX)
#define LABEL_MAX (4 * FIELD_MAX)
#define LINE_MAX_BYTES (2 * FIELD_MAX)
#define FUNCTION_MAX (5 * FIELD_MAX)
#define MAPPING_MAX (10 * FIELD_MAX)

/* Bytes collected before a sink write: few syscalls, little memory. */
#define OUT_CAP (64 * 1024)

/*
 * Caps, so that hostile or runaway input (symbol names come from binaries
 * we do not trust) cannot make the encoder use unbounded memory.  Going
 * over a count cap is an error (-E2BIG); an over-long string is truncated,
 * since a profile with one clipped C++ template name beats no profile.
 */
#define MAX_STRING_LEN (1u << 20)
#define MAX_STRINGS (1u << 22)
#define MAX_STRING_BYTES (256u << 20)
#define MAX_FUNCTIONS (1u << 22)
#define MAX_MESSAGE (64u << 20)

/* Arena blocks for interned strings; big strings get their own. */
#define CHUNK_SIZE (64 * 1024)

struct str_slot {
	const char *s; /* NULL: free slot */
	uint64_t hash;
	uint32_t len;
	uint32_t idx;
};

/* A function, its strings interned: equal strings have equal indexes. */
struct fn_key {
	int64_t name, system_name, filename, start_line;
};

struct fn_slot {
	struct fn_key key; /* first: hmap's key */
	uint64_t id;
};

/* A growable byte buffer, for nested messages.  Capped at MAX_MESSAGE. */
struct buf {
	uint8_t *p;
	size_t len, cap;
};

struct pprof_enc {
	struct pprof_sink sink;
	int err; /* sticky: the first error, 0 while all is well */
	bool finished;
	size_t n_sample_types;

	uint64_t n_mappings, n_locations, n_functions;

	struct str_slot *strs; /* open addressing, power-of-two size */
	size_t strs_cap;
	uint32_t n_strs;
	size_t str_bytes;
	struct arena strings; /* the interned strings' bytes */

	struct hmap fns; /* fn_key -> fn_slot */

	struct buf scratch;

	size_t out_len;
	uint8_t out[OUT_CAP];
};

/* ---- errors and output (pprof.c) ---- */

/* Records the first error; returns the sticky one. */
int pprof_fail(struct pprof_enc *e, int err);

/* Writes a top-level length-delimited field: header, then @body. */
void pprof_out_len_field(struct pprof_enc *e, unsigned field, const void *body, size_t len);

/* ---- the string and function tables (pprof_tables.c) ---- */

/* Makes the tables empty: 0 or -ENOMEM. */
int pprof_tables_init(struct pprof_enc *e);
void pprof_tables_free(struct pprof_enc *e);

/*
 * The string table index of @s, written out as a string_table entry the
 * first time it is seen; cut at MAX_STRING_LEN, bad UTF-8 replaced.
 */
int64_t pprof_intern(struct pprof_enc *e, const char *s);

/*
 * The id of the function @key stands for (its strings interned), made
 * with the next id when new (*@created says so); -E2BIG when the table is
 * full, -ENOMEM.
 */
int64_t pprof_function_id(struct pprof_enc *e, const struct fn_key *key, bool *created);

#endif
