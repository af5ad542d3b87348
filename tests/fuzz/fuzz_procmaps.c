// SPDX-License-Identifier: MIT
/*
 * fuzz_procmaps: any bytes as the text of /proc/<pid>/maps.
 *
 * Beyond "no crash", the parser promises (procmaps.h) what procmaps_find()
 * and everything downstream rely on: VMAs sorted and disjoint, each
 * non-empty, paths present exactly for named VMAs and NUL-terminated in the
 * list's own storage, " (deleted)" stripped.
 */
#include <stdint.h>

#include "fuzz_common.h"
#include "fs/procmaps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vma_list l;

	if (procmaps_parse((const char *)data, size, &l, NULL))
		return 0;
	for (size_t i = 0; i < l.n; i++) {
		const struct vma *v = &l.v[i];

		FUZZ_ASSERT(v->start < v->end);
		FUZZ_ASSERT(i == 0 || l.v[i - 1].end <= v->start);
		FUZZ_ASSERT(v->kind == VMA_ANON || v->kind == VMA_FILE || v->kind == VMA_SPECIAL);
		FUZZ_ASSERT((v->path == NULL) == (v->kind == VMA_ANON));
		FUZZ_ASSERT(v->prot <= (VMA_READ | VMA_WRITE | VMA_EXEC | VMA_SHARED));
		if (v->path) {
			size_t n = strlen(v->path);

			FUZZ_ASSERT(n > 0 && n < size);
			FUZZ_ASSERT(!memchr(v->path, '\n', n));
			if (v->kind == VMA_SPECIAL)
				FUZZ_ASSERT(v->path[0] == '[');
		}
		FUZZ_ASSERT(procmaps_find(&l, v->start) == v);
		FUZZ_ASSERT(procmaps_find(&l, v->end - 1) == v);
		if (i + 1 == l.n || l.v[i + 1].start > v->end)
			FUZZ_ASSERT(v->end == 0 || procmaps_find(&l, v->end) == NULL);
	}
	FUZZ_ASSERT(l.n == 0 || l.v[0].start == 0 || procmaps_find(&l, l.v[0].start - 1) == NULL);
	procmaps_free(&l);
	return 0;
}
