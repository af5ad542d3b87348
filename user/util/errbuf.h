/* SPDX-License-Identifier: MIT */
/*
 * errbuf: how library code reports what went wrong without printing.
 *
 * Functions return a negative errno-style code and, when given an errbuf,
 * leave a one-line human message in it naming the thing that is wrong
 * ("/proc/123/maps: No such file or directory").  Only main.c prints.
 */
#ifndef CPROF_ERRBUF_H
#define CPROF_ERRBUF_H

#include <stddef.h>

#define ERRBUF_LEN 256

struct errbuf {
	char msg[ERRBUF_LEN];
};

/*
 * Format a message into @e (which may be NULL) and return @code unchanged,
 * so that callers can write `return errf(e, -ENOENT, "%s: ...", path);`.
 */
int errf(struct errbuf *e, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Prefixes @e's message with "@prefix: " (the file a callee did not name); returns @code. */
int errf_prefix(struct errbuf *e, int code, const char *prefix);

#endif
