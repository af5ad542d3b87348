/* SPDX-License-Identifier: MIT */
/*
 * dwarfproto: what the agent (dwarfworker.c) and its sandboxed DWARF
 * reader (dwarfchild.c) say to each other.
 *
 * The protocol, over a SOCK_STREAM socketpair, in the agent's own byte
 * order (both ends are the same binary):
 *
 *   request   struct req, then for LOOKUP n addresses (u64), for
 *             DEMANGLE arg bytes: n names, each a u16 length and its bytes
 *             OPEN carries its 1 or 2 descriptors as SCM_RIGHTS
 *   reply     struct rep, then rep.len bytes:
 *             HELLO   (sent once the child is sandboxed) a message if rc < 0
 *             OPEN    u64 bytes loaded, then a message if rc < 0
 *             LOOKUP  per address: u8 frames, per frame: i32 line,
 *                     i32 start_line, u16 lengths of name, file, dir
 *                     (NO_STR: none), then their bytes
 *             DEMANGLE per name: u16 length (0: none), its demangled bytes
 *             CLOSE   no reply
 *
 * The child trusts nothing it reads from the files; the agent trusts
 * nothing the child sends: every length is checked against what is left
 * and against the caps the child applies (NAME_CAP, PATH_CAP).
 */
#ifndef CPROF_DWARFPROTO_H
#define CPROF_DWARFPROTO_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/demangle.h"
#include "dwarf/dwarfworker.h"

#define NAME_CAP 4095u /* bytes of a function name sent */
#define PATH_CAP 1023u /* ... of a file or directory */
#define NO_STR   0xffffu
#define FRAMES_CAP DWARFINFO_MAX_FRAMES

enum { REQ_OPEN = 1, REQ_LOOKUP, REQ_CLOSE, REQ_DEMANGLE };

/* A demangling request's names: lengths and bytes. */
#define NAMES_BYTES (DWARFWORKER_NAMES * (2 + DEMANGLE_MAX_INPUT))
#define DEMANGLED_CAP 4095u

struct req {
	uint32_t type, handle;
	uint64_t arg; /* OPEN: max bytes; LOOKUP: max frames */
	uint32_t n;   /* OPEN: descriptors; LOOKUP: addresses */
	uint32_t pad;
};

struct rep {
	int32_t rc;
	uint32_t len;
};

struct slot {
	bool used;
	uint32_t handle;
	struct dwarfinfo *d; /* in the child, or in process */
};

/* Handles name a slot and the child it was opened in: (gen << 8) | slot. */
static inline uint32_t make_handle(uint32_t gen, size_t slot)
{
	return (gen & 0xffffffu) << 8 | (uint32_t)slot;
}

/*
 * argv of a child made with exec_self: { "cprof-bpf", DWARFCHILD_ARGV1,
 * its socket's descriptor, max_bytes, the agent's pid, @child }.
 */
#define DWARFCHILD_ARGV1 "--dwarf-reader"
/* The reader's CPU-time limit (RLIMIT_CPU): one kept for long is retired before it. */
#define DWARFCHILD_CPU_SECS 120
/* The reader's command name, as ps and /proc show it (exec'd from /proc/self/exe it was "exe"). */
#define DWARFCHILD_COMM "cprof-dwarf"

/*
 * The child's life, in the sandbox: enters it (sandbox.c), says hello,
 * then serves requests on SANDBOX_SERVE_FD until the agent closes it.
 * @child counts the children started, for o->child_hook.
 */
void __attribute__((noreturn)) dwarfchild_main(const struct dwarfworker_opts *o, int sock,
					       pid_t parent, unsigned child);

#endif
