// SPDX-License-Identifier: MIT
/*
 * The kernel functions kept across windows: a window inside functions named
 * before reads no kallsyms and names as a pass would; modules changed,
 * passing symbols ([bpf]) and gaps are read again; the bound holds.  With
 * the catalog: a later window names any core kernel function with no read,
 * exactly as a fresh pass names it (aliases, gaps, ends), and reads only
 * for what it cannot answer; a text it cannot catalog is read as before.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "symbols/ksymcache.h"
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

static const char mods1[] = "ext4 1000000 1 - Live 0xffffffffc0000000\n";
static const char mods2[] = "ext4 1000000 1 - Live 0xffffffffc0000000\n"
			    "xfs 2000 0 - Live 0xffffffffc1000000\n";

static bool same(const struct ksym *a, const struct ksym *b)
{
	return a && b && !a->name == !b->name && a->sym_addr == b->sym_addr &&
	       (!a->name || (a->sym_end == b->sym_end && !strcmp(a->name, b->name))) &&
	       !a->module == !b->module && (!a->module || !strcmp(a->module, b->module));
}

/*
 * Resolves @q through @c and with a fresh kallsyms_resolve(): the same
 * answers (names, starts, ends, modules), and how many reads it took.
 */
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
		printf("# %s\n", err.msg);
		*wrong = n;
		fclose(f);
		return opened - before;
	}
	fclose(f);
	for (size_t i = 0; i < n; i++) {
		const struct ksym *a = kallsyms_find(&t, q[i]), *b = kallsyms_find(&direct, q[i]);

		if (!same(a, b) && (*wrong)++ < 3)
			printf("# %#" PRIx64 ": %s [%#" PRIx64 ", %#" PRIx64 "), a pass says %s "
			       "[%#" PRIx64 ", %#" PRIx64 ")\n", q[i],
			       a && a->name ? a->name : "-", a ? a->sym_addr : 0, a ? a->sym_end : 0,
			       b && b->name ? b->name : "-", b ? b->sym_addr : 0, b ? b->sym_end : 0);
	}
	kallsyms_free(&t);
	kallsyms_free(&direct);
	return opened - before;
}

/* Without a catalog (a run of one window): what was named is kept, the rest read. */
static void test_kept(void)
{
	static const uint64_t first[] = { 0xffffffff81000104, 0xffffffff81000250,
					  0xffffffffa0000010, 0xffffffffc0000010 };
	static const uint64_t same_functions[] = { 0xffffffff81000108, 0xffffffff81000100,
						   0xffffffff810002f0, 0xffffffffc00003ff };
	static const uint64_t new_function[] = { 0xffffffff81000104, 0xffffffff81000310 };
	static const uint64_t bpf_again[] = { 0xffffffffa0000020 };
	static const uint64_t gap[] = { 0xffffffff81000500 };
	FILE *m1 = fmemopen((void *)mods1, sizeof(mods1) - 1, "r");
	FILE *m2 = fmemopen((void *)mods2, sizeof(mods2) - 1, "r");
	struct ksymcache c;
	size_t reads, wrong;

	text = base;
	ksymcache_init(&c, 0);
	reads = both(&c, m1, first, 4, &wrong);
	CHECK(reads == 1 && !wrong, "a first window: one pass, names as a pass gives",
	      "%zu reads, %zu wrong", reads, wrong);
	CHECK(c.st.kept == 3, "a first window: its functions kept, not a [bpf] program's",
	      "%zu kept", c.st.kept);
	reads = both(&c, m1, same_functions, 4, &wrong);
	CHECK(reads == 0 && !wrong, "the same functions again: no pass, the same names",
	      "%zu reads, %zu wrong", reads, wrong);
	reads = both(&c, m1, new_function, 2, &wrong);
	CHECK(reads == 1 && !wrong, "no catalog: a function not met before, a pass",
	      "%zu reads, %zu wrong", reads, wrong);
	CHECK(c.st.catalog_functions == 0 && c.st.catalog_bytes == 0 && !c.st.catalog_none,
	      "no catalog asked: none built", "%zu functions, %" PRIu64 " bytes",
	      c.st.catalog_functions, c.st.catalog_bytes);
	reads = both(&c, m1, bpf_again, 1, &wrong);
	CHECK(reads == 1 && !wrong, "a [bpf] program's address: read each time (programs come and go)",
	      "%zu reads, %zu wrong", reads, wrong);
	reads = both(&c, m1, gap, 1, &wrong);
	reads += both(&c, m1, gap, 1, &wrong);
	CHECK(reads == 2 && !wrong, "no catalog: past a gap of over KSYMCACHE_SPAN, not kept",
	      "%zu reads", reads);

	/* a module loaded: its functions may be elsewhere now */
	reads = both(&c, m2, same_functions + 3, 1, &wrong);
	CHECK(reads == 1 && !wrong, "modules changed: their functions read again", "%zu reads",
	      reads);
	reads = both(&c, m2, same_functions, 3, &wrong);
	CHECK(reads == 0 && !wrong, "modules changed: the core kernel's kept", "%zu reads", reads);
	ksymcache_free(&c);
	fclose(m1);
	fclose(m2);
}

/* With the catalog: core functions never named before cost no read; the rest is read. */
static void test_catalog(void)
{
	static const uint64_t first[] = { 0xffffffff81000104, 0xffffffffa0000010,
					  0xffffffffc0000010 };
	/* none of these named before: starts, insides, the last byte, a gap past _etext */
	static const uint64_t core_new[] = { 0xffffffff81000000, 0xffffffff81000001,
					     0xffffffff81000200, 0xffffffff810002ff,
					     0xffffffff81000310, 0xffffffff81000400,
					     0xffffffff81000500, 0xffffffff817fffff };
	static const uint64_t bpf_again[] = { 0xffffffffa0000020 };
	static const uint64_t module_new[] = { 0xffffffffc0000404 };
	static const uint64_t module_kept[] = { 0xffffffffc0000408, 0xffffffff81000208 };
	static const uint64_t last_core[] = { 0xffffffff81800010 };
	static const uint64_t below_core[] = { 0xffffffff80ffff00 };
	FILE *m1 = fmemopen((void *)mods1, sizeof(mods1) - 1, "r");
	FILE *m2 = fmemopen((void *)mods2, sizeof(mods2) - 1, "r");
	struct ksymcache c;
	size_t reads, wrong, answers;

	text = base;
	ksymcache_init(&c, KSYMCACHE_CATALOG_BYTES);
	reads = both(&c, m1, first, 3, &wrong);
	CHECK(reads == 1 && !wrong && c.st.catalog_functions == 6 && !c.st.catalog_none &&
	      c.st.catalog_bytes > 0 && c.st.catalog_bytes <= KSYMCACHE_CATALOG_BYTES,
	      "catalog: the first pass builds it, all 6 core functions, within its bound",
	      "%zu reads, %zu wrong, %zu functions, %" PRIu64 " bytes, none: %s", reads, wrong,
	      c.st.catalog_functions, c.st.catalog_bytes,
	      c.st.catalog_none ? c.st.catalog_none : "-");
	reads = both(&c, m1, core_new, 8, &wrong);
	/* each function from the catalog once (then kept), the gap's each time */
	CHECK(reads == 0 && !wrong && c.st.catalog_answers == 6,
	      "catalog: core functions never named, a gap, past _etext: no read, as a pass names them",
	      "%zu reads, %zu wrong, %zu answers", reads, wrong, c.st.catalog_answers);
	answers = c.st.catalog_answers;
	reads = both(&c, m1, core_new, 8, &wrong);
	CHECK(reads == 0 && !wrong && c.st.catalog_answers - answers == 3,
	      "catalog: what it named is kept (only the gap's 3, over KSYMCACHE_SPAN, asked again)",
	      "%zu reads, %zu wrong, %zu answers", reads, wrong, c.st.catalog_answers - answers);
	reads = both(&c, m1, bpf_again, 1, &wrong);
	CHECK(reads == 1 && !wrong, "catalog: a [bpf] program's address still read",
	      "%zu reads, %zu wrong", reads, wrong);
	reads = both(&c, m1, module_new, 1, &wrong);
	CHECK(reads == 1 && !wrong, "catalog: a module's function not met before still read",
	      "%zu reads, %zu wrong", reads, wrong);
	reads = both(&c, m1, module_kept, 2, &wrong);
	CHECK(reads == 0 && !wrong, "catalog: a module's function kept is not read again",
	      "%zu reads, %zu wrong", reads, wrong);
	reads = both(&c, m2, module_kept, 2, &wrong);
	CHECK(reads == 1 && !wrong, "catalog: modules changed, their functions read again",
	      "%zu reads, %zu wrong", reads, wrong);
	reads = both(&c, m2, last_core, 1, &wrong);
	reads += both(&c, m2, below_core, 1, &wrong);
	CHECK(reads == 2 && !wrong,
	      "catalog: from the last core symbol up and below the first: read (modules may be there)",
	      "%zu reads, %zu wrong", reads, wrong);
	CHECK(c.st.catalog_functions == 6, "catalog: built once for the run", "%zu functions",
	      c.st.catalog_functions);
	ksymcache_free(&c);
	fclose(m1);
	fclose(m2);
}

/* Aliases, types, hidden and malformed lines as test_kallsyms' crafted text has them. */
static const char crafted[] =
	"0000000000000000 A fixed_percpu_data\n"
	"0000000000000000 t hidden_zero\n"
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
	"ffffffff81000900 t alias_local_longer\n"
	"ffffffff81000a00 t __local_alias\n"
	"ffffffff81000a00 t local_alias\n"
	"ffffffff81000a00 t _local_alias_longer\n"
	"ffffffff81000b00 T not hex\n"
	"ffffffff8100zb80 T bad_hex\n"
	"1ffffffff81000b90 T too_many_digits\n"
	"ffffffff81000c00 T first_of_equals\n"
	"ffffffff81000c00 T second_of_equal\n"
	"ffffffff81000c00 T third_of_equals\n"
	"ffffffff81000d00 T _etext\n"
	"ffffffff81000d00 T _etext_alias_later\n"
	"ffffffff81000f00 T past_etext\n"
	"ffffffff82000000 T __init_begin\n"
	"ffffffffc0002000 t mod2_fn\t[mod_b]\n"
	"ffffffffc0000000 t mod1_fn\t[mod_a]\n"
	"ffffffffa0000000 t bpf_prog_1\t[bpf]\n"
	"ffffffffc0003000 d mod_data\t[mod_b]\n";

/* Queries in [@lo, @hi) about each address of @t's lines: it, the bytes around it, and beyond. */
static size_t queries_around(const char *t, uint64_t lo, uint64_t hi, uint64_t *q, size_t max)
{
	size_t n = 0;

	for (const char *p = t; *p && n + 4 <= max; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : "") {
		uint64_t a = strtoull(p, NULL, 16);
		const uint64_t near[] = { a, a - 1, a + 1, a + 0x80 };

		for (size_t i = 0; i < 4; i++)
			if (near[i] >= lo && near[i] < hi)
				q[n++] = near[i];
	}
	return n;
}

static void test_catalog_crafted(void)
{
	/* an over-long line (not kallsyms) and a name over KSYM_NAME_LEN, after the head */
	static char big[sizeof(crafted) + 8192];
	static const uint64_t one = 0xffffffff81000204;
	uint64_t q[256], top[] = { 0xffffffff82000000, 0xffffffff82000010 };
	struct ksymcache c;
	size_t n, reads, wrong, len;

	len = (size_t)snprintf(big, sizeof(big), "%.*s", (int)(strstr(crafted, "ffffffff81000d00") -
								crafted), crafted);
	len += (size_t)snprintf(big + len, sizeof(big) - len, "ffffffff81000c80 T ");
	memset(big + len, 'L', 5000);
	len += 5000;
	len += (size_t)snprintf(big + len, sizeof(big) - len, "\nffffffff81000ce0 t ");
	memset(big + len, 'x', 600);
	len += 600;
	snprintf(big + len, sizeof(big) - len, "\n%s", strstr(crafted, "ffffffff81000d00"));
	text = big;
	ksymcache_init(&c, KSYMCACHE_CATALOG_BYTES);
	reads = both(&c, NULL, &one, 1, &wrong);
	CHECK(reads == 1 && !wrong && c.st.catalog_functions > 0,
	      "catalog crafted: built by the first pass", "%zu reads, %zu wrong, none: %s", reads,
	      wrong, c.st.catalog_none ? c.st.catalog_none : "-");
	n = queries_around(big, 0xffffffff81000000, 0xffffffff82000000, q, 256);
	reads = both(&c, NULL, q, n, &wrong);
	CHECK(reads == 0 && !wrong && n > 80,
	      "catalog crafted: aliases, weak and local, equal addresses, data, bad lines, a 600-byte "
	      "name, a gap past _etext: no read, as a pass names them",
	      "%zu queries, %zu reads, %zu wrong", n, reads, wrong);
	reads = both(&c, NULL, top, 2, &wrong);
	CHECK(reads == 1 && !wrong, "catalog crafted: the last core symbol and above are read",
	      "%zu reads, %zu wrong", reads, wrong);
	ksymcache_free(&c);
}

static uint64_t lcg(uint64_t *seed)
{
	*seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
	return *seed >> 33;
}

/*
 * A sorted core of @nsym lines at random steps (a third of them aliases),
 * of every type, names with 0-2 leading underscores, then modules' text.
 * Its lowest and highest core text address in @lo, @hi.
 */
static char *random_text(size_t nsym, uint64_t seed, uint64_t *lo, uint64_t *hi)
{
	size_t cap = nsym * 64 + 256, len = 0;
	char *t = malloc(cap);
	uint64_t a = 0xffffffff81000000;

	*lo = *hi = 0;
	for (size_t i = 0; i < nsym; i++) {
		char type = "tTdWwbrtT"[lcg(&seed) % 9];

		a += (lcg(&seed) % 3) * 16;
		len += (size_t)snprintf(t + len, cap - len, "%016" PRIx64 " %c %.*ss%zu_%" PRIu64 "\n",
					a, type, (int)(lcg(&seed) % 3), "__", i, lcg(&seed) % 1000);
		if (type == 't' || type == 'T' || type == 'w' || type == 'W') {
			*lo = *lo ? *lo : a;
			*hi = a;
		}
	}
	snprintf(t + len, cap - len,
		 "ffffffffc0000000 t m_fn\t[m]\nffffffffc0000100 T m_fn2\t[m]\n"
		 "ffffffffa0000000 t bpf_prog_x\t[bpf]\n");
	return t;
}

/* Random aliases and types: every answer inside the core is the catalog's and a pass's. */
static void test_catalog_random(void)
{
	enum { NSYM = 4000, NQ = 3000 };
	static uint64_t q[NQ];
	uint64_t lo, hi, seed = 11, one = 0xffffffffc0000004;
	struct ksymcache c;
	size_t reads, wrong, bad = 0, reads_all = 0;

	for (int round = 0; round < 3; round++) {
		text = random_text(NSYM, 1000 + (uint64_t)round, &lo, &hi);
		ksymcache_init(&c, KSYMCACHE_CATALOG_BYTES);
		reads = both(&c, NULL, &one, 1, &wrong);
		bad += wrong + (reads != 1) + !c.st.catalog_functions;
		for (size_t i = 0; i < NQ; i++)
			q[i] = lo + lcg(&seed) % (hi - lo);
		reads_all += both(&c, NULL, q, NQ, &wrong);
		bad += wrong;
		ksymcache_free(&c);
		free((void *)text);
	}
	CHECK(!bad && !reads_all,
	      "catalog random: 3 texts of 4000 lines, 3000 addresses each: no read, as a pass",
	      "%zu wrong, %zu reads", bad, reads_all);
}

/* Texts the catalog cannot answer for: none built, the reason kept, names read as before. */
static void test_catalog_refused(void)
{
	static const char unsorted[] =
		"ffffffff81000000 T _stext\n"
		"ffffffff81000300 T late\n"
		"ffffffff81000100 T early\n"
		"ffffffff81000400 T _etext\n";
	static const char module_inside[] =
		"ffffffff81000000 T _stext\n"
		"ffffffff81000100 T vfs_read\n"
		"ffffffff81000400 T _etext\n"
		"ffffffff81000200 t mod_fn\t[mod]\n";
	static const char module_before[] =
		"ffffffff80000000 t mod_lo\t[mod]\n"
		"ffffffff82000000 t mod_hi\t[mod]\n"
		"ffffffff81000000 T _stext\n"
		"ffffffff81000100 T vfs_read\n"
		"ffffffff81000400 T _etext\n";
	static const char modules_apart[] =
		"ffffffffc0000000 t mod_before\t[mod]\n"
		"ffffffff81000000 T _stext\n"
		"ffffffff81000100 T vfs_read\n"
		"ffffffff81000400 T _etext\n"
		"ffffffff80000000 t mod_below\t[mod]\n"
		"ffffffff81000400 t at_etext\t[bpf]\n";
	static const char one_function[] = "ffffffff81000000 T _stext\n";
	static const struct {
		const char *text, *why, *what;
		bool built;
	} cases[] = {
		{ unsorted, "address order", "core text out of order", false },
		{ module_inside, "module", "a module's function among the core's", false },
		{ module_before, "module", "modules listed first, around the core", false },
		{ modules_apart, NULL, "modules below, above and at the top: apart", true },
		{ one_function, "no core", "one core function", false },
	};
	static const uint64_t first[] = { 0xffffffff81000004 }, later[] = { 0xffffffff81000108 };

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ksymcache c;
		size_t reads, wrong, w2;
		char name[160];

		text = cases[i].text;
		ksymcache_init(&c, KSYMCACHE_CATALOG_BYTES);
		reads = both(&c, NULL, first, 1, &wrong);
		reads += both(&c, NULL, later, 1, &w2);
		snprintf(name, sizeof(name), "catalog: %s: %s", cases[i].what,
			 cases[i].built ? "built, the next window reads nothing"
					: "none, the reason kept, the next window read");
		CHECK(!wrong && !w2 && reads == (cases[i].built ? 1u : 2u) &&
		      !c.st.catalog_functions == !cases[i].built &&
		      (cases[i].built ? !c.st.catalog_none
				      : c.st.catalog_none && strstr(c.st.catalog_none, cases[i].why)),
		      name, "%zu reads, %zu wrong, %zu functions, none: %s", reads, wrong + w2,
		      c.st.catalog_functions, c.st.catalog_none ? c.st.catalog_none : "-");
		ksymcache_free(&c);
	}
}

/* A pass that fails (addresses hidden) builds nothing; the next window's pass builds it. */
static void test_catalog_after_failure(void)
{
	static const char hidden[] = "0000000000000000 T _stext\n0000000000000000 T vfs_read\n";
	static const uint64_t q[] = { 0xffffffff81000104 }, q2[] = { 0xffffffff81000204 };
	struct ksym_table t;
	struct errbuf err = { "" };
	struct ksymcache c;
	size_t reads, wrong;
	int ret;

	text = hidden;
	ksymcache_init(&c, KSYMCACHE_CATALOG_BYTES);
	ret = ksymcache_resolve(&c, open_text, NULL, q, 1, &t, &err);
	kallsyms_free(&t);
	CHECK(ret == -EPERM && !c.st.catalog_functions && c.st.catalog_none,
	      "catalog: a pass that failed builds none", "ret %d, %zu functions", ret,
	      c.st.catalog_functions);
	text = base;
	reads = both(&c, NULL, q, 1, &wrong);
	reads += both(&c, NULL, q2, 1, &wrong);
	CHECK(reads == 1 && !wrong && c.st.catalog_functions == 6 && !c.st.catalog_none,
	      "catalog: the next pass builds it", "%zu reads, %zu functions", reads,
	      c.st.catalog_functions);
	ksymcache_free(&c);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/*
 * @nf functions of many names (a few over a hundred characters), and a
 * query inside each: @q.
 */
static char *many_functions(size_t nf, uint64_t *q)
{
	static const char *const words[] = { "tcp", "v4", "do", "sys", "read", "write", "ext4",
					     "mm", "page", "fault", "sched", "irq", "handle",
					     "rcu", "core", "bpf", "prog", "run", "net", "rx" };
	size_t cap = nf * 200, len = 0;
	char *t = malloc(cap);
	uint64_t seed = 5, a = 0xffffffff81000000;

	for (size_t i = 0; i < nf; i++) {
		size_t words_in = 1 + lcg(&seed) % (i % 997 ? 5 : 30);

		len += (size_t)snprintf(t + len, cap - len, "%016" PRIx64 " %c ", a,
					"tTtTw"[lcg(&seed) % 5]);
		for (size_t w = 0; w < words_in; w++)
			len += (size_t)snprintf(t + len, cap - len, "%s_", words[lcg(&seed) % 20]);
		len += (size_t)snprintf(t + len, cap - len, "%zu\n", i);
		q[i] = a + lcg(&seed) % 0x40;
		a += 0x40 + 0x10 * (lcg(&seed) % 8);
	}
	snprintf(t + len, cap - len, "%016" PRIx64 " T _end_of_text\n", a);
	return t;
}

/* Every function of a large text through the compressed blocks and back. */
static void test_catalog_large(void)
{
	enum { NF = 50000 };
	uint64_t *q = malloc(NF * sizeof(*q)), one;
	struct ksymcache c;
	size_t reads, wrong, reads2, wrong2;
	double t0, t1, t2;
	FILE *f;
	struct ksym_table t;
	struct errbuf err = { "" };

	text = many_functions(NF, q);
	one = q[0];
	/* a pass alone, to tell what the build adds */
	f = fmemopen((void *)text, strlen(text), "r");
	t0 = now_ms();
	kallsyms_resolve(f, &one, 1, &t, &err);
	t1 = now_ms();
	fclose(f);
	kallsyms_free(&t);
	ksymcache_init(&c, KSYMCACHE_CATALOG_BYTES);
	reads = both(&c, NULL, &one, 1, &wrong);
	t2 = now_ms();
	printf("# %d functions, %zu bytes of text: a pass %.1f ms, a pass with the catalog's "
	       "build %.1f ms (both with a pass of the test's own); catalog %" PRIu64
	       " bytes, peak %" PRIu64 "\n",
	       NF, strlen(text), t1 - t0, t2 - t1 - (t1 - t0), c.st.catalog_bytes,
	       c.catalog.mem.peak);
	reads2 = both(&c, NULL, q, NF, &wrong2);
	CHECK(reads == 1 && !wrong && reads2 == 0 && !wrong2 && c.st.catalog_functions == NF + 1,
	      "catalog: 50000 functions, every name back from the blocks as a pass gives it",
	      "%zu + %zu reads, %zu + %zu wrong, %zu functions", reads, reads2, wrong, wrong2,
	      c.st.catalog_functions);
	CHECK(c.catalog.mem.peak <= KSYMCACHE_CATALOG_BYTES && c.budget.peak <= KSYMCACHE_BYTES,
	      "catalog: 50000 functions, within KSYMCACHE_CATALOG_BYTES (build included) and "
	      "the kept ones within KSYMCACHE_BYTES",
	      "catalog peak %" PRIu64 ", kept peak %" PRIu64, c.catalog.mem.peak, c.budget.peak);
	ksymcache_free(&c);

	/* the same over a bound it does not fit: no catalog, and reads as before */
	ksymcache_init(&c, 256u << 10);
	reads = both(&c, NULL, &one, 1, &wrong);
	reads2 = both(&c, NULL, q, NF, &wrong2);
	CHECK(reads == 1 && reads2 == 1 && !wrong && !wrong2 && !c.st.catalog_functions &&
	      c.st.catalog_none && strstr(c.st.catalog_none, "bound") &&
	      c.catalog.mem.peak <= (256u << 10),
	      "catalog over its bound: none (the reason kept, the bound held), names read as before",
	      "%zu + %zu reads, %zu wrong, %zu functions, peak %" PRIu64 ", none: %s", reads,
	      reads2, wrong + wrong2, c.st.catalog_functions, c.catalog.mem.peak,
	      c.st.catalog_none ? c.st.catalog_none : "-");
	ksymcache_free(&c);
	free((void *)text);
	free(q);
}

/* A text of many functions: past the kept ones' bound, answers stay right and it starts afresh. */
static void test_bound(void)
{
	enum { NF = 40000 };
	size_t cap = (size_t)NF * 64, len = 0, bad = 0, wrong;
	char *big = malloc(cap);
	uint64_t *q = malloc(NF * sizeof(*q));
	struct ksymcache c;

	for (size_t i = 0; i < NF; i++) {
		/* long names: the bound is reached well before the end */
		len += (size_t)snprintf(big + len, cap - len,
					"%016" PRIx64 " T function_with_a_long_name_%06zu\n",
					(uint64_t)0xffffffff81000000 + i * 0x40, i);
		q[i] = 0xffffffff81000000 + i * 0x40 + 8;
	}
	text = big;
	for (int with = 0; with < 2; with++) {
		ksymcache_init(&c, with ? KSYMCACHE_CATALOG_BYTES : 0);
		for (size_t k = 0; k < 3; k++) {
			both(&c, NULL, q, NF, &wrong);
			bad += wrong;
		}
		CHECK(!bad && c.budget.peak <= KSYMCACHE_BYTES && c.st.resets >= 1,
		      with ? "40000 functions, with the catalog: right names, kept ones within "
			     "KSYMCACHE_BYTES, started afresh when full"
			   : "40000 functions: right names, within KSYMCACHE_BYTES, started afresh "
			     "when full",
		      "%zu wrong, peak %" PRIu64 " bytes, %zu resets", bad, c.budget.peak,
		      c.st.resets);
		ksymcache_free(&c);
	}
	free(q);
	free(big);
}

/* This host's kallsyms, when it shows addresses: the catalog's size and cost here. */
static FILE *open_proc(void)
{
	opened++;
	return fopen("/proc/kallsyms", "r");
}

static void test_catalog_real(void)
{
	enum { NQ = 4000 };
	static uint64_t q[NQ];
	struct ksym_table t, direct;
	struct errbuf err = { "" };
	struct ksymcache c;
	uint64_t seed = 3, probe = 0;
	size_t before, bad = 0;
	double t0, t1;
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[600];

	while (f && !probe && fgets(line, sizeof(line), f))
		if (strstr(line, " T vfs_read\n"))
			probe = strtoull(line, NULL, 16);
	if (!probe) {
		T_SKIP("catalog of this host's kallsyms: no read, as a pass", "%s",
		       f ? "no address shown (not root?)" : strerror(errno));
		if (f)
			fclose(f);
		return;
	}
	ksymcache_init(&c, KSYMCACHE_CATALOG_BYTES);
	t0 = now_ms();
	ksymcache_resolve(&c, open_proc, NULL, &probe, 1, &t, &err);
	t1 = now_ms();
	kallsyms_free(&t);
	printf("# this host: catalog of %zu functions, %" PRIu64 " bytes (peak %" PRIu64
	       " in the build), a first window with its build %.1f ms%s%s\n",
	       c.st.catalog_functions, c.st.catalog_bytes, c.catalog.mem.peak, t1 - t0,
	       c.st.catalog_none ? ", none: " : "", c.st.catalog_none ? c.st.catalog_none : "");
	for (size_t i = 0; c.catalog.n > 1 && i < NQ; i++)
		q[i] = c.catalog.base + lcg(&seed) % c.catalog.start[c.catalog.n - 1];
	before = opened;
	ksymcache_resolve(&c, open_proc, NULL, q, NQ, &t, &err);
	before = opened - before;
	rewind(f);
	kallsyms_resolve(f, q, NQ, &direct, &err);
	for (size_t i = 0; i < NQ; i++)
		bad += !same(kallsyms_find(&t, q[i]), kallsyms_find(&direct, q[i]));
	CHECK(c.st.catalog_functions > 1000 && !before && !bad,
	      "catalog of this host's kallsyms: 4000 addresses of the core, no read, as a pass",
	      "%zu functions, %zu reads, %zu wrong", c.st.catalog_functions, before, bad);
	kallsyms_free(&t);
	kallsyms_free(&direct);
	ksymcache_free(&c);
	fclose(f);
}

int main(void)
{
	T_PLAN(35);
	test_kept();
	test_catalog();
	test_catalog_crafted();
	test_catalog_random();
	test_catalog_refused();
	test_catalog_after_failure();
	test_catalog_large();
	test_bound();
	test_catalog_real();
	return T_EXIT();
}
