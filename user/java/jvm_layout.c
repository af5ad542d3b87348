// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "java/jvm_layout.h"

#define ALTS 2
#define NO_SIZE SIZE_MAX

/*
 * One member the reader needs: the names it goes by ("Type::_field",
 * the oldest release's first), the bytes read there (0: as many as its
 * C++ type takes, kept at @size_dst), and where in struct jvm_layout its
 * offset (or a static's address) goes.
 */
struct want {
	const char *name[ALTS];
	uint8_t size;
	bool is_static;
	size_t dst, size_dst;
};

#define L(m) offsetof(struct jvm_layout, m)

static const struct want wants[] = {
	{ { "Abstract_VM_Version::_vm_major_version" }, 4, true, L(major_version_addr), NO_SIZE },
	{ { "CodeCache::_heaps" }, 8, true, L(codecache_heaps), NO_SIZE },
	{ { "AbstractInterpreter::_code" }, 8, true, L(interp_code), NO_SIZE },
	{ { "StubQueue::_stub_buffer" }, 8, false, L(queue_buffer), NO_SIZE },
	{ { "StubQueue::_buffer_limit" }, 4, false, L(queue_limit), NO_SIZE },
	{ { "CodeCache::_low_bound" }, 8, true, L(codecache_low), NO_SIZE },
	{ { "CodeCache::_high_bound" }, 8, true, L(codecache_high), NO_SIZE },
	{ { "GrowableArrayBase::_len" }, 4, false, L(array_len), NO_SIZE },
	/* every GrowableArray<E> keeps its data in the same place */
	{ { "GrowableArray<int>::_data" }, 8, false, L(array_data), NO_SIZE },
	{ { "CodeHeap::_memory" }, 32, false, L(heap_memory), NO_SIZE },
	{ { "CodeHeap::_segmap" }, 32, false, L(heap_segmap), NO_SIZE },
	{ { "CodeHeap::_log2_segment_size" }, 4, false, L(heap_log2_segment), NO_SIZE },
	{ { "VirtualSpace::_low" }, 8, false, L(space_low), NO_SIZE },
	{ { "VirtualSpace::_high" }, 8, false, L(space_high), NO_SIZE },
	{ { "CodeBlob::_name" }, 8, false, L(blob_name), NO_SIZE },
	{ { "CodeBlob::_size" }, 4, false, L(blob_size), NO_SIZE },
	{ { "CodeBlob::_header_size" }, 0, false, L(blob_header_size), L(blob_header_size_size) },
	{ { "CodeBlob::_frame_size" }, 4, false, L(blob_frame_size), NO_SIZE },
	{ { "CodeBlob::_frame_complete_offset" }, 0, false, L(blob_frame_complete),
	  L(blob_frame_complete_size) },
	{ { "CodeBlob::_code_begin", "CodeBlob::_code_offset" }, 0, false, L(blob_code),
	  L(blob_code_size) },
	{ { "CompiledMethod::_method", "nmethod::_method" }, 8, false, L(nm_method), NO_SIZE },
	{ { "nmethod::_compile_id" }, 4, false, L(nm_compile_id), NO_SIZE },
	{ { "nmethod::_entry_bci" }, 4, false, L(nm_entry_bci), NO_SIZE },
	{ { "Method::_constMethod" }, 8, false, L(method_const), NO_SIZE },
	{ { "ConstMethod::_constants" }, 8, false, L(const_constants), NO_SIZE },
	{ { "ConstMethod::_constMethod_size" }, 4, false, L(const_method_size), NO_SIZE },
	{ { "ConstMethod::_flags", "ConstMethod::_flags._flags" }, 0, false, L(const_flags),
	  L(const_flags_size) },
	{ { "ConstMethod::_code_size" }, 2, false, L(const_code_size), NO_SIZE },
	{ { "ConstMethod::_name_index" }, 2, false, L(const_name_index), NO_SIZE },
	{ { "ConstMethod::_signature_index" }, 2, false, L(const_signature_index), NO_SIZE },
	{ { "ConstantPool::_pool_holder" }, 8, false, L(pool_holder), NO_SIZE },
	{ { "ConstantPool::_source_file_name_index" }, 2, false, L(pool_source_file_index),
	  NO_SIZE },
	{ { "ConstantPool::_length" }, 4, false, L(pool_length), NO_SIZE },
	{ { "Klass::_name" }, 8, false, L(klass_name), NO_SIZE },
	{ { "InstanceKlass::_constants" }, 8, false, L(klass_constants), NO_SIZE },
	{ { "Symbol::_length" }, 2, false, L(symbol_length), NO_SIZE },
	{ { "Symbol::_body" }, 1, false, L(symbol_body), NO_SIZE },
};

/* "Type::_field" split into its type (in @type, @cap bytes) and field. */
static const char *split(const char *name, char *type, size_t cap)
{
	const char *sep = strstr(name, "::");
	size_t n = sep ? (size_t)(sep - name) : 0;

	if (!sep || n >= cap)
		return NULL;
	memcpy(type, name, n);
	type[n] = 0;
	return sep + 2;
}

/*
 * Finds the member @w under one of its names: its offset or address into
 * *@v and which name it went by into *@alt.  A member must lie within its
 * type's size, a static have an address.
 */
static int find(const struct jvm_structs *vm, const struct want *w, uint64_t *v,
		unsigned *size, struct errbuf *err)
{
	for (size_t a = 0; a < ALTS && w->name[a]; a++) {
		char type[64];
		const char *field = split(w->name[a], type, sizeof(type));
		const struct jvm_field *f = field ? jvm_structs_field(vm, type, field) : NULL;
		const struct jvm_type *t;

		if (!f)
			continue;
		*size = w->size ? w->size : jvm_type_string_size(f->type_string);
		if (!*size)
			return errf(err, -ENOTSUP, "%s is of type %s", w->name[a],
				    f->type_string ? f->type_string : "(none)");
		if (f->is_static != w->is_static)
			return errf(err, -ENOTSUP, "%s is %sstatic", w->name[a],
				    f->is_static ? "" : "not ");
		if (w->is_static) {
			if (!f->address)
				return errf(err, -ENOTSUP, "%s has no address", w->name[a]);
			*v = f->address;
			return 0;
		}
		t = jvm_structs_type(vm, type);
		if (!t || f->offset > UINT32_MAX || t->size < *size || f->offset > t->size - *size)
			return errf(err, -ENOTSUP, "%s at %llu is not within its type", w->name[a],
				    (unsigned long long)f->offset);
		*v = f->offset;
		return 0;
	}
	return errf(err, -ENOTSUP, "%s not in the JVM's tables", w->name[0]);
}

/* The size of type @name, which must be one of at most @max bytes. */
static int type_size(const struct jvm_structs *vm, const char *name, uint64_t max, uint32_t *out,
		     struct errbuf *err)
{
	const struct jvm_type *t = jvm_structs_type(vm, name);

	if (!t || !t->size || t->size > max)
		return errf(err, -ENOTSUP, "type %s %s", name, t ? "of an unlikely size" : "missing");
	*out = (uint32_t)t->size;
	return 0;
}

/* The int constant @name, which must lie in [@lo, @hi]. */
static int constant(const struct jvm_structs *vm, const char *name, int64_t lo, int64_t hi,
		    int64_t *v, struct errbuf *err)
{
	if (!jvm_structs_const(vm, name, v))
		return errf(err, -ENOTSUP, "%s not in the JVM's tables", name);
	if (*v < lo || *v > hi)
		return errf(err, -ENOTSUP, "%s is %lld", name, (long long)*v);
	return 0;
}

/* What differs by release beyond a member's name. */
static int by_release(const struct jvm_structs *vm, struct jvm_layout *l, struct errbuf *err)
{
	const struct jvm_field *kind = jvm_structs_field(vm, "CodeBlob", "_kind");
	int64_t v;
	int e;

	l->blob_code_is_offset = !jvm_structs_field(vm, "CodeBlob", "_code_begin");
	if (l->blob_code_size != (l->blob_code_is_offset ? 4 : 8))
		return errf(err, -ENOTSUP, "CodeBlob's code start of %u bytes", l->blob_code_size);
	if (l->const_flags_size != 2 && l->const_flags_size != 4)
		return errf(err, -ENOTSUP, "ConstMethod's flags of %u bytes", l->const_flags_size);
	l->blob_kind = -1;
	if (kind) {
		e = constant(vm, "CodeBlobKind::Nmethod", 0, 255, &v, err);
		if (e)
			return e;
		if (kind->offset >= 64)
			return errf(err, -ENOTSUP, "CodeBlob::_kind at %llu", (unsigned long long)kind->offset);
		l->blob_kind = (int32_t)kind->offset;
		l->blob_kind_nmethod = (uint32_t)v;
	}
	e = constant(vm, l->const_flags_size == 2 ? "ConstMethod::_has_linenumber_table" :
			 "ConstMethodFlags::_misc_has_linenumber_table", 1, 1u << 31, &v, err);
	if (e)
		return e;
	l->const_has_lines = (uint32_t)v;
	/*
	 * x86-64's interpreter frame, from rbp: sender sp, last sp, method,
	 * mirror, mdp, cache, locals, bcp.  Only the first two are exported.
	 */
	e = constant(vm, "frame::interpreter_frame_last_sp_offset", -16, -1, &v, err);
	if (e)
		return e;
	l->interp_method = (int32_t)v - 1;
	l->interp_bcp = (int32_t)v - 6;
	e = constant(vm, "frame::interpreter_frame_sender_sp_offset", -16, -1, &v, err);
	if (e)
		return e;
	l->interp_sender_sp = (int32_t)v;
	/* the block header: a length (size_t, or u32 in 23+) and the used flag after it */
	e = type_size(vm, "HeapBlock", 64, &l->heapblock_size, err);
	if (e)
		return e;
	l->heapblock_used = l->heapblock_size / 2;
	e = type_size(vm, "ConstMethod", 4096, &l->const_size, err);
	return e ? e : type_size(vm, "ConstantPool", 4096, &l->pool_size, err);
}

/*
 * What jvm_scopes reads, by the layout of each release: optional, so
 * each table is tried whole, and a JVM with neither keeps scopes_ok
 * false (its compiled frames are named by their nmethod's method only).
 */
static const struct want scope_wants_common[] = {
	{ { "PcDesc::_pc_offset" }, 4, false, L(pcdesc_pc_offset), NO_SIZE },
	{ { "PcDesc::_scope_decode_offset" }, 4, false, L(pcdesc_scope_offset), NO_SIZE },
	{ { "nmethod::_scopes_pcs_offset" }, 4, false, L(nm_scopes_pcs), NO_SIZE },
};

static const struct want scope_wants_blob[] = { /* 17-22 */
	{ { "nmethod::_dependencies_offset" }, 4, false, L(nm_dependencies), NO_SIZE },
	{ { "nmethod::_metadata_offset" }, 4, false, L(nm_metadata), NO_SIZE },
	{ { "CompiledMethod::_scopes_data_begin" }, 8, false, L(nm_scopes_data_begin), NO_SIZE },
};

static const struct want scope_wants_immutable[] = { /* 25+ */
	{ { "nmethod::_scopes_data_offset" }, 4, false, L(nm_scopes_data), NO_SIZE },
	{ { "nmethod::_immutable_data" }, 8, false, L(nm_immutable), NO_SIZE },
	{ { "nmethod::_immutable_data_size" }, 4, false, L(nm_immutable_size), NO_SIZE },
	{ { "CodeBlob::_mutable_data" }, 8, false, L(blob_mutable), NO_SIZE },
	{ { "CodeBlob::_mutable_data_size" }, 4, false, L(blob_mutable_size), NO_SIZE },
	{ { "CodeBlob::_relocation_size" }, 4, false, L(blob_relocation_size), NO_SIZE },
};

/* Takes each member of @w (@n) into @l: false when one is missing. */
static bool take_optional(const struct jvm_structs *vm, const struct want *w, size_t n,
			  struct jvm_layout *l)
{
	for (size_t i = 0; i < n; i++) {
		struct errbuf scratch = { "" };
		uint64_t v = 0;
		unsigned size = 0;

		if (find(vm, &w[i], &v, &size, &scratch))
			return false;
		*(uint32_t *)((char *)l + w[i].dst) = (uint32_t)v;
	}
	return true;
}

/* The debug info's layout, where it is one of the two known; never fails the JVM. */
static void scopes_layout(const struct jvm_structs *vm, struct jvm_layout *l)
{
	const struct jvm_type *pd = jvm_structs_type(vm, "PcDesc");

	l->scopes_ok = false;
	/* PcDesc: four ints in every release; its size is the array's stride */
	if (!pd || pd->size < 8 || pd->size > 64 || pd->size % 4)
		return;
	l->pcdesc_size = (uint32_t)pd->size;
	if (!take_optional(vm, scope_wants_common,
			   sizeof(scope_wants_common) / sizeof(scope_wants_common[0]), l))
		return;
	l->scopes_immutable = jvm_structs_field(vm, "nmethod", "_immutable_data") != NULL;
	if (l->scopes_immutable)
		l->scopes_ok = take_optional(vm, scope_wants_immutable,
					     sizeof(scope_wants_immutable) /
						     sizeof(scope_wants_immutable[0]), l);
	else
		l->scopes_ok = take_optional(vm, scope_wants_blob,
					     sizeof(scope_wants_blob) / sizeof(scope_wants_blob[0]),
					     l);
}

int jvm_layout_from(const struct jvm_structs *vm, const struct memsrc *m, struct jvm_layout *l,
		    struct errbuf *err)
{
	int32_t major;
	int e;

	memset(l, 0, sizeof(*l));
	for (size_t i = 0; i < sizeof(wants) / sizeof(wants[0]); i++) {
		const struct want *w = &wants[i];
		uint64_t v = 0;
		unsigned size = 0;

		e = find(vm, w, &v, &size, err);
		if (e)
			return e;
		if (w->size_dst != NO_SIZE)
			*((uint8_t *)l + w->size_dst) = (uint8_t)size;
		if (w->is_static)
			memcpy((char *)l + w->dst, &v, sizeof(v));
		else
			*(uint32_t *)((char *)l + w->dst) = (uint32_t)v;
	}
	e = by_release(vm, l, err);
	if (e)
		return e;
	scopes_layout(vm, l);
	if (memsrc_read(m, l->major_version_addr, &major, sizeof(major)))
		return errf(err, -EFAULT, "Abstract_VM_Version::_vm_major_version unreadable");
	if (major < 8 || major > 99)
		return errf(err, -ENOTSUP, "a JVM of major version %d", major);
	l->major = (unsigned)major;
	return 0;
}
