/* SPDX-License-Identifier: MIT */
/*
 * v8_script: a V8 Script's name and its lines, read from a process.
 *
 * V8 keeps a source position as a character offset into its script; a
 * line is found from where each line ends.  The Script keeps those ends
 * (line_ends, a FixedArray of Smis) once something asked for a line (a
 * stack trace, the inspector); until then they are worked out here from
 * the source string as V8 does (String::CalculateLineEnds: "\n", "\r"
 * not followed by "\n", U+2028, U+2029), read a page at a time, at most
 * V8_SOURCE_MAX characters, wherever it is kept (in V8's heap, or outside
 * it for an external string: Node.js's own modules, "node:fs").  Either
 * way the result is the same array, kept by the caller (v8_names.h) for
 * each script.
 */
#ifndef CPROF_V8_SCRIPT_H
#define CPROF_V8_SCRIPT_H

#include <stddef.h>
#include <stdint.h>

#include "fs/procmem.h"

struct v8_layout;

/* Bounds: the source read to find lines, the lines kept, a script's name. */
#define V8_SOURCE_MAX (16u << 20)
#define V8_LINES_MAX (4u << 20)
#define V8_SCRIPT_NAME_MAX 1024

/* Whether @script (a tagged pointer) is a Script: 0, -EINVAL, -EFAULT. */
int v8_script_check(const struct v8_layout *l, const struct memsrc *m, uint64_t script);

/*
 * The name of @script (a path, or a URL for an ES module: "file:///..."),
 * as UTF-8 into @buf (@cap bytes): 0; "" for a script without one (its
 * name undefined: eval'd or made by the embedder); else v8_string()'s
 * errors.
 */
int v8_script_name(const struct v8_layout *l, const struct memsrc *m, uint64_t script,
		   char *buf, size_t cap);

/*
 * Where each line of @script ends (character offsets, increasing), into a
 * new array *@ends (free()d by the caller) of *@n: from its line_ends when
 * V8 has computed them, else from its source.  0; -E2BIG: a source over
 * V8_SOURCE_MAX characters or over V8_LINES_MAX lines; -ENOTSUP: an
 * uncached external source; -EINVAL: line ends that are no increasing
 * Smis, or a source that is no string; -EFAULT; -ENOMEM.  Node.js's own
 * modules' sources are external strings, read where V8 cached their data.
 */
int v8_script_line_ends(const struct v8_layout *l, const struct memsrc *m, uint64_t script,
			uint32_t **ends, size_t *n);

/* The line (1-based) of character offset @pos, given the ends @ends (@n of them). */
uint32_t v8_line_of(const uint32_t *ends, size_t n, uint32_t pos);

#endif
