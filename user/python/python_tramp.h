/* SPDX-License-Identifier: MIT */
/*
 * python_tramp: CPython's perf trampolines (see cprof.h) in the processes
 * profiled.  An anonymous, executable, unwritable mapping that holds
 * nothing but copies of trampoline code this knows, end to end, is told to
 * BPF page by page with the rule that steps a frame in it; anything else is
 * left to frame pointers.  Arenas are read once each, when first mapped,
 * and their entries removed when they go or their process exits.
 *
 * Any process's arenas are looked for, whatever its CPython (or
 * --no-python): the trampolines are native frames, and a look costs one
 * 16-byte read of each anonymous executable mapping.
 */
#ifndef CPROF_PYTHON_TRAMP_H
#define CPROF_PYTHON_TRAMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cprof.h"
#include "util/errbuf.h"

struct vma_list;

/* Largest mapping read as an arena (CPython's are 64 KiB). */
#define PY_TRAMP_ARENA_MAX (1u << 20)

struct py_tramp_sink {
	/* sets BPF's entry @k to @t; @t NULL removes it.  0 or a negative errno */
	int (*set)(void *ctx, const struct cprof_py_tramp_key *k, const struct cprof_py_tramp *t);
	void *ctx;
};

struct py_tramp_stats {
	size_t arenas;  /* arenas told to BPF, over the run */
	size_t pages;   /* their pages BPF holds now */
	size_t refused; /* arenas not told: past CPROF_PY_TRAMP_PAGES, or BPF refused */
};

struct py_tramps;

int py_tramps_new(struct py_tramps **out, const struct py_tramp_sink *sink);
void py_tramps_free(struct py_tramps *t);

/*
 * The runs of trampoline copies in the @len bytes at @buf (a mapping at
 * @start, page-aligned): each run is whole copies of code this knows, end
 * to end at a fixed period with zeros between them, then zeros to a page
 * boundary, where the next run (another arena the kernel merged into the
 * same mapping) or zeros to the end begin.  Up to @max runs into @out;
 * 0 unless every byte of the mapping is so.
 */
size_t py_tramp_match(const uint8_t *buf, size_t len, uint64_t start, struct cprof_py_tramp *out,
		      size_t max);

/*
 * Brings BPF's entries of process @pid in line with its executable
 * mappings @maps: arenas newly mapped are read and told, those gone are
 * removed.  0, or a negative errno with @err saying what failed (the
 * arenas told are kept).
 */
int py_tramps_update(struct py_tramps *t, uint32_t pid, const struct vma_list *maps,
		     struct errbuf *err);

/* Removes the entries of @pid: it exited, or runs another image now. */
void py_tramps_remove(struct py_tramps *t, uint32_t pid);

void py_tramps_get_stats(const struct py_tramps *t, struct py_tramp_stats *st);

#endif
