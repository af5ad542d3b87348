/* SPDX-License-Identifier: MIT */
/*
 * demangle: readable names for C++ (Itanium ABI) and Rust (legacy and v0)
 * symbols, e.g. "_ZN2ns4TypeIiE6methodEl" -> "ns::Type<int>::method(long)",
 * and Go's as Go names them ("runtime.goexit.abi0" -> "runtime.goexit").
 *
 * The work is done by libiberty (binutils' and GCC's demangler, the one
 * c++filt, gdb and perf use): it covers the whole Itanium grammar and both
 * Rust schemes, is fuzzed with GCC, and has a recursion limit for hostile
 * input.  Its callback interface writes into our bounded buffer, so nothing
 * is allocated on the heap.
 */
#ifndef CPROF_DEMANGLE_H
#define CPROF_DEMANGLE_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Longest mangled name handed to libiberty.  Its callback demangler keeps
 * its working state on the stack, about 64 bytes per input byte; longer
 * names stay mangled rather than risk a thread's stack.
 */
#define DEMANGLE_MAX_INPUT 4096

/*
 * Writes the demangled form of @sym into @buf (@len > 0 bytes, always
 * NUL-terminated, truncated if need be) and returns its length.  Returns 0
 * and leaves @buf empty when @sym is not a C++ or Rust mangled name or a Go
 * name with an ABI suffix (plain C names such as "main"), cannot be
 * demangled, is too long, or is a Rust v0 name (demangle_is_v0()).
 */
size_t demangle(const char *sym, char *buf, size_t len);

/*
 * Rust v0 names ("_R...") are not demangled by demangle(): libiberty's v0
 * demangler loops as many times as a binder count in the name says, up to
 * 2^64 (an 82-byte name kept c++filt busy for 6 minutes), so one hostile
 * symbol would stall the agent.  demangle_v0() does them too, for a process
 * that is killed when it takes too long (the DWARF worker, dwarfworker.h).
 */
bool demangle_is_v0(const char *sym);
size_t demangle_v0(const char *sym, char *buf, size_t len);

#endif
