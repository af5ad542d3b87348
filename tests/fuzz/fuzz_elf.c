// SPDX-License-Identifier: MIT
/*
 * fuzz_elf: any bytes as a whole ELF file, through everything cprof does
 * with an object a process hands it: elfobj (ELF and program headers, build
 * ID notes, symbol tables by address and by name, debuglink) and unwind
 * (section headers, .eh_frame and .debug_frame to rows), from memory and
 * from a file descriptor.
 *
 * Seeds are real binaries and libraries of the machine (tests/fuzz/seed.sh),
 * so the mutator starts from valid headers and corrupts them.
 */
#include <stdint.h>
#include <unistd.h>

#include "elf/elfobj.h"
#include "fuzz_common.h"
#include "unwind/unwind.h"
#include "unwindcheck.h"

/* A debug root and object path that exist nowhere: debuglink is parsed, no file is opened. */
static const struct elfobj_debug_opts no_files = {
	.debug_root = "/nonexistent-cprof-fuzz/debug",
	.path = "/nonexistent-cprof-fuzz/bin/object",
};

static void check_symbols(const struct elfobj *o)
{
	size_t n;
	const struct elfobj_sym *s = elfobj_symbols(o, &n);

	FUZZ_ASSERT(n == elfobj_nsyms(o));
	for (size_t i = 0; i < n; i++) {
		FUZZ_ASSERT(i == 0 || s[i - 1].start < s[i].start);
		/*
		 * A name that could not be read leaves its symbol nameless, never
		 * found: its address has no name, or the entry point's _start
		 * when it lies there (the name an unnamed entry gets).
		 */
		if (!s[i].name) {
			const struct elfobj_sym *f = elfobj_lookup(o, s[i].start);

			FUZZ_ASSERT(!f || (f != &s[i] && f->name && !strcmp(f->name, "_start")));
			continue;
		}
		FUZZ_ASSERT(s[i].name[0]);
		FUZZ_ASSERT(strlen(s[i].name) < 4096);
		/* Sizes may be absurd but lookups must find the symbol itself. */
		FUZZ_ASSERT(elfobj_lookup(o, s[i].start) == &s[i]);
	}
	(void)elfobj_lookup(o, 0);
	(void)elfobj_lookup(o, UINT64_MAX);
}

static void exercise_obj(struct elfobj *o, bool with_opts)
{
	struct errbuf err;
	size_t idlen;
	uint64_t va;

	elfobj_build_id_raw(o, &idlen);
	FUZZ_ASSERT(idlen <= ELFOBJ_BUILD_ID_MAX);
	FUZZ_ASSERT(strlen(elfobj_build_id(o)) == 2 * idlen);
	for (uint64_t off = 0; off < 0x40000; off += 0x1fff)
		(void)elfobj_file_to_vaddr(o, off, &va);
	(void)elfobj_file_to_vaddr(o, UINT64_MAX, &va);
	if (elfobj_load_symbols(o, with_opts ? &no_files : NULL, &err) == 0)
		check_symbols(o);
	/* Idempotent: the second call returns the first result. */
	(void)elfobj_load_symbols(o, NULL, &err);
	/* The dynamic symbols by name, as python.c looks for an interpreter's. */
	(void)elfobj_find_dynamic(o, (struct elfsyms_named[]){ { .name = "_PyRuntime" },
							      { .name = "Py_Version" } },
				  2, &err);
}

static void check_table(const struct unwind_table *t)
{
	for (size_t i = 0; i < t->n; i++) {
		FUZZ_ASSERT(t->ids[i] < t->nrules);
		const struct cprof_unwind_rule *r = unwind_rule(t, i);

		FUZZ_ASSERT(i == 0 || t->pcs[i - 1] < t->pcs[i]);
		FUZZ_ASSERT((r->rules & 15) <= CPROF_CFA_STOP);
		FUZZ_ASSERT((r->rules >> 4) <= CPROF_RBP_INVALID);
		/* the BPF unwinder's lookup (tests/unwindcheck.h) finds each row at its pc */
		const struct cprof_unwind_rule *found = row_at(t, t->base + t->pcs[i]);

		FUZZ_ASSERT(found && memcmp(found, r, sizeof(*r)) == 0);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct unwind_table t;
	struct elfobj *o = NULL;
	struct errbuf err;
	int fd;

	if (elfobj_open_mem(&o, data, size, &err) == 0) {
		exercise_obj(o, false);
		elfobj_free(o);
	}
	/*
	 * unwind_build_mem uses the image in place: give it a private copy
	 * (libFuzzer's buffer is const and checked for writes).
	 */
	uint8_t *copy = malloc(size ? size : 1);

	if (copy) {
		memcpy(copy, data, size);
		if (build_mem(copy, size, &t, &err) == 0) {
			check_table(&t);
			unwind_table_free(&t);
		}
		free(copy);
	}

	/* The same through a file: pread paths, fstat sizes, debuglink. */
	fd = fuzz_memfd(data, size);
	if (fd >= 0) {
		if (build_fd(fd, &t, &err) == 0) {
			check_table(&t);
			unwind_table_free(&t);
		}
		if (elfobj_open(&o, fd, &err) == 0) { /* takes the fd */
			exercise_obj(o, true);
			elfobj_free(o);
		}
	}
	return 0;
}
