/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * base.bpf.h: what every header of the BPF program builds on.  In BPF, the
 * kernel's types (vmlinux.h) and libbpf's helpers; as plain C (the
 * unwinder's build for the unit tests and the agent's deferred walks,
 * user/unwind/bpfunwind.c), the shim that stands in for both.  Then the
 * contract with the loader (cprof.h), which the maps' values are.
 */
#ifndef CPROF_BASE_BPF_H
#define CPROF_BASE_BPF_H

#ifdef __bpf__
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

/*
 * A setting the loader fixes before load: in .rodata, frozen, so the
 * verifier knows its value and prunes the paths it rules out.
 */
#define CPROF_SETTING const volatile
#else
#include "unwind/bpfshim.h" /* defines CPROF_SETTING: a variable a test sets */
#endif

#include "cprof.h"

/* The errno values helpers return, by name (vmlinux.h has none). */
#ifndef EFAULT
#define EFAULT 14
#endif
#ifndef EBUSY
#define EBUSY 16
#endif
#ifndef EEXIST
#define EEXIST 17
#endif

#endif
