// SPDX-License-Identifier: MIT
/*
 * pylayout: prints the offsets cprof-bpf reads in a CPython of one
 * version, from that version's own headers, as a row of
 * user/python/python_layout.c.  Built once per installed version by
 * tools/pylayout.sh; the unit test test_python_layout compares the table
 * with it for every version installed.
 */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <stddef.h>
#include <stdio.h>
#if PY_VERSION_HEX >= 0x030b0000
#include <internal/pycore_frame.h>
#else
#include <frameobject.h>
#endif
#if PY_VERSION_HEX >= 0x03090000
#include <internal/pycore_runtime.h>
#include <internal/pycore_interp.h>
#else
#include <internal/pycore_pystate.h>
#endif

#define O(type, field) ((unsigned)offsetof(type, field))

int main(void)
{
#if PY_VERSION_HEX >= 0x030b0000
	unsigned interp_threads = O(PyInterpreterState, threads.head);
#else
	unsigned interp_threads = O(PyInterpreterState, tstate_head);
#endif
#if PY_VERSION_HEX >= 0x030d0000
	unsigned tstate_frame = O(PyThreadState, current_frame), cframe_frame = 0;
#elif PY_VERSION_HEX >= 0x030b0000
	unsigned tstate_frame = O(PyThreadState, cframe), cframe_frame = O(_PyCFrame, current_frame);
#else
	unsigned tstate_frame = O(PyThreadState, frame), cframe_frame = 0;
#endif
#if PY_VERSION_HEX >= 0x030b0000
	typedef struct _PyInterpreterFrame F;
	unsigned frame_back = O(F, previous), frame_read = sizeof(F);
#if PY_VERSION_HEX >= 0x030d0000
	unsigned frame_code = O(F, f_executable), frame_lasti = O(F, instr_ptr);
#else
	unsigned frame_code = O(F, f_code), frame_lasti = O(F, prev_instr);
#endif
#if PY_VERSION_HEX >= 0x030c0000
	unsigned frame_entry = 0, frame_owner = O(F, owner);
#else
	unsigned frame_entry = O(F, is_entry), frame_owner = O(F, owner);
#endif
	unsigned code_name = O(PyCodeObject, co_qualname), code_lines = O(PyCodeObject, co_linetable);
	unsigned code_bytecode = O(PyCodeObject, co_code_adaptive);
#else
	unsigned frame_back = O(PyFrameObject, f_back), frame_code = O(PyFrameObject, f_code);
	unsigned frame_lasti = O(PyFrameObject, f_lasti), frame_entry = 0, frame_owner = 0;
	unsigned frame_read = O(PyFrameObject, f_lasti) + sizeof(int);
	unsigned code_name = O(PyCodeObject, co_name), code_bytecode = 0;
#if PY_VERSION_HEX >= 0x030a0000
	unsigned code_lines = O(PyCodeObject, co_linetable);
#else
	unsigned code_lines = O(PyCodeObject, co_lnotab);
#endif
#endif
	printf("\t{ 0x%x, { %u, %u, %u, %u, %u, %u, %u, %u, %u, %u, %u, %u, %u, %u },\n"
	       "\t  { %u, %u, %u, %u, %u, %u, %u, %u, %u, %u } },\n",
	       PY_VERSION_HEX >> 16, O(_PyRuntimeState, interpreters.head),
	       O(PyInterpreterState, next), interp_threads, O(PyThreadState, next),
	       O(PyThreadState, interp), O(PyThreadState, thread_id), tstate_frame, cframe_frame,
	       frame_back, frame_code, frame_lasti, frame_entry, frame_owner, frame_read,
	       O(PyCodeObject, co_filename), code_name, O(PyCodeObject, co_firstlineno), code_lines,
	       code_bytecode, (unsigned)sizeof(PyASCIIObject),
	       (unsigned)sizeof(PyCompactUnicodeObject), O(PyASCIIObject, state),
	       O(PyBytesObject, ob_sval), O(PyVarObject, ob_size));
	return 0;
}
