/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * unwind.bpf.h: the user-stack unwinder.  Per frame: record the pc, find
 * the mapping that holds it, the CFI row of that pc in the mapping's table
 * (bpf/cprof.h), and from it the caller's pc, sp and rbp; by frame
 * pointers where no table covers the pc.  The stack is read through a
 * per-CPU window of it.
 *
 * Uses the maps and globals of state.bpf.h and the hashing of
 * stacks.bpf.h.  Also compiled as plain C, with tests/bpfshim.h standing in
 * for the BPF helpers, so that unit tests run this code over real tables
 * and recorded stacks (tests/bpfunwind.c).
 */
#ifndef CPROF_UNWIND_BPF_H
#define CPROF_UNWIND_BPF_H

/*
 * The last row found and the table offset it was found for: a recursive
 * call returns to the same pc frame after frame.
 */
struct row_memo {
	__u64 key; /* row_key() of the lookup; 0: none */
	struct cprof_unwind_row row;
};

/* Names a lookup of table offset @rel in @m's table; 0: no such offset. */
static __always_inline __u64 row_key(const struct cprof_proc_map *m, __u64 rel)
{
	/* first_row > 0: a table's rows follow its index */
	return rel >> 32 ? 0 : (__u64)m->first_row << 32 | rel;
}

struct unwind_ctx {
	struct cprof_stack *st;
	struct stack_window *win;
	struct cprof_proc_maps *pm;
	__u32 pid;
	bool reported; /* NEW_CODE sent for this walk */
	__u64 hash;    /* of the frames so far */
	__u64 pc, sp, bp;
	bool exact; /* pc is not a return address: the leaf, or a signal's */
	__u32 status;
	__u32 last_map; /* 1 + the mapping of the previous frame, 0: none */
	struct row_memo memo;
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

/*
 * The mapping containing @pc, or NULL.  Mappings are sorted and disjoint.
 * The previous frame's mapping is tried first: callers are mostly in the
 * same object.
 */
static __always_inline const struct cprof_proc_map *find_mapping(struct unwind_ctx *c, __u64 pc)
{
	const struct cprof_proc_maps *pm = c->pm;
	__u32 n, lo = 0, len, half, idx;

	if (!pm)
		return NULL; /* frame pointers only */
	n = pm->n;
	if (c->last_map) {
		idx = (c->last_map - 1) & (CPROF_MAX_PROC_MAPS - 1);
		if (pc >= pm->m[idx].start && pc < pm->m[idx].end)
			return &pm->m[idx];
	}
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
		return NULL;
	idx = (lo - 1) & (CPROF_MAX_PROC_MAPS - 1);
	if (pc >= pm->m[idx].end)
		return NULL;
	c->last_map = idx + 1;
	return &pm->m[idx];
}

/* Entry @k of the page index that ends at slot @end. */
static __always_inline int index_entry(__u32 end, __u32 npages, __u32 k, __u32 *out)
{
	__u32 slot = end - CPROF_INDEX_SLOTS(npages) + k / 2;
	const union cprof_table_slot *e = bpf_map_lookup_elem(&unwind_rows, &slot);

	if (!e)
		return -1;
	*out = e->index[k & 1];
	return 0;
}

/* The last row at or below @rel in the mapping's table, by binary search. */
static __always_inline int search_row(const struct cprof_proc_map *m, __u64 rel,
				      struct cprof_unwind_row *out)
{
	__u32 first, nrows, npages, lo, len, half, idx, a, b;
	__u64 page;
	const union cprof_table_slot *r;

	first = m->first_row;
	nrows = m->nrows;
	npages = m->npages;
	if (!nrows)
		return -1;
	page = rel >> (m->index_shift & 31);
	if (page >= npages) {
		/* past the last row's page: the last row */
		lo = nrows - 1;
		len = 1;
	} else {
		/* rows of this page, and the one before that covers its start */
		if (index_entry(first, npages, page, &a) ||
		    index_entry(first, npages, page + 1, &b))
			return -1;
		lo = a ? a - 1 : 0;
		if (b <= lo || b > nrows)
			return -1; /* not an index we wrote */
		len = b - lo;
	}
	for (int i = 0; i < 26; i++) { /* tables have < 2^25 rows */
		if (!len) /* the one jump: it only leaves the loop */
			break;
		half = len / 2;
		idx = first + lo + half;
		r = bpf_map_lookup_elem(&unwind_rows, &idx);
		if (!r)
			return -1;
		lo += le_bit(r->row.pc, rel) * (len - half);
		len = half;
	}
	if (lo == 0)
		return -1;
	idx = first + lo - 1;
	r = bpf_map_lookup_elem(&unwind_rows, &idx);
	if (!r)
		return -1;
	*out = r->row;
	return 0;
}

/*
 * Leaves in memo->row the last row at or below @rel in the mapping's
 * table, from this CPU's row cache when there; -1: none.  A global
 * function, checked once by the verifier rather than at every frame of the
 * walk in that frame's state.
 */
__noinline int find_row(const struct cprof_proc_map *m, __u64 rel, struct row_memo *memo)
{
	__u32 zero = 0;
	struct row_cache *rc = bpf_map_lookup_elem(&row_cache, &zero);
	struct row_cache_slot *e = NULL;
	__u32 gen = rows_gen;
	__u64 key;

	if (!m || !memo)
		return -1;
	key = row_key(m, rel);
	if (!key)
		return -1;
	if (rc) {
		e = &rc->slot[(key * 0x9e3779b97f4a7c15ULL) >> (64 - ROW_CACHE_BITS)];
		if (e->key == key && e->gen == gen) {
			memo->key = key;
			memo->row = e->row;
			return 0;
		}
	}
	if (search_row(m, rel, &memo->row))
		return -1;
	memo->key = key;
	if (e) {
		e->key = key;
		e->gen = gen;
		e->row = memo->row;
	}
	return 0;
}

/*
 * The stack window's two operations are global functions: the verifier
 * checks each once, where inlined at every read site they made too many
 * paths for it.
 */

/*
 * Fills the window from @addr on: w->next bytes, or up to the end of
 * @addr's page when that fails (the top of a stack may be nearer).
 */
__noinline int fill_window(struct stack_window *w, __u64 addr)
{
	__u32 size, page_left = 4096 - (addr & 4095);

	if (!w)
		return -1;
	size = w->next;
	if (size > STACK_WINDOW)
		size = STACK_WINDOW;
	if (size < WINDOW_FIRST)
		size = WINDOW_FIRST;
	w->next = size * 2;
	w->lo = addr;
	w->len = size;
	if (!bpf_probe_read_user(w->b, size, (const void *)addr))
		return 0;
	if (page_left >= size || bpf_probe_read_user(w->b, page_left, (const void *)addr))
		page_left = 0;
	w->len = page_left;
	return 0;
}

struct stack_words {
	__u64 w[2];
};

/* @size (8 or 16) bytes of the user stack at @addr: from the window, else read alone. */
static __always_inline int read_stack(struct stack_window *w, __u64 addr, struct stack_words *out, __u32 size)
{
	__u64 off;

	if (!w || !out)
		return -1;
	size = size > 8 ? 16 : 8;
	off = addr - w->lo;
	if (addr < w->lo || off + size > w->len) {
		if (size > 8)
			return bpf_probe_read_user(out, 16, (const void *)addr);
		return bpf_probe_read_user(out, 8, (const void *)addr);
	}
	off &= STACK_WINDOW - 1;
	out->w[0] = *(__u64 *)&w->b[off];
	if (size > 8)
		out->w[1] = *(__u64 *)&w->b[off + 8];
	return 0;
}

static __always_inline int read_word(struct unwind_ctx *c, __u64 addr, __u64 *out)
{
	struct stack_words v;
	int err = read_stack(c->win, addr, &v, 8);

	*out = v.w[0];
	return err;
}

/* Moves to the caller whose return address is @ra; 1 ends the walk. */
static __always_inline long step_to(struct unwind_ctx *c, __u64 ra, __u64 sp)
{
	if (sp <= c->sp) {
		c->status = CPROF_UNWIND_BAD_CFA; /* would loop */
		return 1;
	}
	c->sp = sp;
	c->pc = ra;
	if (ra == 0) { /* a zero return address marks the outermost frame */
		c->status = CPROF_UNWIND_OK;
		return 1;
	}
	return 0;
}

/* No CFI for this pc: follow the frame-pointer chain for one frame. */
static __always_inline long step_fp(struct unwind_ctx *c, bool had_table)
{
	struct stack_words frame; /* saved rbp, return address */

	if (c->bp == 0 || c->bp < c->sp) {
		/* rbp 0 ends a frame-pointer chain (_start clears it). */
		c->status = had_table ? CPROF_UNWIND_NO_ROW :
			    c->bp == 0 ? CPROF_UNWIND_OK : CPROF_UNWIND_BAD_CFA;
		return 1;
	}
	if (read_stack(c->win, c->bp, &frame, sizeof(frame))) {
		c->status = CPROF_UNWIND_READ;
		return 1;
	}
	c->st->status |= CPROF_STACK_F_FP;
	{
		__u64 sp = c->bp + 16;

		c->bp = frame.w[0];
		return step_to(c, frame.w[1], sp);
	}
}

/*
 * Signal trampoline: the interrupted registers are in the ucontext that
 * the stack pointer points at (struct rt_sigframe after its return
 * address was popped): uc_mcontext at 40, then rbp, rsp, rip of struct
 * sigcontext at 80, 120, 128.
 */
static __always_inline long step_signal(struct unwind_ctx *c)
{
	__u64 pc, sp, bp;

	if (read_word(c, c->sp + 40 + 128, &pc) || read_word(c, c->sp + 40 + 120, &sp) ||
	    read_word(c, c->sp + 40 + 80, &bp)) {
		c->status = CPROF_UNWIND_READ;
		return 1;
	}
	c->bp = bp;
	c->exact = true;
	/* the interrupted code's stack lies above the signal frame */
	return step_to(c, pc, sp);
}

static __always_inline long step_dwarf(struct unwind_ctx *c, const struct cprof_unwind_row *row)
{
	__u64 cfa, ra, bp;

	switch (CPROF_ROW_CFA(row)) {
	case CPROF_CFA_RSP:
		cfa = c->sp + row->cfa_off;
		break;
	case CPROF_CFA_RBP:
		cfa = c->bp + row->cfa_off;
		break;
	case CPROF_CFA_PLT:
		cfa = c->sp + 8 + ((c->pc & 15) >= (__u64)row->cfa_off ? 8 : 0);
		break;
	case CPROF_CFA_SIGNAL:
		return step_signal(c);
	case CPROF_CFA_STOP:
		c->status = CPROF_UNWIND_OK;
		return 1;
	default:
		return step_fp(c, true);
	}
	if (CPROF_ROW_RBP(row) == CPROF_RBP_OFFSET && row->rbp_off == -2) {
		/* the usual prologue: rbp saved right below the return address */
		struct stack_words frame;

		if (read_stack(c->win, cfa - 16, &frame, sizeof(frame))) {
			c->status = CPROF_UNWIND_READ;
			return 1;
		}
		c->bp = frame.w[0];
		ra = frame.w[1];
	} else {
		if (read_word(c, cfa - 8, &ra)) {
			c->status = CPROF_UNWIND_READ;
			return 1;
		}
		if (CPROF_ROW_RBP(row) == CPROF_RBP_OFFSET) {
			if (read_word(c, cfa + (__s64)row->rbp_off * 8, &bp)) {
				c->status = CPROF_UNWIND_READ;
				return 1;
			}
			c->bp = bp;
		}
	}
	c->st->status |= CPROF_STACK_F_DWARF;
	return step_to(c, ra, cfa);
}

/*
 * A pc in no mapping the loader gave us: a library loaded since, or JIT
 * code.  Ask for a new snapshot, at most every 200 ms per process.
 */
static void report_new_code(__u32 pid)
{
	__u64 now = bpf_ktime_get_ns(), *last = bpf_map_lookup_elem(&new_code_seen, &pid);
	struct cprof_event *ev;

	if (last && now - *last < 200000000ULL)
		return;
	bpf_map_update_elem(&new_code_seen, &pid, &now, BPF_ANY);
	ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
	if (!ev)
		return;
	__builtin_memset(ev, 0, sizeof(*ev));
	ev->type = CPROF_EV_NEW_CODE;
	ev->pid = pid;
	ev->ktime_ns = now;
	bpf_ringbuf_submit(ev, 0);
}

/* One frame: record the pc, then find the caller.  bpf_loop callback. */
static long unwind_step(__u32 i, void *data)
{
	struct unwind_ctx *c = data;
	struct cprof_stack *st = c->st;
	const struct cprof_proc_map *m;
	__u32 n = st->nr;
	__u64 lookup;

	if (n >= CPROF_MAX_FRAMES) {
		c->status = CPROF_UNWIND_TRUNCATED;
		return 1;
	}
	st->ip[n & (CPROF_MAX_FRAMES - 1)] = c->pc;
	st->nr = n + 1;
	c->hash = hash_mix(c->hash, c->pc);
	/* This frame's saved registers lie a little above sp, mostly. */
	if (c->sp < c->win->lo || c->sp + WINDOW_AHEAD > c->win->lo + c->win->len)
		fill_window(c->win, c->sp);
	/* A return address is past its call; look up the call itself. */
	lookup = c->exact ? c->pc : c->pc - 1;
	c->exact = false;
	m = find_mapping(c, lookup);
	if (!m && c->pm && !c->reported && !(c->pm->flags & CPROF_PROC_MAPS_TRUNCATED)) {
		report_new_code(c->pid);
		c->reported = true;
	}
	if (m && m->nrows) {
		__u64 rel = lookup - m->bias, key = row_key(m, rel);

		/* the same row as the last frame's needs no call */
		if ((key && key == c->memo.key) || !find_row(m, rel, &c->memo))
			goto dwarf;
	} else if (m && !tramp_row(c->pid, lookup, lookup == c->pc, &c->memo.row)) {
		/* a CPython perf trampoline: no CFI, a row all the same */
		c->memo.key = 0;
		goto dwarf;
	}
	return step_fp(c, m && m->nrows);
dwarf:
	return step_dwarf(c, &c->memo.row);
}

/*
 * How a walk of @pid's stack starts: the first pc is exact (the leaf's,
 * not a return address).  An initializer: assigned in unwind_begin() it
 * cost clang 34 more instructions.
 */
#define UNWIND_CTX(pid) { .pid = (pid), .exact = true, .hash = HASH_SEED }

/*
 * Readies @c (from UNWIND_CTX(pid)) for a walk of @pid's user stack: the
 * process's tables (none: frame pointers only), the scratch stack, this
 * CPU's stack window.  Returns the window's span slot of @pid for
 * unwind_walk(), or NULL when a per-CPU map is missing.  The caller then
 * sets the starting registers.
 */
static __always_inline struct window_span *unwind_begin(struct unwind_ctx *c, __u32 pid)
{
	struct window_span *span;
	__u32 zero = 0;

	c->pm = bpf_map_lookup_elem(&unwind_procs, &pid);
	c->st = get_scratch();
	c->win = bpf_map_lookup_elem(&stack_window, &zero);
	if (!c->st || !c->win)
		return NULL;
	c->win->len = 0; /* another stack's */
	c->win->next = WINDOW_FIRST;
	span = &c->win->span[pid & (SPAN_SLOTS - 1)];
	if (span->pid == pid && span->bytes > WINDOW_FIRST - WINDOW_AHEAD)
		c->win->next = span->bytes + WINDOW_AHEAD;
	span->pid = pid;
	return span;
}

/*
 * Walks from c->pc, c->sp, c->bp: the frames into c->st (leaf first, their
 * hash in c->hash), how the walk ended into c->status.  @span learns how
 * much stack it took.
 */
static __always_inline void unwind_walk(struct unwind_ctx *c, struct window_span *span)
{
	__u64 sp0 = c->sp;

	c->st->nr = 0;
	c->st->status = 0;
	c->status = CPROF_UNWIND_TRUNCATED; /* unless a step says otherwise */
	bpf_loop(CPROF_MAX_FRAMES + 1, unwind_step, c, 0);
	span->bytes = c->sp - sp0 < STACK_WINDOW ? c->sp - sp0 : STACK_WINDOW;
}

#endif
