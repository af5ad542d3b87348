// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "pprof.h"
#include "profile.h"

enum frame_kind { FRAME_USER, FRAME_KERNEL, FRAME_PSEUDO };

/* Pseudo-frames: why a sample has no (complete) stack. */
enum pseudo {
	PSEUDO_LOST,       /* the sample itself was not counted */
	PSEUDO_READ,       /* CPROF_STACK_ERR_READ */
	PSEUDO_EMPTY,      /* CPROF_STACK_ERR_EMPTY */
	PSEUDO_FULL,       /* CPROF_STACK_ERR_FULL */
	PSEUDO_UNKNOWN,    /* a stack hash with no stored frames */
	/* a user stack walk that stopped early: enum cprof_unwind_status */
	PSEUDO_TRUNCATED,
	PSEUDO_UNWIND_READ,
	PSEUDO_NO_ROW,
	PSEUDO_BAD_CFA,
	PSEUDO_MAX,
};

static const char *const pseudo_names[PSEUDO_MAX] = {
	[PSEUDO_LOST] = "[lost samples]",
	[PSEUDO_READ] = "[unwind: stack read failed]",
	[PSEUDO_EMPTY] = "[unwind: no user frames]",
	[PSEUDO_FULL] = "[lost: stack map full]",
	[PSEUDO_UNKNOWN] = "[lost: stack not found]",
	[PSEUDO_TRUNCATED] = "[unwind: truncated]",
	[PSEUDO_UNWIND_READ] = "[unwind: stack read failed]",
	[PSEUDO_NO_ROW] = "[unwind: no CFI for pc]",
	[PSEUDO_BAD_CFA] = "[unwind: bad CFA]",
};

static const enum pseudo unwind_pseudo[CPROF_UNWIND_STATUS_MAX] = {
	[CPROF_UNWIND_TRUNCATED] = PSEUDO_TRUNCATED,
	[CPROF_UNWIND_READ] = PSEUDO_UNWIND_READ,
	[CPROF_UNWIND_NO_ROW] = PSEUDO_NO_ROW,
	[CPROF_UNWIND_BAD_CFA] = PSEUDO_BAD_CFA,
};

struct frame_key {
	uint64_t addr;
	uint32_t kind;
	uint32_t pad;
};

struct frame {
	struct frame_key key;
	struct sym sym;
	uint64_t loc_id; /* 0 until emitted */
};

struct writer {
	struct process *p;
	const struct stackstore *stacks;
	const struct symbolizer *sym;
	struct pprof_enc *enc;
	struct hmap frames;   /* frame_key -> frame */
	uint64_t *map_ids;    /* pprof mapping id per vma (0: none) */
	uint64_t kernel_map_id;
	uint64_t *locs;       /* scratch: one sample's location ids */
	size_t nlocs, locs_cap;
	struct profile_stats *st;
	int64_t period;
};

void profile_filename(const struct process *p, char *buf, size_t len)
{
	char comm[CPROF_COMM_LEN];
	size_t i;

	for (i = 0; i < sizeof(comm) - 1 && p->comm[i]; i++) {
		unsigned char c = (unsigned char)p->comm[i];

		comm[i] = (c == '/' || c < 0x20 || c == 0x7f || c == ' ') ? '_' : (char)c;
	}
	comm[i] = '\0';
	if (comm[0] == '.')
		comm[0] = '_';
	snprintf(buf, len, "%s-%u.pb.gz", comm[0] ? comm : "unknown", p->pid);
}

/* Callers' addresses are return addresses: step back into the call. */
static uint64_t frame_addr(uint64_t ip, uint32_t depth)
{
	return depth > 0 && ip > 0 ? ip - 1 : ip;
}

static struct frame *frame_get(struct writer *w, enum frame_kind kind, uint64_t addr)
{
	struct frame_key k = { .addr = addr, .kind = kind };
	struct frame *f;
	bool created;

	f = hmap_insert(&w->frames, &k, &created);
	if (!f || !created)
		return f;
	if (kind == FRAME_USER)
		symbolize_user(w->sym, w->p, addr, &f->sym);
	else if (kind == FRAME_KERNEL)
		symbolize_kernel(w->sym, addr, &f->sym);
	else
		f->sym = (struct sym){ .vma = -1, .name = pseudo_names[addr] };
	return f;
}

static enum pseudo status_pseudo(uint64_t status)
{
	switch (status) {
	case CPROF_STACK_ERR_READ:
		return PSEUDO_READ;
	case CPROF_STACK_ERR_EMPTY:
		return PSEUDO_EMPTY;
	case CPROF_STACK_ERR_FULL:
		return PSEUDO_FULL;
	default:
		return PSEUDO_UNKNOWN;
	}
}

/*
 * Calls @fn for each frame of one side of a sample, leaf first; a missing
 * stack becomes its pseudo-frame.  One walk serves both the symbolization
 * pass and the emission pass.
 */
typedef int (*frame_fn)(struct writer *w, enum frame_kind kind, uint64_t addr);

static int walk_stack(struct writer *w, uint64_t stack, enum frame_kind kind, frame_fn fn)
{
	uint32_t nr = 0, status = 0, how;
	const uint64_t *ip;
	int ret;

	if (stack == CPROF_STACK_NONE)
		return 0;
	if (!(stack & CPROF_STACK_HASHED))
		return fn(w, FRAME_PSEUDO, status_pseudo(stack));
	ip = stackstore_get(w->stacks, stack, &nr, &status);
	if (!ip)
		return fn(w, FRAME_PSEUDO, PSEUDO_UNKNOWN);
	for (uint32_t i = 0; i < nr; i++) {
		ret = fn(w, kind, frame_addr(ip[i], i));
		if (ret)
			return ret;
	}
	/* Where the walk stopped early, say why at the root. */
	how = status & 0xff;
	if (how && how < CPROF_UNWIND_STATUS_MAX && unwind_pseudo[how])
		return fn(w, FRAME_PSEUDO, unwind_pseudo[how]);
	return 0;
}

static int note_frame(struct writer *w, enum frame_kind kind, uint64_t addr)
{
	return frame_get(w, kind, addr) ? 0 : -ENOMEM;
}

/* Pass 1: symbolize every distinct frame of the process. */
static int symbolize_all(struct writer *w)
{
	struct agg_entry *e;
	size_t it = 0;
	int ret;

	while ((e = hmap_next(&w->p->samples.map, &it))) {
		ret = walk_stack(w, e->key.kstack, FRAME_KERNEL, note_frame);
		if (!ret)
			ret = walk_stack(w, e->key.ustack, FRAME_USER, note_frame);
		if (ret)
			return ret;
	}
	if (agg_lost_total(&w->p->samples))
		return note_frame(w, FRAME_PSEUDO, PSEUDO_LOST);
	return 0;
}

static int emit_mappings(struct writer *w)
{
	const struct vma_list *maps = &w->p->maps;
	bool *complete, *used, any_kernel = false;
	uint64_t kmin = UINT64_MAX, kmax = 0;
	struct frame *f;
	size_t it = 0;
	int ret = 0;

	w->map_ids = calloc(maps->n + 1, sizeof(*w->map_ids));
	complete = calloc(maps->n + 1, sizeof(*complete));
	used = calloc(maps->n + 1, sizeof(*used));
	if (!w->map_ids || !complete || !used) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < maps->n; i++)
		complete[i] = true;
	while ((f = hmap_next(&w->frames, &it))) {
		if (f->key.kind == FRAME_KERNEL) {
			any_kernel = true;
			kmin = f->key.addr < kmin ? f->key.addr : kmin;
			kmax = f->key.addr > kmax ? f->key.addr : kmax;
		} else if (f->key.kind == FRAME_USER && f->sym.vma >= 0) {
			used[f->sym.vma] = true;
			if (!f->sym.name)
				complete[f->sym.vma] = false;
		}
	}
	for (size_t i = 0; i < maps->n && ret >= 0; i++) {
		const struct vma *v = &maps->v[i];
		struct elfobj *o = w->p->objs ? w->p->objs[i] : NULL;
		struct pprof_mapping m = {
			.start = v->start,
			.limit = v->end,
			.offset = v->offset,
			.filename = v->path,
			.build_id = o ? elfobj_build_id(o) : NULL,
			.has_functions = used[i] && complete[i],
		};
		int64_t id;

		/* Anonymous text (JIT, huge-page copies) has no file to name. */
		if (v->kind == VMA_ANON)
			continue;
		id = pprof_add_mapping(w->enc, &m);
		if (id < 0)
			ret = (int)id;
		else
			w->map_ids[i] = (uint64_t)id;
	}
	if (any_kernel && ret >= 0) {
		struct pprof_mapping m = {
			.start = kmin,
			.limit = kmax + 1,
			.filename = "[kernel.kallsyms]",
			.has_functions = w->sym->ksyms != NULL,
		};
		int64_t id = pprof_add_mapping(w->enc, &m);

		if (id < 0)
			ret = (int)id;
		else
			w->kernel_map_id = (uint64_t)id;
	}
out:
	free(complete);
	free(used);
	return ret < 0 ? ret : 0;
}

static int64_t location_of(struct writer *w, struct frame *f)
{
	struct pprof_line line = { 0 };
	uint64_t map_id = 0;
	int64_t id;

	if (f->loc_id)
		return (int64_t)f->loc_id;
	if (f->key.kind == FRAME_KERNEL)
		map_id = w->kernel_map_id;
	else if (f->key.kind == FRAME_USER && f->sym.vma >= 0)
		map_id = w->map_ids[f->sym.vma];
	if (f->sym.name) {
		struct pprof_function fn = { .name = f->sym.name };

		id = pprof_add_function(w->enc, &fn);
		if (id < 0)
			return id;
		line.function_id = (uint64_t)id;
	} else if (f->key.kind == FRAME_USER) {
		w->st->unsymbolized++;
	}
	id = pprof_add_location(w->enc, map_id,
				f->key.kind == FRAME_PSEUDO ? 0 : f->key.addr, &line,
				line.function_id ? 1 : 0);
	if (id > 0) {
		f->loc_id = (uint64_t)id;
		w->st->locations++;
	}
	return id;
}

static int push_location(struct writer *w, enum frame_kind kind, uint64_t addr)
{
	struct frame_key k = { .addr = addr, .kind = kind };
	struct frame *f = hmap_find(&w->frames, &k);
	int64_t id;

	if (!f)
		return -ENOENT;
	id = location_of(w, f);
	if (id < 0)
		return (int)id;
	if (w->nlocs == w->locs_cap) {
		size_t cap = w->locs_cap ? w->locs_cap * 2 : 256;
		uint64_t *l = realloc(w->locs, cap * sizeof(*l));

		if (!l)
			return -ENOMEM;
		w->locs = l;
		w->locs_cap = cap;
	}
	w->locs[w->nlocs++] = (uint64_t)id;
	return 0;
}

/* How the user stack was walked: "dwarf", "fp" or "mixed"; NULL: no stack. */
static const char *unwind_label(const struct writer *w, uint64_t ustack)
{
	uint32_t nr, status = 0;

	if (!(ustack & CPROF_STACK_HASHED) ||
	    !stackstore_get(w->stacks, ustack, &nr, &status))
		return NULL;
	if ((status & CPROF_STACK_F_DWARF) && (status & CPROF_STACK_F_FP))
		return "mixed";
	if (status & CPROF_STACK_F_DWARF)
		return "dwarf";
	return status & CPROF_STACK_F_FP ? "fp" : NULL;
}

static int emit_samples(struct writer *w, const char *proc_comm)
{
	struct agg_entry *e;
	size_t it = 0;
	int ret;

	while ((e = hmap_next(&w->p->samples.map, &it))) {
		const struct pprof_label labels[] = {
			{ .key = "pid", .num = w->p->pid },
			{ .key = "tid", .num = e->key.tid },
			{ .key = "comm", .str = proc_comm },
			{ .key = "thread_name", .str = e->key.comm },
		};
		int64_t values[2] = { (int64_t)e->count, 0 };
		const char *how = unwind_label(w, e->key.ustack);
		size_t nlabels = sizeof(labels) / sizeof(labels[0]);
		struct pprof_label all[sizeof(labels) / sizeof(labels[0]) + 1];

		memcpy(all, labels, sizeof(labels));
		if (how)
			all[nlabels++] = (struct pprof_label){ .key = "unwind", .str = how };
		w->nlocs = 0;
		ret = walk_stack(w, e->key.kstack, FRAME_KERNEL, push_location);
		if (!ret)
			ret = walk_stack(w, e->key.ustack, FRAME_USER, push_location);
		if (ret)
			return ret;
		values[1] = values[0] * w->period;
		ret = pprof_add_sample(w->enc, w->locs, w->nlocs, values, 2, all, nlabels);
		if (ret)
			return ret;
		w->st->samples += e->count;
	}
	return 0;
}

/* Samples that never made it into a count still show, on one pseudo-frame. */
static int emit_lost(struct writer *w, const char *proc_comm)
{
	uint64_t lost = agg_lost_total(&w->p->samples);
	const struct pprof_label labels[] = {
		{ .key = "pid", .num = w->p->pid },
		{ .key = "comm", .str = proc_comm },
	};
	int64_t values[2] = { (int64_t)lost, (int64_t)lost * w->period };
	int ret;

	if (!lost)
		return 0;
	w->nlocs = 0;
	ret = push_location(w, FRAME_PSEUDO, PSEUDO_LOST);
	if (!ret)
		ret = pprof_add_sample(w->enc, w->locs, w->nlocs, values, 2, labels, 2);
	if (!ret)
		w->st->samples += lost;
	return ret;
}

int profile_write(int dirfd, const char *name, struct process *p,
		  const struct stackstore *stacks, const struct symbolizer *sym,
		  const struct profile_meta *meta, struct profile_stats *st,
		  struct errbuf *err)
{
	static const struct pprof_value_type types[] = {
		{ "samples", "count" },
		{ "cpu", "nanoseconds" },
	};
	const struct pprof_meta pm = {
		.sample_types = types,
		.n_sample_types = 2,
		.period_type = { "cpu", "nanoseconds" },
		.period = meta->period,
		.time_nanos = meta->time_nanos,
		.duration_nanos = meta->duration_nanos,
	};
	struct writer w = {
		.p = p,
		.stacks = stacks,
		.sym = sym,
		.st = st,
		.period = meta->period,
	};
	struct gzfile *gz = NULL;
	int ret;

	memset(st, 0, sizeof(*st));
	hmap_init(&w.frames, sizeof(struct frame_key), sizeof(struct frame));
	ret = symbolize_all(&w);
	if (ret) {
		errf(err, ret, "%s: symbolizing: %s", name, strerror(-ret));
		goto out;
	}
	ret = gzfile_create(&gz, dirfd, name, err);
	if (ret)
		goto out;
	ret = pprof_enc_new(&w.enc, &pm, (struct pprof_sink){ gzfile_sink_write, gz });
	if (ret) {
		errf(err, ret, "%s: %s", name, strerror(-ret));
		goto out;
	}
	ret = emit_mappings(&w);
	if (!ret)
		ret = emit_samples(&w, p->comm);
	if (!ret)
		ret = emit_lost(&w, p->comm);
	if (!ret)
		ret = pprof_finish(w.enc);
	if (ret) {
		errf(err, ret, "%s: %s", name, strerror(-ret));
		goto out;
	}
	ret = gzfile_commit(gz, err);
	gz = NULL;
out:
	if (gz)
		gzfile_abort(gz);
	pprof_enc_free(w.enc);
	hmap_free(&w.frames);
	free(w.map_ids);
	free(w.locs);
	return ret;
}
