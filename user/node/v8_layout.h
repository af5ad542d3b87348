/* SPDX-License-Identifier: MIT */
/*
 * v8_layout: where V8 (Node.js's JavaScript engine) keeps what naming
 * JavaScript frames needs, and the V8 of a process found.
 *
 * A V8 built for post-mortem debuggers (Node.js always is) exports some
 * 530 dynamic symbols "v8dbg_*", each an int whose value is a constant of
 * its layout: a field's offset in its object ("class_Script__name__Object":
 * 16), an instance type ("type_Script__SCRIPT_TYPE": 167), the tagging
 * scheme, a frame slot's offset from fp.  Each is read from the process's
 * memory at the symbol's address, as the JVM's tables are, and bounded:
 * offsets under 4096, types under 65536, the tags the reader is written
 * for.  What the symbols do not say (where a ScopeInfo keeps the function's
 * name and positions, a BytecodeArray its source position table, an
 * InterpreterData its bytecode, an ExternalString its characters' address,
 * which bit marks one "uncached") is written down here for each V8 release
 * that was read (see v8_layout.c, "Hard-coded"); any other release is
 * refused naming its version, never guessed at.  So is a build with pointer
 * compression (TaggedSize 4: Chrome's, Electron's; Node.js's is 8).
 *
 * What BPF must record at sample time for v8_names.h to name a frame later
 * (V8 11.3 on x86-64; the values below are this build's v8dbg_* symbols):
 *
 *  - A JavaScript frame is one whose fp[-8] (off_fp_context) is not a Smi
 *    (a marker frame -- entry, exit, stub, builtin -- keeps its type there
 *    as (type << 1), its low bit clear as a Smi's) and whose fp[-16] (off_fp_function) is a
 *    tagged pointer to an object of a JSFunction type: its map's instance
 *    type (class_Map__instance_type, a u16 at 12) from JS_FUNCTION_TYPE
 *    (2066) to 2081, V8's constructor subtypes of JSFunction (measured
 *    here: a class constructor is 2081, Array 2078; the range's end is
 *    not exported).  BPF records the JSFunction's shared
 *    (class_JSFunction__shared 24), a SharedFunctionInfo's tagged
 *    pointer, after checking that its map says SHARED_FUNCTION_INFO_TYPE
 *    (262): 6 reads in all (fp[-16]; the function's map, its type, its shared;
 *    the SFI's map, its type), which rule out most garbage.
 *  - Interpreted frames (Ignition) keep at fp[-32] (off_fp_bytecode_array)
 *    the BytecodeArray and at fp[-40] (off_fp_bytecode_offset) a Smi that
 *    is NOT the bytecode offset but the offset from the BytecodeArray's
 *    tagged pointer: offset + class_BytecodeArray__data (54) - HeapObjectTag
 *    (1), i.e. offset + 53 (V8's InterpretedFrame::GetBytecodeOffset).
 *    BPF records (Smi - 53), or the raw Smi and the loader subtracts
 *    v8_layout.bytecode_data - heap_object_tag: say which in cprof.h.
 *  - Sparkplug (baseline) frames, which V8 11.3 makes by default
 *    (--sparkplug) for warm functions, have the same layout but keep the
 *    FeedbackVector, a heap object, where the interpreter keeps the
 *    offset: fp[-40] is not a Smi there (tests/unit/test_v8.c checks this
 *    on a live frame).  Their bytecode offset is found from the pc through
 *    the baseline Code's bytecode_offset_table
 *    (class_Code__bytecode_offset_table 24) and the bytecodes' sizes, which
 *    this library does not do yet: BPF should record the SFI with "no
 *    offset" (v8_names then gives the function's start line), or the SFI
 *    and the return address for a later reader.
 *  - Optimized frames (TurboFan, Maglev) have the JSFunction at fp[-16]
 *    too, but fp[-32] and fp[-40] are spill slots, anything at all: an
 *    offset must be taken only when fp[-40] is a Smi AND fp[-32] is a
 *    tagged pointer whose map says BYTECODE_ARRAY_TYPE (191) AND the
 *    offset is below that array's length (class_FixedArrayBase__length, a
 *    Smi at 8): 3 more reads.  Otherwise "no offset".  v8_names checks the
 *    offset against the SFI's own bytecode again and refuses one past it.
 *  - The leaf frame's slot may lag: a bytecode handler keeps the live
 *    offset in a register (InterpreterBytecodeOffsetRegister 9: r9, in the
 *    same raw form) and writes the slot only before it calls out, so a
 *    sample in a handler that did not call names the last call's line.
 */
#ifndef CPROF_V8_LAYOUT_H
#define CPROF_V8_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>

#include "fs/procmem.h"
#include "node/v8_names.h"
#include "util/errbuf.h"

struct elfobj;
struct vma_list;

/* The symbols read, in this order (v8_sym_names[] spells them). */
enum v8_sym {
	/* v8::internal::Version's statics */
	V8_SYM_MAJOR, V8_SYM_MINOR, V8_SYM_BUILD, V8_SYM_PATCH,
	/* tagging */
	V8_SYM_TAGGED_SIZE, V8_SYM_POINTER_SIZE, V8_SYM_HEAP_TAG, V8_SYM_HEAP_TAG_MASK,
	V8_SYM_SMI_TAG, V8_SYM_SMI_TAG_MASK, V8_SYM_SMI_SHIFT, V8_SYM_SMI_VALUE_SHIFT,
	/* strings' instance types */
	V8_SYM_FIRST_NONSTRING, V8_SYM_REP_MASK, V8_SYM_SEQ_TAG, V8_SYM_CONS_TAG,
	V8_SYM_EXTERNAL_TAG, V8_SYM_SLICED_TAG, V8_SYM_THIN_TAG, V8_SYM_ENCODING_MASK,
	V8_SYM_ONE_BYTE_TAG, V8_SYM_TWO_BYTE_TAG,
	/* offsets in objects */
	V8_SYM_OBJ_MAP, V8_SYM_MAP_TYPE_OFF, V8_SYM_STR_LENGTH, V8_SYM_SEQ1_CHARS,
	V8_SYM_SEQ2_CHARS, V8_SYM_CONS_FIRST, V8_SYM_CONS_SECOND, V8_SYM_THIN_ACTUAL,
	V8_SYM_SLICED_PARENT, V8_SYM_SLICED_OFFSET, V8_SYM_EXT_RESOURCE, V8_SYM_FN_SHARED,
	V8_SYM_SFI_NAME, V8_SYM_SFI_SCRIPT, V8_SYM_SFI_DATA, V8_SYM_SCRIPT_SOURCE,
	V8_SYM_SCRIPT_NAME, V8_SYM_SCRIPT_LINE_ENDS, V8_SYM_UNCOMPILED_INFERRED,
	V8_SYM_UNCOMPILED_START, V8_SYM_ARRAY_LENGTH, V8_SYM_ARRAY_DATA, V8_SYM_BYTECODE_DATA,
	V8_SYM_CODE_BYTECODE,
	V8_SYM_SCOPE_NPARAMS, V8_SYM_SCOPE_NCONTEXT, V8_SYM_SCOPE_FIRST_VARS,
	/* instance types */
	V8_SYM_T_MAP, V8_SYM_T_JSFUNCTION, V8_SYM_T_SFI, V8_SYM_T_SCRIPT, V8_SYM_T_SCOPE_INFO,
	V8_SYM_T_BYTECODE, V8_SYM_T_CODE, V8_SYM_T_FIXED_ARRAY, V8_SYM_T_BYTE_ARRAY,
	V8_SYM_T_INTERP_DATA, V8_SYM_T_DEBUG_INFO, V8_SYM_T_ODDBALL,
	V8_SYM_T_UNCOMPILED1, V8_SYM_T_UNCOMPILED2, V8_SYM_T_UNCOMPILED3, V8_SYM_T_UNCOMPILED4,
	/* frame slots, in bytes from fp */
	V8_SYM_FP_FUNCTION, V8_SYM_FP_CONTEXT, V8_SYM_FP_BYTECODE_ARRAY, V8_SYM_FP_BYTECODE_OFFSET,
	V8_SYM_N
};

extern const char *const v8_sym_names[V8_SYM_N];

/* Offsets and types bounds: a value past them is refused, naming its symbol. */
#define V8_OFFSET_MAX 4096
#define V8_TYPE_MAX 65536
#define V8_UNCOMPILED_TYPES 4

struct v8_layout {
	uint32_t major, minor, build, patch;

	/* tagging: a heap object's pointer has (p & heap_tag_mask) == heap_tag */
	uint64_t heap_tag, heap_tag_mask;
	uint32_t smi_shift;            /* SmiShiftSize + SmiValueShift: 32 */

	/* strings: instance type & rep_mask, & encoding_mask */
	uint16_t first_nonstring, rep_mask, seq_tag, cons_tag, external_tag, sliced_tag,
		thin_tag, encoding_mask, one_byte_tag, two_byte_tag;

	/* offsets, in bytes from an object's start (its tagged pointer less heap_tag) */
	uint16_t obj_map, map_type, str_length, seq1_chars, seq2_chars, cons_first,
		cons_second, thin_actual, sliced_parent, sliced_offset, ext_resource, fn_shared,
		sfi_name, sfi_script, sfi_data, script_source, script_name, script_line_ends,
		uncompiled_inferred, uncompiled_start, array_length, array_data, bytecode_data,
		code_bytecode;
	/* ScopeInfo's slots (after its map): its flags are slot 0 */
	uint16_t scope_nparams, scope_ncontext, scope_first_vars;

	/* instance types */
	uint16_t t_map, t_jsfunction, t_sfi, t_script, t_scope_info, t_bytecode, t_code,
		t_fixed_array, t_byte_array, t_interp_data, t_debug_info, t_oddball;
	uint16_t t_uncompiled[V8_UNCOMPILED_TYPES];

	/* frame slots, bytes from fp (negative: below it) */
	int16_t fp_function, fp_context, fp_bytecode_array, fp_bytecode_offset;

	/* Hard-coded for the release (v8_layout.c says where each was found) */
	uint16_t bytecode_positions;   /* BytecodeArray::source_position_table */
	uint16_t interp_bytecode;      /* InterpreterData::bytecode_array */
	uint16_t byte_array_data;      /* ByteArray's bytes: FixedArrayBase's header */
	uint16_t ext_data;             /* ExternalString::resource_data, the characters' address */
	/* an external string's type & uncached_mask == uncached_tag: no resource_data */
	uint16_t uncached_mask, uncached_tag;
	/* ScopeFlags: scope_type's bits, and the bits of the fields before the name */
	uint32_t scope_type_mask, scope_function, scope_saved_class_bit;
	uint32_t scope_fnvar_shift, scope_fnvar_mask, scope_inferred_bit;
	uint32_t scope_inlined_max;    /* kScopeInfoMaxInlinedLocalNamesSize */
};

/*
 * Reads the layout of the V8 whose memory is @m, its symbols at the
 * addresses @sym (0: not exported).  0; -ENOTSUP when a symbol is missing,
 * unreadable or out of its bounds, the tagging is not the one this reads
 * (pointer compression), or the version is not one this knows (@err names
 * the symbol, or the version); -EFAULT: the version unreadable.
 */
int v8_layout_read(struct v8_layout *l, const struct memsrc *m, const uint64_t sym[V8_SYM_N],
		   struct errbuf *err);

/* A process's V8, found. */
struct v8proc {
	uint32_t pid;
	struct memsrc mem;
	struct v8_layout layout;
	struct v8_names names; /* its frames, named once (v8_names.h) */
};

/*
 * Finds the V8 in the mappings @maps (their objects @objs, which may hold
 * NULLs) of process @pid: an object exporting the v8dbg_* symbols, looked
 * for only in objects whose file's name has "node" in it (node, nodejs,
 * libnode.so.108), each once: every process is asked at each of its
 * reads, and reading every library's dynamic symbols each time would cost
 * them all.  0 and *@out set; -ENOENT: no such object exports them;
 * -ENOTSUP: one does but its layout is not one this reads (@err says
 * why); -ENOMEM.
 */
int v8proc_find(struct v8proc **out, uint32_t pid, const struct vma_list *maps,
		struct elfobj *const *objs, struct errbuf *err);

void v8proc_free(struct v8proc *vp);

#endif
