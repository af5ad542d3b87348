/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the fuzz targets (header-only: each target is one
 * translation unit plus the library sources it exercises).
 *
 *  - struct fdp: consumes the fuzzer's bytes as typed values, returning
 *    zeros once they run out, so every input is a valid program for the
 *    harness and the mutator's bit flips map onto small semantic changes.
 *  - FUZZ_ASSERT: an invariant the code under test promises; a violation
 *    aborts, which libFuzzer reports as a crash with the input saved.
 *  - fuzz_memfd(): the input as a sealed-size anonymous file, so the
 *    pread-based (fd) code paths are fuzzed as well as the memory ones.
 */
#ifndef CPROF_FUZZ_COMMON_H
#define CPROF_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define FUZZ_ASSERT(cond)                                                     \
	do {                                                                  \
		if (!(cond)) {                                                \
			fprintf(stderr, "%s:%d: invariant violated: %s\n",    \
				__FILE__, __LINE__, #cond);                   \
			abort();                                              \
		}                                                             \
	} while (0)

struct fdp {
	const uint8_t *p;
	size_t left;
};

static inline struct fdp fdp_init(const uint8_t *data, size_t size)
{
	return (struct fdp){ data, size };
}

/* Copies up to @n bytes into @out, zero-filling what the input lacks. */
static inline void fdp_copy(struct fdp *f, void *out, size_t n)
{
	size_t k = n < f->left ? n : f->left;

	memcpy(out, f->p, k);
	memset((uint8_t *)out + k, 0, n - k);
	f->p += k;
	f->left -= k;
}

static inline uint8_t fdp_u8(struct fdp *f)
{
	uint8_t v;

	fdp_copy(f, &v, 1);
	return v;
}

static inline uint16_t fdp_u16(struct fdp *f)
{
	uint16_t v;

	fdp_copy(f, &v, 2);
	return v;
}

static inline uint32_t fdp_u32(struct fdp *f)
{
	uint32_t v;

	fdp_copy(f, &v, 4);
	return v;
}

static inline uint64_t fdp_u64(struct fdp *f)
{
	uint64_t v;

	fdp_copy(f, &v, 8);
	return v;
}

/* A pointer to the next @n bytes (fewer if the input ends); *@got says how many. */
static inline const uint8_t *fdp_bytes(struct fdp *f, size_t n, size_t *got)
{
	const uint8_t *p = f->p;

	*got = n < f->left ? n : f->left;
	f->p += *got;
	f->left -= *got;
	return p;
}

/*
 * A NUL-terminated string of up to @max bytes, written into @buf (which
 * holds @max + 1): length byte then bytes.  Embedded NULs are kept in the
 * buffer, so the C string may end early, as a corrupt input's would.
 */
static inline char *fdp_str(struct fdp *f, char *buf, size_t max)
{
	size_t n = fdp_u8(f), got;
	const uint8_t *p;

	if (n > max)
		n = max;
	p = fdp_bytes(f, n, &got);
	memcpy(buf, p, got);
	buf[got] = '\0';
	return buf;
}

/* An anonymous file holding @data, or -1. */
static inline int fuzz_memfd(const void *data, size_t size)
{
	int fd = memfd_create("fuzz-input", MFD_CLOEXEC);
	const uint8_t *p = data;

	if (fd < 0)
		return -1;
	while (size) {
		ssize_t w = write(fd, p, size);

		if (w <= 0) {
			close(fd);
			return -1;
		}
		p += w;
		size -= (size_t)w;
	}
	return fd;
}

#endif
