/* SPDX-License-Identifier: MIT */
/*
 * collect: what a window's samples ask to have named, gathered before its
 * profiles are written, so that each source of names is read once for all
 * of them: the user addresses, registered with the symbolizer (which
 * resolves them object by object), and the kernel addresses, named in one
 * pass over the kernel's functions.  Also what the symbolizer sees of a
 * process (struct sym_process), for the writers.
 *
 * Addresses are the ones profile.c looks up: callers' stepped back into
 * their calls (symbolize_frame_addr()).
 */
#ifndef CPROF_COLLECT_H
#define CPROF_COLLECT_H

#include <stddef.h>
#include <stdint.h>

#include "util/errbuf.h"
#include "util/stackstore.h"
#include "process/proctab.h"
#include "symbols/symbolize.h"

/* What the symbolizer sees of @p: borrowed from its record. */
struct sym_process collect_view(const struct process *p);

/*
 * Every kernel frame address of the samples of @procs, in a new array
 * *@addrs (NULL when none; the caller frees it) of *@naddrs.  0, or
 * -ENOMEM with nothing kept.
 */
int collect_kernel(struct process *const *procs, size_t n, const struct stackstore *stacks,
		   uint64_t **addrs, size_t *naddrs);

/*
 * Prepares @s for the profiles of @procs (those with samples) to be
 * written: their user addresses registered, each process counted as a
 * user of its objects, then all resolved (symbolizer_prepare()).  Failure
 * is not fatal: what was not prepared is resolved on demand.
 */
int collect_prepare(struct symbolizer *s, struct process *const *procs, size_t n,
		    const struct stackstore *stacks, struct errbuf *err);

#endif
