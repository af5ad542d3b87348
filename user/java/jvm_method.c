// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "java/jvm_bytes.h"
#include "java/jvm_method.h"

/* Bytes of a line number table read at most. */
#define LINES_BYTES_MAX (64u << 10)

static bool aligned(uint64_t p)
{
	return p && !(p % 8);
}

int jvm_lines_decode(const uint8_t *p, size_t n, unsigned major, struct jvm_line *out, size_t max)
{
	unsigned x = jvm_u5_excluded(major);
	uint32_t bci = 0, line = 0;
	size_t pos = 0, k = 0;

	while (pos < n) {
		uint8_t b = p[pos++];
		uint32_t db, dl;

		if (!b)
			return (int)k;
		/* a pair of small deltas in a byte, or 0xff and two numbers */
		if (b == 0xff) {
			if (jvm_u5(p, n, &pos, x, &db) || jvm_u5(p, n, &pos, x, &dl))
				return -EINVAL;
			bci += (uint32_t)jvm_unsign(db);
			line += (uint32_t)jvm_unsign(dl);
		} else {
			bci += b >> 3;
			line += b & 7;
		}
		if (k < max)
			out[k++] = (struct jvm_line){ bci, line };
	}
	return -EINVAL;
}

uint32_t jvm_lines_find(const struct jvm_line *lines, size_t n, uint32_t bci)
{
	uint32_t best = 0, best_bci = 0;

	/* javac's table is by source order, not bci: the nearest start at or below */
	for (size_t i = 0; i < n; i++)
		if (lines[i].bci <= bci && (!best || lines[i].bci >= best_bci)) {
			best = lines[i].line;
			best_bci = lines[i].bci;
		}
	return best;
}

uint32_t jvm_method_line(const struct jvm_method *jm, uint32_t bci)
{
	return jvm_lines_find(jm->lines, jm->nlines, bci);
}

/* Symbol @sym's bytes into @buf (@cap, NUL included), cut with "..." when longer. */
static int read_symbol(const struct jvm_layout *l, const struct memsrc *m, uint64_t sym,
		       char *buf, size_t cap)
{
	uint16_t len;
	size_t n;

	if (!aligned(sym) || memsrc_read(m, sym + l->symbol_length, &len, sizeof(len)))
		return -EFAULT;
	n = len < cap ? len : cap - 1;
	if (memsrc_read(m, sym + l->symbol_body, buf, n))
		return -EFAULT;
	buf[n] = 0;
	if (memchr(buf, 0, n))
		return -EINVAL;
	if (n < len && cap > 4)
		memcpy(buf + cap - 4, "...", 4);
	return 0;
}

/* The symbol at index @i of the pool @cp (of @len entries). */
static int pool_symbol(const struct jvm_layout *l, const struct memsrc *m, uint64_t cp,
		       uint32_t len, uint32_t i, char *buf, size_t cap)
{
	uint64_t sym;

	if (!i || i >= len)
		return -EINVAL;
	if (memsrc_read(m, cp + l->pool_size + (uint64_t)i * 8, &sym, sizeof(sym)))
		return -EFAULT;
	return read_symbol(l, m, sym, buf, cap);
}

/* The line table at the end of the ConstMethod @cm (header @h). */
static void read_lines(const struct jvm_layout *l, const struct memsrc *m, uint64_t cm,
		       const uint8_t *h, struct jvm_method *out)
{
	uint64_t words = jvm_member(h, l->const_method_size, 4);
	uint64_t start = (uint64_t)l->const_size + out->code_size, n;
	uint8_t *buf;
	int k;

	if (!(jvm_member(h, l->const_flags, l->const_flags_size) & l->const_has_lines) ||
	    words * 8 <= start)
		return;
	n = words * 8 - start;
	if (n > LINES_BYTES_MAX)
		n = LINES_BYTES_MAX;
	buf = malloc(n);
	if (!buf)
		return;
	if (!memsrc_read(m, cm + start, buf, n)) {
		k = jvm_lines_decode(buf, n, l->major, out->lines, JVM_LINES_MAX);
		out->nlines = k > 0 ? (size_t)k : 0;
	}
	free(buf);
}

int jvm_method_read(const struct jvm_layout *l, const struct memsrc *m, uint64_t method,
		    struct jvm_method *out)
{
	uint8_t h[4096], p[4096];
	uint64_t cm, cp, holder, back, kname;
	uint32_t plen, ni, si, fi;
	int e;

	memset(out, 0, offsetof(struct jvm_method, lines));
	if (!aligned(method) || memsrc_read(m, method + l->method_const, &cm, sizeof(cm)) ||
	    !aligned(cm) || l->const_size > sizeof(h) || memsrc_read(m, cm, h, l->const_size))
		return -EFAULT;
	cp = jvm_member(h, l->const_constants, 8);
	if (!aligned(cp) || l->pool_size > sizeof(p) || memsrc_read(m, cp, p, l->pool_size))
		return -EFAULT;
	holder = jvm_member(p, l->pool_holder, 8);
	plen = (uint32_t)jvm_member(p, l->pool_length, 4);
	if (!aligned(holder) || plen > (1u << 16) ||
	    memsrc_read(m, holder + l->klass_constants, &back, sizeof(back)) ||
	    memsrc_read(m, holder + l->klass_name, &kname, sizeof(kname)))
		return -EINVAL;
	e = read_symbol(l, m, kname, out->klass, sizeof(out->klass));
	if (e)
		return e;
	/*
	 * The class must own the pool: a stale Method* rarely leads to one
	 * that does.  MethodHandle's intrinsics (linkToStatic, invokeBasic)
	 * are made by the VM with a pool of their own.
	 */
	if (back != cp && strcmp(out->klass, "java/lang/invoke/MethodHandle"))
		return -EINVAL;
	out->code_size = (uint32_t)jvm_member(h, l->const_code_size, 2);
	ni = (uint32_t)jvm_member(h, l->const_name_index, 2);
	si = (uint32_t)jvm_member(h, l->const_signature_index, 2);
	fi = (uint32_t)jvm_member(p, l->pool_source_file_index, 2);
	e = pool_symbol(l, m, cp, plen, ni, out->name, sizeof(out->name));
	if (!e)
		e = pool_symbol(l, m, cp, plen, si, out->sig, sizeof(out->sig));
	if (e)
		return e;
	if (fi && pool_symbol(l, m, cp, plen, fi, out->file, sizeof(out->file)))
		out->file[0] = 0;
	/* as the JVM names a class: java.util.HashMap, a hidden class's suffix after a '/' */
	for (char *c = out->klass; *c; c++)
		if (*c == '/')
			*c = '.';
		else if (*c == '+' && !strncmp(c + 1, "0x", 2))
			*c = '/';
	read_lines(l, m, cm, h, out);
	return 0;
}
