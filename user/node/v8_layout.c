// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "elf/elfobj.h"
#include "fs/procmaps.h"
#include "node/v8_layout.h"

const char *const v8_sym_names[V8_SYM_N] = {
	"_ZN2v88internal7Version6major_E", "_ZN2v88internal7Version6minor_E",
	"_ZN2v88internal7Version6build_E", "_ZN2v88internal7Version6patch_E",
	"v8dbg_TaggedSize", "v8dbg_SystemPointerSize", "v8dbg_HeapObjectTag",
	"v8dbg_HeapObjectTagMask", "v8dbg_SmiTag", "v8dbg_SmiTagMask", "v8dbg_SmiShiftSize",
	"v8dbg_SmiValueShift",
	"v8dbg_FirstNonstringType", "v8dbg_StringRepresentationMask", "v8dbg_SeqStringTag",
	"v8dbg_ConsStringTag", "v8dbg_ExternalStringTag", "v8dbg_SlicedStringTag",
	"v8dbg_ThinStringTag", "v8dbg_StringEncodingMask", "v8dbg_OneByteStringTag",
	"v8dbg_TwoByteStringTag",
	"v8dbg_class_HeapObject__map__Map", "v8dbg_class_Map__instance_type__uint16_t",
	"v8dbg_class_String__length__int32_t", "v8dbg_class_SeqOneByteString__chars__char",
	"v8dbg_class_SeqTwoByteString__chars__char", "v8dbg_class_ConsString__first__String",
	"v8dbg_class_ConsString__second__String", "v8dbg_class_ThinString__actual__String",
	"v8dbg_class_SlicedString__parent__String", "v8dbg_class_SlicedString__offset__SMI",
	"v8dbg_class_ExternalString__resource__Object",
	"v8dbg_class_JSFunction__shared__SharedFunctionInfo",
	"v8dbg_class_SharedFunctionInfo__name_or_scope_info__Object",
	"v8dbg_class_SharedFunctionInfo__script_or_debug_info__HeapObject",
	"v8dbg_class_SharedFunctionInfo__function_data__Object",
	"v8dbg_class_Script__source__Object", "v8dbg_class_Script__name__Object",
	"v8dbg_class_Script__line_ends__Object", "v8dbg_class_UncompiledData__inferred_name__String",
	"v8dbg_class_UncompiledData__start_position__int32_t",
	"v8dbg_class_FixedArrayBase__length__SMI", "v8dbg_class_FixedArray__data__uintptr_t",
	"v8dbg_class_BytecodeArray__data__uintptr_t",
	"v8dbg_class_Code__bytecode_or_interpreter_data__HeapObject",
	"v8dbg_scopeinfo_idx_nparams", "v8dbg_scopeinfo_idx_ncontextlocals",
	"v8dbg_scopeinfo_idx_first_vars",
	"v8dbg_type_Map__MAP_TYPE", "v8dbg_type_JSFunction__JS_FUNCTION_TYPE",
	"v8dbg_type_SharedFunctionInfo__SHARED_FUNCTION_INFO_TYPE", "v8dbg_type_Script__SCRIPT_TYPE",
	"v8dbg_type_ScopeInfo__SCOPE_INFO_TYPE", "v8dbg_type_BytecodeArray__BYTECODE_ARRAY_TYPE",
	"v8dbg_type_Code__CODE_TYPE", "v8dbg_type_FixedArray__FIXED_ARRAY_TYPE",
	"v8dbg_type_ByteArray__BYTE_ARRAY_TYPE", "v8dbg_type_InterpreterData__INTERPRETER_DATA_TYPE",
	"v8dbg_type_DebugInfo__DEBUG_INFO_TYPE", "v8dbg_type_Oddball__ODDBALL_TYPE",
	"v8dbg_type_UncompiledDataWithoutPreparseData__UNCOMPILED_DATA_WITHOUT_PREPARSE_DATA_TYPE",
	"v8dbg_type_UncompiledDataWithPreparseData__UNCOMPILED_DATA_WITH_PREPARSE_DATA_TYPE",
	"v8dbg_type_UncompiledDataWithoutPreparseDataWithJob__UNCOMPILED_DATA_WITHOUT_PREPARSE_DATA_WITH_JOB_TYPE",
	"v8dbg_type_UncompiledDataWithPreparseDataAndJob__UNCOMPILED_DATA_WITH_PREPARSE_DATA_AND_JOB_TYPE",
	"v8dbg_off_fp_function", "v8dbg_off_fp_context", "v8dbg_off_fp_bytecode_array",
	"v8dbg_off_fp_bytecode_offset",
};

/* What a symbol's value is, so what bounds it. */
enum kind {
	K_VERSION, /* 0..9999 */
	K_CONST,   /* a tag, mask, shift or size: checked against what is expected below */
	K_OFFSET,  /* 0..V8_OFFSET_MAX-1 */
	K_TYPE,    /* 0..V8_TYPE_MAX-1 */
	K_SLOT,    /* a ScopeInfo slot: 0..63 */
	K_FP,      /* a frame slot: -256..256, a multiple of 8 */
};

#define NONE SIZE_MAX
#define L(m) offsetof(struct v8_layout, m)

/* Where each symbol's value goes (NONE: only checked), and its kind. */
static const struct {
	enum kind kind;
	size_t dst;
} dests[V8_SYM_N] = {
	[V8_SYM_MAJOR] = { K_VERSION, L(major) }, [V8_SYM_MINOR] = { K_VERSION, L(minor) },
	[V8_SYM_BUILD] = { K_VERSION, L(build) }, [V8_SYM_PATCH] = { K_VERSION, L(patch) },
	[V8_SYM_TAGGED_SIZE] = { K_CONST, NONE }, [V8_SYM_POINTER_SIZE] = { K_CONST, NONE },
	[V8_SYM_HEAP_TAG] = { K_CONST, NONE }, [V8_SYM_HEAP_TAG_MASK] = { K_CONST, NONE },
	[V8_SYM_SMI_TAG] = { K_CONST, NONE }, [V8_SYM_SMI_TAG_MASK] = { K_CONST, NONE },
	[V8_SYM_SMI_SHIFT] = { K_CONST, NONE }, [V8_SYM_SMI_VALUE_SHIFT] = { K_CONST, NONE },
	[V8_SYM_FIRST_NONSTRING] = { K_TYPE, L(first_nonstring) },
	[V8_SYM_REP_MASK] = { K_TYPE, L(rep_mask) }, [V8_SYM_SEQ_TAG] = { K_TYPE, L(seq_tag) },
	[V8_SYM_CONS_TAG] = { K_TYPE, L(cons_tag) },
	[V8_SYM_EXTERNAL_TAG] = { K_TYPE, L(external_tag) },
	[V8_SYM_SLICED_TAG] = { K_TYPE, L(sliced_tag) }, [V8_SYM_THIN_TAG] = { K_TYPE, L(thin_tag) },
	[V8_SYM_ENCODING_MASK] = { K_TYPE, L(encoding_mask) },
	[V8_SYM_ONE_BYTE_TAG] = { K_TYPE, L(one_byte_tag) },
	[V8_SYM_TWO_BYTE_TAG] = { K_TYPE, L(two_byte_tag) },
	[V8_SYM_OBJ_MAP] = { K_OFFSET, L(obj_map) }, [V8_SYM_MAP_TYPE_OFF] = { K_OFFSET, L(map_type) },
	[V8_SYM_STR_LENGTH] = { K_OFFSET, L(str_length) },
	[V8_SYM_SEQ1_CHARS] = { K_OFFSET, L(seq1_chars) },
	[V8_SYM_SEQ2_CHARS] = { K_OFFSET, L(seq2_chars) },
	[V8_SYM_CONS_FIRST] = { K_OFFSET, L(cons_first) },
	[V8_SYM_CONS_SECOND] = { K_OFFSET, L(cons_second) },
	[V8_SYM_THIN_ACTUAL] = { K_OFFSET, L(thin_actual) },
	[V8_SYM_SLICED_PARENT] = { K_OFFSET, L(sliced_parent) },
	[V8_SYM_SLICED_OFFSET] = { K_OFFSET, L(sliced_offset) },
	[V8_SYM_EXT_RESOURCE] = { K_OFFSET, L(ext_resource) },
	[V8_SYM_FN_SHARED] = { K_OFFSET, L(fn_shared) }, [V8_SYM_SFI_NAME] = { K_OFFSET, L(sfi_name) },
	[V8_SYM_SFI_SCRIPT] = { K_OFFSET, L(sfi_script) }, [V8_SYM_SFI_DATA] = { K_OFFSET, L(sfi_data) },
	[V8_SYM_SCRIPT_SOURCE] = { K_OFFSET, L(script_source) },
	[V8_SYM_SCRIPT_NAME] = { K_OFFSET, L(script_name) },
	[V8_SYM_SCRIPT_LINE_ENDS] = { K_OFFSET, L(script_line_ends) },
	[V8_SYM_UNCOMPILED_INFERRED] = { K_OFFSET, L(uncompiled_inferred) },
	[V8_SYM_UNCOMPILED_START] = { K_OFFSET, L(uncompiled_start) },
	[V8_SYM_ARRAY_LENGTH] = { K_OFFSET, L(array_length) },
	[V8_SYM_ARRAY_DATA] = { K_OFFSET, L(array_data) },
	[V8_SYM_BYTECODE_DATA] = { K_OFFSET, L(bytecode_data) },
	[V8_SYM_CODE_BYTECODE] = { K_OFFSET, L(code_bytecode) },
	[V8_SYM_SCOPE_NPARAMS] = { K_SLOT, L(scope_nparams) },
	[V8_SYM_SCOPE_NCONTEXT] = { K_SLOT, L(scope_ncontext) },
	[V8_SYM_SCOPE_FIRST_VARS] = { K_SLOT, L(scope_first_vars) },
	[V8_SYM_T_MAP] = { K_TYPE, L(t_map) }, [V8_SYM_T_JSFUNCTION] = { K_TYPE, L(t_jsfunction) },
	[V8_SYM_T_SFI] = { K_TYPE, L(t_sfi) }, [V8_SYM_T_SCRIPT] = { K_TYPE, L(t_script) },
	[V8_SYM_T_SCOPE_INFO] = { K_TYPE, L(t_scope_info) },
	[V8_SYM_T_BYTECODE] = { K_TYPE, L(t_bytecode) }, [V8_SYM_T_CODE] = { K_TYPE, L(t_code) },
	[V8_SYM_T_FIXED_ARRAY] = { K_TYPE, L(t_fixed_array) },
	[V8_SYM_T_BYTE_ARRAY] = { K_TYPE, L(t_byte_array) },
	[V8_SYM_T_INTERP_DATA] = { K_TYPE, L(t_interp_data) },
	[V8_SYM_T_DEBUG_INFO] = { K_TYPE, L(t_debug_info) },
	[V8_SYM_T_ODDBALL] = { K_TYPE, L(t_oddball) },
	[V8_SYM_T_UNCOMPILED1] = { K_TYPE, L(t_uncompiled[0]) },
	[V8_SYM_T_UNCOMPILED2] = { K_TYPE, L(t_uncompiled[1]) },
	[V8_SYM_T_UNCOMPILED3] = { K_TYPE, L(t_uncompiled[2]) },
	[V8_SYM_T_UNCOMPILED4] = { K_TYPE, L(t_uncompiled[3]) },
	[V8_SYM_FP_FUNCTION] = { K_FP, L(fp_function) }, [V8_SYM_FP_CONTEXT] = { K_FP, L(fp_context) },
	[V8_SYM_FP_BYTECODE_ARRAY] = { K_FP, L(fp_bytecode_array) },
	[V8_SYM_FP_BYTECODE_OFFSET] = { K_FP, L(fp_bytecode_offset) },
};

/*
 * The tagging this reader is written for: 64-bit words, no pointer
 * compression, heap objects tagged 01 in the low two bits, Smis with a
 * clear low bit and their value in the upper 32 bits.
 */
static const struct {
	enum v8_sym sym;
	int32_t want;
	const char *what;
} consts[] = {
	{ V8_SYM_TAGGED_SIZE, 8, "tagged values of 8 bytes (4: pointer compression, not read)" },
	{ V8_SYM_POINTER_SIZE, 8, "8-byte pointers" },
	{ V8_SYM_HEAP_TAG, 1, "heap objects tagged 1" },
	{ V8_SYM_HEAP_TAG_MASK, 3, "a heap tag mask of 3" },
	{ V8_SYM_SMI_TAG, 0, "Smis tagged 0" },
	{ V8_SYM_SMI_TAG_MASK, 1, "a Smi tag mask of 1" },
	{ V8_SYM_SMI_SHIFT, 31, "Smis shifted by 31 past their tag (their value in the upper half)" },
	{ V8_SYM_SMI_VALUE_SHIFT, 1, "a Smi tag of 1 bit" },
};

/*
 * Hard-coded, per release: what the v8dbg_* symbols do not export.  Each
 * was read in V8's sources for the release and checked on a live node
 * (tests/unit/test_v8.c), with the symbols' values it is consistent with:
 *
 *  - BytecodeArray::source_position_table (src/objects/code.tq's
 *    BytecodeArray: FixedArrayBase's map and length, then constant_pool,
 *    handler_table, source_position_table, frame_size, parameter_size,
 *    incoming_new_target_or_generator_register (int32 each),
 *    osr_urgency_and_install_target (int16), then the bytes): 32, which
 *    is class_BytecodeArray__data (54) less 2 + 3 * 4 + 8.
 *  - InterpreterData::bytecode_array (src/objects/shared-function-info.tq:
 *    a Struct, its first field after the map): 8.
 *  - ByteArray's bytes: after FixedArrayBase's map and length, 16 (the
 *    same header as class_FixedArray__data).
 *  - ScopeInfo (src/objects/scope-info.tq): after the map, flags (a Smi of
 *    ScopeFlags), parameter_count, context_local_count (the
 *    scopeinfo_idx_* symbols: 0, 1, 2; the variable part from slot 3),
 *    then context_local_names (context_local_count of them when fewer than
 *    kScopeInfoMaxInlinedLocalNamesSize, 75; else one hash table),
 *    context_local_infos (context_local_count), saved_class_variable_info
 *    (1 if has_saved_class_variable_index), function_variable_info (name,
 *    slot index: 2 if function_variable is not NONE), inferred_function_name
 *    (1 if has_inferred_function_name), position_info (start, end: for a
 *    function scope).  ScopeFlags' bits (scope-info.tq's bitfield struct):
 *    scope_type 0-3 (FUNCTION_SCOPE 2), sloppy_eval 4, language_mode 5,
 *    declaration_scope 6, receiver_variable 7-8, class_scope_has_private_
 *    brand 9, has_saved_class_variable_index 10, has_new_target 11,
 *    function_variable 12-13 (NONE 0), has_inferred_function_name 14.
 *  - ExternalString::resource_data (src/objects/string.tq's ExternalString:
 *    String's map, hash field and length, then resource and resource_data,
 *    both ExternalPointers, 8 bytes without the sandbox, which Node.js does
 *    not build with): class_ExternalString__resource (16) + 8, 24.  It is
 *    resource->data() cached, the characters' address: on node 20,
 *    fs.readFileSync's Script's source (EXTERNAL_ONE_BYTE_STRING_TYPE, 42)
 *    has resource 0x56650c0, node::builtins::fs_resource, a
 *    StaticExternalByteResource whose data (its word at 16) and length
 *    (at 24) are the 0x2807068 and 87199 the string has at 24 and 12.
 *  - kUncachedExternalStringMask and Tag (src/objects/instance-type.h):
 *    bit 4 of a string's type, set when an external string has no
 *    resource_data (its data is resource->data(), a call into C++ this
 *    does not make); it must lie outside the representation and encoding
 *    masks the symbols give.
 */
struct release {
	uint32_t major, minor;
	uint16_t bytecode_positions_from_data; /* source_position_table = data - this */
	uint16_t interp_bytecode, byte_array_data;
	uint16_t ext_data_from_resource; /* resource_data = resource + this */
	uint16_t uncached_mask, uncached_tag;
	uint32_t scope_type_mask, scope_function, saved_class_bit, fnvar_shift, fnvar_mask,
		inferred_bit, inlined_max;
};

static const struct release releases[] = {
	{ 11, 3, 22, 8, 16, 8, 1u << 4, 1u << 4, 0xf, 2, 1u << 10, 12, 3, 1u << 14, 75 },
};

static int read_sym(const struct memsrc *m, uint64_t addr, enum v8_sym k, int32_t *v,
		    struct errbuf *err)
{
	if (!addr)
		return errf(err, -ENOTSUP, "V8 without the symbol %s", v8_sym_names[k]);
	if (memsrc_read(m, addr, v, sizeof(*v)))
		return errf(err, -ENOTSUP, "V8's %s at %#llx unreadable", v8_sym_names[k],
			    (unsigned long long)addr);
	return 0;
}

/* Stores @v at its place in @l, if it is within its kind's bounds. */
static int store(struct v8_layout *l, enum v8_sym k, int32_t v, struct errbuf *err)
{
	enum kind kind = dests[k].kind;
	char *dst = (char *)l + dests[k].dst;
	bool ok;

	switch (kind) {
	case K_VERSION: ok = v >= 0 && v < 10000; break;
	case K_OFFSET: ok = v >= 0 && v < V8_OFFSET_MAX; break;
	case K_TYPE: ok = v >= 0 && v < V8_TYPE_MAX; break;
	case K_SLOT: ok = v >= 0 && v < 64; break;
	case K_FP: ok = v >= -256 && v <= 256 && v % 8 == 0; break;
	default: ok = true; break;
	}
	if (!ok)
		return errf(err, -ENOTSUP, "V8's %s is %d, out of its bounds", v8_sym_names[k], v);
	if (dests[k].dst == NONE)
		return 0;
	if (kind == K_VERSION)
		memcpy(dst, &(uint32_t){ (uint32_t)v }, sizeof(uint32_t));
	else if (kind == K_FP)
		memcpy(dst, &(int16_t){ (int16_t)v }, sizeof(int16_t));
	else
		memcpy(dst, &(uint16_t){ (uint16_t)v }, sizeof(uint16_t));
	return 0;
}

static int check_consts(const struct memsrc *m, const uint64_t *sym, struct errbuf *err)
{
	for (size_t i = 0; i < sizeof(consts) / sizeof(consts[0]); i++) {
		int32_t v;
		int e = read_sym(m, sym[consts[i].sym], consts[i].sym, &v, err);

		if (e)
			return e;
		if (v != consts[i].want)
			return errf(err, -ENOTSUP, "V8's %s is %d: this reads only %s",
				    v8_sym_names[consts[i].sym], v, consts[i].what);
	}
	return 0;
}

/* The release's hard-coded part, or -ENOTSUP naming the version. */
static int hard_coded(struct v8_layout *l, struct errbuf *err)
{
	for (size_t i = 0; i < sizeof(releases) / sizeof(releases[0]); i++) {
		const struct release *r = &releases[i];

		if (r->major != l->major || r->minor != l->minor)
			continue;
		if (l->bytecode_data < r->bytecode_positions_from_data + 8)
			return errf(err, -ENOTSUP, "V8 %u.%u: BytecodeArray's data at %u, too soon",
				    l->major, l->minor, l->bytecode_data);
		if (r->uncached_mask & (l->rep_mask | l->encoding_mask))
			return errf(err, -ENOTSUP, "V8 %u.%u: the uncached bit in its string tags",
				    l->major, l->minor);
		l->bytecode_positions = (uint16_t)(l->bytecode_data - r->bytecode_positions_from_data);
		l->interp_bytecode = r->interp_bytecode;
		l->byte_array_data = r->byte_array_data;
		l->ext_data = (uint16_t)(l->ext_resource + r->ext_data_from_resource);
		l->uncached_mask = r->uncached_mask;
		l->uncached_tag = r->uncached_tag;
		l->scope_type_mask = r->scope_type_mask;
		l->scope_function = r->scope_function;
		l->scope_saved_class_bit = r->saved_class_bit;
		l->scope_fnvar_shift = r->fnvar_shift;
		l->scope_fnvar_mask = r->fnvar_mask;
		l->scope_inferred_bit = r->inferred_bit;
		l->scope_inlined_max = r->inlined_max;
		return 0;
	}
	return errf(err, -ENOTSUP, "V8 %u.%u.%u.%u: a release whose layout this does not know",
		    l->major, l->minor, l->build, l->patch);
}

int v8_layout_read(struct v8_layout *l, const struct memsrc *m, const uint64_t sym[V8_SYM_N],
		   struct errbuf *err)
{
	int e;

	memset(l, 0, sizeof(*l));
	e = check_consts(m, sym, err);
	for (int k = 0; !e && k < V8_SYM_N; k++) {
		int32_t v;

		if (dests[k].kind == K_CONST)
			continue;
		e = read_sym(m, sym[k], (enum v8_sym)k, &v, err);
		if (!e)
			e = store(l, (enum v8_sym)k, v, err);
	}
	if (e)
		return e;
	l->heap_tag = 1;
	l->heap_tag_mask = 3;
	l->smi_shift = 32;
	/* a string's tags must fit their masks, the types of strings below the first other */
	if ((l->seq_tag | l->cons_tag | l->external_tag | l->sliced_tag | l->thin_tag) & ~l->rep_mask ||
	    (l->one_byte_tag | l->two_byte_tag) & ~l->encoding_mask || l->one_byte_tag == l->two_byte_tag ||
	    !l->first_nonstring || l->first_nonstring > 256)
		return errf(err, -ENOTSUP, "V8's string tags do not fit their masks");
	return hard_coded(l, err);
}

/* The process addresses of the symbols of @o, loaded at @bias: -ENOENT without V8's. */
static int v8_symbols(struct elfobj *o, uint64_t bias, uint64_t sym[V8_SYM_N])
{
	struct elfsyms_named s[V8_SYM_N];
	bool any = false;

	for (int k = 0; k < V8_SYM_N; k++)
		s[k] = (struct elfsyms_named){ .name = v8_sym_names[k] };
	if (elfobj_find_dynamic(o, s, V8_SYM_N, NULL))
		return -ENOENT;
	for (int k = 0; k < V8_SYM_N; k++) {
		sym[k] = s[k].found ? bias + s[k].value : 0;
		/* the tagging's are there in every V8 built for debuggers */
		any |= s[k].found && k >= V8_SYM_TAGGED_SIZE;
	}
	return any ? 0 : -ENOENT;
}

/* Whether the file of mapping @v may be a V8's: its name says node (v8_layout.h says why). */
static bool named_node(const struct vma *v)
{
	return v->kind == VMA_FILE && v->path && strstr(procmaps_file_name(v->path), "node");
}

/* Whether @objs holds @o before index @i: an object mapped several times is looked at once. */
static bool seen(struct elfobj *const *objs, size_t i, const struct elfobj *o)
{
	for (size_t k = 0; k < i; k++)
		if (objs[k] == o)
			return true;
	return false;
}

int v8proc_find(struct v8proc **out, uint32_t pid, const struct vma_list *maps,
		struct elfobj *const *objs, struct errbuf *err)
{
	for (size_t i = 0; objs && i < maps->n; i++) {
		const struct vma *v = &maps->v[i];
		uint64_t bias, sym[V8_SYM_N];
		struct v8proc *vp;
		int e;

		if (!objs[i] || !named_node(v) || seen(objs, i, objs[i]) ||
		    elfobj_load_bias(objs[i], v->start, v->offset, &bias) ||
		    v8_symbols(objs[i], bias, sym))
			continue;
		vp = calloc(1, sizeof(*vp));
		if (!vp)
			return -ENOMEM;
		vp->pid = pid;
		vp->mem = procmem_src(pid);
		e = v8_layout_read(&vp->layout, &vp->mem, sym, err);
		if (e) {
			free(vp);
			return e;
		}
		v8_names_init(&vp->names);
		*out = vp;
		return 0;
	}
	return -ENOENT;
}

void v8proc_free(struct v8proc *vp)
{
	if (!vp)
		return;
	v8_names_free(&vp->names);
	free(vp);
}
