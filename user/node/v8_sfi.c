// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "node/v8_heap.h"
#include "node/v8_layout.h"
#include "node/v8_sfi.h"

#define ANONYMOUS "(anonymous)"

/* What a ScopeInfo or an UncompiledData gave. */
struct found {
	uint64_t name, inferred; /* tagged strings; 0: none */
	int32_t start;           /* -1: none */
};

static bool is_type(const struct v8_layout *l, const struct memsrc *m, uint64_t v, uint16_t want)
{
	uint16_t t;

	return v8_is_heap(v) && !v8_type(l, m, v, &t) && t == want;
}

static bool is_string(const struct v8_layout *l, const struct memsrc *m, uint64_t v)
{
	uint16_t t;

	return v8_is_heap(v) && !v8_type(l, m, v, &t) && v8_type_is_string(l, t);
}

/* Slot @i of the ScopeInfo @si (slot 0: its flags, right after its map). */
static int slot(const struct v8_layout *l, const struct memsrc *m, uint64_t si, uint32_t i,
		uint64_t *v)
{
	if (i >= V8_SCOPE_SLOTS_MAX)
		return -EINVAL;
	return v8_field(l, m, si, l->obj_map + 8 + 8 * i, v);
}

static int slot_smi(const struct v8_layout *l, const struct memsrc *m, uint64_t si, uint32_t i,
		    int32_t *v)
{
	uint64_t w;
	int e = slot(l, m, si, i, &w);

	return e ? e : v8_smi(w, v);
}

/*
 * A function scope's ScopeInfo: the slots before its name are counted
 * from its flags and context locals (v8_layout.h), then its name (a
 * String, or Smi 0: none), inferred name (a String or undefined) and
 * start and end positions.  Other scopes (script, module, eval) have none
 * of these read: no name, start unknown.
 */
static int scope_info(const struct v8_layout *l, const struct memsrc *m, uint64_t si,
		      struct found *f)
{
	int32_t flags, nctx, start, end;
	uint64_t name = 0, inferred = 0;
	uint32_t i = l->scope_first_vars;
	int e = slot_smi(l, m, si, 0, &flags);

	if (!e)
		e = slot_smi(l, m, si, l->scope_ncontext, &nctx);
	if (!e && (nctx < 0 || (uint32_t)nctx > V8_SCOPE_SLOTS_MAX))
		e = -EINVAL;
	if (e || ((uint32_t)flags & l->scope_type_mask) != l->scope_function)
		return e;
	i += (uint32_t)nctx < l->scope_inlined_max ? (uint32_t)nctx : 1; /* names, or their table */
	i += (uint32_t)nctx;                                              /* their infos */
	i += (uint32_t)flags & l->scope_saved_class_bit ? 1 : 0;
	if (((uint32_t)flags >> l->scope_fnvar_shift & l->scope_fnvar_mask) != 0) {
		e = slot(l, m, si, i, &name);
		/* Smi 0: a function without a name of its own; no other Smi */
		if (!e && (v8_is_smi(name) ? name != 0 : !is_string(l, m, name)))
			e = -EINVAL;
		i += 2;
	}
	if (!e && (uint32_t)flags & l->scope_inferred_bit) {
		e = slot(l, m, si, i++, &inferred);
		if (!e && !is_string(l, m, inferred))
			inferred = 0;
	}
	if (!e)
		e = slot_smi(l, m, si, i, &start);
	if (!e)
		e = slot_smi(l, m, si, i + 1, &end);
	if (!e && (start < 0 || end < start))
		e = -EINVAL;
	if (!e)
		*f = (struct found){ name, inferred, start };
	return e;
}

static bool is_uncompiled(const struct v8_layout *l, uint16_t t)
{
	for (int i = 0; i < V8_UNCOMPILED_TYPES; i++)
		if (t == l->t_uncompiled[i])
			return true;
	return false;
}

/* An UncompiledData's inferred name and start position, into @f where it has none yet. */
static int uncompiled(const struct v8_layout *l, const struct memsrc *m, uint64_t ud,
		      struct found *f)
{
	uint64_t inferred;
	int32_t start;
	int e = v8_field(l, m, ud, l->uncompiled_inferred, &inferred);

	if (!e)
		e = v8_read(l, m, ud, l->uncompiled_start, &start, sizeof(start));
	if (e)
		return e;
	if (!f->inferred && is_string(l, m, inferred))
		f->inferred = inferred;
	if (f->start < 0)
		f->start = start < 0 ? -1 : start;
	return 0;
}

/* The BytecodeArray behind function data @fd (itself, an InterpreterData's, a baseline Code's). */
static uint64_t bytecode_of(const struct v8_layout *l, const struct memsrc *m, uint64_t fd)
{
	uint16_t t;

	for (int hop = 0; hop < 3 && v8_is_heap(fd) && !v8_type(l, m, fd, &t); hop++) {
		if (t == l->t_bytecode)
			return fd;
		if ((t != l->t_interp_data && t != l->t_code) ||
		    v8_field(l, m, fd, t == l->t_code ? l->code_bytecode : l->interp_bytecode, &fd))
			return 0;
	}
	return 0;
}

/* The name_or_scope_info @nos: a name, a ScopeInfo, or Smi 0 (none). */
static int name_or_scope(const struct v8_layout *l, const struct memsrc *m, uint64_t nos,
			 struct found *f)
{
	uint16_t t;
	int e;

	if (v8_is_smi(nos))
		return nos ? -EINVAL : 0;
	e = v8_type(l, m, nos, &t);
	if (e)
		return e;
	if (v8_type_is_string(l, t)) {
		f->name = nos;
		return 0;
	}
	return t == l->t_scope_info ? scope_info(l, m, nos, f) : -EINVAL;
}

/* script_or_debug_info: a Script, or none (undefined, or a DebugInfo this does not read). */
static int script_of(const struct v8_layout *l, const struct memsrc *m, uint64_t s, uint64_t *out)
{
	uint16_t t;
	int e = v8_type(l, m, s, &t);

	*out = 0;
	if (e)
		return e;
	if (t == l->t_script)
		*out = s;
	else if (t != l->t_oddball && t != l->t_debug_info)
		return -EINVAL;
	return 0;
}

int v8_sfi_read(const struct v8_layout *l, const struct memsrc *m, uint64_t sfi,
		struct v8_sfi *out)
{
	struct found f = { .start = -1 };
	uint64_t nos, data, script;
	uint16_t t;
	int e = v8_type(l, m, sfi, &t);

	memset(out, 0, sizeof(*out));
	if (!e && t != l->t_sfi)
		e = -EINVAL;
	if (!e)
		e = v8_field(l, m, sfi, l->sfi_name, &nos);
	if (!e)
		e = v8_field(l, m, sfi, l->sfi_data, &data);
	if (!e)
		e = v8_field(l, m, sfi, l->sfi_script, &script);
	if (!e)
		e = name_or_scope(l, m, nos, &f);
	if (!e && v8_is_heap(data) && !v8_type(l, m, data, &t) && is_uncompiled(l, t))
		e = uncompiled(l, m, data, &f);
	if (!e)
		e = script_of(l, m, script, &out->script);
	if (!e && f.name)
		e = v8_string(l, m, f.name, out->name, sizeof(out->name));
	if (!e && !out->name[0] && f.inferred)
		e = v8_string(l, m, f.inferred, out->name, sizeof(out->name));
	if (e)
		return e;
	if (!out->name[0])
		strcpy(out->name, ANONYMOUS);
	out->start = f.start;
	out->bytecode = bytecode_of(l, m, data);
	return 0;
}

/* One zigzag VLQ number of the table (V8's source-position-table.cc DecodeInt). */
static int decode(const uint8_t *t, size_t n, size_t *i, int64_t *v)
{
	uint64_t u = 0;
	unsigned shift = 0;
	uint8_t b;

	do {
		if (*i >= n || shift > 63)
			return -EINVAL;
		b = t[(*i)++];
		u |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	*v = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
	return 0;
}

int v8_positions_find(const uint8_t *t, size_t n, int32_t offset, int32_t *pos)
{
	/* V8's PositionTableEntry starts at the function's entry, offset -1 */
	int64_t code = -1, raw = 0;
	bool found = false;
	size_t i = 0;

	while (i < n) {
		int64_t dc, dp;

		if (decode(t, n, &i, &dc) || decode(t, n, &i, &dp))
			return -EINVAL;
		/* the sign tells a statement: a negative delta d stands for -(d + 1) */
		code += dc >= 0 ? dc : -(dc + 1);
		raw += dp;
		if (code > offset)
			break;
		/* SourcePosition: bit 0 external (not JavaScript's), bits 1-30 the offset + 1 */
		if (!(raw & 1)) {
			*pos = (int32_t)((raw >> 1) & 0x3fffffff) - 1;
			found = true;
		}
	}
	return found && *pos >= 0 ? 0 : -ENODATA;
}

int v8_bytecode_position(const struct v8_layout *l, const struct memsrc *m, uint64_t bytecode,
			 int32_t offset, int32_t *pos)
{
	uint64_t w, table;
	int32_t len, tlen;
	uint8_t *buf;
	int e = v8_field(l, m, bytecode, l->array_length, &w);

	if (!e)
		e = v8_smi(w, &len);
	if (!e && (offset < 0 || offset >= len))
		e = -ERANGE;
	if (!e)
		e = v8_field(l, m, bytecode, l->bytecode_positions, &table);
	/* undefined until collected, or an exception where collecting failed */
	if (!e && !is_type(l, m, table, l->t_byte_array))
		e = -ENODATA;
	if (!e)
		e = v8_field(l, m, table, l->array_length, &w);
	if (!e)
		e = v8_smi(w, &tlen);
	if (!e && (tlen < 0 || (uint32_t)tlen > V8_POSITIONS_MAX))
		e = tlen < 0 ? -EINVAL : -E2BIG;
	if (e)
		return e;
	buf = malloc((size_t)tlen + 1);
	if (!buf)
		return -ENOMEM;
	e = v8_read(l, m, table, l->byte_array_data, buf, (size_t)tlen);
	if (!e)
		e = v8_positions_find(buf, (size_t)tlen, offset, pos);
	free(buf);
	return e;
}
