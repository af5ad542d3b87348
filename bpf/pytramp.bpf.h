/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * pytramp.bpf.h: where CPython's perf trampolines are (see cprof.h), and
 * how a pc in one is stepped: the rule the loader derived from the code it
 * found there.  The unwinder asks only for pcs without CFI.  Also compiled
 * as plain C for unit tests (user/unwind/bpfunwind.c).
 */
#ifndef CPROF_PYTRAMP_BPF_H
#define CPROF_PYTRAMP_BPF_H

#include "base.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, CPROF_PY_TRAMP_PAGES);
	__type(key, struct cprof_py_tramp_key);
	__type(value, struct cprof_py_tramp);
} py_tramps SEC(".maps");

/*
 * The CFI row of @lookup (the pc, or a return address less one when not
 * @exact) of process @pid when it is in a trampoline the loader found: 0
 * and *@out set, or -1: not in one, or not where a frame can be (in a
 * copy's padding, or, for a return address, anywhere but right after a
 * copy's call).  A trampoline keeps no frame pointer: rbp is its caller's,
 * or saved right below the return address.  A global function, checked
 * once by the verifier, and the unwinder then runs the row as it runs
 * those of CFI: stepping the frame here took the verifier past its limit.
 */
__noinline int tramp_row(__u32 pid, __u64 lookup, __u32 exact, struct cprof_unwind_rule *out)
{
	struct cprof_py_tramp_key k = { .pid = pid, .page = lookup >> 12 };
	const struct cprof_py_tramp *t = bpf_map_lookup_elem(&py_tramps, &k);
	__u64 off;
	bool in;

	if (!out || !t || lookup < t->start || lookup >= t->end || !t->period)
		return -1;
	off = (lookup - t->start) % t->period;
	if (off >= t->len || (!exact && off + 1 != t->ret))
		return -1;
	in = off >= t->lo && off < t->hi;
	out->pad = 0;
	out->cfa_off = in ? 16 : 8;
	out->rbp_off = -2;
	out->rules = CPROF_ROW_RULES(CPROF_CFA_RSP, in && (t->flags & CPROF_PY_TRAMP_RBP) ?
							 CPROF_RBP_OFFSET : CPROF_RBP_SAME);
	return 0;
}

#endif
