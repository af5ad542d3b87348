// SPDX-License-Identifier: MIT
/*
 * Tests for the kernel entries of bpf/unwind.bpf.h (through the userspace
 * build of the unwinder, tests/bpfunwind.c): the mappings bpf_find_vma
 * found for a process the loader has not read yet, kept sorted for
 * find_mapping(), never written over the loader's entry, bounded, and
 * dropped at exec and exit.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "bpfunwind.h"
#include "cprof.h"
#include "testlib.h"

#define PID 4242
#define KERNEL_ENTRY_MAPS 16 /* bpf/unwind.bpf.h's bound */

static bool sorted(const struct cprof_proc_maps *pm)
{
	for (uint32_t i = 1; i < pm->n; i++)
		if (pm->m[i - 1].start > pm->m[i].start)
			return false;
	return true;
}

/* Mappings found out of address order come out sorted, each findable. */
static void test_sorted(void)
{
	static const uint64_t starts[] = { 0x7f0000030000, 0x550000001000, 0x7f0000010000,
					   0x7f0000020000, 0x560000000000 };
	struct cprof_proc_maps pm;
	size_t n = sizeof(starts) / sizeof(starts[0]), found = 0;
	int rc = 0;

	bpfu_set_proc(PID, NULL);
	for (size_t i = 0; i < n; i++)
		rc |= bpfu_remember(PID, starts[i], starts[i] + 0x1000, starts[i] - 0x100,
				    (uint32_t)i);
	CHECK(rc == 0 && bpfu_entry(PID, &pm) == 0 && pm.n == n &&
		      pm.flags == CPROF_PROC_MAPS_KERNEL && sorted(&pm),
	      "kernel entry: mappings found out of order are kept sorted, flagged",
	      "rc %d, n %u, flags %#x, sorted %d", rc, pm.n, pm.flags, sorted(&pm));
	for (size_t i = 0; i < n; i++) {
		int at = bpfu_find_mapping(&pm, starts[i] + 0x10);

		found += at >= 0 && pm.m[at].start == starts[i] && pm.m[at].file == i &&
			 pm.m[at].bias == starts[i] - 0x100;
	}
	CHECK(found == n, "kernel entry: find_mapping finds each with its file and bias",
	      "%zu of %zu", found, n);
}

/* At most KERNEL_ENTRY_MAPS mappings; the one past them is refused. */
static void test_bounded(void)
{
	struct cprof_proc_maps pm;
	int refused = 0;

	bpfu_set_proc(PID, NULL);
	for (uint64_t i = 0; i <= KERNEL_ENTRY_MAPS; i++)
		refused += bpfu_remember(PID, 0x10000 * (KERNEL_ENTRY_MAPS - i + 1),
					 0x10000 * (KERNEL_ENTRY_MAPS - i + 1) + 0x1000, 0, 1) != 0;
	CHECK(refused == 1 && bpfu_entry(PID, &pm) == 0 && pm.n == KERNEL_ENTRY_MAPS &&
		      sorted(&pm),
	      "kernel entry: bounded at 16 mappings, the 17th refused", "refused %d, n %u",
	      refused, pm.n);
}

/* The loader's entry is never written to, and outlives exit's forget. */
static void test_loader_entry(void)
{
	static struct cprof_proc_maps loader, got;
	int rc;

	memset(&loader, 0, sizeof(loader));
	loader.n = 1;
	loader.m[0] = (struct cprof_proc_map){ .start = 0x1000, .end = 0x2000, .file = 7 };
	bpfu_set_proc(PID, &loader);
	rc = bpfu_remember(PID, 0x5000, 0x6000, 0, 3);
	CHECK(rc == -1 && bpfu_entry(PID, &got) == 0 && got.n == 1 && got.flags == 0 &&
		      got.m[0].file == 7,
	      "kernel entry: none added to the loader's entry", "rc %d, n %u, flags %#x", rc,
	      got.n, got.flags);
	bpfu_forget(PID, false);
	CHECK(bpfu_entry(PID, &got) == 0 && got.n == 1,
	      "exit: the loader's entry is the loader's to drop", "entry gone");
	bpfu_forget(PID, true);
	CHECK(bpfu_entry(PID, &got) == -1, "exec: the loader's entry of the old image dropped",
	      "still there, n %u", got.n);
	bpfu_remember(PID, 0x5000, 0x6000, 0, 3);
	bpfu_forget(PID, false);
	CHECK(bpfu_entry(PID, &got) == -1, "exit: a kernel entry dropped", "still there, n %u",
	      got.n);
}

int main(void)
{
	test_sorted();
	test_bounded();
	test_loader_entry();
	return T_EXIT();
}
