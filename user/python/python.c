// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf/elfobj.h"
#include "util/hmap.h"
#include "fs/procmaps.h"
#include "fs/procmem.h"
#include "python/python.h"
#include "python/python_layout.h"
#include "python/python_lines.h"
#include "pycode_tag.h"

/* Most characters of a name or file kept, and bytes of a line table. */
#define PY_NAME_MAX 512
#define PY_FILE_MAX 4096
#define PY_LINES_MAX (256u << 10)

struct pycode {
	uint64_t addr; /* key: address and tag (pycode_tag.h) */
	char *name, *file;
	uint8_t *lines;
	size_t nlines;
	int64_t first;
	bool bad;
};

struct pyproc {
	const struct py_layout *layout;
	uint64_t runtime, code_type, unicode_type, bytes_type;
	uint64_t eval_lo, eval_hi;
	struct hmap codes; /* addr -> struct pycode */
	size_t code_bytes;
	struct py_stats *st; /* the run's, which bounds code objects over processes */
};

/* The interpreter's symbols, by name. */
enum {
	SYM_RUNTIME, SYM_CODE, SYM_UNICODE, SYM_BYTES, SYM_EVAL, SYM_VERSION,
	SYM_FREE_THREADED, SYM_N
};
static const char *const sym_names[SYM_N] = {
	"_PyRuntime", "PyCode_Type", "PyUnicode_Type", "PyBytes_Type",
	"_PyEval_EvalFrameDefault", "Py_Version",
	/* built only with Py_GIL_DISABLED: objects, frames and states differ */
	"_Py_MergeZeroLocalRefcount",
};

static uint64_t word_at(const uint8_t *buf, size_t off)
{
	uint64_t v;

	memcpy(&v, buf + off, sizeof(v));
	return v;
}

/* The interpreter's symbols, of the dynamic symbols of @o, into @out. */
static int read_dynsyms(struct elfobj *o, struct elfsyms_named out[SYM_N])
{
	for (int k = 0; k < SYM_N; k++)
		out[k] = (struct elfsyms_named){ .name = sym_names[k] };
	return elfobj_find_dynamic(o, out, SYM_N, NULL);
}

/*
 * "3.N" from a file name libpython3.N.so... or python3.N; 0 when none.
 * *@free_threaded: the name has the "t" of a free-threaded build (3.13t).
 */
static unsigned minor_of_name(const char *path, bool *free_threaded)
{
	const char *base = procmaps_file_name(path);
	unsigned minor = 0;
	int n = 0;

	if (!strncmp(base, "lib", 3))
		base += 3;
	if (sscanf(base, "python3.%2u%n", &minor, &n) != 1)
		return 0;
	/* libpython3.N[t][dm].so..., python3.N[t][dm]: nothing else after. */
	*free_threaded = base[n] == 't';
	if (*free_threaded)
		n++;
	while (base[n] == 'd' || base[n] == 'm')
		n++;
	if (base[n] && strncmp(base + n, ".so", 3))
		return 0;
	return minor;
}

/* The version the interpreter says it is: Py_Version (3.11+), else 0. */
static unsigned py_version(uint32_t pid, const struct elfsyms_named *s, uint64_t bias)
{
	uint32_t hex;

	if (!s[SYM_VERSION].found || procmem_read(pid, bias + s[SYM_VERSION].value, &hex, sizeof(hex)))
		return 0;
	return hex >> 16;
}

int pyproc_find(struct pyproc **out, uint32_t pid, const struct vma_list *maps,
		struct elfobj *const *objs, struct py_stats *st, struct errbuf *err)
{
	for (size_t i = 0; i < maps->n; i++) {
		const struct vma *v = &maps->v[i];
		bool ft = false;
		unsigned minor = v->path ? minor_of_name(v->path, &ft) : 0, version;
		const struct py_layout *l;
		struct pyproc *pp;
		struct elfsyms_named s[SYM_N];
		uint64_t bias;

		if (!minor || !objs || !objs[i] || read_dynsyms(objs[i], s) ||
		    !s[SYM_RUNTIME].found || elfobj_load_bias(objs[i], v->start, v->offset, &bias))
			continue;
		/* Py_Version, where there is one, rules: a file may be renamed. */
		version = py_version(pid, s, bias);
		if (!version)
			version = 0x300 | minor;
		l = py_layout_find(version >> 8, version & 0xff);
		pp = calloc(1, sizeof(*pp));
		if (!pp)
			return -ENOMEM;
		hmap_init(&pp->codes, sizeof(uint64_t), sizeof(struct pycode));
		pp->st = st;
		*out = pp;
		/* A free-threaded build has layouts of its own: none here. */
		ft = ft || s[SYM_FREE_THREADED].found;
		if (ft || !l || !s[SYM_CODE].found || !s[SYM_UNICODE].found || !s[SYM_BYTES].found ||
		    !s[SYM_EVAL].found) {
			st->unknown++;
			if (!st->unknown_version[0])
				snprintf(st->unknown_version, sizeof(st->unknown_version), "%u.%u%s",
					 version >> 8, version & 0xff, ft ? "t" : "");
			return errf(err, -ENOTSUP, "CPython %u.%u%s in %s: %s", version >> 8,
				    version & 0xff, ft ? "t" : "", v->path,
				    ft ? "no layout for free-threaded builds" :
				    l ? "its symbols are missing" : "no layout for this version");
		}
		pp->layout = l;
		pp->runtime = bias + s[SYM_RUNTIME].value;
		pp->code_type = bias + s[SYM_CODE].value;
		pp->unicode_type = bias + s[SYM_UNICODE].value;
		pp->bytes_type = bias + s[SYM_BYTES].value;
		pp->eval_lo = bias + s[SYM_EVAL].value;
		pp->eval_hi = pp->eval_lo + (s[SYM_EVAL].size ? s[SYM_EVAL].size : 1);
		st->procs++;
		return 0;
	}
	return -ENOENT;
}

static size_t code_bytes(const struct pycode *c)
{
	return (c->name ? strlen(c->name) + 1 : 0) + (c->file ? strlen(c->file) + 1 : 0) + c->nlines +
	       sizeof(*c);
}

void pyproc_free(struct pyproc *pp)
{
	struct py_stats *st;
	struct pycode *c;
	size_t it = 0;

	if (!pp)
		return;
	st = pp->st;
	while ((c = hmap_next(&pp->codes, &it))) {
		free(c->name);
		free(c->file);
		free(c->lines);
	}
	st->code_bytes -= pp->code_bytes < st->code_bytes ? pp->code_bytes : st->code_bytes;
	hmap_free(&pp->codes);
	free(pp);
}

void pyproc_bpf(const struct pyproc *pp, uint64_t gen, struct cprof_py_proc *out)
{
	memset(out, 0, sizeof(*out));
	out->gen = gen;
	out->runtime = pp->runtime;
	py_layout_bpf(pp->layout, &out->l);
}

bool pyproc_is_eval(const struct pyproc *pp, uint64_t ip)
{
	return pp && ip >= pp->eval_lo && ip < pp->eval_hi;
}

/* Appends code point @c to @out as UTF-8; a surrogate or one too big is U+FFFD. */
static size_t put_utf8(char *out, uint32_t c)
{
	if ((c >= 0xd800 && c < 0xe000) || c > 0x10ffff)
		c = 0xfffd;
	if (c < 0x80) {
		out[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		out[0] = (char)(0xc0 | c >> 6);
		out[1] = (char)(0x80 | (c & 63));
		return 2;
	}
	if (c < 0x10000) {
		out[0] = (char)(0xe0 | c >> 12);
		out[1] = (char)(0x80 | (c >> 6 & 63));
		out[2] = (char)(0x80 | (c & 63));
		return 3;
	}
	out[0] = (char)(0xf0 | c >> 18);
	out[1] = (char)(0x80 | (c >> 12 & 63));
	out[2] = (char)(0x80 | (c >> 6 & 63));
	out[3] = (char)(0x80 | (c & 63));
	return 4;
}

/*
 * The str object at @addr as a UTF-8 string of at most @max characters
 * (longer ones are cut), or NULL: not a compact str of this interpreter.
 */
static char *read_str(const struct pyproc *pp, uint32_t pid, uint64_t addr, size_t max)
{
	const struct py_code_layout *cl = &pp->layout->code;
	uint8_t head[128], *data;
	uint32_t state, kind;
	uint64_t len;
	char *s;
	size_t n = 0;

	if (cl->compact_size > sizeof(head) || procmem_read(pid, addr, head, cl->compact_size) ||
	    word_at(head, 8) != pp->unicode_type)
		return NULL;
	len = word_at(head, cl->var_size);
	memcpy(&state, head + cl->str_state, sizeof(state));
	kind = state >> 2 & 7;
	/* compact (bit 5): the characters follow the object; ascii (bit 6). */
	if (!(state & 1u << 5) || (kind != 1 && kind != 2 && kind != 4))
		return NULL;
	if (len > max)
		len = max;
	data = malloc(len * kind + 1);
	s = malloc(4 * len + 1);
	if (!data || !s ||
	    procmem_read(pid, addr + (state & 1u << 6 ? cl->ascii_size : cl->compact_size), data,
		     len * kind)) {
		free(data);
		free(s);
		return NULL;
	}
	for (uint64_t i = 0; i < len; i++) {
		uint32_t c = kind == 1 ? data[i] : kind == 2 ? ((uint16_t *)data)[i] : ((uint32_t *)data)[i];

		n += put_utf8(s + n, c);
	}
	s[n] = '\0';
	free(data);
	return s;
}

/* The bytes object at @addr, at most @max of its bytes; NULL: not one. */
static uint8_t *read_bytes(const struct pyproc *pp, uint32_t pid, uint64_t addr, size_t max,
			   size_t *len)
{
	const struct py_code_layout *cl = &pp->layout->code;
	uint8_t head[64], *data;
	uint64_t n;

	if (cl->bytes_data > sizeof(head) || procmem_read(pid, addr, head, cl->bytes_data) ||
	    word_at(head, 8) != pp->bytes_type)
		return NULL;
	n = word_at(head, cl->var_size);
	if (n > max)
		n = max;
	data = malloc(n ? n : 1);
	if (!data || procmem_read(pid, addr + cl->bytes_data, data, n)) {
		free(data);
		return NULL;
	}
	*len = n;
	return data;
}

/*
 * The fields of the code object @key (its address and tag, pycode_tag.h)
 * into @c: -EINVAL when what is at the address now is not that object (not
 * code, or another code object made there since the sample).
 */
static int read_code_fields(const struct pyproc *pp, uint32_t pid, uint64_t key,
			    struct pycode *c)
{
	const struct py_code_layout *cl = &pp->layout->code;
	uint64_t addr = key & CPROF_PY_CODE_ADDR_MASK;
	uint8_t obj[256];
	size_t need = (size_t)cl->linetable + 8;
	int32_t first;

	if ((size_t)cl->filename + 8 > need)
		need = (size_t)cl->filename + 8;
	if ((size_t)cl->name + 8 > need)
		need = (size_t)cl->name + 8;
	if (need > sizeof(obj) || procmem_read(pid, addr, obj, need))
		return -EFAULT;
	if (word_at(obj, 8) != pp->code_type)
		return -EINVAL;
	memcpy(&first, obj + cl->firstlineno, sizeof(first));
	if (cprof_py_code_tag((uint32_t)first, word_at(obj, cl->filename), word_at(obj, cl->name),
			      word_at(obj, cl->linetable)) != (key & ~CPROF_PY_CODE_ADDR_MASK))
		return -EINVAL;
	c->first = first;
	c->name = read_str(pp, pid, word_at(obj, cl->name), PY_NAME_MAX);
	c->file = read_str(pp, pid, word_at(obj, cl->filename), PY_FILE_MAX);
	c->lines = read_bytes(pp, pid, word_at(obj, cl->linetable), PY_LINES_MAX, &c->nlines);
	return c->name && c->file ? 0 : -EINVAL;
}

int pyproc_read_code(struct pyproc *pp, uint32_t pid, uint64_t addr)
{
	struct py_stats *st = pp->st;
	struct pycode *c;
	bool created;
	int ret;

	if (!pp->layout)
		return -ENOTSUP;
	if (hmap_find(&pp->codes, &addr))
		return 0;
	if (st->codes >= PY_CODES_MAX || st->code_bytes >= PY_CODE_BYTES_MAX) {
		st->over_bound++;
		return -ENOSPC;
	}
	c = hmap_insert(&pp->codes, &addr, &created);
	if (!c)
		return -ENOMEM;
	ret = read_code_fields(pp, pid, addr, c);
	if (ret) {
		free(c->name);
		free(c->file);
		free(c->lines);
		*c = (struct pycode){ .addr = addr, .bad = true };
		st->bad_codes++;
	}
	st->codes++;
	pp->code_bytes += code_bytes(c);
	st->code_bytes += code_bytes(c);
	return ret;
}

/* The byte offset in the bytecode of instruction position @pos. */
static uint64_t bytecode_offset(const struct pyproc *pp, uint64_t code, uint64_t pos)
{
	unsigned v = pp->layout->version;
	uint64_t start = (code & CPROF_PY_CODE_ADDR_MASK) + pp->layout->code.bytecode;

	pos &= ~CPROF_PY_ENTRY;
	if (v < 0x30b) {
		int32_t lasti = (int32_t)(uint32_t)pos; /* -1 before the first instruction */

		if (lasti < 0)
			return 0;
		return v == 0x30a ? 2 * (uint64_t)lasti : (uint64_t)lasti;
	}
	/* A pointer into the code object's bytecode (before it: not started). */
	return pos > start ? pos - start : 0;
}

void pyproc_frame(const struct pyproc *pp, uint64_t code, uint64_t pos, struct py_frame *out)
{
	const struct pycode *c = hmap_find(&pp->codes, &code);

	memset(out, 0, sizeof(*out));
	if (!pp->layout || !c || c->bad)
		return;
	out->name = c->name;
	out->file = c->file;
	out->start_line = c->first > 0 ? c->first : 0;
	out->line = py_line(pp->layout->version, c->lines, c->nlines, c->first,
			    bytecode_offset(pp, code, pos));
}

void py_stats_sample(struct py_stats *st, uint64_t pystack, uint64_t count)
{
	st->samples += count;
	if (pystack & CPROF_STACK_HASHED)
		st->with_frames += count;
	else if (pystack < CPROF_PY_STATUS_MAX)
		st->why[pystack] += count;
}

bool py_stats_line(const struct py_stats *st, char *buf, size_t len)
{
	int n;

	if (!st->procs && !st->unknown)
		return false;
	n = snprintf(buf, len,
		     "python: %zu processes, %llu of their %llu samples with Python frames"
		     " (none: %llu idle, %llu no thread state, %llu read failed, %llu layout"
		     " mismatch, %llu other); %zu code objects read, %zu not code, %zu past the bound",
		     st->procs, (unsigned long long)st->with_frames, (unsigned long long)st->samples,
		     (unsigned long long)st->why[CPROF_PY_IDLE],
		     (unsigned long long)st->why[CPROF_PY_NO_THREAD],
		     (unsigned long long)st->why[CPROF_PY_READ],
		     (unsigned long long)st->why[CPROF_PY_MISMATCH],
		     (unsigned long long)(st->samples - st->with_frames - st->why[CPROF_PY_IDLE] -
					  st->why[CPROF_PY_NO_THREAD] - st->why[CPROF_PY_READ] -
					  st->why[CPROF_PY_MISMATCH]),
		     st->codes, st->bad_codes, st->over_bound);
	if (st->tramps.arenas + st->tramps.refused && n >= 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n,
			      "; perf trampolines: %zu arenas walked, %zu refused",
			      st->tramps.arenas, st->tramps.refused);
	if (st->unknown && n >= 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n,
			 "; %zu processes of an unknown CPython (%s first): native frames only",
			 st->unknown, st->unknown_version);
	return true;
}
