// SPDX-License-Identifier: MIT
/*
 * The kernel functions kept across windows: a window inside functions named
 * before reads no kallsyms and names as a pass would; modules changed,
 * passing symbols ([bpf]) and gaps are read again; the bound holds.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksymcache.h"
#include "testlib.h"

/* The kallsyms text the opener hands out, and how often it was asked. */
static const char *text;
static size_t opened;

static FILE *open_text(void)
{
	opened++;
	return fmemopen((void *)text, strlen(text), "r");
}

static const char base[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81000100 T vfs_read\n"
	"ffffffff81000200 t ksys_read\n"
	"ffffffff81000300 T do_syscall_64\n"
	"ffffffff81000400 T _etext\n"
	"ffffffff81800000 T far_after_gap\n"
	"ffffffffa0000000 t bpf_prog_abc_on_exec\t[bpf]\n"
	"ffffffffa0000100 t bpf_prog_def\t[bpf]\n"
	"ffffffffc0000000 t ext4_read\t[ext4]\n"
	"ffffffffc0000400 t ext4_write\t[ext4]\n"
	"ffffffffc0000800 t ext4_end\t[ext4]\n";

/* Resolves @q through @c and without it: the same answers, and how many reads it took. */
static size_t both(struct ksymcache *c, FILE *modules, const uint64_t *q, size_t n, size_t *wrong)
{
	struct ksym_table t, direct;
	struct errbuf err = { "" };
	size_t before = opened;
	FILE *f = fmemopen((void *)text, strlen(text), "r");

	*wrong = 0;
	if (modules)
		rewind(modules);
	if (ksymcache_resolve(c, open_text, modules, q, n, &t, &err) ||
	    kallsyms_resolve(f, q, n, &direct, &err)) {
		*wrong = n;
		fclose(f);
		return opened - before;
	}
	fclose(f);
	for (size_t i = 0; i < n; i++) {
		const struct ksym *a = kallsyms_find(&t, q[i]), *b = kallsyms_find(&direct, q[i]);

		if (!a || !b || !a->name != !b->name || a->sym_addr != b->sym_addr ||
		    (a->name && strcmp(a->name, b->name)) || !a->module != !b->module ||
		    (a->module && strcmp(a->module, b->module))) {
			if ((*wrong)++ < 3)
				printf("# %#" PRIx64 ": %s, a pass says %s\n", q[i],
				       a && a->name ? a->name : "-", b && b->name ? b->name : "-");
		}
	}
	kallsyms_free(&t);
	kallsyms_free(&direct);
	return opened - before;
}

int main(void)
{
	static const uint64_t first[] = { 0xffffffff81000104, 0xffffffff81000250,
					  0xffffffffa0000010, 0xffffffffc0000010 };
	static const uint64_t same_functions[] = { 0xffffffff81000108, 0xffffffff81000100,
						   0xffffffff810002f0, 0xffffffffc00003ff };
	static const uint64_t new_function[] = { 0xffffffff81000104, 0xffffffff81000310 };
	static const uint64_t bpf_again[] = { 0xffffffffa0000020 };
	static const uint64_t gap[] = { 0xffffffff81000500 };
	static const char mods1[] = "ext4 1000000 1 - Live 0xffffffffc0000000\n";
	static const char mods2[] = "ext4 1000000 1 - Live 0xffffffffc0000000\nxfs 2000 0 - Live 0xffffffffc1000000\n";
	FILE *m1 = fmemopen((void *)mods1, sizeof(mods1) - 1, "r");
	FILE *m2 = fmemopen((void *)mods2, sizeof(mods2) - 1, "r");
	struct ksymcache c;
	size_t reads, wrong;

	text = base;
	ksymcache_init(&c);
	reads = both(&c, m1, first, 4, &wrong);
	CHECK(reads == 1 && !wrong, "a first window: one pass, names as a pass gives",
	      "%zu reads, %zu wrong", reads, wrong);
	CHECK(c.st.kept == 3, "a first window: its functions kept, not a [bpf] program's",
	      "%zu kept", c.st.kept);
	reads = both(&c, m1, same_functions, 4, &wrong);
	CHECK(reads == 0 && !wrong, "the same functions again: no pass, the same names",
	      "%zu reads, %zu wrong", reads, wrong);
	reads = both(&c, m1, new_function, 2, &wrong);
	CHECK(reads == 1 && !wrong, "a function not met before: a pass", "%zu reads, %zu wrong",
	      reads, wrong);
	reads = both(&c, m1, bpf_again, 1, &wrong);
	CHECK(reads == 1 && !wrong, "a [bpf] program's address: read each time (programs come and go)",
	      "%zu reads, %zu wrong", reads, wrong);
	reads = both(&c, m1, gap, 1, &wrong);
	reads += both(&c, m1, gap, 1, &wrong);
	CHECK(reads == 2 && !wrong, "past a gap of over KSYMCACHE_SPAN: not kept", "%zu reads", reads);

	/* a module loaded: its functions may be elsewhere now */
	reads = both(&c, m2, same_functions + 3, 1, &wrong);
	CHECK(reads == 1 && !wrong, "modules changed: their functions read again", "%zu reads",
	      reads);
	reads = both(&c, m2, same_functions, 3, &wrong);
	CHECK(reads == 0 && !wrong, "modules changed: the core kernel's kept", "%zu reads", reads);
	ksymcache_free(&c);

	/* A text of many functions: past the bound, answers stay right and it starts afresh. */
	{
		enum { NF = 40000 };
		size_t cap = (size_t)NF * 64, len = 0, bad = 0;
		char *big = malloc(cap);
		uint64_t *q = malloc(NF * sizeof(*q));

		for (size_t i = 0; i < NF; i++) {
			/* long names: the bound is reached well before the end */
			len += (size_t)snprintf(big + len, cap - len,
						"%016" PRIx64 " T function_with_a_long_name_%06zu\n",
						(uint64_t)0xffffffff81000000 + i * 0x40, i);
			q[i] = 0xffffffff81000000 + i * 0x40 + 8;
		}
		text = big;
		ksymcache_init(&c);
		for (size_t k = 0; k < 3; k++) {
			both(&c, NULL, q, NF, &wrong);
			bad += wrong;
		}
		CHECK(!bad && c.budget.peak <= KSYMCACHE_BYTES && c.st.resets >= 1,
		      "40000 functions: right names, within KSYMCACHE_BYTES, started afresh when full",
		      "%zu wrong, peak %" PRIu64 " bytes, %zu resets", bad, c.budget.peak,
		      c.st.resets);
		ksymcache_free(&c);
		free(q);
		free(big);
	}
	fclose(m1);
	fclose(m2);
	return T_EXIT();
}
