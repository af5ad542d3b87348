/* SPDX-License-Identifier: MIT */
/*
 * elfobj: what cprof needs from one ELF object (executable, shared library,
 * vDSO): its GNU build ID, the file-offset -> virtual-address translation of
 * its PT_LOAD segments, a sorted table of its function symbols (loaded
 * lazily, only for objects that were actually sampled), and its dynamic
 * symbols looked up by name.
 *
 * Every byte comes from a file a process handed us, possibly a hostile
 * container: it is read through elfsrc (bounded, never mapped), the
 * symbols by elfsyms, a separate debug file found by debugfile, and a
 * corrupt object yields an error or fewer symbols, never a crash.
 */
#ifndef CPROF_ELFOBJ_H
#define CPROF_ELFOBJ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "elf/elfsrc.h"
#include "elf/elfsyms.h"
#include "util/errbuf.h"

#define ELFOBJ_BUILD_ID_MAX ELFSRC_BUILD_ID_MAX

struct elfobj;

/*
 * Reads the ELF header, program headers and build-ID note of the file
 * open at @fd.  Takes ownership of @fd (kept open: symbols are loaded
 * later, possibly after the process that mapped the file has exited).
 * On error @fd is closed.
 */
int elfobj_open(struct elfobj **out, int fd, struct errbuf *err);

/* The same for an ELF image in memory (the vDSO); the image is copied. */
int elfobj_open_mem(struct elfobj **out, const void *image, size_t len,
		    struct errbuf *err);

void elfobj_free(struct elfobj *o);

/* Hex build ID ("" when the object has none). */
const char *elfobj_build_id(const struct elfobj *o);

/* Raw build ID bytes and length (0 when none). */
const uint8_t *elfobj_build_id_raw(const struct elfobj *o, size_t *len);

/*
 * Translates an offset into the file (as in /proc/pid/maps: address -
 * mapping start + mapping offset) into the object's virtual address, using
 * the PT_LOAD segment that contains it.  Returns 0 or -ENOENT.
 */
int elfobj_file_to_vaddr(const struct elfobj *o, uint64_t file_off,
			 uint64_t *vaddr);

/*
 * Where the object is loaded in a process that maps its file offset
 * @map_offset at @map_start: that address less the offset's virtual
 * address.  Returns 0 or -ENOENT.
 */
int elfobj_load_bias(const struct elfobj *o, uint64_t map_start, uint64_t map_offset,
		     uint64_t *bias);

/*
 * The lowest virtual address of the object's executable PT_LOAD segments:
 * what the kernel's mm->start_code is, less the load bias, for a process
 * running it.  Returns 0 or -ENOENT.
 */
int elfobj_code_vaddr(const struct elfobj *o, uint64_t *vaddr);

struct elfobj_debug_opts {
	/* Host directory of separate debug files, e.g. "/usr/lib/debug". */
	const char *debug_root;
	/*
	 * Where the object lives, as the process saw it (its path in
	 * /proc/pid/maps, may be NULL), and a descriptor of that process's
	 * root directory, in which the path is resolved (rootfs_openat()) to
	 * follow .gnu_debuglink; <= 0: none, the link is then looked for
	 * under debug_root only (0 is stdin, never a root, so zeroed options
	 * look nowhere they were not told to).
	 */
	const char *path;
	int root_fd;
};

/*
 * Loads the function symbols: .symtab, else .dynsym, and the separate
 * debug file (debugfile_find(): by build ID under debug_root, else by
 * .gnu_debuglink checked with its CRC) when the object itself has no
 * .symtab.  Idempotent: later calls return the first call's result.
 * @opts may be NULL: no separate debug file is looked for.  An object with
 * no function symbols at all is not an error (elfobj_nsyms() is 0); errors
 * are unreadable files.
 */
int elfobj_load_symbols(struct elfobj *o, const struct elfobj_debug_opts *opts,
			struct errbuf *err);

/*
 * Loads anew (replacing what was loaded) the function symbols, as
 * elfobj_load_symbols() does, or when @vaddrs is not NULL only those that
 * name one of its @n addresses (sorted, strictly increasing; see
 * symsel.h): elfobj_lookup() of those addresses then finds what it would
 * in the full table, in memory that grows with @n, not with the table.
 * -EFBIG, nothing kept, when the table would take more than @max_bytes
 * (elfobj_symbols_bytes()).
 */
int elfobj_load_symbols_for(struct elfobj *o, const struct elfobj_debug_opts *opts,
			    const uint64_t *vaddrs, size_t n, uint64_t max_bytes,
			    struct errbuf *err);

/*
 * Looks up the @n names of @want among the object's dynamic symbols, as
 * elfsyms_find_dynamic() does (symbols of any type, the first of each
 * name).  Errors are unreadable files.
 */
int elfobj_find_dynamic(struct elfobj *o, struct elfsyms_named *want, size_t n,
			struct errbuf *err);

/* Frees the symbols loaded; a later load reads them again. */
void elfobj_unload_symbols(struct elfobj *o);

/* Memory the loaded symbols take (their table and names). */
size_t elfobj_symbols_bytes(const struct elfobj *o);

/*
 * The function symbol containing @vaddr (the nearest one below it when
 * sizes are unknown), or NULL; NULL too when that symbol's name is empty
 * or could not be kept.  Valid after a load.  The first 64 bytes from the
 * ELF entry point are _start when no sized symbol holds them (stripped
 * programs, ld.so).
 */
const struct elfobj_sym *elfobj_lookup(const struct elfobj *o, uint64_t vaddr);

/*
 * All function symbols loaded, sorted by start address with one symbol
 * per address; @n receives the count.  A symbol whose name is empty or
 * could not be kept has name NULL (it still ends the one below it).
 */
const struct elfobj_sym *elfobj_symbols(const struct elfobj *o, size_t *n);

/*
 * How to read the object's bytes again (e.g. its .eh_frame): the open file
 * (*fd >= 0), or the copied in-memory image (*image, *len); neither
 * (*fd < 0, *image NULL) when a closed file could not be reopened.  The
 * descriptor stays the object's: it is valid until the next call that may
 * open another object's file (see elfobj_close_file()), so a caller that
 * keeps it longer takes its own copy (dup).
 */
void elfobj_source(const struct elfobj *o, int *fd, const void **image, size_t *len);

/*
 * The descriptor of an object may be closed to bound how many are open
 * (elfobj_close_file()); before its file is read again it is reopened
 * through @reopen, and each read is told to @used (for least recently used
 * bookkeeping).  Both get @ctx.
 */
struct elfobj_file_ops {
	int (*reopen)(void *ctx); /* a descriptor of the same file, or -errno */
	void (*used)(void *ctx);
};

void elfobj_set_file_ops(struct elfobj *o, const struct elfobj_file_ops *ops, void *ctx);

/* Closes the object's file, to be reopened through its file ops when needed. */
void elfobj_close_file(struct elfobj *o);

/* Number of function symbols loaded, and whether they came from a debug file. */
size_t elfobj_nsyms(const struct elfobj *o);
bool elfobj_syms_from_debug_file(const struct elfobj *o);

#endif
