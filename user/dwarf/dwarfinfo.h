/* SPDX-License-Identifier: MIT */
/*
 * dwarfinfo: source file, line and inlined calls for addresses of one ELF
 * object, from its DWARF (in the object, or in the separate debug file found
 * by build ID under <debug_root>/.build-id/xx/rest.debug or by
 * .gnu_debuglink), read with elfutils' libdw.
 *
 * Finding the files (the object's own DWARF, a debug file, a dwz file)
 * and reading them are two steps: dwarfinfo_locate() opens and checks
 * files by path as the agent, dwarfinfo_open_fds() reads them given only
 * their descriptors, which is what a sandboxed process without access to
 * any path can do (dwarfworker.h).  dwarfinfo_open() does both.
 *
 * What libdw reads is an image made by dwarfimage.h (the sections lines
 * need, decompressed, each ending in zero bytes), never the file, so an
 * open dwarfinfo costs about the size of those sections: open one only for
 * an object that was sampled, and free it when its addresses are done.
 * Files are read with read(2), never mapped: a file truncated under us by
 * a hostile owner gives an error, not SIGBUS.
 */
#ifndef CPROF_DWARFINFO_H
#define CPROF_DWARFINFO_H

#include <stddef.h>
#include <stdint.h>

#include "dwarf/dwarfimage.h"
#include "elf/elfobj.h"
#include "util/errbuf.h"

/* Debug sections (decompressed) a single object may make us load. */
#define DWARFINFO_MAX_BYTES DWARFIMAGE_MAX_BYTES

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

/* The files of an object's DWARF, found and checked but not read yet. */
struct dwarf_source {
	int fd;         /* the file with .debug_info: the object's own, or a debug file */
	int alt_fd;     /* its dwz file, or -1 */
	bool own_fd;    /* @fd was opened here (a debug file), not borrowed from the object */
	uint64_t bytes; /* the debug sections of both, decompressed */
};

/*
 * Finds the DWARF of @o: the object's own .debug_info if it has one, else
 * its separate debug file (@opts as for elfobj_load_symbols(): debug_root
 * for build-ID lookups, path and root_fd for .gnu_debuglink).  A debug
 * file must carry @o's build ID, or match the CRC of .gnu_debuglink when @o
 * has none.  DWARF whose sections would take more than @max_bytes (0:
 * DWARFINFO_MAX_BYTES, which is also the most allowed) is not opened.
 * Returns -ENOENT when there is no DWARF, -EFBIG when there is but only
 * beyond @max_bytes (@err says how big).  Close @src with
 * dwarfinfo_source_close().
 */
int dwarfinfo_locate(struct dwarf_source *src, const struct elfobj *o,
		     const struct elfobj_debug_opts *opts, uint64_t max_bytes,
		     struct errbuf *err);

void dwarfinfo_source_close(struct dwarf_source *src);

/*
 * Reads the DWARF of the file open at @fd (and its dwz file at @alt_fd,
 * -1 when none was found), as dwarfinfo_locate() found them; the
 * descriptors stay the caller's, and are not needed after this returns.
 * The files are checked again (they may have changed since): -ENOENT, no
 * DWARF or a dwz file needed and missing; -EFBIG, over @max_bytes;
 * -ENOEXEC, sections that do not match their headers.
 */
int dwarfinfo_open_fds(struct dwarfinfo **out, int fd, int alt_fd, uint64_t max_bytes,
		       struct errbuf *err);

/* dwarfinfo_locate() and dwarfinfo_open_fds() in one. */
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

/* Whether the DWARF came from a separate debug file (set by dwarfinfo_open()). */
bool dwarfinfo_separate(const struct dwarfinfo *d);

void dwarfinfo_free(struct dwarfinfo *d);

#endif
