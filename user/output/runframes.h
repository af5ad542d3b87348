/* SPDX-License-Identifier: MIT */
/*
 * runframes: the frames a managed runtime's code stands for, as symbolized
 * ones: a Python frame (its code object and position), a Java frame and a
 * JavaScript frame (what BPF recorded in place of a pc, bpf/runtimes.h),
 * each named from what the loader read of the process while it lived.  A
 * frame that could not be read keeps a name that says so.
 */
#ifndef CPROF_RUNFRAMES_H
#define CPROF_RUNFRAMES_H

#include <stdint.h>

#include "process/proctab.h"
#include "symbols/symbolize.h"

/* Python frame @code at @pos of @p. */
void runframe_python(const struct process *p, uint64_t code, uint64_t pos, struct sym *out);

/* Java frame @tagged of @p: its methods, inlined ones first. */
void runframe_java(const struct process *p, uint64_t tagged, struct sym *out);

/* JavaScript frame @tagged of @p: its function, script and line. */
void runframe_js(const struct process *p, uint64_t tagged, struct sym *out);

#endif
