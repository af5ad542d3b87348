// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "elf/elfobj.h"
#include "fs/procmaps.h"
#include "java/jvm.h"

static bool is_libjvm(const char *path)
{
	const char *base = path ? strrchr(path, '/') : NULL;

	return base && !strcmp(base, "/libjvm.so");
}

/* The process addresses of the tables' symbols in @o, loaded at @bias. */
static int table_symbols(struct elfobj *o, uint64_t bias, uint64_t sym[JVM_SYM_N])
{
	struct elfsyms_named s[JVM_SYM_N];

	for (int k = 0; k < JVM_SYM_N; k++)
		s[k] = (struct elfsyms_named){ .name = jvm_sym_names[k] };
	if (elfobj_find_dynamic(o, s, JVM_SYM_N, NULL))
		return -ENOENT;
	for (int k = 0; k < JVM_SYM_N; k++) {
		if (!s[k].found)
			return -ENOENT;
		sym[k] = bias + s[k].value;
	}
	return 0;
}

/* What the code cache reserves: its heaps, out to CodeCache::_high_bound. */
static void reserved(struct jvmproc *jp)
{
	uint64_t end = 0;

	if (memsrc_read(&jp->mem, jp->layout.codecache_high, &end, sizeof(end)))
		end = 0;
	jp->reserved_lo = UINT64_MAX;
	jp->reserved_hi = end;
	for (unsigned i = 0; i < jp->code.n; i++) {
		if (jp->code.heap[i].low < jp->reserved_lo)
			jp->reserved_lo = jp->code.heap[i].low;
		if (jp->code.heap[i].high > jp->reserved_hi)
			jp->reserved_hi = jp->code.heap[i].high;
	}
}

/* The JVM whose tables' symbols are at @sym, read into @jp. */
static int read_jvm(struct jvmproc *jp, const uint64_t *sym, struct errbuf *err)
{
	uint64_t structs, stride;
	int e;

	/*
	 * Before the JVM's start has filled it in, the table's pointer is
	 * NULL; and between libjvm.so's relocation (which sets the pointer)
	 * and its constructors (which compute the strides), the stride is 0.
	 */
	if (memsrc_read(&jp->mem, sym[JVM_SYM_STRUCTS], &structs, sizeof(structs)) || !structs ||
	    memsrc_read(&jp->mem, sym[JVM_SYM_STRUCT_STRIDE], &stride, sizeof(stride)) || !stride)
		return errf(err, -EAGAIN, "libjvm.so's tables not filled in yet");
	e = jvm_structs_read(&jp->vm, &jp->mem, sym, err);
	if (e)
		return e == -ENOMEM ? e : -ENOTSUP;
	e = jvm_layout_from(&jp->vm, &jp->mem, &jp->layout, err);
	if (e)
		return e == -ENOMEM ? e : -ENOTSUP;
	/* a JVM starting may not have its code heaps or interpreter yet */
	e = jvm_codecache_read(&jp->layout, &jp->mem, &jp->code, err);
	if (!e)
		reserved(jp);
	return e == -ENOMEM ? e : e ? -EAGAIN : 0;
}

int jvmproc_find(struct jvmproc **out, uint32_t pid, const struct vma_list *maps,
		 struct elfobj *const *objs, struct errbuf *err)
{
	for (size_t i = 0; i < maps->n; i++) {
		const struct vma *v = &maps->v[i];
		uint64_t bias, sym[JVM_SYM_N];
		struct jvmproc *jp;
		int e;

		if (!is_libjvm(v->path) || !objs || !objs[i] ||
		    elfobj_load_bias(objs[i], v->start, v->offset, &bias) ||
		    table_symbols(objs[i], bias, sym))
			continue;
		jp = calloc(1, sizeof(*jp));
		if (!jp)
			return -ENOMEM;
		jp->pid = pid;
		jp->mem = procmem_src(pid);
		jvm_names_init(&jp->names);
		e = read_jvm(jp, sym, err);
		if (e) {
			jvmproc_free(jp);
			return e;
		}
		*out = jp;
		return 0;
	}
	return -ENOENT;
}

int jvmproc_refresh(struct jvmproc *jp, struct errbuf *err)
{
	struct jvm_codecache cc;
	int e = jvm_codecache_read(&jp->layout, &jp->mem, &cc, err);

	/* what was read before stays, unless this read holds together */
	if (!e) {
		jp->code = cc;
		reserved(jp);
	}
	return e;
}

static bool fits16(uint64_t v)
{
	return v <= UINT16_MAX;
}

int jvmproc_bpf(const struct jvmproc *jp, uint64_t gen, struct cprof_jvm_proc *out)
{
	const struct jvm_layout *l = &jp->layout;
	const struct jvm_codecache *cc = &jp->code;
	uint64_t end = 0;

	memset(out, 0, sizeof(*out));
	if (!cc->n || cc->n > CPROF_JVM_HEAPS ||
	    !fits16(l->blob_frame_size) || !fits16(l->blob_frame_complete) ||
	    !fits16(l->blob_code) || !fits16(l->nm_compile_id) || !fits16(l->method_const) ||
	    !fits16(l->const_size) || !fits16(l->heapblock_size))
		return -ENOTSUP;
	if (memsrc_read(&jp->mem, l->codecache_high, &end, sizeof(end)))
		end = 0;
	out->gen = gen;
	out->nheaps = cc->n;
	out->lo = UINT64_MAX;
	for (unsigned i = 0; i < cc->n; i++) {
		struct cprof_jvm_heap *h = &out->heap[i];
		uint64_t high = end > cc->heap[i].high ? end : cc->heap[i].high;

		/* out to the next heap above it: the part committed later is code too */
		for (unsigned k = 0; k < cc->n; k++)
			if (cc->heap[k].low >= cc->heap[i].high && cc->heap[k].low < high)
				high = cc->heap[k].low;
		*h = (struct cprof_jvm_heap){ .low = cc->heap[i].low, .high = high,
					      .segmap = cc->heap[i].segmap,
					      .log2_segment = cc->heap[i].log2_segment };
		if (h->low < out->lo)
			out->lo = h->low;
		if (h->high > out->hi)
			out->hi = h->high;
	}
	out->interp_lo = cc->interp_lo;
	out->interp_hi = cc->interp_hi;
	out->flags = (l->blob_code_is_offset ? CPROF_JVM_CODE_OFFSET : 0) |
		     (l->blob_frame_complete_size == 2 ? CPROF_JVM_COMPLETE_U16 : 0);
	out->blob_frame_size = (uint16_t)l->blob_frame_size;
	out->blob_frame_complete = (uint16_t)l->blob_frame_complete;
	out->blob_code = (uint16_t)l->blob_code;
	out->nm_compile_id = (uint16_t)l->nm_compile_id;
	out->method_const = (uint16_t)l->method_const;
	out->const_size = (uint16_t)l->const_size;
	out->interp_method = (int16_t)l->interp_method;
	out->interp_bcp = (int16_t)l->interp_bcp;
	out->interp_sender_sp = (int16_t)l->interp_sender_sp;
	out->heapblock = (uint16_t)l->heapblock_size;
	return 0;
}

void jvmproc_free(struct jvmproc *jp)
{
	if (!jp)
		return;
	jvm_structs_free(&jp->vm);
	jvm_names_free(&jp->names);
	free(jp);
}
