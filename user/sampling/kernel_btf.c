// SPDX-License-Identifier: MIT
#include "sampling/kernel_btf.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <bpf/btf.h>

int kernel_btf_has_tracepoint(const char *path, const char *tp, struct errbuf *err)
{
	char name[128];
	struct btf *btf;
	int ret = 0;

	if ((size_t)snprintf(name, sizeof(name), "btf_trace_%s", tp) >= sizeof(name))
		return errf(err, -ENAMETOOLONG, "tracepoint name too long: %.32s...", tp);
	btf = btf__parse(path, NULL);
	if (!btf) {
		int e = errno ? -errno : -EINVAL;

		/* libbpf's -EPROTO: neither raw BTF nor an ELF object with .BTF */
		return errf(err, e, "%s: cannot read BTF: %s", path,
			    e == -EPROTO ? "not BTF" : strerror(-e));
	}
	if (btf__find_by_name_kind(btf, name, BTF_KIND_TYPEDEF) < 0)
		ret = errf(err, -ENOTSUP, "%s has no %s tracepoint (no %s type)", path, tp, name);
	btf__free(btf);
	return ret;
}
