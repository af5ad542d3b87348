/* SPDX-License-Identifier: MIT */
/*
 * dwarfinfo: source file, line and inlined calls for addresses of one ELF
 * object, from its DWARF (in the object, or in the separate debug file found
 * by build ID under <debug_root>/.build-id/xx/rest.debug or by
 * .gnu_debuglink), read with elfutils' libdw.
 *
 * libdw loads every .debug_* section of a file when it opens it
 * (decompressing the compressed ones), so an open dwarfinfo costs about the
 * size of the object's debug sections: open one only for an object that was
 * sampled, and free it when its addresses are done (symbolize.c does).
 * Files are read with read(2), never mapped: a file truncated under us by a
 * hostile owner then gives an error, not SIGBUS.  Debug files that would
 * need more than DWARFINFO_MAX_BYTES are refused.
 */
#ifndef CPROF_DWARFINFO_H
#define CPROF_DWARFINFO_H

#include <stddef.h>
#include <stdint.h>

#include "elfobj.h"
#include "errbuf.h"

/* Debug sections (decompressed) a single object may make us load. */
#define DWARFINFO_MAX_BYTES (512ull << 20)

/* Frames kept per address: innermost inlined calls first, outermost last. */
#define DWARFINFO_MAX_FRAMES 16

struct dwarfinfo;

/* One function of an address's inline chain. */
struct dwarf_frame {
	const char *name;  /* linkage (mangled) name if any, else DW_AT_name; or NULL */
	const char *file;  /* source file of @line, or NULL */
	const char *dir;   /* when @file is relative: the CU's compilation directory, or NULL */
	int line;          /* 0 when unknown */
	int start_line;    /* the function's DW_AT_decl_line, 0 when unknown */
};

/*
 * Opens the DWARF of @o: the object's own .debug_info if it has one, else
 * its separate debug file (@opts as for elfobj_load_symbols(): debug_root
 * for build-ID lookups, path and root_fd for .gnu_debuglink).  A debug
 * file must carry @o's build ID, or match the CRC of .gnu_debuglink when @o
 * has none.  DWARF whose sections would take more than @max_bytes (0:
 * DWARFINFO_MAX_BYTES, which is also the most allowed) is not opened.
 * Returns -ENOENT when there is no DWARF, -EFBIG when there is but only
 * beyond @max_bytes (@err says how big).
 */
int dwarfinfo_open(struct dwarfinfo **out, const struct elfobj *o,
		   const struct elfobj_debug_opts *opts, uint64_t max_bytes,
		   struct errbuf *err);

/*
 * The inline chain at @vaddr (an ELF virtual address of the object, as
 * elfobj_file_to_vaddr() gives): frames[0] the innermost function with the
 * line of @vaddr, each next one the function it was inlined into with the
 * line of that call, the last the function the code physically belongs to.
 * Returns the number of frames written (at most @max), 0 when no
 * compilation unit covers @vaddr.  Where the chain is longer than @max, the
 * innermost @max - 1 frames and the outermost are kept.  Strings stay valid
 * until dwarfinfo_free().
 */
size_t dwarfinfo_lookup(struct dwarfinfo *d, uint64_t vaddr, struct dwarf_frame *frames,
			size_t max);

/* Bytes of debug sections loaded: what this dwarfinfo costs in memory. */
uint64_t dwarfinfo_bytes(const struct dwarfinfo *d);

/* Whether the DWARF came from a separate debug file. */
bool dwarfinfo_separate(const struct dwarfinfo *d);

void dwarfinfo_free(struct dwarfinfo *d);

#endif
