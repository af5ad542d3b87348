/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * pycode_tag.h: what tells one code object from another at the same
 * address.  CPython frees code objects (exec()'d and eval()'d code, a
 * reloaded module, a -c run's start-up) and its allocator hands their
 * memory to the next: the address alone would name a new function after
 * the one it replaced, for the rest of the process's life.  The program
 * tags each frame's code object with a hash of four fields it never
 * changes (first line, and its file, name and line table objects), read at
 * sample time; the loader computes the same hash from what it reads when
 * told of the object, and keeps no name for one that does not match.
 *
 * The tag rides in the code address's top bits: a user address on x86-64
 * is below 2^47 (above only for a process that asks for 5-level addresses
 * by an mmap hint, which CPython's allocators do not).
 */
#ifndef CPROF_PYCODE_TAG_H
#define CPROF_PYCODE_TAG_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define CPROF_PY_CODE_TAG_SHIFT 48
#define CPROF_PY_CODE_ADDR_MASK ((1ULL << CPROF_PY_CODE_TAG_SHIFT) - 1)

/* The tag of a code object with these fields, in its address's top 16 bits. */
static inline __u64 cprof_py_code_tag(__u32 firstlineno, __u64 filename, __u64 name,
				      __u64 linetable)
{
	__u64 h = firstlineno * 0x9e3779b97f4a7c15ULL;

	h ^= filename * 0xbf58476d1ce4e5b9ULL;
	h ^= name * 0x94d049bb133111ebULL;
	h ^= linetable * 0xd6e8feb86659fd93ULL;
	h ^= h >> 31;
	h *= 0x9e3779b97f4a7c15ULL;
	return h >> CPROF_PY_CODE_TAG_SHIFT << CPROF_PY_CODE_TAG_SHIFT;
}

#endif
