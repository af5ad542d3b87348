/* SPDX-License-Identifier: MIT */
/*
 * fakemem: made-up process memory for the runtime readers' hostile tests
 * (test_jvm_hostile, test_v8_hostile): one region of whole pages from
 * BASE, handed to a reader as a struct memsrc (fs/procmem.h)
 * whose ctx is the struct img.  What lies past the region is unreadable.
 */
#ifndef CPROF_TESTS_FAKEMEM_H
#define CPROF_TESTS_FAKEMEM_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fs/procmem.h"

#define BASE 0x100000ull
#define IMG_MAX (1u << 20)

struct img {
	uint8_t *mem;
	size_t used, size; /* size: readable bytes from BASE */
};

/* struct memsrc's read of the image. */
static inline int img_read(const struct memsrc *m, uint64_t addr, void *buf, size_t len)
{
	const struct img *im = m->ctx;

	if (addr < BASE || addr - BASE > im->size || len > im->size - (addr - BASE))
		return -EFAULT;
	memcpy(buf, im->mem + (addr - BASE), len);
	return 0;
}

/* @n bytes (8-aligned) of the image: their address. */
static inline uint64_t img_alloc(struct img *im, size_t n)
{
	uint64_t a = BASE + im->used;

	im->used += (n + 7) & ~(size_t)7;
	if (im->used > IMG_MAX)
		abort();
	/* memory is mapped by the page */
	if (im->used > im->size)
		im->size = (im->used + 4095) & ~(size_t)4095;
	return a;
}

static inline void *at(struct img *im, uint64_t a)
{
	return im->mem + (a - BASE);
}

static inline void put64(struct img *im, uint64_t a, uint64_t v)
{
	memcpy(at(im, a), &v, 8);
}

static inline void put32(struct img *im, uint64_t a, uint32_t v)
{
	memcpy(at(im, a), &v, 4);
}

#endif
