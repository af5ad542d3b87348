// SPDX-License-Identifier: MIT
#include <string.h>

#include <libiberty/demangle.h>

#include "util/demangle.h"

/* Parameters and cv-qualifiers, as c++filt and pprof show them. */
#define OPTS (DMGL_PARAMS | DMGL_ANSI)

struct out {
	char *buf;
	size_t len, used; /* used < len: room for the NUL */
};

static void append(const char *s, size_t n, void *opaque)
{
	struct out *o = opaque;
	size_t room = o->len - 1 - o->used;

	/* The Rust demangler hands empty pieces as (NULL, 0): nothing to copy. */
	if (!n)
		return;
	if (n > room)
		n = room;
	memcpy(o->buf + o->used, s, n);
	o->used += n;
}

bool demangle_is_v0(const char *sym)
{
	return sym && sym[0] == '_' && sym[1] == 'R';
}

static size_t run(const char *sym, char *buf, size_t len, bool v0)
{
	struct out o = { .buf = buf, .len = len };
	int ok = 0;

	if (!len)
		return 0;
	buf[0] = '\0';
	/* Itanium and legacy Rust names start "_Z", v0 Rust names "_R". */
	if (!sym || sym[0] != '_' || (sym[1] != 'Z' && (sym[1] != 'R' || !v0)) ||
	    strnlen(sym, DEMANGLE_MAX_INPUT + 1) > DEMANGLE_MAX_INPUT)
		return 0;
	/*
	 * Rust first: a legacy Rust name is also a valid Itanium name, whose
	 * C++ reading keeps the "17h<hash>" and the "$LT$"-style escapes.
	 * rust_demangle_callback() accepts only names with a Rust hash or the
	 * v0 prefix.
	 */
	ok = rust_demangle_callback(sym, OPTS, append, &o);
	if (!ok) {
		o.used = 0;
		ok = cplus_demangle_v3_callback(sym, OPTS, append, &o);
	}
	if (!ok || !o.used) {
		buf[0] = '\0';
		return 0;
	}
	buf[o.used] = '\0';
	return o.used;
}

/*
 * Go: the linker names a function's ABI wrappers after it, "<name>.abi0"
 * (assembly's ABI) or "<name>.abiinternal"; runtime/pprof and every Go tool
 * name them as the function itself (runtime.goexit.abi0 is runtime.goexit).
 * No C, C++ or Rust symbol ends so: GCC's clones end ".isra.0", ".part.1".
 */
static size_t go_name(const char *sym, char *buf, size_t len)
{
	static const char *const suffixes[] = { ".abi0", ".abiinternal" };
	size_t n;

	if (!sym || !len)
		return 0;
	n = strnlen(sym, DEMANGLE_MAX_INPUT + 1);
	if (n > DEMANGLE_MAX_INPUT)
		return 0;
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		size_t k = strlen(suffixes[i]);

		if (n > k && !strcmp(sym + n - k, suffixes[i])) {
			n -= k;
			if (n > len - 1)
				n = len - 1;
			memcpy(buf, sym, n);
			buf[n] = '\0';
			return n;
		}
	}
	return 0;
}

size_t demangle(const char *sym, char *buf, size_t len)
{
	size_t n = run(sym, buf, len, false);

	return n ? n : go_name(sym, buf, len);
}

size_t demangle_v0(const char *sym, char *buf, size_t len)
{
	return run(sym, buf, len, true);
}
