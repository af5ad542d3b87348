/* SPDX-License-Identifier: MIT */
/*
 * v8_names: JavaScript frames as profiles name them.  A frame BPF recorded
 * (v8_layout.h says what) is a SharedFunctionInfo's tagged pointer and a
 * bytecode offset (-1: none); it becomes function "name", file (the
 * script's path or URL) and lines: where the function starts, and where
 * the offset is.  Each (SFI, offset) is resolved once per process and
 * kept, and each script's line ends with it, up to bounds on the entries
 * and bytes a process keeps.
 *
 * V8's heap moves objects (the GC compacts) and frees them, so an address
 * may hold another function later: an entry keeps the SFI's first words
 * as it read them, and a later look whose read of them differs resolves
 * the frame anew.  When they cannot be read (the process is gone) the
 * entry stands as it was read, while the process lived.
 */
#ifndef CPROF_V8_NAMES_H
#define CPROF_V8_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "fs/procmem.h"
#include "util/hmap.h"

struct v8_layout;

/* Entries a process keeps (frames and scripts), and the bytes they may take. */
#define V8_NAMES_MAX 65536
#define V8_NAMES_BYTES (32u << 20)
/* The SFI's words an entry is checked by: map, function data, name or scope info, ..., script. */
#define V8_SFI_HEAD 5

/* A frame, resolved. */
struct v8_frame {
	int err;              /* 0: named; else why not (v8_sfi_read()'s error), the rest empty */
	const char *function; /* "run", "Klass.method"'s "method", "(anonymous)" */
	const char *script;   /* "/srv/app.js", "file:///srv/m.mjs", "node:internal/..."; "": none */
	uint32_t start_line;  /* 1-based line of the function's start; 0: unknown */
	uint32_t line;        /* of the bytecode offset; 0: none asked, or unknown (line_err) */
	int line_err;         /* why line is 0 for an offset: -ENODATA (no table yet), -ERANGE... */
	int start_err;        /* why start_line is 0: no script, its lines unreadable (-ENOTSUP: uncached external) */
};

/* What a process's frames came out as. */
struct v8_names_stats {
	size_t named, failed; /* frames resolved (again after a move) */
	size_t refused;       /* not kept: past the bounds */
};

struct v8_names {
	struct hmap frames;  /* (SFI, offset) -> its struct v8_frame and check words */
	struct hmap scripts; /* Script -> its line ends */
	size_t bytes;        /* of names and line ends kept */
	struct v8_names_stats st;
};

void v8_names_init(struct v8_names *n);
void v8_names_free(struct v8_names *n);

/*
 * The frame of SFI @sfi at bytecode offset @offset (-1: none) of the V8
 * laid out as @l, whose memory is @m: resolved once and kept.  0 and
 * *@out, valid until the next call on @n; -ENOSPC: over the bounds (the
 * frame not kept, counted); -ENOMEM.  A frame that could not be named is
 * kept too, with its reason in err.
 */
int v8_frame_name(struct v8_names *n, const struct v8_layout *l, const struct memsrc *m,
		  uint64_t sfi, int32_t offset, const struct v8_frame **out);

/*
 * The frame of @sfi at @offset as v8_frame_name() kept it, the process
 * not read again (a profile names frames as they were read while they
 * were sampled); NULL when it was never kept.
 */
const struct v8_frame *v8_frame_kept(const struct v8_names *n, uint64_t sfi, int32_t offset);

#endif
