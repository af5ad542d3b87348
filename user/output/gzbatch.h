/* SPDX-License-Identifier: MIT */
/*
 * gzbatch: many gzip files published at once (a window of a whole host:
 * hundreds of processes).  An fsync per file would cost seconds, so a
 * batch finishes and closes each file under its temporary name, then
 * makes them all durable with one syncfs() of the filesystem, renames
 * them, and syncs the directory once.
 */
#ifndef CPROF_GZBATCH_H
#define CPROF_GZBATCH_H

#include "util/errbuf.h"
#include "output/gzfile.h"

struct gzbatch;

/* A batch of files of the directory @dirfd (borrowed: kept open until published). */
int gzbatch_new(struct gzbatch **out, int dirfd);

/*
 * Finishes the gzip stream and queues @f for gzbatch_publish().  On failure
 * the temporary file is removed.  Frees @f either way.
 */
int gzbatch_add(struct gzbatch *b, struct gzfile *f, struct errbuf *err);

/*
 * Makes every queued file appear under its final name.  If they cannot be
 * made durable, none appears and all are removed.  Returns the number of
 * files published or a negative errno (with the first failure in @err).
 * Frees @b.
 */
int gzbatch_publish(struct gzbatch *b, struct errbuf *err);

#endif
