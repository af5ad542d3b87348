// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/escape.h"
#include "util/grow.h"
#include "output/collect.h"
#include "output/gzbatch.h"
#include "output/gzfile.h"
#include "output/outdir.h"
#include "pprof.h"
#include "output/profile.h"
#include "output/pseudo.h"
#include "output/runframes.h"

enum frame_kind { FRAME_USER, FRAME_KERNEL, FRAME_PSEUDO, FRAME_PYTHON, FRAME_JAVA, FRAME_JS };

struct frame_key {
	uint64_t addr; /* Python: the code object */
	uint64_t pos;  /* Python: the instruction position; else 0 */
	uint32_t kind;
	uint32_t pad;
};

/*
 * A distinct frame of the process, symbolized once.  Its lines (inlined
 * calls, innermost first) are a run in writer.lines; the strings belong to
 * the symbolizer, the kallsyms table or the perf map table, all of which
 * outlive the writer.
 */
struct frame {
	struct frame_key key;
	int32_t map;      /* user: index in the process's maps; kernel: in writer.kmaps; -1 */
	uint32_t first;   /* index in writer.lines */
	uint8_t nlines;
	bool dwarf;       /* file, line and inlines were looked up */
	uint8_t pad[2];
	uint64_t loc_id;  /* 0 until emitted */
};

/* Kernel frames are grouped as perf does: [kernel.kallsyms] and one [module] each. */
#define KMAPS_MAX 128

struct kmap {
	const char *module; /* NULL: the core kernel */
	uint64_t lo, hi;    /* sampled addresses seen: [lo, hi] */
	bool complete;      /* every location named */
	uint64_t id;
};

/* Room for an escaped string (see escaped()). */
struct escbuf {
	char *p;
	size_t cap;
};

/* What each escbuf of a writer holds; those of labels live through a profile. */
enum esc_slot { ESC_COMM, ESC_CGROUP, ESC_THREAD, ESC_MAPPING, ESC_NAME, ESC_SYSNAME, ESC_FILE,
		ESC_SLOTS };

struct writer {
	struct process *p;
	struct sym_process view; /* what the symbolizer sees of p */
	const struct stackstore *stacks;
	struct symbolizer *sym;
	struct pprof_enc *enc;
	struct hmap frames;   /* frame_key -> frame */
	struct sym_line *lines;
	size_t nlines, lines_cap;
	uint64_t *map_ids;    /* pprof mapping id per vma (0: none) */
	struct kmap kmaps[KMAPS_MAX];
	size_t nkmaps;
	struct perfmap_table jit;
	uint64_t *locs;       /* scratch: one sample's location ids */
	size_t nlocs, locs_cap;
	struct profile_stats *st;
	int64_t period;
	bool off_cpu; /* off_cpu values too */
	struct escbuf esc[ESC_SLOTS];
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

/* --- strings a process controls ------------------------------------------- */

/* @s, or an escaped copy of it in @b when it has anything to escape. */
static const char *escaped(struct escbuf *b, const char *s)
{
	size_t n;

	if (!s)
		return NULL;
	n = escape_controls(s, NULL, 0);
	if (n == strlen(s))
		return s;
	if (b->cap < n + 1) {
		char *p = realloc(b->p, n + 1);

		if (!p)
			return "?"; /* never the raw bytes */
		b->p = p;
		b->cap = n + 1;
	}
	escape_controls(s, b->p, b->cap);
	return b->p;
}

static int push_lines(struct writer *w, struct frame *f, const struct sym_line *l, size_t n)
{
	if (grow_to((void **)&w->lines, &w->lines_cap, w->nlines + n, sizeof(*w->lines), 1024,
		    UINT32_MAX))
		return -ENOMEM;
	f->first = (uint32_t)w->nlines;
	f->nlines = (uint8_t)n;
	if (n)
		memcpy(w->lines + w->nlines, l, n * sizeof(*l));
	w->nlines += n;
	return 0;
}

/*
 * The kernel mapping a frame goes under; modules past KMAPS_MAX - 1 share
 * the core's (the last slot is always left for it).
 */
static int32_t kmap_of(struct writer *w, const char *module, uint64_t addr, bool named)
{
	size_t i;

	for (i = 0; i < w->nkmaps; i++)
		if (module == w->kmaps[i].module ||
		    (module && w->kmaps[i].module && !strcmp(module, w->kmaps[i].module)))
			break;
	if (i == w->nkmaps) {
		if (module && w->nkmaps >= KMAPS_MAX - 1)
			return kmap_of(w, NULL, addr, named);
		w->kmaps[w->nkmaps++] = (struct kmap){ module, addr, addr, true, 0 };
	}
	if (addr < w->kmaps[i].lo)
		w->kmaps[i].lo = addr;
	if (addr > w->kmaps[i].hi)
		w->kmaps[i].hi = addr;
	w->kmaps[i].complete &= named;
	return (int32_t)i;
}

/*
 * The address a frame's location shows: none for a Python frame, an
 * interpreted Java frame and a JavaScript one (no pc to show: what was
 * recorded is an object's address); a compiled Java frame's its pc.
 */
static uint64_t location_address(const struct frame_key *k)
{
	switch (k->kind) {
	case FRAME_PSEUDO:
	case FRAME_PYTHON:
	case FRAME_JS:
		return 0;
	case FRAME_JAVA:
		return k->addr & CPROF_JAVA_INTERP ? 0 : CPROF_JAVA_PC(k->addr);
	default:
		return k->addr;
	}
}

static struct frame *frame_get(struct writer *w, enum frame_kind kind, uint64_t addr, uint64_t pos)
{
	struct frame_key k = { .addr = addr, .pos = pos, .kind = kind };
	struct sym sym;
	struct frame *f;
	bool created;

	f = hmap_insert(&w->frames, &k, &created);
	if (!f || !created)
		return f;
	if (kind == FRAME_USER) {
		symbolize_user(w->sym, &w->view, addr, &sym);
	} else if (kind == FRAME_KERNEL) {
		symbolize_kernel(w->sym, addr, &sym);
	} else if (kind == FRAME_PYTHON) {
		runframe_python(w->p, addr, pos, &sym);
	} else if (kind == FRAME_JAVA) {
		runframe_java(w->p, addr, &sym);
	} else if (kind == FRAME_JS) {
		runframe_js(w->p, addr, &sym);
	} else {
		sym = (struct sym){ .vma = -1, .nlines = 1 };
		sym.lines[0].name = pseudo_name(addr);
	}
	f->map = kind == FRAME_KERNEL ? kmap_of(w, sym.module, addr, sym.nlines > 0) : sym.vma;
	f->dwarf = sym.dwarf;
	return push_lines(w, f, sym.lines, sym.nlines) ? NULL : f;
}

/*
 * Calls @fn for each frame of one side of a sample, leaf first; a missing
 * stack becomes its pseudo-frame.  One walk serves both the symbolization
 * pass and the emission pass.
 */
typedef int (*frame_fn)(struct writer *w, enum frame_kind kind, uint64_t addr, uint64_t pos);

/*
 * The Python frames of a sample (see "Python" in cprof.h), spliced into
 * its user stack: each native call of the interpreter loop gets its own
 * run of them, as the callers of its frame (the loop runs them), so that
 * the loop's own work and what a Python function calls (a C extension)
 * show below the function.
 */
struct splice {
	const uint64_t *py; /* code object and position, a pair a frame, leaf first */
	uint32_t n, at;     /* words, and the next one to give */
};

static void splice_init(struct writer *w, uint64_t pystack, struct splice *sp)
{
	*sp = (struct splice){ 0 };
	if (w->p->py && (pystack & CPROF_STACK_HASHED))
		sp->py = stackstore_get(w->stacks, pystack, &sp->n, NULL);
	if (!sp->py)
		sp->n = 0;
}

/* The frames of the next native call of the loop, or (@all) all that are left. */
static int splice_run(struct writer *w, struct splice *sp, bool all, frame_fn fn)
{
	while (sp->at + 1 < sp->n) {
		uint64_t code = sp->py[sp->at], pos = sp->py[sp->at + 1];
		int ret;

		sp->at += 2;
		ret = fn(w, FRAME_PYTHON, code, pos & ~CPROF_PY_ENTRY);
		if (ret)
			return ret;
		if ((pos & CPROF_PY_ENTRY) && !all)
			break;
	}
	return 0;
}

static int walk_stack(struct writer *w, uint64_t stack, enum frame_kind kind, frame_fn fn,
		      struct splice *sp)
{
	uint32_t nr = 0, status = 0;
	enum pseudo how = PSEUDO_NONE;
	const uint64_t *ip;
	int ret;

	if (stack == CPROF_STACK_NONE)
		return sp ? splice_run(w, sp, true, fn) : 0;
	if (!(stack & CPROF_STACK_HASHED) || !(ip = stackstore_get(w->stacks, stack, &nr, &status))) {
		ret = sp ? splice_run(w, sp, true, fn) : 0;
		if (!ret)
			ret = fn(w, FRAME_PSEUDO,
				 stack & CPROF_STACK_HASHED ? PSEUDO_UNKNOWN : pseudo_of_status(stack), 0);
		return ret;
	}
	for (uint32_t i = 0; i < nr; i++) {
		uint64_t addr = symbolize_frame_addr(ip[i], i);

		if (kind == FRAME_USER && (ip[i] & CPROF_JAVA_FRAME)) {
			/* names itself: its record, not an address (the process's runtime's) */
			if ((ret = fn(w, w->p->v8 ? FRAME_JS : FRAME_JAVA, ip[i], 0)))
				return ret;
			continue;
		}
		/*
		 * A frame-pointer walk through code that keeps no frame pointer
		 * reads stack garbage as return addresses (a process sampled
		 * before its tables were loaded): past the first one outside
		 * every mapping, nothing is a frame.
		 */
		if (kind == FRAME_USER && (status & CPROF_STACK_F_FP) && w->p->have_maps &&
		    !procmaps_find(&w->p->maps, ip[i])) {
			how = PSEUDO_UNMAPPED;
			break;
		}
		ret = fn(w, kind, addr, 0);
		if (!ret && sp && pyproc_is_eval(w->p->py, addr))
			ret = splice_run(w, sp, false, fn);
		if (ret)
			return ret;
	}
	/* Python frames whose native calls the walk did not reach go at its end. */
	if (sp && (ret = splice_run(w, sp, true, fn)))
		return ret;
	if (how == PSEUDO_UNMAPPED)
		return fn(w, FRAME_PSEUDO, PSEUDO_UNMAPPED, 0);
	/* Where the walk stopped early, say why at the root. */
	how = pseudo_of_unwind(status & 0xff);
	if (how != PSEUDO_NONE)
		return fn(w, FRAME_PSEUDO, how, 0);
	return 0;
}

static int note_frame(struct writer *w, enum frame_kind kind, uint64_t addr, uint64_t pos)
{
	return frame_get(w, kind, addr, pos) ? 0 : -ENOMEM;
}

/* Pass 1: symbolize every distinct frame of the process. */
static int symbolize_all(struct writer *w)
{
	struct aggregate_entry *e;
	size_t it = 0;
	int ret;

	while ((e = hmap_next(&w->p->samples.map, &it))) {
		struct splice sp;

		splice_init(w, e->key.pystack, &sp);
		ret = walk_stack(w, e->key.kstack, FRAME_KERNEL, note_frame, NULL);
		if (!ret)
			ret = walk_stack(w, e->key.ustack, FRAME_USER, note_frame, &sp);
		if (ret)
			return ret;
	}
	if (aggregate_lost_total(&w->p->samples))
		return note_frame(w, FRAME_PSEUDO, PSEUDO_LOST, 0);
	return 0;
}

static bool maybe_jit(const struct writer *w, const struct frame *f)
{
	return f->key.kind == FRAME_USER && !f->nlines &&
	       symbolize_maybe_jit(&w->view, f->map);
}

/*
 * User frames without a name in the JVM's own code (stubs, the
 * interpreter) that BPF did not record as Java frames, sampled before it
 * knew the JVM: named by their blobs.
 */
static int name_jvm_stubs(struct writer *w)
{
	struct frame *f;
	size_t it = 0;

	while (w->p->jvm && (f = hmap_next(&w->frames, &it))) {
		const struct jvm_named *m;
		struct sym_line l = { 0 };
		int ret;

		if (f->key.kind != FRAME_USER || f->nlines ||
		    !(m = jvm_stub_at(w->p->jvm, f->key.addr)))
			continue;
		l.name = m->function;
		if ((ret = push_lines(w, f, &l, 1)))
			return ret;
	}
	return 0;
}

/*
 * Pass 1b: frames in code no ELF object describes (JIT) are named from the
 * process's perf map, all in one read of it.  No perf map is no error.
 */
static int name_jit_frames(struct writer *w)
{
	uint64_t *addrs = NULL;
	size_t n = 0, cap = 0, it = 0;
	struct frame *f;
	int ret = 0;

	while ((f = hmap_next(&w->frames, &it))) {
		if (!maybe_jit(w, f))
			continue;
		if (grow((void **)&addrs, &cap, n, sizeof(*addrs), 256, GROW_NO_MAX)) {
			free(addrs);
			return -ENOMEM;
		}
		addrs[n++] = f->key.addr;
	}
	ret = name_jvm_stubs(w);
	if (!ret && n &&
	    symbolize_jit(w->sym, proctab_perfmap(w->p, NULL), addrs, n, &w->jit, NULL) == 0) {
		it = 0;
		while (!ret && (f = hmap_next(&w->frames, &it))) {
			const struct perfmap_sym *js;
			struct sym_line l = { 0 };

			if (!maybe_jit(w, f) || !(js = perfmap_find(&w->jit, f->key.addr)) ||
			    !js->name)
				continue;
			l.name = js->name;
			ret = push_lines(w, f, &l, 1);
		}
	}
	free(addrs);
	return ret;
}

/*
 * pprof's has_* flags of one mapping: files, lines and inline frames when
 * every location has them; functions when any has a name.  A mapping that
 * claims none of functions, files and lines is one pprof names itself,
 * every location of it, with its own addr2line over our names (nameless
 * static functions, relative paths, no start lines): one address no
 * symbol covers (a PLT stub) must not cost the others their names.
 */
struct map_flags {
	bool used, functions, filenames, line_numbers, inline_frames;
};

static void note_flags(struct map_flags *m, const struct frame *f, const struct sym_line *l)
{
	bool named = f->nlines > 0, files = f->nlines > 0, lines = f->nlines > 0;

	for (unsigned i = 0; i < f->nlines; i++) {
		named &= l[i].name != NULL;
		files &= l[i].file != NULL;
		lines &= l[i].line > 0;
	}
	m->used = true;
	m->functions |= named;
	m->filenames &= files;
	m->line_numbers &= lines;
	m->inline_frames &= f->dwarf;
}

static int emit_kernel_mappings(struct writer *w)
{
	for (size_t i = 0; i < w->nkmaps; i++) {
		struct kmap *k = &w->kmaps[i];
		char name[80];
		struct pprof_mapping m = {
			.start = k->lo,
			.limit = k->hi + 1,
			.filename = name,
			.has_functions = k->complete,
		};
		int64_t id;

		if (k->module)
			snprintf(name, sizeof(name), "[%s]", k->module);
		else
			snprintf(name, sizeof(name), "[kernel.kallsyms]");
		id = pprof_add_mapping(w->enc, &m);
		if (id < 0)
			return (int)id;
		k->id = (uint64_t)id;
	}
	return 0;
}

static int emit_mappings(struct writer *w)
{
	const struct vma_list *maps = &w->p->maps;
	struct map_flags *flags;
	struct frame *f;
	size_t it = 0;
	int ret = 0;

	w->map_ids = calloc(maps->n + 1, sizeof(*w->map_ids));
	flags = calloc(maps->n + 1, sizeof(*flags));
	if (!w->map_ids || !flags) {
		free(flags);
		return -ENOMEM;
	}
	for (size_t i = 0; i < maps->n; i++)
		flags[i] = (struct map_flags){ false, false, true, true, true };
	while ((f = hmap_next(&w->frames, &it)))
		if (f->key.kind == FRAME_USER && f->map >= 0)
			note_flags(&flags[f->map], f, w->lines + f->first);
	for (size_t i = 0; i < maps->n && ret >= 0; i++) {
		const struct vma *v = &maps->v[i];
		struct elfobj *o = w->p->objs ? w->p->objs[i] : NULL;
		const struct map_flags *mf = &flags[i];
		struct pprof_mapping m = {
			.start = v->start,
			.limit = v->end,
			.offset = v->offset,
			.filename = escaped(&w->esc[ESC_MAPPING], v->path),
			.build_id = o ? elfobj_build_id(o) : NULL,
			.has_functions = mf->used && mf->functions,
			.has_filenames = mf->used && mf->filenames,
			.has_line_numbers = mf->used && mf->line_numbers,
			.has_inline_frames = mf->used && mf->inline_frames,
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
	if (ret >= 0)
		ret = emit_kernel_mappings(w);
	free(flags);
	return ret < 0 ? ret : 0;
}

static int64_t location_of(struct writer *w, struct frame *f)
{
	struct pprof_line lines[SYM_MAX_LINES];
	const struct sym_line *l = w->lines + f->first;
	uint64_t map_id = 0;
	size_t n = 0;
	int64_t id;

	if (f->loc_id)
		return (int64_t)f->loc_id;
	if (f->key.kind == FRAME_KERNEL && f->map >= 0)
		map_id = w->kmaps[f->map].id;
	else if (f->key.kind == FRAME_USER && f->map >= 0)
		map_id = w->map_ids[f->map];
	for (unsigned i = 0; i < f->nlines; i++) {
		struct pprof_function fn = {
			.name = escaped(&w->esc[ESC_NAME], l[i].name),
			.system_name = escaped(&w->esc[ESC_SYSNAME], l[i].system_name),
			.filename = escaped(&w->esc[ESC_FILE], l[i].file),
			.start_line = l[i].start_line,
		};

		/* A line needs a function: DWARF rows of nameless code are left out. */
		if (!fn.name)
			continue;
		id = pprof_add_function(w->enc, &fn);
		if (id < 0)
			return id;
		lines[n++] = (struct pprof_line){ .function_id = (uint64_t)id, .line = l[i].line };
	}
	if (!n && f->key.kind == FRAME_USER)
		w->st->unsymbolized++;
	id = pprof_add_location(w->enc, map_id, location_address(&f->key), lines, n);
	if (id > 0) {
		f->loc_id = (uint64_t)id;
		w->st->locations++;
	}
	return id;
}

static int push_location(struct writer *w, enum frame_kind kind, uint64_t addr, uint64_t pos)
{
	struct frame_key k = { .addr = addr, .pos = pos, .kind = kind };
	struct frame *f = hmap_find(&w->frames, &k);
	int64_t id;

	if (!f)
		return -ENOENT;
	id = location_of(w, f);
	if (id < 0)
		return (int)id;
	if (grow((void **)&w->locs, &w->locs_cap, w->nlocs, sizeof(*w->locs), 256, GROW_NO_MAX))
		return -ENOMEM;
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

#define MAX_LABELS 10

/*
 * The labels every sample of the process carries: pid and comm, and where
 * known its cgroup, container and pid in its own namespace.  Returns how
 * many were written to @l (room for MAX_LABELS).
 */
static size_t process_labels(struct writer *w, const char *proc_comm, struct pprof_label *l)
{
	const struct process *p = w->p;
	size_t n = 0;

	l[n++] = (struct pprof_label){ .key = "pid", .num = p->pid };
	l[n++] = (struct pprof_label){ .key = "comm",
				       .str = escaped(&w->esc[ESC_COMM], proc_comm) };
	if (p->cgroup.path[0])
		l[n++] = (struct pprof_label){ .key = "cgroup",
					       .str = escaped(&w->esc[ESC_CGROUP], p->cgroup.path) };
	if (p->cgroup.container_id[0])
		l[n++] = (struct pprof_label){ .key = "container_id",
					       .str = p->cgroup.container_id };
	if (p->ns_pid && p->ns_pid != p->pid)
		l[n++] = (struct pprof_label){ .key = "ns_pid", .num = p->ns_pid };
	return n;
}

size_t profile_values(const struct aggregate_entry *e, int64_t period, bool off_cpu,
		      int64_t values[PROFILE_MAX_VALUES])
{
	values[0] = (int64_t)e->count;
	values[1] = (int64_t)e->count * period;
	if (!off_cpu)
		return 2;
	values[2] = (int64_t)e->off_cpu_ns;
	return 3;
}

static int emit_samples(struct writer *w, const char *proc_comm)
{
	struct pprof_label labels[MAX_LABELS];
	size_t nproc = process_labels(w, proc_comm, labels);
	struct aggregate_entry *e;
	size_t it = 0;
	int ret;

	while ((e = hmap_next(&w->p->samples.map, &it))) {
		int64_t values[PROFILE_MAX_VALUES];
		size_t nvalues = profile_values(e, w->period, w->off_cpu, values);
		const char *how = unwind_label(w, e->key.ustack);
		size_t nlabels = nproc;
		struct splice sp;

		labels[nlabels++] = (struct pprof_label){ .key = "tid", .num = e->key.tid };
		char thread[CPROF_COMM_LEN + 1];

		/* BPF's copy of the name: NUL-terminated unless it fills the field. */
		memcpy(thread, e->key.comm, CPROF_COMM_LEN);
		thread[CPROF_COMM_LEN] = '\0';
		labels[nlabels++] = (struct pprof_label){
			.key = "thread_name", .str = escaped(&w->esc[ESC_THREAD], thread) };
		if (how)
			labels[nlabels++] = (struct pprof_label){ .key = "unwind", .str = how };
		w->nlocs = 0;
		splice_init(w, e->key.pystack, &sp);
		ret = walk_stack(w, e->key.kstack, FRAME_KERNEL, push_location, NULL);
		if (!ret)
			ret = walk_stack(w, e->key.ustack, FRAME_USER, push_location, &sp);
		if (ret)
			return ret;
		ret = pprof_add_sample(w->enc, w->locs, w->nlocs, values, nvalues, labels, nlabels);
		if (ret)
			return ret;
		w->st->samples += e->count;
	}
	return 0;
}

/* Samples that never made it into a count still show, on one pseudo-frame. */
static int emit_lost(struct writer *w, const char *proc_comm)
{
	uint64_t lost = aggregate_lost_total(&w->p->samples);
	struct pprof_label labels[MAX_LABELS];
	size_t nlabels = process_labels(w, proc_comm, labels);
	const struct aggregate_entry e = { .count = lost };
	int64_t values[PROFILE_MAX_VALUES];
	size_t nvalues = profile_values(&e, w->period, w->off_cpu, values);
	int ret;

	if (!lost)
		return 0;
	w->nlocs = 0;
	ret = push_location(w, FRAME_PSEUDO, PSEUDO_LOST, 0);
	if (!ret)
		ret = pprof_add_sample(w->enc, w->locs, w->nlocs, values, nvalues, labels, nlabels);
	if (!ret)
		w->st->samples += lost;
	return ret;
}

int profile_write(struct outdir *out, const char *name, struct process *p,
		  const struct stackstore *stacks, struct symbolizer *sym,
		  const struct profile_meta *meta, struct profile_stats *st,
		  struct errbuf *err)
{
	static const struct pprof_value_type types[PROFILE_MAX_VALUES] = {
		{ "samples", "count" },
		{ "cpu", "nanoseconds" },
		{ "off_cpu", "nanoseconds" },
	};
	const struct pprof_meta pm = {
		.sample_types = types,
		.n_sample_types = meta->off_cpu ? 3 : 2,
		/* pprof would show the last type first: CPU stays the default */
		.default_sample_type = meta->off_cpu ? "cpu" : NULL,
		.period_type = { "cpu", "nanoseconds" },
		.period = meta->period,
		.time_nanos = meta->time_nanos,
		.duration_nanos = meta->duration_nanos,
	};
	struct writer w = {
		.p = p,
		.view = collect_view(p),
		.stacks = stacks,
		.sym = sym,
		.st = st,
		.period = meta->period,
		.off_cpu = meta->off_cpu,
	};
	struct gzfile *gz = NULL;
	int ret;

	memset(st, 0, sizeof(*st));
	hmap_init(&w.frames, sizeof(struct frame_key), sizeof(struct frame));
	ret = symbolize_all(&w);
	if (!ret)
		ret = name_jit_frames(&w);
	if (ret) {
		errf(err, ret, "%s: symbolizing: %s", name, strerror(-ret));
		goto out;
	}
	ret = outdir_create(out, name, &gz, err);
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
	ret = meta->batch ? gzbatch_add(meta->batch, gz, err) : gzfile_commit(gz, err);
	gz = NULL;
out:
	if (gz)
		gzfile_abort(gz);
	pprof_enc_free(w.enc);
	hmap_free(&w.frames);
	free(w.lines);
	free(w.map_ids);
	free(w.locs);
	perfmap_free(&w.jit);
	for (size_t i = 0; i < ESC_SLOTS; i++)
		free(w.esc[i].p);
	/* Nothing of this process is looked up again: its objects may go. */
	symbolizer_done(sym, &w.view);
	return ret;
}
