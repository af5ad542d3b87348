// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/kallsyms.h"
#include "testlib.h"

static const char crafted_head[] =
	"0000000000000000 A fixed_percpu_data\n"
	"ffffffff81000000 T _text\n"
	"ffffffff81000000 T _stext\n"
	"ffffffff81000100 t local_fn\n"
	"ffffffff81000200 T vfs_read\n"
	"ffffffff81000300 D some_data\n"
	"ffffffff81000400 W weak_fn\n"
	"ffffffff81000500 d data2\n"
	"ffffffff81000600 b bss_sym\n"
	"ffffffff81000700 r ro_sym\n"
	"ffffffff81000800 w weak_lower\n"
	"ffffffff81000900 W alias_weak\n"
	"ffffffff81000900 T alias_b\n"
	"ffffffff81000a00 t __local_alias\n"
	"ffffffff81000a00 t local_alias\n"
	"ffffffff81000b00 T not hex\n"
	"ffffffff8100zb80 T bad_hex\n"
	"1ffffffff81000b90 T too_many_digits\n";
/* Then an over-long line at ...c00 and a 600-character name at ...e00. */
static const char crafted_tail[] =
	"ffffffff81001000 T _etext\n"
	"ffffffffc0002000 t mod2_fn\t[mod_b]\n"
	"ffffffffc0000000 t mod1_fn\t[mod_a]\n"
	"ffffffffc0003000 d mod_data\t[mod_b]\n"
	"ffffffffc0001000 T mod1_fn2\t[mod_a]";

static char *crafted_text(size_t *len)
{
	size_t cap = sizeof(crafted_head) + sizeof(crafted_tail) + 8000, n = 0;
	char *t = malloc(cap);

	n += (size_t)snprintf(t + n, cap - n, "%s", crafted_head);
	n += (size_t)snprintf(t + n, cap - n, "ffffffff81000c00 T ");
	memset(t + n, 'L', 5000);
	n += 5000;
	n += (size_t)snprintf(t + n, cap - n, "\nffffffff81000e00 t ");
	memset(t + n, 'x', 600);
	n += 600;
	n += (size_t)snprintf(t + n, cap - n, "\n%s", crafted_tail);
	*len = n;
	return t;
}

static void expect_sym(const struct ksym_table *t, uint64_t a, const char *name,
		       uint64_t sym_addr, const char *mod, const char *what)
{
	const struct ksym *k = kallsyms_find(t, a);
	char label[160];

	snprintf(label, sizeof(label), "crafted: %s", what);
	CHECK(k && k->name && strcmp(k->name, name) == 0 && k->sym_addr == sym_addr &&
	      (mod ? k->module && strcmp(k->module, mod) == 0 : !k->module),
	      label, "%#" PRIx64 " -> %s+%#" PRIx64 " [%s], expected %s [%s]", a,
	      k && k->name ? k->name : "(null)", k ? a - k->sym_addr : 0,
	      k && k->module ? k->module : "-", name, mod ? mod : "-");
}

static void test_crafted(void)
{
	static const uint64_t q[] = {
		0xffffffff81000204, 0xffffffff81000000, 0xffffffff81000050,
		0xffffffff81000200, 0xffffffff81000204, 0xffffffff81000208,
		0xffffffff81000350, 0xffffffff81000450, 0xffffffff81000650,
		0xffffffff81000850, 0xffffffff81000900, 0xffffffff81000a10,
		0xffffffff81000b50, 0xffffffff81000c10, 0xffffffff81000e01,
		0xffffffff80000000, 0, 0xffffffffc0000010, 0xffffffffc0001800,
		0xffffffffc0002010, 0xffffffffc0003010, 0xffffffff81000204,
	};
	struct errbuf err = { "" };
	struct ksym_table t;
	const struct ksym *k;
	size_t len, i;
	char *text = crafted_text(&len);
	FILE *f = fmemopen(text, len, "r");
	int ret;

	ret = kallsyms_resolve(f, q, sizeof(q) / sizeof(q[0]), &t, &err);
	fclose(f);
	CHECK(ret == 0, "crafted: resolves", "ret %d: %s", ret, err.msg);
	CHECK(t.n == sizeof(q) / sizeof(q[0]) - 2, "crafted: duplicate queries merged",
	      "n = %zu", t.n);
	for (i = 1; i < t.n; i++)
		if (t.syms[i - 1].addr >= t.syms[i].addr)
			break;
	CHECK(i >= t.n, "crafted: table sorted and unique", "at %zu", i);

	expect_sym(&t, 0xffffffff81000000, "_stext", 0xffffffff81000000, NULL,
		   "exact start, aliases: longer name wins like perf");
	expect_sym(&t, 0xffffffff81000050, "_stext", 0xffffffff81000000, NULL,
		   "between symbols");
	expect_sym(&t, 0xffffffff81000200, "vfs_read", 0xffffffff81000200, NULL,
		   "exact start of vfs_read");
	expect_sym(&t, 0xffffffff81000204, "vfs_read", 0xffffffff81000200, NULL,
		   "vfs_read+4");
	expect_sym(&t, 0xffffffff81000208, "vfs_read", 0xffffffff81000200, NULL,
		   "query with no symbol of its own inherits");
	expect_sym(&t, 0xffffffff81000350, "vfs_read", 0xffffffff81000200, NULL,
		   "D symbol ignored");
	expect_sym(&t, 0xffffffff81000450, "weak_fn", 0xffffffff81000400, NULL,
		   "W symbol is a candidate");
	expect_sym(&t, 0xffffffff81000650, "weak_fn", 0xffffffff81000400, NULL,
		   "d and b symbols ignored");
	expect_sym(&t, 0xffffffff81000850, "weak_lower", 0xffffffff81000800, NULL,
		   "w symbol is a candidate, r ignored");
	expect_sym(&t, 0xffffffff81000900, "alias_b", 0xffffffff81000900, NULL,
		   "strong alias beats weak");
	expect_sym(&t, 0xffffffff81000a10, "local_alias", 0xffffffff81000a00, NULL,
		   "fewer underscores wins");
	expect_sym(&t, 0xffffffff81000b50, "local_alias", 0xffffffff81000a00, NULL,
		   "malformed lines ignored");
	expect_sym(&t, 0xffffffff81000c10, "local_alias", 0xffffffff81000a00, NULL,
		   "over-long line skipped");
	k = kallsyms_find(&t, 0xffffffff81000e01);
	CHECK(k && k->name && strlen(k->name) == 511 && k->name[0] == 'x' &&
	      k->sym_addr == 0xffffffff81000e00,
	      "crafted: long name truncated to 511", "len %zu",
	      k && k->name ? strlen(k->name) : 0);
	k = kallsyms_find(&t, 0xffffffff80000000);
	CHECK(k && !k->name && !k->module && k->sym_addr == 0,
	      "crafted: below the first symbol is unresolved", "%s",
	      k && k->name ? k->name : "missing");
	k = kallsyms_find(&t, 0);
	CHECK(k && !k->name, "crafted: address 0 is unresolved", "resolved");
	expect_sym(&t, 0xffffffffc0000010, "mod1_fn", 0xffffffffc0000000, "mod_a",
		   "module symbol listed out of order");
	expect_sym(&t, 0xffffffffc0001800, "mod1_fn2", 0xffffffffc0001000, "mod_a",
		   "module T symbol");
	k = kallsyms_find(&t, 0xffffffff81000204);
	CHECK(k && k->sym_end == 0xffffffff81000400, "crafted: vfs_read ends at weak_fn",
	      "%#" PRIx64, k ? k->sym_end : 0);
	k = kallsyms_find(&t, 0xffffffffc0000010);
	CHECK(k && k->sym_end == 0xffffffffc0001000,
	      "crafted: a module's symbol ends at the next, listed before it", "%#" PRIx64,
	      k ? k->sym_end : 0);
	k = kallsyms_find(&t, 0xffffffffc0003010);
	CHECK(k && k->name && k->sym_end == 0, "crafted: the last symbol has no end",
	      "%#" PRIx64, k ? k->sym_end : 0);
	expect_sym(&t, 0xffffffffc0002010, "mod2_fn", 0xffffffffc0002000, "mod_b",
		   "module symbol listed first");
	expect_sym(&t, 0xffffffffc0003010, "mod2_fn", 0xffffffffc0002000, "mod_b",
		   "module data symbol ignored");
	CHECK(kallsyms_find(&t, 0xffffffff81000201) == NULL,
	      "crafted: find of an address not queried", "found");
	CHECK(t.strings_len <= t.strings_cap, "crafted: string arena bounds", "len > cap");
	kallsyms_free(&t);
	free(text);
}

struct seen_count {
	size_t n, longest, core_text, x511;
};

static void count_seen(void *arg, const struct kallsyms_sym *s)
{
	struct seen_count *c = arg;

	c->n++;
	c->longest = s->name_len > c->longest ? s->name_len : c->longest;
	c->core_text += s->addr && !s->module_len && kallsyms_is_text(s->type);
	c->x511 += s->name_len == 511 && s->name[0] == 'x' && s->name[510] == 'x';
}

/* The pass shows every line it parsed, once, as it names the queries. */
static void test_seen(void)
{
	static const uint64_t q[] = { 0xffffffff81000204, 0xffffffffc0000010 };
	struct seen_count c = { 0 };
	const struct kallsyms_seen seen = { .fn = count_seen, .arg = &c };
	struct errbuf err = { "" };
	struct ksym_table t;
	size_t len;
	char *text = crafted_text(&len);
	FILE *f = fmemopen(text, len, "r");
	int ret = kallsyms_resolve_seen(f, q, 2, &seen, &t, &err);

	fclose(f);
	/* 25 lines: 3 malformed and one over-long passed over */
	CHECK(ret == 0 && c.n == 21 && c.longest == 511 && c.x511 == 1 && c.core_text == 12,
	      "seen: each line parsed shown once, names truncated as answered",
	      "ret %d, %zu seen, longest %zu, %zu core text, %zu of 511 x", ret, c.n, c.longest,
	      c.core_text, c.x511);
	expect_sym(&t, 0xffffffff81000204, "vfs_read", 0xffffffff81000200, NULL,
		   "answers with an observer");
	kallsyms_free(&t);
	free(text);
}

static int resolve_text(const char *text, const uint64_t *q, size_t n,
			struct ksym_table *t, struct errbuf *err)
{
	FILE *f = fmemopen((void *)text, strlen(text) ? strlen(text) : 1, "r");
	int ret;

	if (!f)
		return -errno;
	ret = kallsyms_resolve(f, q, n, t, err);
	fclose(f);
	return ret;
}

static void test_errors(void)
{
	static const uint64_t q[] = { 0xffffffff81000010 };
	struct errbuf err = { "" };
	struct ksym_table t;
	int ret;

	ret = resolve_text("0000000000000000 T _text\n"
			   "0000000000000000 t foo\n"
			   "0000000000000000 t bar\t[mod]\n",
			   q, 1, &t, &err);
	CHECK(ret == -EPERM && strstr(err.msg, "kptr_restrict"),
	      "all-zero addresses: error naming kptr_restrict", "ret %d: %s", ret,
	      err.msg);
	CHECK(t.n == 0 && !t.syms, "all-zero addresses: empty table", "n %zu", t.n);
	kallsyms_free(&t);

	err.msg[0] = '\0';
	ret = resolve_text("\n", q, 1, &t, &err);
	CHECK(ret == -ENODATA && err.msg[0], "empty input: error", "ret %d", ret);
	kallsyms_free(&t);

	ret = resolve_text("ffffffff81000000 T _text\n", q, 0, &t, &err);
	CHECK(ret == 0 && t.n == 0, "no queries: empty table", "ret %d", ret);
	kallsyms_free(&t);
}

static uint64_t lcg(uint64_t *seed)
{
	*seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
	return *seed >> 33;
}

static bool text_type(char c)
{
	return c == 't' || c == 'T' || c == 'w' || c == 'W';
}

/* Symbols in random order, many aliases: the same answers as brute force. */
static void test_random(void)
{
	enum { NSYM = 3000, NQ = 1000 };
	static uint64_t sym[NSYM], q[NQ];
	static char type[NSYM];
	struct errbuf err = { "" };
	struct ksym_table t;
	size_t cap = NSYM * 48, len = 0, i, j, bad = 0;
	char *text = malloc(cap);
	uint64_t seed = 42;
	FILE *f;
	int ret;

	for (i = 0; i < NSYM; i++) {
		sym[i] = 0xffffffff81000000ull + (lcg(&seed) % 0x20000) * 16;
		type[i] = "tTdWwbr"[lcg(&seed) % 7];
		len += (size_t)snprintf(text + len, cap - len, "%016" PRIx64 " %c s%zu\n",
					sym[i], type[i], i);
	}
	for (i = 0; i < NQ; i++)
		q[i] = 0xffffffff81000000ull - 0x100 + lcg(&seed) % 0x200200;
	f = fmemopen(text, len, "r");
	ret = kallsyms_resolve(f, q, NQ, &t, &err);
	fclose(f);
	CHECK(ret == 0, "random: resolves", "ret %d: %s", ret, err.msg);
	for (i = 0; ret == 0 && i < NQ; i++) {
		const struct ksym *k = kallsyms_find(&t, q[i]);
		uint64_t best = 0, end = 0;
		size_t idx;

		for (j = 0; j < NSYM; j++) {
			if (text_type(type[j]) && sym[j] <= q[i] && sym[j] > best)
				best = sym[j];
			if (text_type(type[j]) && sym[j] > q[i] && (!end || sym[j] < end))
				end = sym[j];
		}
		/* its end: the next text symbol above the query (so above the symbol) */
		if (!k || k->sym_addr != best || !k->name != !best || (best && k->sym_end != end)) {
			bad++;
			continue;
		}
		/* The name is one of the text symbols at that address. */
		if (best && (sscanf(k->name, "s%zu", &idx) != 1 || idx >= NSYM ||
			     sym[idx] != best || !text_type(type[idx])))
			bad++;
	}
	CHECK(ret == 0 && bad == 0, "random: matches brute force, ends too", "%zu of %d wrong",
	      bad, NQ);
	kallsyms_free(&t);
	free(text);
}

/* The whole of a /proc file (whose size stat does not tell), or NULL. */
static char *snapshot(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	size_t cap = 1 << 20, n = 0, got;
	char *buf = f ? malloc(cap) : NULL;

	while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			char *nb = realloc(buf, cap *= 2);

			if (!nb)
				free(buf);
			buf = nb;
		}
	}
	if (f)
		fclose(f);
	*len = n;
	return buf;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Addresses across the kernel text against an in-memory sorted copy. */
static void test_real_random(FILE *f, const uint64_t *all, size_t nall)
{
	enum { NQ = 2000 };
	static uint64_t q[NQ];
	struct errbuf err = { "" };
	struct ksym_table t;
	uint64_t seed = 7, lo = all[0], span = all[nall - 1] + 0x1000 - all[0];
	size_t i, bad = 0;
	int ret;

	for (i = 0; i < NQ; i++)
		q[i] = lo - 0x10 + ((lcg(&seed) << 31) ^ lcg(&seed)) % (span + 0x10);
	rewind(f);
	ret = kallsyms_resolve(f, q, NQ, &t, &err);
	for (i = 0; ret == 0 && i < NQ; i++) {
		const struct ksym *k = kallsyms_find(&t, q[i]);
		size_t l = 0, h = nall;

		while (l < h) { /* first symbol > q */
			size_t m = l + (h - l) / 2;

			if (all[m] <= q[i])
				l = m + 1;
			else
				h = m;
		}
		if (!k || k->sym_addr != (l ? all[l - 1] : 0) || !k->name != !l)
			bad++;
	}
	CHECK(ret == 0 && bad == 0, "real kallsyms: 2000 addresses match brute force",
	      "ret %d (%s), %zu wrong", ret, err.msg, bad);
	kallsyms_free(&t);
}

static void test_real(void)
{
	struct errbuf err = { "" };
	struct ksym_table t;
	char line[1024];
	uint64_t vfs_read = 0, q, *all = NULL;
	size_t nall = 0, cap = 0;
	bool nonzero = false;
	size_t len = 0;
	/*
	 * One snapshot read by both sides: BPF programs loaded meanwhile (an
	 * agent run beside the test) add symbols between two reads of the file.
	 */
	char *text = snapshot("/proc/kallsyms", &len);
	FILE *f = text ? fmemopen(text, len, "r") : NULL;
	int ret;

	if (!f) {
		T_SKIP("real kallsyms: vfs_read+4", "/proc/kallsyms: %s", strerror(errno));
		T_SKIP("real kallsyms: 2000 addresses match brute force", "as above");
		free(text);
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a;
		char type, name[512];

		if (sscanf(line, "%llx %c %511s", &a, &type, name) != 3)
			continue;
		nonzero |= a != 0;
		if (text_type(type) && a) {
			if (nall == cap) {
				cap = cap ? cap * 2 : 4096;
				all = realloc(all, cap * sizeof(*all));
				if (!all)
					abort();
			}
			all[nall++] = a;
		}
		if ((type == 'T' || type == 't') && strcmp(name, "vfs_read") == 0)
			vfs_read = a;
	}
	if (!nonzero || !vfs_read) {
		fclose(f);
		free(text);
		free(all);
		T_SKIP("real kallsyms: vfs_read+4", "%s",
		       !nonzero ? "addresses hidden by kernel.kptr_restrict (not root?)"
				: "no vfs_read in /proc/kallsyms");
		T_SKIP("real kallsyms: 2000 addresses match brute force", "as above");
		return;
	}
	rewind(f);
	q = vfs_read + 4;
	ret = kallsyms_resolve(f, &q, 1, &t, &err);
	CHECK(ret == 0 && t.n == 1 && t.syms[0].name &&
	      strcmp(t.syms[0].name, "vfs_read") == 0 &&
	      t.syms[0].sym_addr == vfs_read && !t.syms[0].module,
	      "real kallsyms: vfs_read+4", "ret %d: %s -> %s", ret, err.msg,
	      ret == 0 && t.syms[0].name ? t.syms[0].name : "(null)");
	kallsyms_free(&t);

	qsort(all, nall, sizeof(*all), cmp_u64);
	test_real_random(f, all, nall);
	fclose(f);
	free(text);
	free(all);
}

static int range_text(const char *text, const char *name, uint64_t *lo, uint64_t *hi,
		      struct errbuf *err)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int ret;

	if (!f)
		return -errno;
	ret = kallsyms_text_range(f, name, lo, hi, err);
	fclose(f);
	return ret;
}

/* A function's range: to the next text symbol above it, wherever listed. */
static void test_text_range(void)
{
	static const char text[] =
		"ffffffff81000000 T _text\n"
		"ffffffff81000500 t __schedule\t[mod_a]\n" /* a module's: not it */
		"ffffffff81000200 t schedule_tail\n"
		"ffffffff81000100 t __schedule\n"
		"ffffffff81000180 d not_text\n"
		"ffffffff81000100 T __schedule_alias\n"
		"ffffffff81000300 T schedule\n"
		"ffffffff810001c0 t __schedule.cold\n"; /* listed later, still its end */
	struct errbuf err = { "" };
	uint64_t lo = 0, hi = 0;
	int ret;

	ret = range_text(text, "__schedule", &lo, &hi, &err);
	CHECK(ret == 0 && lo == 0xffffffff81000100 && hi == 0xffffffff810001c0,
	      "text range: from the core kernel's symbol to the next text above it",
	      "ret %d (%s) %" PRIx64 "-%" PRIx64, ret, err.msg, lo, hi);
	ret = range_text(text, "__sched", &lo, &hi, &err);
	CHECK(ret == -ENOENT && strstr(err.msg, "__sched"),
	      "text range: a name's prefix is not the name", "ret %d: %s", ret, err.msg);
	ret = range_text(text, "not_text", &lo, &hi, &err);
	CHECK(ret == -ENOENT, "text range: data symbols are not functions", "ret %d", ret);
	ret = range_text("0000000000000000 t __schedule\n0000000000000000 T schedule\n",
			 "__schedule", &lo, &hi, &err);
	CHECK(ret == -ENOENT, "text range: hidden addresses give no range", "ret %d", ret);
	ret = range_text("ffffffff81000100 t __schedule\n", "__schedule", &lo, &hi, &err);
	CHECK(ret == -ENOENT && strstr(err.msg, "end"), "text range: nothing above it, no end",
	      "ret %d: %s", ret, err.msg);
}

int main(void)
{
	T_PLAN(43);
	test_crafted();
	test_seen();
	test_errors();
	test_text_range();
	test_random();
	test_real();
	return T_EXIT();
}
