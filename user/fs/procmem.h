/* SPDX-License-Identifier: MIT */
/*
 * procmem: reading another process's memory, the one way every runtime's
 * reader does it (CPython's, the JVM's).
 *
 * What is read there is the process's word: a reader checks every value
 * it takes from it.  A struct memsrc stands for the memory so that a test
 * can hand a reader a made-up image (truncated tables, strings without an
 * end) and check it fails as it should.
 */
#ifndef CPROF_PROCMEM_H
#define CPROF_PROCMEM_H

#include <stddef.h>
#include <stdint.h>

/* Copies @len bytes at @addr of process @pid: 0 only when all were read. */
int procmem_read(uint32_t pid, uint64_t addr, void *buf, size_t len);

/* A process's memory, or a test's image of one. */
struct memsrc {
	/* 0 only when all @len bytes at @addr were copied into @buf */
	int (*read)(const struct memsrc *m, uint64_t addr, void *buf, size_t len);
	uint32_t pid;
	const void *ctx; /* the image, for a test's read */
};

/* The memory of process @pid, read with procmem_read(). */
struct memsrc procmem_src(uint32_t pid);

static inline int memsrc_read(const struct memsrc *m, uint64_t addr, void *buf, size_t len)
{
	return m->read(m, addr, buf, len);
}

/*
 * Copies the NUL-terminated string at @addr into @buf (@cap bytes, its
 * NUL included).  Reads go a page at a time at most, so a string that
 * ends just before an unmapped page reads.  0; -ENAMETOOLONG when no NUL
 * comes within @cap bytes; -EFAULT (or the read's error) when unreadable.
 */
int memsrc_read_str(const struct memsrc *m, uint64_t addr, char *buf, size_t cap);

#endif
