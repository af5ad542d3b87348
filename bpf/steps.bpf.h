/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * steps.bpf.h: a bpf_loop() callback that takes several steps of a walk a
 * call, for the walks that step once a frame at every sample (the user
 * stack, the Python frames).
 *
 * bpf_loop() calls its callback once an iteration, and the call and its
 * return are most of what an iteration costs where the kernel returns
 * through a mitigation thunk (AMD's Safe RET here): 6-9 ns an iteration
 * against under 1 ns for a loop without calls (BPF_PROG_TEST_RUN, 10^5
 * iterations), and CPython 3.8's samples walk some 25 native frames and
 * 5 Python ones.  A callback of two steps halves the calls.  The verifier
 * checks a callback once whatever it loops over, but a step's paths once
 * for each step within it: two unwinder steps cost ~0.1 s more CPU at
 * load, four ~0.35 s (the Python step is smaller, and four of them cost
 * ~0.05 s).  A loop of its own, bounded by may_goto, would need no calls
 * at all; the verifier did not find such a walk's state repeat within its
 * million instructions.
 *
 * A step returns non-zero to end the walk, and bounds the walk itself
 * (a frame count): the calls are enough for @n steps, a few more at most.
 */
#ifndef CPROF_STEPS_BPF_H
#define CPROF_STEPS_BPF_H

#include "base.bpf.h"

/* The calls of a callback of @k steps that make at least @n steps. */
#define STEPS_CALLS(n, k) (((n) + (k) - 1) / (k))

/* Defines @name, a bpf_loop() callback of @k calls of step function @step. */
#define STEPS_CALLBACK(name, step, k)                          \
	static inline long name(__u32 index, void *ctx)         \
	{                                                       \
		for (int s_ = 0; s_ < (k); s_++)                \
			if (step(index, ctx))                   \
				return 1;                       \
		return 0;                                       \
	}

#endif
