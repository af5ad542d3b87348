/* SPDX-License-Identifier: MIT */
/*
 * python_layout: where CPython 3.8 to 3.13 keep what a Python stack is
 * read from, per minor version, taken from each version's own headers
 * (tools/pylayout.c prints a row; test_python_layout checks the table
 * against every version installed).
 *
 * Two halves: what the BPF program reads at sample time (struct
 * cprof_py_layout, see "Python" in cprof.h), and what the loader reads of
 * a code object to name its frames.
 */
#ifndef CPROF_PYTHON_LAYOUT_H
#define CPROF_PYTHON_LAYOUT_H

#include <stdint.h>

#include "cprof.h"

/* Byte offsets the loader reads, in a code object and the strings it holds. */
struct py_code_layout {
	uint16_t filename;   /* co_filename */
	uint16_t name;       /* co_qualname from 3.11, co_name before */
	uint16_t firstlineno;
	uint16_t linetable;  /* co_linetable from 3.10, co_lnotab before */
	uint16_t bytecode;   /* co_code_adaptive (3.11+): instruction positions count from it */
	uint16_t ascii_size; /* sizeof(PyASCIIObject): an ASCII string's characters follow */
	uint16_t compact_size; /* sizeof(PyCompactUnicodeObject): another's do */
	uint16_t str_state;  /* PyASCIIObject.state */
	uint16_t bytes_data; /* PyBytesObject.ob_sval */
	uint16_t var_size;   /* PyVarObject.ob_size, and PyASCIIObject.length */
};

/* The offsets of one minor version, as tools/pylayout.c prints them. */
struct py_offsets {
	uint16_t runtime_interps, interp_next, interp_threads, tstate_next, tstate_interp,
		tstate_thread_id, tstate_frame, cframe_frame, frame_back, frame_code, frame_lasti,
		frame_entry, frame_owner, frame_read;
};

struct py_layout {
	unsigned version; /* 0x30b for 3.11 */
	struct py_offsets off;
	struct py_code_layout code;
};

/* The layout of CPython @major.@minor, or NULL when it is not known. */
const struct py_layout *py_layout_find(unsigned major, unsigned minor);

/* What the BPF program is given for @l. */
void py_layout_bpf(const struct py_layout *l, struct cprof_py_layout *out);

#endif
