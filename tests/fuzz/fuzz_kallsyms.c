// SPDX-License-Identifier: MIT
/*
 * fuzz_kallsyms: any bytes as the text of /proc/kallsyms, read through a
 * FILE * (fmemopen) exactly as the agent reads the real file.
 *
 * The queries are derived from the text itself (every address that starts
 * a line, and its neighbours), so that mutations of the text move the
 * answers, plus the extremes.  Checked: one entry per distinct query, sorted;
 * a name only with a symbol at or below the query; kallsyms_find agrees.
 * The same pass builds the core kernel's catalog (kcatalog.h): whatever it
 * answers, it answers as the pass does.
 */
#include <inttypes.h>
#include <stdint.h>

#include "fuzz_common.h"
#include "symbols/kallsyms.h"
#include "symbols/kcatalog.h"

#define MAX_QUERIES 4096

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* What the catalog says of each query: nothing, or the pass's answer. */
static void check_catalog(struct kcatalog *cat, const struct ksym_table *t)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct ksym *k = &t->syms[i];
		uint64_t start, end;
		const char *name = kcatalog_find(cat, k->addr, &start, &end);

		if (!name)
			continue;
		FUZZ_ASSERT(k->name && !k->module && !strcmp(name, k->name));
		FUZZ_ASSERT(start == k->sym_addr && end == k->sym_end);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint64_t q[MAX_QUERIES];
	struct kcatalog cat;
	struct kcatalog_build build;
	const struct kallsyms_seen seen = { .fn = kcatalog_build_sym, .arg = &build };
	struct ksym_table t;
	size_t nq = 0;
	FILE *f;
	int ret;

	q[nq++] = 0;
	q[nq++] = UINT64_MAX;
	for (size_t i = 0; i < size && nq + 3 <= MAX_QUERIES; i++) {
		if (i > 0 && data[i - 1] != '\n')
			continue;
		uint64_t a = 0;
		size_t j = i;

		for (; j < size && j - i < 16; j++) {
			int c = data[j], d;

			if (c >= '0' && c <= '9')
				d = c - '0';
			else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
				d = (c | 0x20) - 'a' + 10;
			else
				break;
			a = a << 4 | (uint64_t)d;
		}
		if (j == i)
			continue;
		q[nq++] = a;
		q[nq++] = a + 1;
		q[nq++] = a - 1;
	}

	/* fmemopen of a zero-length buffer fails; an empty file is a case too. */
	f = size ? fmemopen((void *)data, size, "r") : fopen("/dev/null", "r");
	if (!f)
		return 0;
	kcatalog_init(&cat);
	kcatalog_build_start(&build, &cat, 1u << 20);
	ret = kallsyms_resolve_seen(f, q, nq, &seen, &t, NULL);
	kcatalog_build_end(&build, ret == 0);
	FUZZ_ASSERT(cat.mem.peak <= 1u << 20);
	if (ret == 0) {
		size_t distinct = 1;

		qsort(q, nq, sizeof(q[0]), cmp_u64);
		for (size_t i = 1; i < nq; i++)
			distinct += q[i] != q[i - 1];
		FUZZ_ASSERT(t.n == distinct);
		for (size_t i = 0; i < t.n; i++) {
			const struct ksym *k = &t.syms[i];

			FUZZ_ASSERT(i == 0 || t.syms[i - 1].addr < k->addr);
			FUZZ_ASSERT(kallsyms_find(&t, k->addr) == k);
			if (k->name) {
				FUZZ_ASSERT(k->sym_addr <= k->addr);
				FUZZ_ASSERT(strlen(k->name) < 512);
			}
			if (k->module)
				FUZZ_ASSERT(k->name && strlen(k->module) < 64);
		}
		for (size_t i = 0; i < nq; i++)
			FUZZ_ASSERT(kallsyms_find(&t, q[i]) != NULL);
		check_catalog(&cat, &t);
		kallsyms_free(&t);
	}
	kcatalog_free(&cat);
	fclose(f);
	return 0;
}
