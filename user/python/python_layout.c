// SPDX-License-Identifier: MIT
#include <stddef.h>

#include "python/python_layout.h"

/*
 * From the headers of 3.8.18, 3.9.18, 3.10.13, 3.11.7, 3.12.1 and 3.13.0
 * (the default build: no free threading), by tools/pylayout.c.  Layouts
 * hold within a minor version: its releases keep the ABI of these structs.
 */
static const struct py_layout layouts[] = {
	{ 0x308, { 32, 0, 8, 8, 16, 176, 24, 0, 24, 32, 104, 0, 0, 108 },
	  { 104, 112, 40, 120, 0, 48, 72, 32, 32, 16 } },
	{ 0x309, { 32, 0, 8, 8, 16, 176, 24, 0, 24, 32, 104, 0, 0, 108 },
	  { 104, 112, 40, 120, 0, 48, 72, 32, 32, 16 } },
	{ 0x30a, { 32, 0, 8, 8, 16, 176, 24, 0, 24, 32, 96, 0, 0, 100 },
	  { 104, 112, 40, 120, 0, 48, 72, 32, 32, 16 } },
	{ 0x30b, { 40, 0, 16, 8, 16, 152, 56, 8, 48, 32, 56, 68, 69, 80 },
	  { 112, 128, 72, 136, 184, 48, 72, 32, 32, 16 } },
	{ 0x30c, { 40, 0, 72, 8, 16, 136, 56, 0, 8, 0, 56, 0, 70, 80 },
	  { 112, 128, 68, 136, 192, 40, 56, 32, 32, 16 } },
	{ 0x30d, { 632, 7264, 7344, 8, 16, 152, 72, 0, 8, 0, 56, 0, 70, 80 },
	  { 112, 128, 68, 136, 200, 40, 56, 32, 32, 16 } },
};

const struct py_layout *py_layout_find(unsigned major, unsigned minor)
{
	unsigned v = major << 8 | minor;

	if (minor > 0xff)
		return NULL;
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].version == v)
			return &layouts[i];
	return NULL;
}

static uint16_t max16(uint16_t a, uint16_t b)
{
	return a > b ? a : b;
}

static uint16_t min16(uint16_t a, uint16_t b)
{
	return a < b ? a : b;
}

void py_layout_bpf(const struct py_layout *l, struct cprof_py_layout *out)
{
	const struct py_offsets *o = &l->off;
	const struct py_code_layout *c = &l->code;
	/* the tag's fields, close together in every version: one read */
	uint16_t lo = min16(min16(c->firstlineno, c->filename), min16(c->name, c->linetable)),
		 hi = max16(max16(c->firstlineno, c->filename), max16(c->name, c->linetable)) + 8;
	uint16_t flags;

	/* How the frame chain is kept changed in 3.11, 3.12 and 3.13. */
	if (l->version < 0x30b)
		flags = CPROF_PY_F_EVERY_ENTRY;
	else if (l->version == 0x30b)
		flags = CPROF_PY_F_CFRAME | CPROF_PY_F_LASTI_PTR | CPROF_PY_F_IS_ENTRY;
	else if (l->version == 0x30c)
		flags = CPROF_PY_F_CFRAME | CPROF_PY_F_LASTI_PTR | CPROF_PY_F_SHIMS;
	else
		flags = CPROF_PY_F_LASTI_PTR | CPROF_PY_F_SHIMS;
	*out = (struct cprof_py_layout){
		.runtime_interps = o->runtime_interps,
		.interp_next = o->interp_next,
		.interp_threads = o->interp_threads,
		.tstate_next = o->tstate_next,
		.tstate_interp = o->tstate_interp,
		.tstate_thread_id = o->tstate_thread_id,
		.tstate_frame = o->tstate_frame,
		.cframe_frame = o->cframe_frame,
		.frame_back = o->frame_back,
		.frame_code = o->frame_code,
		.frame_lasti = o->frame_lasti,
		.frame_entry = o->frame_entry,
		.frame_owner = o->frame_owner,
		.tstate_read = max16(max16(o->tstate_next, o->tstate_interp),
				     max16(o->tstate_thread_id, o->tstate_frame)) + 8,
		.frame_read = o->frame_read,
		.flags = flags,
		.code_lo = lo,
		.code_read = hi - lo,
		.code_firstlineno = c->firstlineno - lo,
		.code_filename = c->filename - lo,
		.code_name = c->name - lo,
		.code_linetable = c->linetable - lo,
	};
}
