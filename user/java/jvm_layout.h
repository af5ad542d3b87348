/* SPDX-License-Identifier: MIT */
/*
 * jvm_layout: where HotSpot keeps what naming and walking Java frames
 * needs, taken from its own tables (jvm_structs.h) by name.
 *
 * Names move between releases (JDK 17's CompiledMethod::_method is
 * nmethod::_method in 21+, CodeBlob's _code_begin pointer an offset,
 * _code_offset, in 23+): each member is looked for under the names
 * each known release gives it, and each found member is checked to lie
 * within its type's size.  A JVM that lacks one the reader needs is
 * refused with a message naming it, and its frames stay native.
 */
#ifndef CPROF_JVM_LAYOUT_H
#define CPROF_JVM_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>

#include "java/jvm_structs.h"
#include "util/errbuf.h"

struct jvm_layout {
	unsigned major;               /* the JDK's: 17, 25 */
	/* statics: their addresses in the process */
	uint64_t major_version_addr;  /* Abstract_VM_Version::_vm_major_version */
	uint64_t codecache_heaps;     /* CodeCache::_heaps, a GrowableArray<CodeHeap*>* */
	uint64_t codecache_low, codecache_high; /* CodeCache::_low_bound, _high_bound */

	/* GrowableArray */
	uint32_t array_len, array_data;
	/* CodeHeap and the VirtualSpaces in it */
	uint32_t heap_memory, heap_segmap, heap_log2_segment;
	uint32_t space_low, space_high;     /* committed */
	uint32_t heapblock_size, heapblock_used; /* the block header before each blob */

	/* CodeBlob */
	uint32_t blob_name, blob_size, blob_header_size, blob_frame_size, blob_frame_complete;
	uint32_t blob_code;          /* _code_begin (a pointer) or _code_offset */
	bool blob_code_is_offset;
	int32_t blob_kind;           /* _kind's offset (23+), -1 before */
	uint32_t blob_kind_nmethod;  /* CodeBlobKind::Nmethod, where there is _kind */
	/* the bytes of members whose type changed: 4, or 2 in 23+ */
	uint8_t blob_header_size_size, blob_frame_complete_size, blob_code_size;

	/* nmethod */
	uint32_t nm_method, nm_compile_id, nm_entry_bci;

	/* Method, ConstMethod, ConstantPool, Klass, Symbol */
	uint32_t method_const;
	uint32_t const_constants, const_method_size, const_flags, const_code_size, const_name_index,
		const_signature_index, const_size;
	uint8_t const_flags_size;    /* 2, or 4 (23+) */
	uint32_t const_has_lines;    /* the flag bit of a line number table */
	uint32_t pool_holder, pool_source_file_index, pool_length, pool_size;
	uint32_t klass_name, klass_constants; /* Klass::_name, InstanceKlass::_constants */
	uint32_t symbol_length, symbol_body;

	/* interpreter frames: word offsets from rbp */
	int32_t interp_method, interp_bcp;
	int32_t interp_sender_sp;    /* the caller's sp before the interpreter extended it */
	/* the interpreter's code: AbstractInterpreter::_code, a StubQueue */
	uint64_t interp_code;
	uint32_t queue_buffer, queue_limit; /* StubQueue::_stub_buffer, _buffer_limit */

	/*
	 * A compiled method's debug info (jvm_scopes.h): its PcDescs, its
	 * scopes stream and the metadata the stream's method indexes name.
	 * Optional: a JVM whose layout of them is not one known here still
	 * reads, with scopes_ok false.
	 *  17-22: all three inside the blob: metadata from header +
	 *    nmethod::_metadata_offset to CompiledMethod::_scopes_data_begin
	 *    (a pointer), the scopes stream to header + _scopes_pcs_offset,
	 *    the PcDescs to header + _dependencies_offset.
	 *  25+: PcDescs and stream in nmethod::_immutable_data (C heap), at
	 *    _scopes_pcs_offset and _scopes_data_offset in it; metadata in
	 *    CodeBlob::_mutable_data, after its _relocation_size bytes.
	 * Between them (23 has no CompiledMethod; 24 has immutable data but
	 * its metadata still in the blob) neither matches: scopes_ok is false.
	 */
	bool scopes_ok;
	bool scopes_immutable;        /* the 25+ layout */
	uint32_t pcdesc_size, pcdesc_pc_offset, pcdesc_scope_offset;
	uint32_t nm_scopes_pcs;       /* nmethod::_scopes_pcs_offset (int) */
	uint32_t nm_dependencies;     /* 17-22: nmethod::_dependencies_offset (int) */
	uint32_t nm_metadata;         /* 17-22: nmethod::_metadata_offset (int) */
	uint32_t nm_scopes_data_begin; /* 17-22: CompiledMethod::_scopes_data_begin (address) */
	uint32_t nm_scopes_data;      /* 25+: nmethod::_scopes_data_offset (int) */
	uint32_t nm_immutable, nm_immutable_size; /* 25+: address, int */
	uint32_t blob_mutable, blob_mutable_size, blob_relocation_size; /* 25+: address, int, int */
};

/*
 * Fills @l from the tables @vm of the JVM whose memory is @m (the
 * version is read there).  0, or -ENOTSUP with @err naming the first
 * member missing or out of its type, or -EFAULT.
 */
int jvm_layout_from(const struct jvm_structs *vm, const struct memsrc *m, struct jvm_layout *l,
		    struct errbuf *err);

#endif
