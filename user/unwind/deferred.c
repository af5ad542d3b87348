// SPDX-License-Identifier: MIT
/*
 * deferred: parks the samples BPF sent to be walked again (deferred.h),
 * and walks them on with the BPF unwinder built as plain C (bpfunwind.h)
 * over the rows array, read-only, and the record's own stack copy.  The
 * record is the process's word, not ours: every length is checked against
 * the record's size and the bounds of cprof.h, and the walk reads nothing
 * but the copy (bpfunwind's shim: a read outside it fails, as a read of a
 * bad address fails in BPF); a bad record costs that sample.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/addrsearch.h"
#include "unwind/bpfunwind.h"
#include "util/clock.h"
#include "unwind/deferred.h"

#define HDR_BYTES offsetof(struct cprof_deferred, stack)

/*
 * A parked record: its header (struct cprof_deferred up to its stack),
 * then its process's mappings, then its stack bytes.
 */
struct deferred_rec {
	double at;              /* parked at, CLOCK_MONOTONIC seconds */
	size_t bytes;           /* of its mappings and stack: what DEFERRED_BYTES bounds */
	uint32_t nmaps, flags;  /* the entry: mappings after the header, its flags */
	bool has_entry;
	struct cprof_deferred h; /* up to stack[]: stack_len 0 when the bytes were not kept */
};

/* A record's bytes before its mappings. */
#define REC_BYTES (offsetof(struct deferred_rec, h) + HDR_BYTES)

static inline struct cprof_proc_map *rec_maps(struct deferred_rec *r)
{
	return (struct cprof_proc_map *)((char *)r + offsetof(struct deferred_rec, h) + HDR_BYTES);
}

static inline const uint8_t *rec_stack(struct deferred_rec *r)
{
	return (const uint8_t *)(rec_maps(r) + r->nmaps);
}

void deferred_init(struct deferred *d)
{
	memset(d, 0, sizeof(*d));
}

void deferred_free(struct deferred *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->v[i]);
	free(d->v);
	free(d->pm);
	free(d->walk);
	memset(d, 0, sizeof(*d));
}

int deferred_park(struct deferred *d, const void *data, size_t size,
		  const struct deferred_ops *ops)
{
	const struct cprof_deferred *in = data;
	struct deferred_rec *r;
	uint32_t nmaps = 0, flags = 0, stack_len;
	bool has_entry = false;
	size_t bytes;

	if (size < HDR_BYTES || in->nr > CPROF_DEFER_FRAMES || in->stack_len > CPROF_DEFER_STACK ||
	    size < HDR_BYTES + in->stack_len) {
		d->st.bad++;
		return 0;
	}
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 16;
		struct deferred_rec **v;

		if (cap > DEFERRED_MAX)
			cap = DEFERRED_MAX;
		if (d->n == cap) {
			d->st.dropped++;
			return 0;
		}
		v = realloc(d->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		d->v = v;
		d->cap = cap;
	}
	if (!d->pm && !(d->pm = malloc(sizeof(*d->pm))))
		return -ENOMEM;
	if (!d->walk && !(d->walk = malloc(sizeof(*d->walk))))
		return -ENOMEM;
	/* the process's mappings now: it may be gone once the table is built */
	if (ops->entry(ops->ctx, in->key.pid, in->key.gen, d->pm) == 0 &&
	    d->pm->n <= CPROF_MAX_PROC_MAPS) {
		has_entry = true;
		nmaps = d->pm->n;
		flags = d->pm->flags;
	}
	stack_len = in->stack_len;
	bytes = (size_t)nmaps * sizeof(struct cprof_proc_map) + stack_len;
	if (d->bytes + bytes > DEFERRED_BYTES) {
		/* no room for what a walk needs: counted as sampled, in its turn */
		d->st.unstacked++;
		nmaps = 0;
		has_entry = false;
		stack_len = 0;
		bytes = 0;
	}
	r = malloc(REC_BYTES + bytes);
	if (!r)
		return -ENOMEM;
	r->at = clock_s(CLOCK_MONOTONIC);
	r->bytes = bytes;
	r->nmaps = nmaps;
	r->flags = flags;
	r->has_entry = has_entry;
	memcpy(&r->h, in, HDR_BYTES);
	r->h.stack_len = stack_len;
	if (nmaps)
		memcpy(rec_maps(r), d->pm->m, nmaps * sizeof(struct cprof_proc_map));
	if (stack_len)
		memcpy((uint8_t *)rec_stack(r), in->stack, stack_len);
	d->v[d->n++] = r;
	d->bytes += bytes;
	if (d->bytes > d->st.bytes_peak)
		d->st.bytes_peak = d->bytes;
	d->st.parked++;
	/* built among the first, even once the program is gone (bpftables.h) */
	if (stack_len && in->file != CPROF_NO_FILE)
		ops->want(ops->ctx, in->file);
	return 0;
}

int deferred_image_gone(struct deferred *d, uint32_t pid, uint64_t gen,
			const struct deferred_ops *ops)
{
	bool read = false;

	for (size_t i = 0; i < d->n; i++) {
		struct deferred_rec *r = d->v[i], *nr;
		size_t maps, bytes;

		if (r->h.key.pid != pid || r->h.key.gen != gen || !r->h.stack_len ||
		    (r->has_entry && !(r->flags & CPROF_PROC_MAPS_KERNEL)))
			continue;
		if (!read && (ops->entry(ops->ctx, pid, gen, d->pm) ||
			      d->pm->n > CPROF_MAX_PROC_MAPS ||
			      (d->pm->flags & CPROF_PROC_MAPS_KERNEL)))
			return 0; /* none of the loader's */
		read = true;
		maps = (size_t)d->pm->n * sizeof(struct cprof_proc_map);
		bytes = maps + r->h.stack_len;
		if (d->bytes - r->bytes + bytes > DEFERRED_BYTES)
			continue;
		nr = malloc(REC_BYTES + bytes);
		if (!nr)
			return -ENOMEM;
		memcpy(nr, r, REC_BYTES);
		memcpy((uint8_t *)nr + REC_BYTES + maps, rec_stack(r), r->h.stack_len);
		nr->nmaps = d->pm->n;
		nr->flags = d->pm->flags;
		nr->has_entry = true;
		nr->bytes = bytes;
		memcpy(rec_maps(nr), d->pm->m, maps);
		d->bytes = d->bytes - r->bytes + bytes;
		if (d->bytes > d->st.bytes_peak)
			d->st.bytes_peak = d->bytes;
		free(r);
		d->v[i] = nr;
	}
	return 0;
}

/* The mapping of @m (@n of them, sorted and disjoint) holding @pc; NULL: none. */
static const struct cprof_proc_map *mapping_at(const struct cprof_proc_map *m, uint32_t n,
					       uint64_t pc)
{
	const struct cprof_proc_map *f =
		addrsearch_floor(m, n, ADDRSEARCH_KEY(struct cprof_proc_map, start), pc);

	return f && pc < f->end ? f : NULL;
}

/*
 * @base's mappings, and those of @now (NULL: none) that overlap none of
 * them, into @out, sorted.  A snapshot read at exec can predate the
 * libraries ld.so maps next: a frame the walk meets there was mapped at
 * the sample's time, and what maps its address now is the best word on
 * it; a mapping of @base is never replaced by a later one.
 */
static void merge_maps(struct cprof_proc_maps *out, const struct cprof_proc_map *base, uint32_t nb,
		       uint32_t flags, const struct cprof_proc_maps *now)
{
	uint32_t i = 0, j = 0, n = 0, nn = now ? now->n : 0;

	while ((i < nb || j < nn) && n < CPROF_MAX_PROC_MAPS) {
		const struct cprof_proc_map *m;

		if (j >= nn || (i < nb && base[i].start <= now->m[j].start)) {
			out->m[n++] = base[i++];
			continue;
		}
		m = &now->m[j++];
		if ((n && m->start < out->m[n - 1].end) || (i < nb && m->end > base[i].start))
			continue; /* overlaps one of @base's */
		out->m[n++] = *m;
	}
	out->n = n;
	out->flags = flags;
}

/*
 * The entry the walk goes by, one that maps the frame it waits at (@pc):
 * the loader's as parked (the mappings at the sample's time), else the
 * process's now (BPF's own entry then, or none: the loader has read the
 * process since), else BPF's as parked; an entry as parked is completed
 * by the one now (merge_maps()).  NULL: none maps @pc, yet.  *@file: the
 * frame's file.
 */
static const struct cprof_proc_maps *walk_entry(struct deferred *d, struct deferred_rec *r,
						const struct deferred_ops *ops, uint64_t pc,
						uint32_t *file)
{
	const struct cprof_proc_maps *now = NULL;
	const struct cprof_proc_map *m;
	bool parked_has = r->has_entry && mapping_at(rec_maps(r), r->nmaps, pc);

	if (ops->entry(ops->ctx, r->h.key.pid, r->h.key.gen, d->pm) == 0 &&
	    d->pm->n <= CPROF_MAX_PROC_MAPS)
		now = d->pm;
	if (!(parked_has && !(r->flags & CPROF_PROC_MAPS_KERNEL)) && now &&
	    (m = mapping_at(now->m, now->n, pc))) {
		*file = m->file;
		return now;
	}
	if (!parked_has)
		return NULL;
	merge_maps(d->walk, rec_maps(r), r->nmaps, r->flags, now);
	if (!(m = mapping_at(d->walk->m, d->walk->n, pc))) {
		/* more than an entry holds: the parked ones alone */
		merge_maps(d->walk, rec_maps(r), r->nmaps, r->flags, NULL);
		m = mapping_at(d->walk->m, d->walk->n, pc);
	}
	*file = m->file;
	return d->walk;
}

/* The files of @pm's mappings, as BPF has them now, for the walk; @on 0: forgotten after. */
static void set_files(const struct cprof_proc_maps *pm, const struct deferred_ops *ops, bool on)
{
	static const struct cprof_file none = { .state = CPROF_FILE_NONE };

	for (uint32_t i = 0; pm && i < pm->n && i < CPROF_MAX_PROC_MAPS; i++) {
		struct cprof_file f;
		uint32_t file = pm->m[i].file;

		if (file >= CPROF_MAX_FILES)
			continue;
		if (!on || ops->file(ops->ctx, file, &f))
			f = none;
		f.asked = 1; /* the walk is not to ask: the loader knows */
		bpfu_set_file(file, &f);
	}
}

/*
 * The walk's reads of the rows array, a slot at a time from the map: a
 * mapping of the array is resident whole (the kernel maps every page of
 * it at once: 16 MB by default), and a walk reads a few hundred slots.
 * The BPF code uses each slot it looks up before it looks up the next;
 * four are kept all the same.  A slot that cannot be read reads as
 * zeroes: no rule, an index that says no rows.
 */
static const union cprof_table_slot *row_slot(void *ctx, uint32_t idx)
{
	struct deferred *d = ctx;
	union cprof_table_slot *s = &d->slots[d->next_slot++ & 3];

	if (d->ops->slot(d->ops->ctx, idx, s))
		memset(s, 0, sizeof(*s));
	return s;
}

/* Walks record @r on and counts it; 1: it waits still (its table is to come). */
static int walk_on(struct deferred *d, struct deferred_rec *r, const struct deferred_ops *ops,
		   bool *rows_set, double now, bool flush)
{
	struct cprof_sample_key k = r->h.key;
	const struct cprof_proc_maps *pm = NULL;
	bool late = flush || now - r->at >= DEFERRED_TIMEOUT_S;
	uint32_t file = CPROF_NO_FILE;
	struct cprof_file f;
	struct bpfu_walk *w;
	uint64_t hash;
	int bpf_status, ret;

	if (r->h.stack_len)
		pm = walk_entry(d, r, ops, r->h.exact ? r->h.pc : r->h.pc - 1, &file);
	if (!pm || file == CPROF_NO_FILE || ops->file(ops->ctx, file, &f)) {
		/* a mapping or file the loader has not read yet (none without a stack to walk) */
		if (r->h.stack_len && !late)
			return 1;
		d->st.timed_out++;
		return ops->count(ops->ctx, &k);
	}
	if (f.state == CPROF_FILE_NONE) {
		d->st.no_table++; /* frame pointers, as BPF walked it */
		return ops->count(ops->ctx, &k);
	}
	if (f.state != CPROF_FILE_LOADED) {
		if (f.state == CPROF_FILE_UNBUILT)
			ops->want(ops->ctx, file); /* numbered since, or dropped with its program */
		if (!late)
			return 1;
		d->st.timed_out++;
		return ops->count(ops->ctx, &k);
	}
	if (!*rows_set) {
		/* and the row cache forgets the tables walked by before */
		d->ops = ops;
		bpfu_set_rows_fn(row_slot, d, ops->nrows);
		*rows_set = true;
	}
	w = malloc(sizeof(*w));
	if (!w)
		return -ENOMEM;
	set_files(pm, ops, true);
	ret = bpfu_resume(k.pid, pm, &r->h, rec_stack(r), w);
	set_files(pm, ops, false);
	if (ret) {
		free(w);
		d->st.timed_out++;
		return ops->count(ops->ctx, &k);
	}
	d->st.walked++;
	w->st.status |= w->status;
	if (w->status == CPROF_UNWIND_OK) {
		d->st.complete++;
	} else if ((bpf_status = ops->stack_status(ops->ctx, k.ustack)) >= 0 &&
		   (bpf_status & 0xff) == CPROF_UNWIND_OK) {
		/* BPF's frame pointers went through (code that keeps them) */
		d->st.kept_bpf++;
		free(w);
		return ops->count(ops->ctx, &k);
	}
	hash = bpfu_stack_hash(&w->st, w->hash);
	ret = hash ? ops->stack(ops->ctx, hash, &w->st) : 0;
	free(w);
	if (ret)
		return ret;
	if (hash) {
		k.ustack = hash;
		k.uleaf = 0; /* stored whole */
	}
	return ops->count(ops->ctx, &k);
}

int deferred_run(struct deferred *d, const struct deferred_ops *ops, uint64_t drained_below,
		 double now, bool flush)
{
	bool rows_set = false;
	size_t kept = 0;
	int err = 0;

	for (size_t i = 0; i < d->n; i++) {
		struct deferred_rec *r = d->v[i];
		int ret = 1;

		/* its stacks not drained yet: a count must not name a stack not stored */
		if (r->h.epoch < drained_below)
			ret = walk_on(d, r, ops, &rows_set, now, flush);
		if (ret == 1) {
			d->v[kept++] = r;
			continue;
		}
		if (ret < 0 && !err)
			err = ret;
		d->bytes -= r->bytes;
		free(r);
	}
	d->n = kept;
	return err;
}
