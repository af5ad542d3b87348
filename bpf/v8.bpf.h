/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * v8.bpf.h: V8's JavaScript frames (Node.js), met by the unwinder at a
 * pc without CFI: whether the frame rbp points at is one, and what names
 * it later (runtimes.h, "V8").  V8 keeps frame pointers, so the walk
 * steps the frame by rbp as before; this only puts the frame's
 * SharedFunctionInfo in its pc's place.  The loader found the V8 and its
 * layout (user/node/); every read here is of memory the process controls,
 * each of fixed size, and a frame whose words do not check out stays the
 * native frame it was.  Also compiled as plain C for the unwinder's other
 * uses (user/unwind/bpfunwind.c), where the map is empty.
 */
#ifndef CPROF_V8_BPF_H
#define CPROF_V8_BPF_H

#include "base.bpf.h"
#include "framestep.bpf.h"
#include "stacks.bpf.h"

#define CPROF_V8_PROCS 1024

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CPROF_V8_PROCS);
	__type(key, __u32);
	__type(value, struct cprof_v8_proc);
} v8_procs SEC(".maps");

/* A word of the process at @addr; 0 when it cannot be read. */
static __always_inline __u64 v8_word(__u64 addr)
{
	__u64 w = 0;

	if (bpf_probe_read_user(&w, sizeof(w), (const void *)addr))
		return 0;
	return w;
}

/*
 * The slots of the frame at @fp a JavaScript frame's check reads, in one
 * read: the bytecode offset, the BytecodeArray, the argument count, the
 * function and the context (runtimes.h); 0s when they cannot be read.
 */
#define V8_SLOTS 5
enum { V8_OFFSET, V8_ARRAY, V8_ARGC, V8_FUNCTION, V8_CONTEXT };
static __always_inline void v8_slots(const struct cprof_v8_proc *p, __u64 fp, __u64 w[V8_SLOTS])
{
	if (bpf_probe_read_user(w, V8_SLOTS * sizeof(w[0]), (const void *)(fp + (__s64)p->fp_bytecode_offset)))
		for (int i = 0; i < V8_SLOTS; i++)
			w[i] = 0;
}

/* Whether @w is a tagged pointer to a heap object in user space. */
static __always_inline bool v8_is_object(const struct cprof_v8_proc *p, __u64 w)
{
	return w && w < (1ULL << 47) && (w & p->heap_tag_mask) == p->heap_tag;
}

/*
 * Whether heap object @obj (tagged) is of instance type @type: its map is
 * @*known (a root map, the one of that type, remembered when first seen)
 * or a map of that type, then remembered.
 */
static __always_inline bool v8_is_type(const struct cprof_v8_proc *p, __u64 obj, __u16 type,
				       __u64 *known)
{
	__u64 map = v8_word(obj - p->heap_tag + p->object_map);
	__u16 t = 0;

	if (!v8_is_object(p, map))
		return false;
	if (map == *known)
		return true;
	if (bpf_probe_read_user(&t, sizeof(t), (const void *)(map - p->heap_tag + p->map_type)) ||
	    t != type)
		return false;
	*known = map;
	return true;
}

/*
 * An interpreted frame's bytecode offset slot (its value as the frame
 * holds it, plus one), when its slots @array and @off hold a
 * BytecodeArray and a Smi where the interpreter keeps them; else 0.
 */
static __always_inline __u64 v8_offset_slot(struct cprof_v8_proc *p, __u64 array, __u64 off)
{
	__s64 v;

	/* not a Smi: a baseline frame keeps its feedback there, an optimized one anything */
	if ((off & 1) || !v8_is_object(p, array) ||
	    !v8_is_type(p, array, p->bytecode_array_type, &p->bytecode_array_map))
		return 0;
	v = (__s64)off >> (p->smi_shift & 63);
	return v >= 0 && v <= CPROF_V8_NO_SLOT ? (__u64)v + 1 : 0;
}

/*
 * Records walk @c's frame @n (its pc in @st) as the JavaScript function
 * whose frame rbp points at, when it is one (runtimes.h), for the walk to
 * step by rbp as before.  0: recorded; -1: no JavaScript frame, nothing
 * changed; -2: the process runs no V8 the loader knows (the walk asks no
 * more).  A global function: checked once by the verifier, called only
 * for pcs without CFI.  Its reads (each one costs some 80 ns): the
 * frame's slots (one read: the loader checks where they lie), the
 * function's shared, its map, an interpreted frame's array's map; a
 * map's type only the first time.
 */
__noinline int v8_frame(struct unwind_ctx *c, struct cprof_stack *st, __u32 n)
{
	struct cprof_v8_proc *p;
	__u64 fp, w[V8_SLOTS], sfi, tagged;
	__u32 pid;

	if (!c || !st)
		return -1;
	pid = c->pid;
	p = bpf_map_lookup_elem(&v8_procs, &pid);
	/* an entry of the pid's image before an exec is not this one's */
	if (!p || p->gen != c->gen)
		return -2;
	fp = c->bp;
	if (!fp || fp % 8 || fp < c->sp || fp >= (1ULL << 47))
		return -1;
	v8_slots(p, fp, w);
	/* a typed frame (entry, exit, stub) has a Smi where a JavaScript one has its context */
	if (!v8_is_object(p, w[V8_CONTEXT]) || !v8_is_object(p, w[V8_FUNCTION]))
		return -1;
	sfi = v8_word(w[V8_FUNCTION] - p->heap_tag + p->function_shared);
	if (!v8_is_object(p, sfi) || !v8_is_type(p, sfi, p->sfi_type, &p->sfi_map))
		return -1;
	tagged = CPROF_V8_FRAME | v8_offset_slot(p, w[V8_ARRAY], w[V8_OFFSET]) << 47 | sfi;
	st->ip[n & (CPROF_MAX_FRAMES - 1)] = tagged;
	/* the leaf is kept apart (walk_user_stack); the rest make the hash */
	if (n)
		c->hash = hash_mix(c->hash, tagged);
	return 0;
}

#endif
