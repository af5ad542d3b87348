/* SPDX-License-Identifier: MIT */
/*
 * kernel_btf: what the kernel's BTF says it has, asked before anything is
 * loaded, so that a kernel without what an option needs refuses the run
 * with one line instead of failing half-way through loading.
 */
#ifndef CPROF_KERNEL_BTF_H
#define CPROF_KERNEL_BTF_H

#include "util/errbuf.h"

/* Where the running kernel describes itself. */
#define KERNEL_BTF_PATH "/sys/kernel/btf/vmlinux"

/*
 * Whether the BTF in @path (raw, as @KERNEL_BTF_PATH, or an ELF object's
 * .BTF section) has the tracepoint @tp for BPF programs, i.e. the typedef
 * btf_trace_@tp that tp_btf programs attach by: 0; -ENOTSUP when it has
 * not; another negative errno when @path cannot be read as BTF (-ENOENT:
 * there is none).  One line in @err naming @path for either failure.
 */
int kernel_btf_has_tracepoint(const char *path, const char *tp, struct errbuf *err);

#endif
