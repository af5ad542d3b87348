/* SPDX-License-Identifier: MIT */
/*
 * v8_sfi: a JavaScript function as V8 describes it, its
 * SharedFunctionInfo (SFI), read from a process: its name, where it
 * starts in its script, its script, and the source position of a
 * bytecode offset.
 *
 * An SFI keeps its name and positions in one of two places.  Before the
 * function is first compiled, name_or_scope_info is the name (a String)
 * and function_data an UncompiledData (inferred name, start and end
 * positions); once compiled, name_or_scope_info is the function's
 * ScopeInfo, a variable-length object whose slots depend on its flags
 * (v8_layout.h, "Hard-coded"), and function_data its BytecodeArray
 * (behind an InterpreterData when debugged, a baseline Code once
 * Sparkplug compiled it).  Both are read, each slot checked for the type
 * V8 puts there, so a stale pointer fails rather than names wrongly.
 *
 * The name is V8's own rule (SharedFunctionInfo::DebugName): the
 * function's name, else the name V8 inferred from where it was assigned
 * ("obj.method" for obj.method = function () {}), else "(anonymous)".
 */
#ifndef CPROF_V8_SFI_H
#define CPROF_V8_SFI_H

#include <stddef.h>
#include <stdint.h>

#include "fs/procmem.h"

struct v8_layout;

/* Bytes of a function's name, its NUL included; slots of a ScopeInfo read; a position table. */
#define V8_NAME_MAX 256
#define V8_SCOPE_SLOTS_MAX (1u << 16)
#define V8_POSITIONS_MAX (1u << 20)

struct v8_sfi {
	char name[V8_NAME_MAX]; /* "(anonymous)" when V8 has none */
	uint64_t script;        /* its Script (tagged, type checked); 0: none (builtins, a debugged function's) */
	int32_t start;          /* its start position in the script; -1: unknown */
	uint64_t bytecode;      /* its BytecodeArray (tagged, type checked); 0: not compiled */
};

/*
 * Reads the SFI @sfi (a tagged pointer) into @out.  0; -EINVAL: @sfi is
 * no SFI (its map says otherwise), or a slot holds what V8 never puts
 * there; -E2BIG: a name over V8_NAME_MAX bytes; -ENOTSUP: a name in an
 * uncached external string; -ELOOP; -EFAULT: unreadable.
 */
int v8_sfi_read(const struct v8_layout *l, const struct memsrc *m, uint64_t sfi,
		struct v8_sfi *out);

/*
 * The source position (a character offset in the script) of bytecode
 * offset @offset of the BytecodeArray @bytecode, from its source position
 * table (V8's AbstractCode::SourcePosition): 0 and *@pos; -ERANGE: an
 * offset outside the bytecode; -ENODATA: no table (V8 collects them
 * lazily: a function no stack trace or profiler asked for has none), or
 * no position at or before the offset; -EINVAL: a table that does not
 * decode; -E2BIG: over V8_POSITIONS_MAX bytes; -EFAULT; -ENOMEM.
 */
int v8_bytecode_position(const struct v8_layout *l, const struct memsrc *m, uint64_t bytecode,
			 int32_t offset, int32_t *pos);

/*
 * The same from a table's bytes @t (@n of them): the last JavaScript
 * position whose bytecode offset is at most @offset.  0; -ENODATA; -EINVAL.
 */
int v8_positions_find(const uint8_t *t, size_t n, int32_t offset, int32_t *pos);

#endif
