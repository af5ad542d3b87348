/* SPDX-License-Identifier: MIT */
/*
 * python_lines: the source line of an instruction, from a code object's
 * line table in the format of its CPython version: co_lnotab (3.8, 3.9),
 * co_linetable's line pairs (3.10) or its location entries (3.11+).  The
 * table comes from a process's memory: any bytes are read safely, within
 * @len, and give some line or none.
 */
#ifndef CPROF_PYTHON_LINES_H
#define CPROF_PYTHON_LINES_H

#include <stddef.h>
#include <stdint.h>

/*
 * The line of the instruction at byte offset @addr in the bytecode of a
 * code object of CPython version @version (0x30b for 3.11) whose first
 * line is @first; 0 when the table gives it none.
 */
int64_t py_line(unsigned version, const uint8_t *tab, size_t len, int64_t first, uint64_t addr);

#endif
