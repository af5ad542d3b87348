/* SPDX-License-Identifier: MIT */
/*
 * python: the CPython interpreter of a process, and the names of its
 * Python frames.
 *
 * A process runs a CPython this knows when one of its mappings is
 * libpython3.N.so or a python3.N executable whose dynamic symbols give
 * _PyRuntime, and whose version (Py_Version from 3.11, else the file's
 * name) has a layout (python_layout.h).  The BPF program is then given
 * where the interpreter is (pyproc_bpf()) and records, per sample, the
 * code object and instruction position of each Python frame; the code
 * objects it announces are read here once each (pyproc_read_code()),
 * while the process lives, and kept until its profile is written.
 *
 * Everything read from the process is hostile input: each read has a
 * bound, every object read must have the type the interpreter's own type
 * objects give, and strings and tables are copied within their limits.
 */
#ifndef CPROF_PYTHON_H
#define CPROF_PYTHON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cprof.h"
#include "util/errbuf.h"
#include "python/python_tramp.h"

struct elfobj;
struct vma_list;
struct pyproc;

/* Bounds on what is kept of code objects, over all processes. */
#define PY_CODES_MAX 65536           /* code objects read */
#define PY_CODE_BYTES_MAX (64u << 20) /* their names, files and line tables */

/* What the loader's Python side counted, over the run. */
struct py_stats {
	size_t procs;         /* processes given Python stacks */
	size_t unknown;       /* processes of an unknown version: native frames only */
	size_t codes;         /* code objects read */
	size_t code_bytes;    /* held now, for the bound */
	size_t bad_codes;     /* announced, but not that code object now (or unreadable) */
	size_t over_bound;    /* not read: past PY_CODES_MAX or PY_CODE_BYTES_MAX */
	char unknown_version[16]; /* the first unknown version seen ("3.14", "3.13t") */
	uint64_t samples;     /* of processes with a known CPython */
	uint64_t with_frames; /* ... that have Python frames */
	uint64_t why[CPROF_PY_STATUS_MAX]; /* ... that have none, by enum cprof_py_status */
	struct py_tramp_stats tramps; /* perf trampolines (the run's, copied for the summary) */
};

/* Counts @count samples of a process with a known CPython by their Python stack. */
void py_stats_sample(struct py_stats *st, uint64_t pystack, uint64_t count);

/* The summary's line on Python (no newline); false when there is nothing to say. */
bool py_stats_line(const struct py_stats *st, char *buf, size_t len);

/*
 * Finds the CPython in the mappings @maps (with their objects @objs, which
 * may hold NULLs) of process @pid.  0 and *@out set; -ENOENT: no CPython;
 * -ENOTSUP: a CPython of a version without a layout (@err says which, and
 * @st counts it), *@out set all the same to one that names no frame, so
 * that the process is counted once; -ENOMEM.
 * @st, the run's, must outlive the pyproc.
 */
int pyproc_find(struct pyproc **out, uint32_t pid, const struct vma_list *maps,
		struct elfobj *const *objs, struct py_stats *st, struct errbuf *err);

void pyproc_free(struct pyproc *pp);

/* What the BPF program is given for image @gen of the process. */
void pyproc_bpf(const struct pyproc *pp, uint64_t gen, struct cprof_py_proc *out);

/*
 * Reads the code object at @addr of process @pid (its name, file, first
 * line and line table) unless read already.  0, or a negative errno when
 * it is not one or could not be read, or the bounds are reached (counted;
 * its frames are then named "[python: unreadable code]").
 */
int pyproc_read_code(struct pyproc *pp, uint32_t pid, uint64_t addr);

/* Whether @ip lies in _PyEval_EvalFrameDefault, where Python frames run. */
bool pyproc_is_eval(const struct pyproc *pp, uint64_t ip);

/* One Python frame, named: strings owned by the pyproc. */
struct py_frame {
	const char *name; /* NULL: code object not read */
	const char *file;
	int64_t line;     /* 0: unknown */
	int64_t start_line;
};

/* Names the frame of code object @code at instruction position @pos (as recorded). */
void pyproc_frame(const struct pyproc *pp, uint64_t code, uint64_t pos, struct py_frame *out);

#endif
