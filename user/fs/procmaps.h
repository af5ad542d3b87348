/* SPDX-License-Identifier: MIT */
/*
 * procmaps: a parser for /proc/<pid>/maps.
 *
 * The text is untrusted in the sense that it describes other processes'
 * memory (paths may contain spaces, newlines are escaped by the kernel as
 * "\012", a process may exit mid-read): malformed lines are skipped and
 * counted, never fatal.
 */
#ifndef CPROF_PROCMAPS_H
#define CPROF_PROCMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/errbuf.h"

enum {
	VMA_READ = 1 << 0,
	VMA_WRITE = 1 << 1,
	VMA_EXEC = 1 << 2,
	VMA_SHARED = 1 << 3,
};

enum vma_kind {
	VMA_ANON,    /* no path, inode 0 (heap-less anonymous, JIT, huge-page text copies) */
	VMA_FILE,    /* backed by a file: path set, inode normally != 0 (procmaps.c) */
	VMA_SPECIAL, /* "[vdso]", "[vsyscall]", "[stack]", "[heap]", ... */
};

struct vma {
	uint64_t start, end; /* [start, end) */
	uint64_t offset;     /* file offset of start */
	uint64_t inode;
	uint32_t dev_major, dev_minor;
	uint8_t prot;        /* VMA_* bits */
	enum vma_kind kind;
	bool deleted;        /* path had " (deleted)", which is stripped */
	const char *path;    /* NULL for VMA_ANON; points into the list's storage */
};

struct vma_list {
	struct vma *v;
	size_t n;
	size_t skipped; /* malformed lines ignored */
	char *strings;  /* storage for paths */
};

/* Parses maps text (need not be NUL-terminated). */
int procmaps_parse(const char *text, size_t len, struct vma_list *out,
		   struct errbuf *err);

/* Reads and parses /proc/<pid>/maps ("<proc_root>/<pid>/maps"). */
int procmaps_read(const char *proc_root, int pid, struct vma_list *out,
		  struct errbuf *err);

struct cprof_exit_maps;

/*
 * The executable file mappings an exit record tells (bpf/cprof.h), as
 * maps lines would: the device and inode from the kernel's identity of the
 * file, its dentry's name for a path (no directory, control characters
 * replaced), the vDSO as VMA_SPECIAL "[vdso]"; sorted, overlaps dropped and
 * counted in skipped.
 */
int procmaps_from_exit(const struct cprof_exit_maps *rec, struct vma_list *out,
		       struct errbuf *err);

/*
 * Whether @wider shows every mapping of @l (each within one of @wider's of
 * the same file: device and inode, or both the vDSO) and more besides: a
 * snapshot taken before a process mapped its libraries, and its exit
 * record.  The kernel's [vsyscall] and [uprobes] pages need not be in
 * @wider.  Both sorted by start.
 */
bool procmaps_extends(const struct vma_list *wider, const struct vma_list *l);

/* The mapping containing @addr, or NULL.  The list is sorted by start. */
const struct vma *procmaps_find(const struct vma_list *l, uint64_t addr);

void procmaps_free(struct vma_list *l);

/* The last component of mapping path @path: the file's own name, by which runtimes are known. */
static inline const char *procmaps_file_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

#endif
