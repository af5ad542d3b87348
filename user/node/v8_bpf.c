// SPDX-License-Identifier: MIT
/*
 * v8_bpf: what BPF is told of a process's V8, and what it recorded read
 * back (v8_bpf.h).
 */
#include <errno.h>
#include <stdint.h>

#include "node/v8_bpf.h"

/* Whether @v fits a field of @bits bits, signed when @is_signed. */
static int fits(int64_t v, int bits, int is_signed)
{
	return is_signed ? v >= -(1LL << (bits - 1)) && v < (1LL << (bits - 1))
			 : v >= 0 && v < (1LL << bits);
}

int v8proc_bpf(const struct v8proc *vp, uint64_t gen, struct cprof_v8_proc *out)
{
	const struct v8_layout *l = &vp->layout;

	/* BPF reads the frame's five slots at once, up to fp (runtimes.h) */
	if (!fits((int64_t)l->heap_tag, 8, 0) || !fits((int64_t)l->heap_tag_mask, 8, 0) ||
	    !fits(l->smi_shift, 6, 0) || l->fp_context != -8 || l->fp_function != -16 ||
	    l->fp_bytecode_array != -32 || l->fp_bytecode_offset != -40)
		return -ENOTSUP;
	*out = (struct cprof_v8_proc){
		.gen = gen,
		.fp_function = l->fp_function,
		.fp_bytecode_offset = l->fp_bytecode_offset,
		.object_map = l->obj_map,
		.map_type = l->map_type,
		.function_shared = l->fn_shared,
		.sfi_type = l->t_sfi,
		.bytecode_array_type = l->t_bytecode,
		.heap_tag = (uint8_t)l->heap_tag,
		.heap_tag_mask = (uint8_t)l->heap_tag_mask,
		.smi_shift = (uint8_t)l->smi_shift,
	};
	return 0;
}

void v8proc_decode(const struct v8proc *vp, uint64_t tagged, uint64_t *sfi, int32_t *offset)
{
	/* the slot counts from the array's tagged address; its bytecodes start at its data */
	int32_t slot = CPROF_V8_SLOT(tagged),
		header = (int32_t)vp->layout.bytecode_data - (int32_t)vp->layout.heap_tag;

	*sfi = CPROF_V8_SFI(tagged);
	*offset = slot >= header ? slot - header : -1;
}

const struct v8_frame *v8proc_frame_kept(const struct v8proc *vp, uint64_t tagged)
{
	uint64_t sfi;
	int32_t offset;

	v8proc_decode(vp, tagged, &sfi, &offset);
	return v8_frame_kept(&vp->names, sfi, offset);
}

const struct v8_frame *v8proc_frame(struct v8proc *vp, uint64_t tagged)
{
	const struct v8_frame *f = NULL;
	uint64_t sfi;
	int32_t offset;

	v8proc_decode(vp, tagged, &sfi, &offset);
	if (v8_frame_name(&vp->names, &vp->layout, &vp->mem, sfi, offset, &f))
		return NULL;
	return f;
}
