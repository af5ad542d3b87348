/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * python.bpf.h: the sampled thread's Python stack (see "Python" in
 * cprof.h).  Find the thread's state among those of the interpreter the
 * loader pointed at, walk its chain of frames, store them as a stack, and
 * tell the loader of the code objects in it it has not been told of yet.
 *
 * Its maps are here with the code, the only code that uses them.  The
 * entry point, python_stack(), is a global function: the verifier checks
 * it once, apart from the native walk.  Also compiled as plain C in
 * user/unwind/bpfunwind.c, for unit tests of its reads of the C stack.
 */
#ifndef CPROF_PYTHON_BPF_H
#define CPROF_PYTHON_BPF_H

#include "base.bpf.h"
#include "pycode_tag.h"
#include "stacks.bpf.h"
#include "state.bpf.h"
#include "steps.bpf.h"
#include "window.bpf.h"

/* Set by the loader before load: read Python stacks at all. */
CPROF_SETTING bool python_stacks = false;

/* pid -> where its interpreter is and how it is laid out. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, CPROF_PY_PROCS);
	__type(key, __u32);
	__type(value, struct cprof_py_proc);
} py_procs SEC(".maps");

/*
 * tid -> its thread state, as last found.  Searching the interpreter's
 * list costs a read a thread; a thread keeps its state for life, so a
 * sample mostly reads the one remembered, and checks it is still the
 * thread's.  A thread with none (not a Python thread, or the interpreter
 * not started yet) is searched for again after a wait that doubles, from
 * PY_RETRY_NS up to PY_RETRY_MAX_NS, so that neither a C thread of a Python
 * process searches at every sample nor a starting interpreter goes unseen
 * for long.
 */
#define PY_RETRY_NS 4000000ULL
#define PY_RETRY_MAX_NS 1000000000ULL
struct py_thread {
	__u64 gen;    /* the process image it was found in */
	__u64 tstate; /* 0: none found at @when */
	__u64 interp; /* the interpreter it belongs to */
	__u64 when;
	__u64 wait;   /* ns after @when before searching again */
	__u32 status; /* enum cprof_py_status of a search that found none */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, CPROF_PY_THREADS);
	__type(key, __u32);
	__type(value, struct py_thread);
} py_threads SEC(".maps");

/* Code objects the loader has been told of (CPROF_EV_PY_CODE). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, CPROF_PY_CODES);
	__type(key, struct cprof_py_code_key);
	__type(value, __u8);
} py_codes SEC(".maps");

/*
 * The walk's state, in a per-CPU map value rather than on the stack: the
 * verifier then sees its fields as plain numbers in the bpf_loop
 * callbacks, not constants to tell states apart by (on the stack the
 * walk took 580k instructions to verify).  The thread state and frame
 * read are indexed by the layout's offsets under a mask, with 8 bytes of
 * slack past the mask's reach.
 */
#define PY_TSTATE_MASK (CPROF_PY_TSTATE_READ - 1)
#define PY_FRAME_MASK (CPROF_PY_FRAME_READ - 1)
#define PY_CODE_MASK (CPROF_PY_CODE_READ - 1)
/*
 * From 3.11 a thread's frames are pushed one after another on its data
 * stack, so a caller's frame lies just below its callee's: a frame is
 * read with up to PY_FRAMES_BACK bytes below it (within its page, as the
 * data stack's first page may be the first of its mapping), and the
 * frames in those need no read of their own.  pysplit.py on 3.12: three
 * of its four frames by one read, of 2 reads a stack instead of 5
 * (~100 ns each here).
 */
#define PY_FRAMES_BACK 1024
#define PY_FRAMES_MASK (2 * PY_FRAMES_BACK - 1)
struct py_walk {
	struct cprof_py_proc p; /* the process's, copied */
	__u8 tstate[CPROF_PY_TSTATE_READ + 8];
	__u8 frames[2 * PY_FRAMES_BACK + CPROF_PY_FRAME_READ + 8];
	__u8 code[CPROF_PY_CODE_READ + 8]; /* a code object's tag fields */
	__u64 frames_lo;  /* the address of frames[0] */
	__u32 frames_len; /* bytes of frames read; 0: none */
	__u32 frames_pad;
	__u64 want;   /* the thread's pthread_t: its fs base */
	__u64 interp; /* the interpreter searched, then the thread's */
	__u64 tstate_addr; /* the thread state looked at, then the thread's */
	__u64 frame_addr;  /* the next frame to read; 0: none */
	__u64 hash;
	__u32 pid;
	__u32 status; /* the search's enum cprof_py_status; the walk's cprof_unwind_status */
	__u32 found;
	/*
	 * The last sample's thread on this CPU, mostly this one's (a busy
	 * thread keeps its CPU): its process (in p) and thread state need no
	 * lookup in py_procs and py_threads (~100 ns each here).  A process's
	 * py_procs entry is written once per image (gen) and goes at its
	 * exit; the thread state is checked by its read as one from
	 * py_threads is.
	 */
	__u32 last_pid; /* 0: none */
	__u64 last_gen;
	__u32 last_tid; /* 0: none */
	__u32 last_pad;
	__u64 last_tstate, last_interp;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct py_walk);
} py_walks SEC(".maps");

/*
 * The walk's state, for the bpf_loop callbacks too: a loop's context must
 * be on the stack, so theirs is an unused word and they look this up.
 */
static __always_inline struct py_walk *py_walk_get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&py_walks, &zero);
}

/* Names Python stacks apart from native ones with the same words. */
#define PY_STACK_SALT 0x5079746f6e000000ULL
/* Mixed into the hash where a shim marks an entry frame. */
#define PY_SHIM_MARK 0x5368696dULL

static __always_inline __u64 py_word(const __u8 *buf, __u32 off, __u32 mask)
{
	return load_word(buf + (off & mask));
}

static __always_inline int py_read_word(__u64 addr, __u64 *out)
{
	return bpf_probe_read_user(out, sizeof(*out), (const void *)addr) ? -1 : 0;
}

/* Reads the thread state at @addr into the walk's buffer. */
static __always_inline int py_read_tstate(struct py_walk *w, __u64 addr)
{
	__u32 n = w->p.l.tstate_read;

	if (n == 0 || n > CPROF_PY_TSTATE_READ)
		return -1;
	return bpf_probe_read_user(w->tstate, n, (const void *)addr) ? -1 : 0;
}

/*
 * One step of the search for the thread's state: a thread state of the
 * interpreter w->interp, or the move to the next interpreter when its
 * list ended (w->tstate_addr 0).  bpf_loop callback.
 */
static long py_search_step(__u32 i, void *unused)
{
	struct py_walk *w = py_walk_get();
	const struct cprof_py_layout *l;
	const __u8 *t;

	if (!w)
		return 1;
	l = &w->p.l;
	t = w->tstate;
	if (!w->tstate_addr) {
		/* The first interpreter was read before the loop. */
		if (i && py_read_word(w->interp + l->interp_next, &w->interp)) {
			w->status = CPROF_PY_READ;
			return 1;
		}
		if (!w->interp)
			return 1;
		if (py_read_word(w->interp + l->interp_threads, &w->tstate_addr)) {
			w->status = CPROF_PY_READ;
			return 1;
		}
		return 0;
	}
	if (py_read_tstate(w, w->tstate_addr)) {
		w->status = CPROF_PY_READ;
		return 1;
	}
	/* A thread state points back at its interpreter: else not one. */
	if (py_word(t, l->tstate_interp, PY_TSTATE_MASK) != w->interp) {
		w->status = CPROF_PY_MISMATCH;
		return 1;
	}
	if (py_word(t, l->tstate_thread_id, PY_TSTATE_MASK) == w->want) {
		w->found = 1;
		return 1;
	}
	w->tstate_addr = py_word(t, l->tstate_next, PY_TSTATE_MASK);
	return 0;
}

/* Whether the thread state at @addr, of interpreter @interp, is still the thread's; read. */
static __always_inline bool py_tstate_still(struct py_walk *w, __u64 addr, __u64 interp)
{
	const struct cprof_py_layout *l = &w->p.l;

	return !py_read_tstate(w, addr) &&
	       py_word(w->tstate, l->tstate_thread_id, PY_TSTATE_MASK) == w->want &&
	       py_word(w->tstate, l->tstate_interp, PY_TSTATE_MASK) == interp;
}

/* py_find_thread() by py_threads, or else by a search of the interpreters' lists. */
static __always_inline __u32 py_find_thread_of(struct py_walk *w, __u32 tid, __u64 gen)
{
	struct py_thread *t = bpf_map_lookup_elem(&py_threads, &tid), now = {};
	const struct cprof_py_layout *l = &w->p.l;
	__u32 unused = 0;

	if (t && t->gen == gen && t->tstate) {
		if (py_tstate_still(w, t->tstate, t->interp)) {
			w->tstate_addr = t->tstate;
			w->interp = t->interp;
			return 0;
		}
		/* Freed, or another thread's now: search anew. */
	}
	/* the clock only off the usual path: a read of it costs ~50 ns here */
	now.when = bpf_ktime_get_ns();
	now.gen = gen;
	now.wait = PY_RETRY_NS;
	if (t && t->gen == gen && !t->tstate) {
		if (now.when - t->when < t->wait)
			return t->status;
		if (t->wait < PY_RETRY_MAX_NS)
			now.wait = 2 * t->wait;
	}
	w->tstate_addr = 0;
	w->found = 0;
	w->status = CPROF_PY_NO_THREAD;
	if (py_read_word(w->p.runtime + l->runtime_interps, &w->interp))
		w->status = CPROF_PY_READ;
	else
		bpf_loop(CPROF_PY_SEARCH, py_search_step, &unused, 0);
	if (w->found) {
		now.tstate = w->tstate_addr;
		now.interp = w->interp;
	}
	now.status = w->status;
	bpf_map_update_elem(&py_threads, &tid, &now, BPF_ANY);
	return w->found ? 0 : w->status;
}

/*
 * Finds the thread state of thread @tid of image @gen, whose bytes are
 * left in the walk's buffer; 0, or an enum cprof_py_status saying why
 * there is none.
 */
static __always_inline __u32 py_find_thread(struct py_walk *w, __u32 tid, __u64 gen)
{
	__u32 status;

	if (w->last_tid == tid && py_tstate_still(w, w->last_tstate, w->last_interp)) {
		w->tstate_addr = w->last_tstate;
		return 0;
	}
	status = py_find_thread_of(w, tid, gen);
	w->last_tid = status ? 0 : tid;
	w->last_tstate = w->tstate_addr;
	w->last_interp = w->interp;
	return status;
}

/*
 * The stack window (window.bpf.h) as the thread's user walk left it: the
 * bytes of its C stack that walk read.  Python is walked after it, so
 * what CPython keeps on the C stack, the _PyCFrame of 3.11 and 3.12 and
 * the entry frames (shims) of 3.12 and 3.13, mostly needs no read of its
 * own: ~100 ns each here.
 */
static __always_inline struct stack_window *py_window(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&stack_window, &zero);
}

/* The word at @addr of the thread's memory: from the window, else read. */
static __always_inline int py_stack_word(__u64 addr, __u64 *out)
{
	struct stack_words v;

	if (read_stack(py_window(), addr, &v, 8))
		return -1;
	*out = v.w[0];
	return 0;
}

/*
 * The frame at @addr, @size bytes, copied to w->frames from the window if
 * it holds it: 0, or -1.
 */
static __always_inline int py_frame_from_window(struct py_walk *w, __u64 addr, __u32 size)
{
	struct stack_window *win = py_window();
	__u64 off;

	if (!win || addr < win->lo)
		return -1;
	off = addr - win->lo;
	if (off + size > win->len || off > STACK_WINDOW - CPROF_PY_FRAME_READ)
		return -1;
	/* by words: a memcpy here made 128 loads and stores of a byte (load_word()) */
	for (int k = 0; k < CPROF_PY_FRAME_READ / 8; k++)
		store_word(w->frames + 8 * k, load_word(&win->b[(off & (STACK_WINDOW - 1)) + 8 * k]));
	w->frames_lo = addr;
	w->frames_len = size;
	return 0;
}

/*
 * The frame at w->frame_addr, @size bytes, in w->frames: read unless it is
 * there already; its offset in w->frames, or -1.
 */
static __always_inline int py_frame_at(struct py_walk *w, __u32 size)
{
	__u64 addr = w->frame_addr, lo, back;

	if (addr < w->frames_lo || addr + size > w->frames_lo + w->frames_len) {
		if (!py_frame_from_window(w, addr, size))
			return 0;
		back = w->p.l.flags & CPROF_PY_F_LASTI_PTR ? addr & 4095 : 0;
		if (back > PY_FRAMES_BACK)
			back = PY_FRAMES_BACK;
		lo = addr - back;
		w->frames_len = 0;
		if (bpf_probe_read_user(w->frames, back + size, (const void *)lo))
			return -1;
		w->frames_lo = lo;
		w->frames_len = back + size;
	}
	return addr - w->frames_lo;
}

/*
 * The code object at @code with its tag (pycode_tag.h) in the top bits,
 * or 0 when it cannot be read.  One read a frame, ~100 ns here: what makes
 * a code object freed and another made at its address two functions.
 */
static __always_inline __u64 py_code_tagged(struct py_walk *w, __u64 code)
{
	const struct cprof_py_layout *l = &w->p.l;
	__u32 n = l->code_read;

	if (n == 0 || n > CPROF_PY_CODE_READ ||
	    bpf_probe_read_user(w->code, n, (const void *)(code + l->code_lo)))
		return 0;
	return code | cprof_py_code_tag((__u32)py_word(w->code, l->code_firstlineno, PY_CODE_MASK),
					py_word(w->code, l->code_filename, PY_CODE_MASK),
					py_word(w->code, l->code_name, PY_CODE_MASK),
					py_word(w->code, l->code_linetable, PY_CODE_MASK));
}

/*
 * One frame: record its code object and instruction position, and move
 * to the frame that called it.  Shims (3.12+) are not recorded; they mark
 * the frame before them as its native call's first.  bpf_loop callback.
 */
static long py_frame_step(__u32 i, void *unused)
{
	struct py_walk *w = py_walk_get();
	struct cprof_stack *st = get_scratch();
	const struct cprof_py_layout *l;
	__u32 n, size, flags;
	const __u8 *f;
	__u64 code, pos;
	int at;

	if (!st || !w)
		return 1;
	l = &w->p.l;
	size = l->frame_read;
	flags = l->flags;
	n = st->nr;
	if (!w->frame_addr) {
		w->status = CPROF_UNWIND_OK;
		return 1;
	}
	if (n + 2 > CPROF_MAX_FRAMES) {
		w->status = CPROF_UNWIND_TRUNCATED;
		return 1;
	}
	if (size == 0 || size > CPROF_PY_FRAME_READ || (at = py_frame_at(w, size)) < 0) {
		w->status = CPROF_UNWIND_READ;
		return 1;
	}
	f = w->frames + (at & PY_FRAMES_MASK);
	code = py_word(f, l->frame_code, PY_FRAME_MASK);
	w->frame_addr = py_word(f, l->frame_back, PY_FRAME_MASK);
	if ((flags & CPROF_PY_F_SHIMS) &&
	    f[l->frame_owner & PY_FRAME_MASK] == CPROF_PY_OWNED_BY_CSTACK) {
		if (n >= 2)
			st->ip[(n - 1) & (CPROF_MAX_FRAMES - 1)] |= CPROF_PY_ENTRY;
		w->hash = hash_mix(w->hash, PY_SHIM_MARK);
		return 0;
	}
	if (!code || (code & 7) || code > CPROF_PY_CODE_ADDR_MASK) {
		w->status = CPROF_UNWIND_BAD_CFA; /* no object there: a broken chain */
		return 1;
	}
	code = py_code_tagged(w, code);
	if (!code) {
		w->status = CPROF_UNWIND_READ;
		return 1;
	}
	pos = py_word(f, l->frame_lasti, PY_FRAME_MASK);
	if (!(flags & CPROF_PY_F_LASTI_PTR))
		pos = (__u32)pos;
	if ((flags & CPROF_PY_F_EVERY_ENTRY) ||
	    ((flags & CPROF_PY_F_IS_ENTRY) && f[l->frame_entry & PY_FRAME_MASK]))
		pos |= CPROF_PY_ENTRY;
	st->ip[n & (CPROF_MAX_FRAMES - 1)] = code;
	st->ip[(n + 1) & (CPROF_MAX_FRAMES - 1)] = pos;
	st->nr = n + 2;
	/* the innermost frame's position is left to python_stack(): it may keep it apart */
	w->hash = hash_mix(w->hash, code);
	if (n)
		w->hash = hash_mix(w->hash, pos);
	return 0;
}

/* Four frames a call of the callback (steps.bpf.h). */
#define PY_STEPS 4
STEPS_CALLBACK(py_frame_steps, py_frame_step, PY_STEPS)

/*
 * Tells the loader of frame @i's code object unless it was told already.
 * A full ring stops the telling; the code objects left untold are told
 * when the stack is next stored anew (next epoch).  bpf_loop callback.
 */
static long py_announce_step(__u32 i, void *unused)
{
	struct py_walk *w = py_walk_get();
	struct cprof_stack *st = get_scratch();
	struct cprof_py_code_key k = {};
	struct cprof_event *ev;
	__u8 one = 1;

	if (!st || !w || 2 * i >= st->nr)
		return 1;
	k.pid = w->pid;
	k.gen = w->p.gen;
	k.code = st->ip[(2 * i) & (CPROF_MAX_FRAMES - 1)];
	if (bpf_map_lookup_elem(&py_codes, &k))
		return 0;
	ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
	if (!ev)
		return 1;
	__builtin_memset(ev, 0, sizeof(*ev));
	ev->type = CPROF_EV_PY_CODE;
	ev->pid = k.pid;
	ev->gen = k.gen;
	ev->ktime_ns = bpf_ktime_get_ns();
	ev->addr = k.code;
	bpf_ringbuf_submit(ev, 0);
	bpf_map_update_elem(&py_codes, &k, &one, BPF_ANY);
	return 0;
}

/* python_stack()'s @ids: a thread's process and its own id, in one argument (5 at most). */
static __always_inline __u64 py_ids(__u32 pid, __u32 tid)
{
	return (__u64)tid << 32 | pid;
}

/*
 * The Python stack of thread tid (whose fs base is @fsbase) of image @gen
 * of process pid (@ids: py_ids(pid, tid)), stored in the pair live in
 * @epoch: its hash, or
 * an enum cprof_py_status (or cprof_stack_status) saying why there is
 * none.  Stored whole, or when @leaf is given, with the innermost frame's
 * instruction position there and 0 in its place (see
 * cprof_sample_key.pyleaf).  Call it right after the thread's user walk
 * (it reads from its window) and once that stack is stored (it uses the
 * scratch stack).
 */
__noinline __u64 python_stack(__u64 ids, __u64 gen, __u64 fsbase, __u64 epoch, __u64 *leaf)
{
	__u32 pid = ids, tid = ids >> 32;
	struct cprof_stack *st = get_scratch();
	struct py_walk *w = py_walk_get();
	const struct cprof_py_proc *p;
	__u32 unused = 0, status;
	bool fresh = false;
	__u64 h;

	if (!st || !w)
		return CPROF_STACK_ERR_READ;
	if (w->last_pid != pid || w->last_gen != gen) {
		p = bpf_map_lookup_elem(&py_procs, &pid);
		w->last_pid = 0;
		w->last_tid = 0;
		if (!p || p->gen != gen)
			return CPROF_PY_NONE;
		w->p = *p;
		w->last_pid = pid;
		w->last_gen = gen;
	}
	w->pid = pid;
	w->want = fsbase;
	w->hash = HASH_SEED;
	status = py_find_thread(w, tid, gen);
	if (status)
		return status;
	w->frame_addr = py_word(w->tstate, w->p.l.tstate_frame, PY_TSTATE_MASK);
	if ((w->p.l.flags & CPROF_PY_F_CFRAME) && w->frame_addr &&
	    py_stack_word(w->frame_addr + w->p.l.cframe_frame, &w->frame_addr))
		return CPROF_PY_READ;
	if (!w->frame_addr)
		return CPROF_PY_IDLE;
	st->nr = 0;
	w->frames_len = 0;
	w->status = CPROF_UNWIND_TRUNCATED; /* unless a step says otherwise */
	/* Frames, and as many shims at most. */
	bpf_loop(STEPS_CALLS(CPROF_MAX_FRAMES + 2, PY_STEPS), py_frame_steps, &unused, 0);
	if (!st->nr)
		return w->status == CPROF_UNWIND_OK ? CPROF_PY_IDLE : CPROF_PY_READ;
	st->status = w->status;
	/* the step hashed all but the innermost position */
	if (leaf) {
		*leaf = st->ip[1];
		st->ip[1] = 0;
	} else {
		w->hash = hash_mix(w->hash, st->ip[1]);
	}
	h = store_stack(st, epoch & 1, epoch, hash_finish(w->hash, st, PY_STACK_SALT), &fresh);
	if (fresh)
		bpf_loop(CPROF_PY_MAX_FRAMES, py_announce_step, &unused, 0);
	return h;
}

#endif
