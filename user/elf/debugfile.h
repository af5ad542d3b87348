/* SPDX-License-Identifier: MIT */
/*
 * debugfile: finds the separate debug file of an ELF object, for its
 * symbols (elfsyms) and its DWARF (dwarfinfo) alike, in gdb's order:
 *
 *  1. by build ID: <debug_root>/.build-id/xx/rest.debug, on the host;
 *  2. by .gnu_debuglink (a bare file name and the CRC-32 of its target):
 *     next to the object, in its .debug/ directory (both as the process
 *     sees them: opened under its root with rootfs_openat(), never
 *     following a link that leads out), then <debug_root><object's dir>/.
 *
 * A candidate is a regular file of at most DEBUGFILE_MAX bytes with a
 * sound 64-bit ELF header and section table (elfsrc_check()) and, found
 * by build ID, the same build ID in its notes; found by link, the CRC.
 * The caller's accept() then says whether it has what is wanted (a
 * .symtab, DWARF within a budget).  Nothing is opened with a plain
 * open(2) of a path a process controls, and nothing blocks (rootfs.h).
 */
#ifndef CPROF_DEBUGFILE_H
#define CPROF_DEBUGFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "elf/elfsrc.h"

/* A debug file larger than this is not read (its CRC alone would take long). */
#define DEBUGFILE_MAX (4ull << 30)

struct debugfile_query {
	const char *debug_root;   /* host directory of debug files; NULL or "": none */
	const uint8_t *build_id;  /* the object's, @build_id_len bytes (0: none) */
	size_t build_id_len;
	/*
	 * For .gnu_debuglink: the object's bytes (NULL: no link followed), its
	 * path as the process saw it (may be NULL) and that process's root
	 * directory (<= 0: none, the link is looked for under debug_root only).
	 */
	const struct elfsrc *obj;
	const char *path;
	int root_fd;
};

/*
 * Called for each candidate that passed the checks above, with its bytes
 * and its libelf handle (valid during the call): true keeps it.
 */
typedef bool (*debugfile_accept_fn)(const struct elfsrc *s, Elf *e, void *ctx);

/* The descriptor of the first candidate @accept keeps (the caller's to close), or -ENOENT. */
int debugfile_find(const struct debugfile_query *q, debugfile_accept_fn accept, void *ctx);

#endif
