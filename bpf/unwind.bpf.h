/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * unwind.bpf.h: the user-stack unwinder.  Per frame: record the pc, find
 * the mapping that holds it, the CFI row of that pc in the mapping's table
 * (bpf/cprof.h), and from it the caller's pc, sp and rbp; by frame
 * pointers where no table covers the pc.  The stack is read through a
 * per-CPU window of it.
 *
 * Uses the maps and globals of state.bpf.h and the hashing of
 * stacks.bpf.h.  Also compiled as plain C, with user/unwind/bpfshim.h standing in
 * for the BPF helpers, so that unit tests run this code over real tables
 * and recorded stacks (user/unwind/bpfunwind.c).
 */
#ifndef CPROF_UNWIND_BPF_H
#define CPROF_UNWIND_BPF_H

/*
 * The last rule found and the table offset it was found for: a recursive
 * call returns to the same pc frame after frame.
 */
struct row_memo {
	__u64 key; /* row_key() of the lookup; 0: none */
	struct cprof_unwind_rule rule;
};

/* Names a lookup of table offset @rel in table @t; 0: no such offset. */
static __always_inline __u64 row_key(const struct cprof_table *t, __u64 rel)
{
	return rel >> 32 ? 0 : (__u64)(t->first + 1) << 32 | rel;
}

/* A mapping and its table, as a walk uses them. */
struct cur_map {
	__u64 start, end;       /* [start, end); end 0: none */
	__u64 bias;             /* runtime pc - ELF virtual address */
	struct cprof_table tab; /* its file's table, copied; nrows 0: none */
	__u32 added;            /* CPROF_MAP_ADDED: not in the loader's snapshot */
	__u32 waiting;          /* its file's number + 1 when its table is to come; 0: not */
};

/*
 * The walk's state, in a per-CPU map value rather than on the stack: the
 * verifier then sees its fields as plain numbers at every entry to the
 * bpf_loop callback, not constants and ranges to tell states apart by.  On
 * the stack, the callback was verified again for each mix of them that a
 * frame could leave (436 entries, 420k instructions and ~1 s of verifier
 * time here, 15-38 s on a loaded host, against 100 entries on main before
 * the compact tables); as a map value it is verified once (issue 11).
 */
struct unwind_ctx {
	__u64 hash;    /* of the frames so far */
	__u64 pc, sp, bp;
	__u32 pid;
	__u32 status;
	struct cur_map cur;      /* the mapping of the previous frame */
	struct cur_map found;    /* the one bpf_find_vma found this walk; end 0: none */
	struct row_memo memo;
	__u8 exact;    /* pc is not a return address: the leaf, or a signal's */
	__u8 reported; /* NEW_CODE sent for this walk */
	__u8 by_file;  /* no entry, but a frame walked by its file's table */
	__u8 unknown_file; /* a frame in a file not numbered: cprof_stats.unwind_unknown_file */
	__u8 defer;    /* a frame waits for its file's table: this CPU's defer_notes says where */
	__u8 pad[3];
	__u64 chain_end; /* sp of a frame whose saved rbp, read by step_fp, was 0 */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct unwind_ctx);
} unwind_walks SEC(".maps");

/*
 * What the bpf_loop callback is given (a loop's context must be on the
 * stack): pointers only, set before the loop and never changed in it.
 */
struct unwind_loop {
	struct unwind_ctx *c;
	struct cprof_stack *st;
	struct stack_window *win;
	struct cprof_proc_maps *pm; /* the process's entry (maybe a kernel entry); NULL: none */
};

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

/* A mapping and its file, from the kernel (vma.bpf.h). */
struct vma_file {
	__u64 start, end;          /* [start, end); end 0: none */
	__u64 pgoff;               /* file offset of start, in pages */
	struct cprof_file_key key; /* ino 0: none */
	__u32 exec;                /* mapped executable */
	__u32 pad;
};

/* The file mapped at @pc in the current task; -1: none, or not known now. */
static int vma_file_of(__u64 pc, struct vma_file *out);
__noinline int in_xol(__u64 pc);

/*
 * The current task's binary: its code's range (mm->start_code, end_code)
 * in start and end, its file's identity; pgoff 0.  -1: not known (a kernel
 * thread, an exec under way).  No lock taken: it leaves the sample's one
 * bpf_find_vma to another file.
 */
static int exe_code_of(struct vma_file *out);

#include "entry.bpf.h"

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
/* The slot of the row cache that @key goes in. */
static __always_inline struct row_cache_slot *row_slot(struct row_cache *rc, __u64 key)
{
	return &rc->slot[(key * 0x9e3779b97f4a7c15ULL) >> (64 - ROW_CACHE_BITS)];
}

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

#include "framestep.bpf.h"
#include "steps.bpf.h"

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

		/* the same row as the last frame's, or a return address met before, needs no call */
		if ((key && key == c->memo.key) || row_cached(key, &c->memo) ||
		    !find_row(&c->cur.tab, rel, lookup == c->pc, &c->memo))
			return step_dwarf(l, &c->memo.rule);
	} else if (mapped && !tramp_row(c->pid, lookup, lookup == c->pc, &c->memo.rule)) {
		/* a CPython perf trampoline: no CFI, a row all the same */
		c->memo.key = 0;
		return step_dwarf(l, &c->memo.rule);
	}
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

#endif
