/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * unwind.bpf.h: the user-stack unwinder.  Per frame: record the pc, find
 * the mapping that holds it, the CFI row of that pc in the mapping's table
 * (bpf/cprof.h), and from it the caller's pc, sp and rbp; by frame
 * pointers where no table covers the pc.  The stack is read through a
 * per-CPU window of it.
 *
 * Also compiled as plain C, with user/unwind/bpfshim.h standing in for the
 * BPF helpers, so that unit tests run this code over real tables and
 * recorded stacks (user/unwind/bpfunwind.c).
 */
#ifndef CPROF_UNWIND_BPF_H
#define CPROF_UNWIND_BPF_H

#include "base.bpf.h"
#include "entry.bpf.h"
#include "framestep.bpf.h"
#include "jvm.bpf.h"
#include "pytramp.bpf.h"
#include "stacks.bpf.h"
#include "state.bpf.h"
#include "steps.bpf.h"
#include "v8.bpf.h"
#include "vma.bpf.h"
#include "window.bpf.h"

/* A sample whose walk meets a table still to be built is sent to be walked again (defer.bpf.h). */
CPROF_SETTING bool defer_walks = false;

/* The walk's state (struct unwind_ctx, framestep.bpf.h): this CPU's. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct unwind_ctx);
} unwind_walks SEC(".maps");

/* Names a lookup of table offset @rel in table @t; 0: no such offset. */
static __always_inline __u64 row_key(const struct cprof_table *t, __u64 rel)
{
	return rel >> 32 ? 0 : (__u64)(t->first + 1) << 32 | rel;
}

/*
 * Branch-free binary searches: a fixed number of halvings with no
 * data-dependent jumps (comparisons are done by subtraction and the sign
 * bit, which clang cannot turn back into jumps), so the verifier walks one
 * path, and they can run inside the per-frame callback without a bpf_loop
 * of their own.
 */

/* 1 when a <= b, for values below 2^63 (user addresses, not [vsyscall]'s; row pcs). */
static __always_inline __u64 le_bit(__u64 a, __u64 b)
{
	return 1 - ((b - a) >> 63);
}

/* File number -> where its table is in unwind_rows (struct cprof_file). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CPROF_MAX_FILES);
	__type(key, __u32);
	__type(value, struct cprof_file);
} unwind_files SEC(".maps");

/* Asks the loader for the table of file @file, which a sample landed in. */
static __always_inline void ask_table(__u32 pid, __u32 file, struct cprof_file *f)
{
	struct cprof_file_event *ev;

	f->asked = 1; /* two CPUs may both ask: the loader queues it once */
	ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
	if (!ev) {
		f->asked = 0; /* the next sample asks again */
		return;
	}
	__builtin_memset(ev, 0, sizeof(*ev));
	ev->type = CPROF_EV_WANT_TABLE;
	ev->pid = pid;
	ev->file = file;
	bpf_ringbuf_submit(ev, 0);
}

/*
 * The table of file number @file into @out->tab (nrows 0: none), asking
 * for it if it was never built; @out->waiting says whether it is to come.
 */
static __always_inline void load_table(__u32 pid, __u32 file, struct cur_map *out)
{
	struct cprof_file *f = NULL;

	if (file < CPROF_MAX_FILES)
		f = bpf_map_lookup_elem(&unwind_files, &file);
	out->tab.nrows = 0;
	out->waiting = 0;
	if (!f)
		return;
	if (f->state == CPROF_FILE_LOADED) {
		out->tab = f->t;
		return;
	}
	if (f->state == CPROF_FILE_UNBUILT || f->state == CPROF_FILE_QUEUED)
		out->waiting = file + 1;
	if (f->state == CPROF_FILE_UNBUILT && !f->asked)
		ask_table(pid, file, f);
}

/*
 * The mapping containing @pc from the kernel's VMA, with its file's table
 * if the loader numbered the file; -1: none, -2: a file it has not.  For a pc outside the
 * process's entry (a library loaded since the loader read it; an entry
 * of before an exec) or in a process without one; there, with @remember,
 * the mapping goes into its kernel entry.  Works once a sample (above).  A
 * global function, as find_mapping().
 */
__noinline int find_vma_mapping(__u64 pc, __u32 pid, __u32 remember, struct cur_map *out)
{
	const struct cprof_file_ref *ref;
	struct vma_file v;

	if (!out || !file_tables || vma_file_of(pc, &v))
		return -1;
	ref = bpf_map_lookup_elem(&unwind_file_keys, &v.key);
	if (!ref)
		return -2;
	out->start = v.start;
	out->end = v.end;
	out->added = 0;
	out->bias = mapping_bias(v.start, v.pgoff, ref);
	load_table(pid, ref->file, out);
	if (remember)
		remember_vma(pid, out->start, out->end, out->bias, ref->file);
	return 0;
}

/*
 * The mapping containing @pc in process @pid's entry @pm, with its table,
 * into @out; -1: none.  Mappings are sorted and disjoint.  A global
 * function: verified once, and what it leaves in @out is unknown to the
 * verifier after the call, so the walk's states do not multiply by it.
 */
__noinline int find_mapping(const struct cprof_proc_maps *pm, __u64 pc, __u32 pid,
			    struct cur_map *out)
{
	const struct cprof_proc_map *m;
	__u32 n, lo = 0, len, half, idx;

	if (!pm || !out)
		return -1;
	n = pm->n;
	if (n > CPROF_MAX_PROC_MAPS)
		n = CPROF_MAX_PROC_MAPS;
	/* the last mapping with start <= pc, if any */
	len = n;
	_Static_assert(CPROF_MAX_PROC_MAPS <= 1 << 8, "9 halvings find a mapping");
	for (int i = 0; i < 9; i++) { /* ceil(log2(CPROF_MAX_PROC_MAPS)) + 1 */
		if (!len) /* the one jump: it only leaves the loop */
			break;
		half = len / 2;
		idx = (lo + half) & (CPROF_MAX_PROC_MAPS - 1);
		lo += le_bit(pm->m[idx].start, pc) * (len - half);
		len = half;
	}
	/* lo: how many mappings start at or below pc (1-based position) */
	if (lo == 0 || lo > n)
		return -1;
	m = &pm->m[(lo - 1) & (CPROF_MAX_PROC_MAPS - 1)];
	if (pc >= m->end)
		return -1;
	out->start = m->start;
	out->end = m->end;
	out->bias = m->bias;
	out->added = m->flags & CPROF_MAP_ADDED;
	load_table(pid, m->file, out);
	return 0;
}

/*
 * Unwind tables of every loaded object, each a contiguous range of slots
 * (bpf/cprof.h).  The loader sizes it before load (the table budget) and
 * writes tables through an mmap; lookups in an array map are inlined by
 * the verifier, so a binary search costs a few instructions a probe.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, union cprof_table_slot);
} unwind_rows SEC(".maps");

/* Slot @idx of the rows array, or NULL. */
static __always_inline const union cprof_table_slot *table_slot(__u32 idx)
{
	return bpf_map_lookup_elem(&unwind_rows, &idx);
}

/* Entry @k of table @t's page index. */
static __always_inline int index_entry(const struct cprof_table *t, __u32 k, __u32 *out)
{
	const union cprof_table_slot *e = table_slot(CPROF_TABLE_INDEX_AT(t) + k / 2);

	if (!e)
		return -1;
	*out = e->index[k & 1];
	return 0;
}

/* The rule number of row @idx, the rarer ones from the exceptions. */
static __always_inline int rule_number(const struct cprof_table *t, __u32 idx, __u32 *out)
{
	const union cprof_table_slot *s = table_slot(CPROF_TABLE_IDS_AT(t) + idx / 8);
	__u32 at = CPROF_TABLE_EXC_AT(t), lo = 0, len = t->nexc, half;

	if (!s)
		return -1;
	*out = s->id[idx & 7];
	if (*out != CPROF_ID_ESCAPE)
		return 0;
	/* the last exception with row <= idx: it must be idx's */
	for (int i = 0; i < 26; i++) { /* tables have < 2^25 rows */
		if (!len)
			break;
		half = len / 2;
		s = table_slot(at + lo + half);
		if (!s)
			return -1;
		lo += le_bit(s->exc.row, idx) * (len - half);
		len = half;
	}
	s = lo ? table_slot(at + lo - 1) : NULL;
	if (!s || s->exc.row != idx)
		return -1;
	*out = s->exc.id;
	return 0;
}

/*
 * The rule of the last row at or below @rel in table @t: the rows of
 * @rel's page by binary search over their 16-bit pcs, or the row before
 * them, which covers the page's start.  *@first and *@last: the offsets in
 * the page from and to which that row holds (it may hold beyond them, in
 * the pages next to it).
 */
static __always_inline int search_row(const struct cprof_table *t, __u64 rel,
				      struct cprof_unwind_rule *out, __u32 *first, __u32 *last)
{
	__u32 nrows = t->nrows, shift = t->index_shift & 31, lo, len, half, idx, a, b, num;
	const union cprof_table_slot *s;
	__u64 page, off;

	if (!nrows)
		return -1;
	page = rel >> shift;
	*first = 0;
	*last = (1u << shift) - 1;
	if (page >= t->npages) {
		/* past the last row's page: the last row */
		lo = nrows;
	} else {
		if (index_entry(t, page, &a) || index_entry(t, page + 1, &b))
			return -1;
		if (a > b || b > nrows)
			return -1; /* not an index we wrote */
		off = rel & ((1u << shift) - 1);
		lo = a;
		len = b - a;
		_Static_assert(CPROF_INDEX_SHIFT_MAX < 17, "17 halvings search a page");
		for (int i = 0; i < 17; i++) {
			if (!len) /* the one jump: it only leaves the loop */
				break;
			half = len / 2;
			idx = lo + half;
			s = table_slot(CPROF_TABLE_PCS_AT(t) + idx / 4);
			if (!s)
				return -1;
			lo += le_bit(s->pc[idx & 3], off) * (len - half);
			len = half;
		}
		/* the row's own pc and the next row's, where they are in the page */
		if (lo > a && (s = table_slot(CPROF_TABLE_PCS_AT(t) + (lo - 1) / 4)))
			*first = s->pc[(lo - 1) & 3];
		if (lo < b && (s = table_slot(CPROF_TABLE_PCS_AT(t) + lo / 4)))
			*last = s->pc[lo & 3] - 1;
	}
	if (lo == 0)
		return -1; /* below the first row */
	if (rule_number(t, lo - 1, &num) || num >= t->nrules)
		return -1;
	s = table_slot(t->first + num);
	if (!s)
		return -1;
	*out = s->rule;
	return 0;
}

/*
 * Advanced by the loader before it frees rows of the rows array (and then
 * waits for running programs): rows cached under an older value may name
 * rows since replaced.
 */
__u32 rows_gen = 0;

/*
 * Rules found lately on this CPU, direct-mapped by lookup key.  A sample
 * mostly walks the pcs of the samples before it, and a hit costs one
 * cache line where find_row's page index and halvings cost several, cold
 * at 99 Hz, and a call.
 */
#define ROW_CACHE_BITS 9
#define ROW_CACHE_SLOTS (1 << ROW_CACHE_BITS)
struct row_cache_slot {
	__u64 key; /* row_key() of the lookup, or of its page | ROW_PAGE_KEY */
	__u32 gen; /* rows_gen when found */
	struct cprof_unwind_rule rule;
	__u16 first, last; /* a page's: the offsets the rule holds from and to */
};
#define ROW_PAGE_KEY (1ULL << 63)

struct row_cache {
	struct row_cache_slot slot[ROW_CACHE_SLOTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct row_cache);
} row_cache SEC(".maps");

/* The slot of the row cache that @key goes in. */
static __always_inline struct row_cache_slot *row_slot(struct row_cache *rc, __u64 key)
{
	return &rc->slot[(key * 0x9e3779b97f4a7c15ULL) >> (64 - ROW_CACHE_BITS)];
}

/*
 * Leaves in memo->rule the rule of the last row at or below @rel in table
 * @t, from this CPU's row cache when there; -1: none.  The cache holds the
 * rules of exact lookups (return addresses recur) and, by page, the span
 * of a page the rule found there holds over: a leaf pc varies from sample
 * to sample, mostly within one row (the interpreter loop of CPython is
 * two rows of 20 and 30 KiB), and was a search each sample.  A return
 * address (@pc_exact 0) found by its page's span goes in as an exact
 * lookup too: else, never searched, it came here again at every sample
 * (6.6 calls a sample of CPython 3.10 rather than the leaf's one), where
 * row_cached() would have found it.  A global function, checked once by
 * the verifier rather than at every frame of the walk in that frame's
 * state.
 */
__noinline int find_row(const struct cprof_table *t, __u64 rel, __u32 pc_exact, struct row_memo *memo)
{
	__u32 zero = 0;
	struct row_cache *rc = bpf_map_lookup_elem(&row_cache, &zero);
	struct row_cache_slot *e = NULL, *p = NULL;
	__u32 gen = rows_gen, off, first, last;
	__u64 key, pkey;

	if (!t || !memo)
		return -1;
	key = row_key(t, rel);
	if (!key)
		return -1;
	if (rc) {
		e = row_slot(rc, key);
		if (e->key == key && e->gen == gen) {
			memo->key = key;
			memo->rule = e->rule;
			return 0;
		}
	}
	/* the page's span: only once the exact lookup missed, as return addresses do not */
	pkey = row_key(t, rel >> (t->index_shift & 31)) | ROW_PAGE_KEY;
	off = rel & ((1u << (t->index_shift & 31)) - 1);
	if (rc) {
		p = row_slot(rc, pkey);
		if (p->key == pkey && p->gen == gen && off >= p->first && off <= p->last) {
			memo->key = key;
			memo->rule = p->rule;
			if (e && !pc_exact) {
				e->key = key;
				e->gen = gen;
				e->rule = p->rule;
			}
			return 0;
		}
	}
	if (search_row(t, rel, &memo->rule, &first, &last))
		return -1;
	memo->key = key;
	if (e) {
		e->key = key;
		e->gen = gen;
		e->rule = memo->rule;
	}
	if (p && first <= off && off <= last) {
		p->key = pkey;
		p->gen = gen;
		p->rule = memo->rule;
		p->first = first;
		p->last = last;
	}
	return 0;
}

/*
 * find_row()'s first test inline: a return address found before is the
 * usual frame, and a call of a global function costs ~20 ns on hosts
 * whose kernel returns through a mitigation thunk (AMD's Safe RET): on
 * CPython 3.8 to 3.10, with some 25 native frames a sample, more than the
 * lookup.  1 when @key's rule was cached, into @memo.
 */
static __always_inline int row_cached(__u64 key, struct row_memo *memo)
{
	__u32 zero = 0;
	struct row_cache *rc = bpf_map_lookup_elem(&row_cache, &zero);
	struct row_cache_slot *e;

	if (!rc || !key)
		return 0;
	e = row_slot(rc, key);
	if (e->key != key || e->gen != rows_gen)
		return 0;
	memo->key = key;
	memo->rule = e->rule;
	return 1;
}

/* When each process last reported code outside its known mappings. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, CPROF_KNOWN_PIDS);
	__type(key, __u32);
	__type(value, __u64);
} new_code_seen SEC(".maps");

/*
 * Asks the loader to read @pid's mappings again, at most every 200 ms per
 * process: a pc in no mapping it gave us (a library loaded since, or JIT
 * code; @why 0), or a program's start that mapped files it has not
 * numbered (@why CPROF_NEW_CODE_STARTUP, ldstate.bpf.h: sent at once,
 * @force, and the 200 ms start again).
 */
static void report_new_code(__u32 pid, bool force, __u64 why)
{
	__u64 now = bpf_ktime_get_ns(), *last = bpf_map_lookup_elem(&new_code_seen, &pid);
	struct cprof_event *ev;

	if (!force && last && now - *last < 200000000ULL)
		return;
	bpf_map_update_elem(&new_code_seen, &pid, &now, BPF_ANY);
	ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
	if (!ev)
		return;
	__builtin_memset(ev, 0, sizeof(*ev));
	ev->type = CPROF_EV_NEW_CODE;
	ev->pid = pid;
	ev->ktime_ns = now;
	ev->addr = why;
	bpf_ringbuf_submit(ev, 0);
}

/*
 * Where this CPU's walk met the first frame in a file whose table is to
 * come (note_defer()): what a walk from there needs, for defer.bpf.h.
 * Valid when the walk's unwind_ctx.defer is set.
 */
struct defer_note {
	__u64 pc, sp, bp, chain_end;
	__u32 nr, exact, file, status;
	__u64 ip[CPROF_DEFER_FRAMES];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct defer_note);
} defer_notes SEC(".maps");

/*
 * Notes where walk @c met frame @n (its pc recorded in @st) in file @file
 * whose table is to come (CPROF_NO_FILE: a file the loader has not
 * numbered, or a pc in no mapping of a process it has not read yet), the
 * first such frame of the walk, for defer.bpf.h to send the sample to be
 * walked again from there: its registers (@exact: pc is not a return
 * address) and the frames before it.  Not when they are more than a
 * record holds.  A global function: verified once, off the path of walks
 * that do not meet one.
 */
__noinline int note_defer(struct unwind_ctx *c, const struct cprof_stack *st, __u32 n, __u32 exact,
			  __u32 file)
{
	__u32 zero = 0;
	struct defer_note *d = bpf_map_lookup_elem(&defer_notes, &zero);

	if (!c || !st || !d || n > CPROF_DEFER_FRAMES)
		return -1;
	c->defer = 1;
	d->pc = c->pc;
	d->sp = c->sp;
	d->bp = c->bp;
	d->chain_end = c->chain_end;
	d->nr = n;
	d->exact = exact;
	d->file = file;
	d->status = st->status;
	for (__u32 i = 0; i < CPROF_DEFER_FRAMES; i++) {
		if (i >= n)
			break;
		d->ip[i] = st->ip[i];
	}
	return 0;
}

/* One frame: record the pc, then find the caller.  bpf_loop callback. */
static long unwind_step(__u32 i, void *data)
{
	struct unwind_loop *l = data;
	struct unwind_ctx *c = l->c;
	struct cprof_stack *st = l->st;
	struct stack_window *win = l->win;
	bool mapped = true, unread = false;
	__u32 n = st->nr;
	__u64 lookup;

	if (n >= CPROF_MAX_FRAMES) {
		c->status = CPROF_UNWIND_TRUNCATED;
		return 1;
	}
	st->ip[n & (CPROF_MAX_FRAMES - 1)] = c->pc;
	st->nr = n + 1;
	/* the leaf is left to the caller (walk_user_stack): it may keep it apart */
	if (n)
		c->hash = hash_mix(c->hash, c->pc);
	/* This frame's saved registers lie a little above sp, mostly. */
	if (c->sp < win->lo || c->sp + win->ahead > win->lo + win->len)
		fill_window(win, c->sp);
	/* A return address is past its call; look up the call itself. */
	lookup = c->exact ? c->pc : c->pc - 1;
	c->exact = 0;
	/* Callers are mostly in the same object as the frame before. */
	if (lookup < c->cur.start || lookup >= c->cur.end) {
		mapped = l->pm && !find_mapping(l->pm, lookup, c->pid, &c->cur);
		/*
		 * Code the loader's snapshot lacks, unmapped or added by an
		 * mmap since: ask for a new one, as the frame is to be named.
		 * A kernel entry is no news: the loader is reading the process.
		 * Nor is the uprobe page (mapped at a probe's first hit, which
		 * --ld-probe's is before ld.so maps the libraries): a read then
		 * would spend the 200 ms on a snapshot without them.
		 */
		if ((!mapped || c->cur.added) && l->pm && !c->reported &&
		    !(l->pm->flags & (CPROF_PROC_MAPS_TRUNCATED | CPROF_PROC_MAPS_KERNEL)) &&
		    (mapped || !in_xol(lookup))) {
			report_new_code(c->pid, false, 0);
			c->reported = 1;
		}
		/*
		 * Not in the entry: the kernel knows the file, once a sample,
		 * so a walk back into the file it found (libc under the
		 * binary, the loader's entry read before libc was mapped)
		 * takes it from there.
		 */
		if (!mapped && lookup - c->found.start < c->found.end - c->found.start) {
			c->cur = c->found;
			mapped = true;
		}
		if (!mapped) {
			int ret = find_vma_mapping(lookup, c->pid,
						   !l->pm || (l->pm->flags & CPROF_PROC_MAPS_KERNEL),
						   &c->cur);

			mapped = !ret;
			if (mapped)
				c->found = c->cur;
			else if (ret == -2)
				c->unknown_file = 1;
			/* the loader is to read it: a file not numbered, a process not read */
			unread = !mapped && (ret == -2 || !l->pm ||
					     (l->pm->flags & CPROF_PROC_MAPS_KERNEL));
		}
		if (!mapped)
			c->cur.end = 0;
		else if ((!l->pm || (l->pm->flags & CPROF_PROC_MAPS_KERNEL)) && c->cur.tab.nrows)
			c->by_file = 1;
	}
	if (mapped && c->cur.tab.nrows) {
		__u64 rel = lookup - c->cur.bias - c->cur.tab.base, key = row_key(&c->cur.tab, rel);

		/*
		 * The same row as the last frame's, or a return address met
		 * before, needs no call.  A row of code no CFI covers (V8's
		 * builtins, in node's text) goes by frame pointers, below.
		 */
		if (((key && key == c->memo.key) || row_cached(key, &c->memo) ||
		     !find_row(&c->cur.tab, rel, lookup == c->pc, &c->memo)) &&
		    CPROF_ROW_CFA(&c->memo.rule) != CPROF_CFA_INVALID)
			return step_dwarf(l, &c->memo.rule);
	} else if (mapped && !tramp_row(c->pid, lookup, lookup == c->pc, &c->memo.rule)) {
		/* a CPython perf trampoline: no CFI, a row all the same */
		c->memo.key = 0;
		return step_dwarf(l, &c->memo.rule);
	} else {
		/* a JVM's Java code: recorded as what names it (cprof.h), and stepped */
		long j = jvm_row(c, st, n, lookup);

		if (j >= 0)
			return j;
	}
	/* a JavaScript frame: recorded as what names it (runtimes.h), stepped by rbp as any */
	if (!c->no_v8 && v8_frame(c, st, n) == -2)
		c->no_v8 = 1;
	/* a table to come: the walk from here may be made again once it is there */
	if (defer_walks && !c->defer && (mapped ? c->cur.waiting != 0 : unread))
		note_defer(c, st, n, lookup == c->pc, mapped ? c->cur.waiting - 1 : CPROF_NO_FILE);
	return step_fp(l, mapped && c->cur.tab.nrows);
}

/* Two frames a call of the callback (steps.bpf.h). */
#define UNWIND_STEPS 2
STEPS_CALLBACK(unwind_steps, unwind_step, UNWIND_STEPS)

/*
 * Readies @l for a walk of @pid's user stack: the walk's state (starting
 * with an exact pc: the leaf's, not a return address), the process's
 * tables (its entry, or the kernel entry of its earlier samples before the
 * loader wrote one; none: frame pointers only), the scratch stack, this CPU's stack
 * window.  Returns the window's span slot of the current thread for unwind_walk(), or
 * NULL when a per-CPU map is missing.  The caller then sets the starting
 * registers in l->c.
 */
static __always_inline struct window_span *unwind_begin(struct unwind_loop *l, __u32 pid)
{
	struct window_span *span;
	struct unwind_ctx *c;
	__u32 zero = 0, tid;

	l->c = c = bpf_map_lookup_elem(&unwind_walks, &zero);
	l->pm = bpf_map_lookup_elem(&unwind_procs, &pid);
	l->st = get_scratch();
	l->win = bpf_map_lookup_elem(&stack_window, &zero);
	if (!c || !l->st || !l->win)
		return NULL;
	__builtin_memset(c, 0, sizeof(*c));
	if (!l->pm) {
		int ret = remember_exe(pid);

		if (!ret)
			l->pm = bpf_map_lookup_elem(&unwind_procs, &pid);
		else if (ret == -2)
			c->unknown_file = 1; /* the binary's: its frames go by frame pointers */
	}
	c->pid = pid;
	c->exact = 1;
	c->hash = HASH_SEED;
	l->win->len = 0; /* another stack's: the first frame fills it */
	l->win->ahead = WINDOW_AHEAD;
	l->win->next = WINDOW_FIRST;
	/* the walked thread is the current one, in a sample and at a block alike */
	tid = bpf_get_current_pid_tgid();
	span = &l->win->span[tid & (SPAN_SLOTS - 1)];
	l->win->top = span->tid == tid ? span->top : 0;
	span->tid = tid;
	return span;
}

/*
 * Walks from l->c's pc, sp, bp: the frames into l->st (leaf first, the
 * hash of all but the leaf in l->c->hash), how the walk ended into l->c->status.  @span learns
 * where the walk ended: no frame of it read the stack above its last sp.
 */
static __always_inline void unwind_walk(struct unwind_loop *l, struct window_span *span)
{
	struct unwind_ctx *c = l->c;

	l->st->nr = 0;
	l->st->status = 0;
	c->status = CPROF_UNWIND_TRUNCATED; /* unless a step says otherwise */
	bpf_loop(STEPS_CALLS(CPROF_MAX_FRAMES + 1, UNWIND_STEPS), unwind_steps, l, 0);
	span->top = c->sp;
}

/*
 * Walks the user stack from the registers in l->c (readied by
 * unwind_begin()): by CFI where the loader gave the process tables or,
 * before it did, where the process maps files whose tables are known; by
 * frame pointers elsewhere.  Stores it in @pair, with the CPROF_STACK_F_*
 * in @mark: whole, or when @leaf is given, with its leaf pc there and 0
 * in its place (see cprof_sample_key.uleaf).
 */
static __always_inline __u64 walk_user_stack(struct unwind_loop *l, struct window_span *span,
					     __u32 pair, __u64 epoch, __u32 mark,
					     struct cprof_stats *s, __u64 *leaf)
{
	struct unwind_ctx *c = l->c;
	__u64 h;

	unwind_walk(l, span);
	if (c->unknown_file)
		s->unwind_unknown_file++;
	if ((l->pm && !(l->pm->flags & CPROF_PROC_MAPS_KERNEL)) || c->by_file) {
		s->unwind_dwarf++;
		if (c->status < CPROF_UNWIND_STATUS_MAX)
			s->unwind_status[c->status]++;
	} else {
		s->unwind_fp_only++;
		/*
		 * A chain of frame pointers cannot tell its end from a break:
		 * only its length is worth a pseudo-frame.
		 */
		if (c->status != CPROF_UNWIND_TRUNCATED)
			c->status = CPROF_UNWIND_OK;
	}
	l->st->status |= c->status | mark;
	if (l->st->nr == 0)
		return CPROF_STACK_ERR_EMPTY;
	/* the unwinder hashed all but the leaf */
	h = c->hash;
	if (leaf) {
		*leaf = l->st->ip[0];
		l->st->ip[0] = 0;
	} else {
		h = hash_mix(h, l->st->ip[0]);
	}
	return store_stack(l->st, pair, epoch, hash_finish(h, l->st, BPF_F_USER_STACK), NULL);
}

#endif
