// SPDX-License-Identifier: MIT
/*
 * Tests for the kernel entries of bpf/unwind.bpf.h (through the userspace
 * build of the unwinder, user/unwind/bpfunwind.c): the mappings bpf_find_vma
 * found for a process the loader has not read yet, kept sorted for
 * find_mapping(), never written over the loader's entry, bounded, and
 * dropped at exec and exit; and the mappings an mmap adds (entry_add() as
 * on_ld_state calls it), to the loader's entry too, over the ones they replace.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "unwind/bpfunwind.h"
#include "cprof.h"
#include "testlib.h"

#define PID 4242
#define KERNEL_ENTRY_MAPS 16 /* bpf/entry.bpf.h's bound */

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

/* The loader's entry as read at exec: the binary and the dynamic loader. */
static void loader_entry_at_exec(struct cprof_proc_maps *pm)
{
	memset(pm, 0, sizeof(*pm));
	pm->n = 2;
	pm->m[0] = (struct cprof_proc_map){ .start = 0x550000001000, .end = 0x550000009000,
					    .bias = 0x550000000000, .file = 1 };
	pm->m[1] = (struct cprof_proc_map){ .start = 0x7f0000100000, .end = 0x7f0000120000,
					    .bias = 0x7f00000ff000, .file = 2 };
	bpfu_set_proc(PID, pm);
}

/* A library mapped after the loader read the process goes into its entry, in order. */
static void test_mmap_loader_entry(void)
{
	static struct cprof_proc_maps pm, got;
	struct cprof_proc_map lib = { .start = 0x7f0000050000, .end = 0x7f0000070000,
				      .bias = 0x7f000004f000, .file = 3 };
	int rc, at;

	loader_entry_at_exec(&pm);
	rc = bpfu_mmap_add(PID, &lib, false);
	at = bpfu_entry(PID, &got) == 0 ? bpfu_find_mapping(&got, lib.start + 0x123) : -1;
	CHECK(rc == 0 && got.n == 3 && got.flags == CPROF_PROC_MAPS_GROWN && sorted(&got) &&
		      at == 1 && got.m[1].file == 3 && got.m[1].bias == lib.bias &&
		      got.m[1].flags == CPROF_MAP_ADDED && got.m[0].file == 1 &&
		      got.m[0].flags == 0 && got.m[2].file == 2 && got.m[2].flags == 0,
	      "mmap: a library mapped after the loader's read joins its entry, sorted, marked added",
	      "rc %d, n %u, flags %#x, found at %d", rc, got.n, got.flags, at);
	rc = bpfu_mmap_add(PID, &lib, false);
	CHECK(rc == 0 && bpfu_entry(PID, &got) == 0 && got.n == 3,
	      "mmap: a mapping the entry has already is not added twice", "rc %d, n %u", rc,
	      got.n);
}

/* A mapping made over others (MAP_FIXED, a library unmapped and another put there) replaces them. */
static void test_mmap_over(void)
{
	static struct cprof_proc_maps pm, got;
	/* over the end of the binary's and the start of libc's */
	struct cprof_proc_map over = { .start = 0x550000008000, .end = 0x7f0000101000,
				       .bias = 0x550000000000, .file = 9 };
	int rc;

	loader_entry_at_exec(&pm);
	rc = bpfu_mmap_add(PID, &over, false);
	CHECK(rc == 0 && bpfu_entry(PID, &got) == 0 && got.n == 1 && got.m[0].file == 9 &&
		      bpfu_find_mapping(&got, 0x550000001000) == -1 &&
		      bpfu_find_mapping(&got, 0x7f0000110000) == -1,
	      "mmap: the mappings a new one is made over leave the entry",
	      "rc %d, n %u, first file %u", rc, got.n, got.m[0].file);
}

/* No entry: one made only for a process announced to the loader; a full one refuses. */
static void test_mmap_bounds(void)
{
	static struct cprof_proc_maps pm, got;
	struct cprof_proc_map lib = { .start = 0x7f0000050000, .end = 0x7f0000070000, .file = 3 };
	int rc, refused = 0;

	bpfu_set_proc(PID, NULL);
	rc = bpfu_mmap_add(PID, &lib, false);
	CHECK(rc == -1 && bpfu_entry(PID, &got) == -1,
	      "mmap: no entry made for a process the loader was not told of", "rc %d", rc);
	rc = bpfu_mmap_add(PID, &lib, true);
	CHECK(rc == 0 && bpfu_entry(PID, &got) == 0 && got.n == 1 &&
		      got.flags == CPROF_PROC_MAPS_KERNEL,
	      "mmap: a kernel entry made for an announced process", "rc %d, n %u, flags %#x",
	      rc, got.n, got.flags);
	memset(&pm, 0, sizeof(pm));
	pm.n = CPROF_MAX_PROC_MAPS;
	for (uint32_t i = 0; i < pm.n; i++)
		pm.m[i] = (struct cprof_proc_map){ .start = 0x10000 * (i + 1),
						   .end = 0x10000 * (i + 1) + 0x1000, .file = 1 };
	bpfu_set_proc(PID, &pm);
	refused += bpfu_mmap_add(PID, &lib, false) != 0;
	lib.start = lib.end = 0x7f0000090000;
	refused += bpfu_mmap_add(PID, &lib, true) != 0;
	CHECK(refused == 2 && bpfu_entry(PID, &got) == 0 && got.n == CPROF_MAX_PROC_MAPS &&
		      got.m[CPROF_MAX_PROC_MAPS - 1].start == pm.m[CPROF_MAX_PROC_MAPS - 1].start,
	      "mmap: a full loader's entry and an empty mapping are refused, the entry unchanged",
	      "refused %d, n %u", refused, got.n);
	bpfu_set_proc(PID, NULL);
}

/*
 * A rewrite interrupted by a sample: the sample's goes through the other
 * copy and leaves the interrupted one as it was; with both in use, none.
 */
static void test_nested_rewrite(void)
{
	static struct cprof_proc_maps pm, got;
	struct cprof_proc_map lib = { .start = 0x7f0000050000, .end = 0x7f0000070000, .file = 3 };
	uint32_t held;
	int rc;

	loader_entry_at_exec(&pm);
	bpfu_edit_slot(0, false);
	/* a first rewrite fills copy 0: three mappings */
	bpfu_mmap_add(PID, &(struct cprof_proc_map){ .start = 0x7f0000030000,
						     .end = 0x7f0000040000, .file = 4 },
		      false);
	held = bpfu_edit_slot(0, true);
	rc = bpfu_mmap_add(PID, &lib, false);
	CHECK(held == 3 && rc == 0 && bpfu_edit_slot(0, true) == held &&
		      bpfu_entry(PID, &got) == 0 && got.n == 4 &&
		      bpfu_find_mapping(&got, lib.start) == 2,
	      "nested rewrite: the copy in use is left alone, the other one serves",
	      "rc %d, copy 0 held %u now %u, n %u", rc, held, bpfu_edit_slot(0, true), got.n);
	bpfu_edit_slot(1, true);
	lib.start = 0x7f0000080000;
	lib.end = 0x7f0000090000;
	rc = bpfu_mmap_add(PID, &lib, false);
	CHECK(rc == -1 && bpfu_entry(PID, &got) == 0 && got.n == 4,
	      "nested rewrite: both copies in use, nothing written", "rc %d, n %u", rc, got.n);
	bpfu_edit_slot(0, false);
	bpfu_edit_slot(1, false);
	bpfu_set_proc(PID, NULL);
}

int main(void)
{
	T_PLAN(15);
	test_sorted();
	test_bounded();
	test_loader_entry();
	test_mmap_loader_entry();
	test_mmap_over();
	test_mmap_bounds();
	test_nested_rewrite();
	return T_EXIT();
}
