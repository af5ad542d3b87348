/* SPDX-License-Identifier: MIT */
/*
 * pprofcheck: what the pprof encoder's unit tests share: an in-memory
 * sink, a temp directory profiles are written to gzipped, the two
 * independent readers (`protoc --decode`, `go tool pprof`) and a small
 * wire-format walker that checks every string_table entry comes before
 * the first message that refers to it.
 */
#ifndef CPROF_PPROFCHECK_H
#define CPROF_PPROFCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pprof.h"

/* The temp directory (and its descriptor), and which readers there are. */
extern char tmpdir[1024];
extern int dirfd_out;
extern int have_protoc, have_go;

/* Makes the temp directory TMPDIR/@name.XXXXXX and looks for the readers. */
int pprofcheck_setup(const char *name);
void pprofcheck_teardown(void);

/* A growable in-memory sink; fails with @fail_err after @fail_after calls. */
struct memsink {
	unsigned char *p;
	size_t len, cap;
	int calls, fail_after, fail_err;
};
int mem_write(void *ctx, const void *buf, size_t len);

/* Two sample types, a period, a time, a duration and two comments. */
extern const struct pprof_value_type types2[];
struct pprof_meta meta2(void);

int count_substr(const char *hay, const char *needle);

/* Writes @len bytes to @name in the temp dir, gzipped. */
int write_gz(const char *name, const void *data, size_t len);

/* The readers' output for @name in the temp dir; their exit status in *@rc. */
char *protoc_decode(const char *name, int *rc);
char *go_pprof(const char *args, const char *name, int *rc);

/* Calls @fn for each field of the message in [p, end); false when malformed. */
bool pb_walk(const unsigned char *p, const unsigned char *end,
	     bool (*fn)(void *ctx, unsigned field, uint64_t v, const unsigned char *body,
			size_t len),
	     void *ctx);

struct order_ctx {
	uint64_t n_strings;
	const unsigned *idx_fields; /* string-index fields of this message */
	int bad;
	int first_string_empty;
};

/* pb_walk's callback for a Profile: counts what refers to unknown strings. */
bool check_top(void *vctx, unsigned field, uint64_t v, const unsigned char *body, size_t len);

int64_t add_fn(struct pprof_enc *e, const char *name, const char *system_name,
	       const char *filename, int64_t start_line);

#endif
