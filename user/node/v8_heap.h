/* SPDX-License-Identifier: MIT */
/*
 * v8_heap: V8's heap objects read from a process's memory, each read
 * bounded and each object's type checked before it is trusted.
 *
 * Every value in V8's heap is a tagged word: a Smi (a small integer, its
 * low bit clear, its value in the upper 32 bits on a 64-bit build without
 * pointer compression) or a pointer to a heap object, tagged in its low
 * bits.  An object starts with its map, itself a heap object whose
 * instance type says what the object is.  A pointer BPF recorded may be
 * stale (the object moved or was freed since) or made up by a hostile
 * process, so an object is read only as the type its map says, and that
 * map must itself be a map (its own map's type is MAP_TYPE).
 *
 * Strings are read into UTF-8 in every representation V8 keeps them in:
 * sequential (Latin-1 or UTF-16), cons (a pair of strings, walked with an
 * explicit stack of bounded depth, so a loop or a deep tree is refused),
 * thin (a forward to the internalized copy), sliced (a piece of a
 * parent), external (characters kept outside the heap by the embedder, as
 * Node.js keeps its own modules' sources, compiled into its binary).  An
 * external string's characters are read where its resource_data says, a
 * pointer V8 caches from the embedder's resource and the process may have
 * set to anything: each read is checked, NULL refused.  An "uncached"
 * external string has no such pointer, only the resource, a C++ object
 * whose data() this does not call: refused with -ENOTSUP.
 */
#ifndef CPROF_V8_HEAP_H
#define CPROF_V8_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fs/procmem.h"

struct v8_layout;

/* Strings: the pieces a cons tree may have, and how deep it may go. */
#define V8_CONS_DEPTH 32
#define V8_STRING_PIECES 4096

/* Whether @v is a Smi, or a heap object's tagged pointer. */
static inline bool v8_is_smi(uint64_t v)
{
	return (v & 1) == 0;
}

static inline bool v8_is_heap(uint64_t v)
{
	return (v & 3) == 1;
}

/* A Smi's value into *@out: -EINVAL when @v is no Smi. */
int v8_smi(uint64_t v, int32_t *out);

/*
 * The tagged word at @off in the object @obj (a tagged pointer): 0;
 * -EINVAL when @obj is no heap object; -EFAULT when unreadable.
 */
int v8_field(const struct v8_layout *l, const struct memsrc *m, uint64_t obj, uint32_t off,
	     uint64_t *out);

/* @len bytes at @off in @obj, as v8_field(). */
int v8_read(const struct v8_layout *l, const struct memsrc *m, uint64_t obj, uint32_t off,
	    void *buf, size_t len);

/*
 * The instance type of @obj, read through its map: 0; -EINVAL when @obj
 * is no heap object, its map is none, or the map's own map is not one of
 * maps; -EFAULT when unreadable.
 */
int v8_type(const struct v8_layout *l, const struct memsrc *m, uint64_t obj, uint16_t *type);

/* Whether instance type @t is a string's. */
bool v8_type_is_string(const struct v8_layout *l, uint16_t t);

/*
 * The characters of a string, in runs as V8 stores them: @n characters
 * at @chars, one byte each (Latin-1) or two (UTF-16, host order).  A
 * non-zero return stops the walk and is its result.
 */
typedef int (*v8_chars_fn)(void *ctx, const uint8_t *chars, size_t n, bool two_byte);

/*
 * Walks the string @str (a tagged pointer), at most @max_len characters
 * long, handing its characters to @fn in order, read a page at a time.
 * 0; -EINVAL: not a string, one whose parts do not add up, or an external
 * one whose resource or data is NULL; -E2BIG: longer than @max_len;
 * -ELOOP: a cons tree deeper than V8_CONS_DEPTH or of more than
 * V8_STRING_PIECES pieces; -ENOTSUP: an uncached external string;
 * -EFAULT: unreadable (an external string's data too); or @fn's error.
 */
int v8_string_walk(const struct v8_layout *l, const struct memsrc *m, uint64_t str,
		   uint64_t max_len, v8_chars_fn fn, void *ctx);

/*
 * The string @str as UTF-8 into @buf (@cap bytes, its NUL included): 0;
 * -E2BIG when it takes more than @cap - 1 bytes; -EILSEQ when it holds a
 * NUL (a name cannot); else v8_string_walk()'s errors.  A lone UTF-16
 * surrogate becomes U+FFFD, as V8's own UTF-8 writer makes it.
 */
int v8_string(const struct v8_layout *l, const struct memsrc *m, uint64_t str, char *buf,
	      size_t cap);

#endif
