// SPDX-License-Identifier: MIT
/*
 * Tests for unwind on real objects: libc, fixtures compiled at test time
 * with and without frame pointers, with only .debug_frame (plain and
 * compressed), the vDSO.
 *
 *  - every table checked row by row against binutils' independent reader,
 *    `readelf --debug-dump=frames-interp` (tests/readelf_cfi.h);
 *  - known places: first instructions, _start, the PLT, the signal
 *    trampoline, clone's child;
 *  - hostile input: truncated files, lying section headers, random byte
 *    mutations of real .eh_frame sections.
 *
 * Hand-assembled CFI is tested in test_unwind_cfi.c, the layout BPF reads
 * in test_unwind_layout.c, whole stacks walked by the BPF unwinder in
 * test_unwind_walk.c.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <gnu/libc-version.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <time.h>
#include <unistd.h>

#include "readelf_cfi.h"
#include "testlib.h"
#include "testutil.h"
#include "unwindcheck.h"

static char tmp[PATH_MAX - 128];

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Some row inside [lo, hi) (FDE ends excluded) satisfies @pred. */
static bool any_row(const struct unwind_table *t, uint64_t lo, uint64_t hi,
		    bool (*pred)(const struct cprof_unwind_rule *))
{
	for (size_t i = 0; i < t->n; i++) {
		uint64_t a = t->base + t->pcs[i];

		if (a >= lo && a < hi && pred(unwind_rule(t, i)))
			return true;
	}
	const struct cprof_unwind_rule *r = row_at(t, lo);

	return r && pred(r);
}

static bool is_rsp_rbp_saved(const struct cprof_unwind_rule *r)
{
	return CPROF_ROW_CFA(r) == CPROF_CFA_RSP && CPROF_ROW_RBP(r) == CPROF_RBP_OFFSET;
}

static bool is_rbp_cfa(const struct cprof_unwind_rule *r)
{
	return CPROF_ROW_CFA(r) == CPROF_CFA_RBP;
}

static bool is_fp_frame(const struct cprof_unwind_rule *r)
{
	return row_is(r, CPROF_CFA_RBP, 16, CPROF_RBP_OFFSET, -2);
}

/* The CFA past 32 KiB above rsp: LLVM's frames are that big. */
static bool is_big_rsp(const struct cprof_unwind_rule *r)
{
	return CPROF_ROW_CFA(r) == CPROF_CFA_RSP && r->cfa_off > 32768;
}

static bool is_stop(const struct cprof_unwind_rule *r)
{
	return CPROF_ROW_CFA(r) == CPROF_CFA_STOP;
}

/* --- fixtures ---------------------------------------------------------- */

static const char fixture_src[] =
	"#include <alloca.h>\n"
	"#include <stdio.h>\n"
	"#include <stdlib.h>\n"
	"#include <string.h>\n"
	"__attribute__((noinline)) int leaf(int x) { return x * 3 + 1; }\n"
	"/* alloca: an rbp-based CFA even without frame pointers */\n"
	"__attribute__((noinline)) int with_alloca(int n) {\n"
	"	char *p = alloca(n + 16);\n"
	"	memset(p, n, n + 16);\n"
	"	return p[n / 2] + leaf(n);\n"
	"}\n"
	"/* a CFA offset that does not fit the row's s16 */\n"
	"__attribute__((noinline)) int big_frame(int n) {\n"
	"	volatile char big[40000];\n"
	"	big[n] = 1;\n"
	"	return big[n / 2] + leaf(n);\n"
	"}\n"
	"/* eight values live across calls: rbp saved as a general register */\n"
	"__attribute__((noinline)) long pressure(const long *v, int n) {\n"
	"	long a = v[0], b = v[1], c = v[2], d = v[3], e = v[4], f = v[5], g = v[6], h = v[7];\n"
	"	for (int i = 0; i < n; i++) {\n"
	"		a += leaf(b); b += leaf(c); c ^= leaf(d); d -= leaf(e);\n"
	"		e += leaf(f); f ^= leaf(g); g += leaf(h); h += leaf(a);\n"
	"	}\n"
	"	return a + b + c + d + e + f + g + h;\n"
	"}\n"
	"int main(int argc, char **argv) {\n"
	"	long v[8] = { argc, 2, 3, 4, 5, 6, 7, 8 };\n"
	"	printf(\"%d %ld\\n\", leaf(argc) + with_alloca(argc) + big_frame(argc),\n"
	"	       pressure(v, argc));\n"
	"	return atoi(argv[0]);\n"
	"}\n";

static bool sym(const char *path, const char *name, uint64_t *addr, uint64_t *size)
{
	bool ok = nm_sym(path, false, name, addr, size);

	if (!ok)
		printf("# %s: no symbol %s\n", path, name);
	return ok;
}

/* Checks shared by all fixtures: first instructions, _start, the PLT. */
static void check_fixture_places(const char *label, const char *path,
				 const struct unwind_table *t, bool has_start)
{
	uint64_t a, sz;
	size_t len = 0;
	uint8_t *img;
	const Elf64_Shdr *plt;

	if (sym(path, "main", &a, &sz))
		CHECK_ROW(t, a, CPROF_CFA_RSP, 8, CPROF_RBP_SAME, 0,
			  fmt("%s: main's first instruction is rsp+8", label));
	if (sym(path, "leaf", &a, &sz))
		CHECK_ROW(t, a, CPROF_CFA_RSP, 8, CPROF_RBP_SAME, 0,
			  fmt("%s: leaf's first instruction is rsp+8", label));
	if (has_start && sym(path, "_start", &a, &sz)) {
		const struct cprof_unwind_rule *r = row_at(t, a);

		CHECK(r && CPROF_ROW_CFA(r) == CPROF_CFA_STOP,
		      fmt("%s: _start is the outermost frame (STOP)", label), "%s", row_str(r));
	}
	img = slurp(path, &len);
	plt = img ? shdr_by_name(img, len, ".plt") : NULL;
	if (has_start && plt && plt->sh_size > 16) {
		size_t bad = 0;

		/* PLT0 pushes twice; every later 16-byte entry follows the expression. */
		CHECK_ROW(t, plt->sh_addr, CPROF_CFA_RSP, 16, CPROF_RBP_SAME, 0,
			  fmt("%s: PLT0 is rsp+16", label));
		for (uint64_t pc = plt->sh_addr + 16; pc < plt->sh_addr + plt->sh_size; pc++)
			bad += !row_is(row_at(t, pc), CPROF_CFA_PLT, 11, CPROF_RBP_SAME, 0);
		CHECK(bad == 0, fmt("%s: all of .plt after PLT0 is PLT (threshold 11)", label),
		      "%zu of %llu bytes are not", bad,
		      (unsigned long long)plt->sh_size - 16);
	} else if (has_start) {
		T_SKIP(fmt("%s: .plt", label), "no lazy .plt in this fixture");
	}
	free(img);
}

/*
 * The same .debug_frame, zlib-compressed (-gz): the same rows, from a file
 * and from memory.  @plain: the table of the uncompressed build.
 */
static void test_compressed(const char *src, const struct unwind_table *plain)
{
	char path[PATH_MAX];
	struct errbuf err = { "" };
	struct unwind_table t, m;
	uint8_t *img;
	size_t len = 0;
	int rc;

	snprintf(path, sizeof(path), "%s/fx_gz", tmp);
	if (sh(fmt("gcc -O2 -g -gz=zlib -fno-asynchronous-unwind-tables -Wl,-z,lazy -o '%s' '%s' "
		   "&& objcopy --remove-section=.eh_frame --remove-section=.eh_frame_hdr '%s'",
		   path, src, path))) {
		T_SKIP("fx_gz", "gcc -gz=zlib failed");
		return;
	}
	rc = build_file(path, &t, &err);
	CHECK(rc == 0 && t.n && tables_same(&t, plain),
	      "fx_gz: compressed .debug_frame gives the same rows", "rc %d (%s), %zu rows vs %zu",
	      rc, err.msg, t.n, plain->n);
	img = slurp(path, &len);
	rc = img ? build_mem(img, len, &m, &err) : -1;
	CHECK(rc == 0 && tables_same(&m, &t),
	      "fx_gz: ... from memory too", "rc %d (%s)", rc, err.msg);
	if (rc == 0)
		unwind_table_free(&m);
	unwind_table_free(&t);
	free(img);
}

static void test_fixtures(void)
{
	struct {
		const char *name, *flags;
		bool fp;
	} fx[] = {
		{ "fx_omit", "-O2 -fomit-frame-pointer -Wl,-z,lazy", false },
		{ "fx_fp", "-O0 -fno-omit-frame-pointer -Wl,-z,lazy", true },
	};
	char src[PATH_MAX], dbg[PATH_MAX], noeh[PATH_MAX];

	snprintf(src, sizeof(src), "%s/fx.c", tmp);
	snprintf(dbg, sizeof(dbg), "%s/fx_debug", tmp);
	snprintf(noeh, sizeof(noeh), "%s/fx_noeh", tmp);
	if (!spit(src, fixture_src, strlen(fixture_src))) {
		CHECK(false, "fixtures: source written", "%s", src);
		return;
	}
	for (size_t i = 0; i < sizeof(fx) / sizeof(fx[0]); i++) {
		struct errbuf err = { "" };
		char path[PATH_MAX];
		struct unwind_table t;
		uint64_t a, sz;
		int rc;

		snprintf(path, sizeof(path), "%s/%s", tmp, fx[i].name);
		if (sh(fmt("gcc %s -o '%s' '%s'", fx[i].flags, path, src))) {
			T_SKIP(fx[i].name, "gcc failed");
			continue;
		}
		rc = build_file(path, &t, &err);
		CHECK(rc == 0 && t.n > 0 && table_sane(&t), fmt("%s: table built", fx[i].name),
		      "rc %d (%s), %zu rows", rc, err.msg, t.n);
		if (rc)
			continue;
		compare_file(fx[i].name, path, &t);
		check_fixture_places(fx[i].name, path, &t, true);
		if (fx[i].fp) {
			if (sym(path, "main", &a, &sz))
				CHECK(any_row(&t, a, a + sz, is_fp_frame),
				      fmt("%s: main has an rbp+16 frame with rbp saved at CFA-16",
					  fx[i].name),
				      "none in %#llx+%llu", (unsigned long long)a,
				      (unsigned long long)sz);
		} else {
			if (sym(path, "pressure", &a, &sz))
				CHECK(any_row(&t, a, a + sz, is_rsp_rbp_saved),
				      fmt("%s: pressure saves rbp under an rsp-based CFA",
					  fx[i].name),
				      "no such row");
			if (sym(path, "with_alloca", &a, &sz))
				CHECK(any_row(&t, a, a + sz, is_rbp_cfa),
				      fmt("%s: with_alloca has an rbp-based CFA", fx[i].name),
				      "no such row");
			if (sym(path, "big_frame", &a, &sz))
				CHECK(any_row(&t, a + 1, a + sz, is_big_rsp),
				      fmt("%s: big_frame's 40 KB frame has its rsp-based CFA",
					  fx[i].name),
				      "no such row");
		}
		unwind_table_free(&t);
	}

	/*
	 * No unwind tables, -g: .eh_frame keeps only crt's FDEs (thin), so
	 * .debug_frame fills in; then with .eh_frame removed altogether.
	 */
	struct errbuf err = { "" };
	struct unwind_table t;
	uint64_t a, sz;
	int rc;

	if (sh(fmt("gcc -O2 -g -fno-asynchronous-unwind-tables -Wl,-z,lazy -o '%s' '%s'", dbg,
		   src))) {
		T_SKIP("fx_debug", "gcc failed");
		return;
	}
	rc = build_file(dbg, &t, &err);
	CHECK(rc == 0 && table_sane(&t), "fx_debug: table built", "rc %d (%s)", rc, err.msg);
	if (rc == 0) {
		compare_file("fx_debug", dbg, &t);
		check_fixture_places("fx_debug", dbg, &t, true);
		if (sym(dbg, "pressure", &a, &sz))
			CHECK(any_row(&t, a, a + sz, is_rsp_rbp_saved),
			      "fx_debug: pressure's rows come from .debug_frame", "no such row");
		unwind_table_free(&t);
	}
	if (sh(fmt("objcopy --remove-section=.eh_frame --remove-section=.eh_frame_hdr '%s' '%s'",
		   dbg, noeh))) {
		T_SKIP("fx_noeh", "objcopy failed");
		return;
	}
	rc = build_file(noeh, &t, &err);
	if (rc == 0)
		test_compressed(src, &t);
	CHECK(rc == 0 && t.n > 0 && table_sane(&t), "fx_noeh: table from .debug_frame alone",
	      "rc %d (%s), %zu rows", rc, err.msg, t.n);
	if (rc == 0) {
		compare_file("fx_noeh", noeh, &t);
		check_fixture_places("fx_noeh", noeh, &t, false);
		unwind_table_free(&t);
	}
}

/* --- libc and the vDSO ------------------------------------------------- */

static void test_libc(void)
{
	const char *path = "/lib/x86_64-linux-gnu/libc.so.6";
	struct errbuf err = { "" };
	struct unwind_table t;
	Dl_info di;
	uint64_t a, sz;
	struct rf rf;
	size_t nsig = 0, nstop = 0;
	double t0;
	int rc;

	/* Not an interposable function: under ASan, fopen lives in libasan. */
	if (dladdr((void *)gnu_get_libc_version, &di) && di.dli_fname && di.dli_fname[0] == '/')
		path = di.dli_fname;
	if (access(path, R_OK)) {
		T_SKIP("libc", "%s not readable", path);
		return;
	}
	t0 = now_ms();
	rc = build_file(path, &t, &err);
	printf("# libc (%s): %.2f ms, %zu rows, %zu rules\n", path, now_ms() - t0, t.n, t.nrules);
	CHECK(rc == 0 && t.n > 10000 && table_sane(&t), "libc: table built", "rc %d (%s), %zu rows",
	      rc, err.msg, t.n);
	if (rc)
		return;
	compare_file("libc", path, &t);

	/* __restore_rt has no exported symbol: find its 'S' CIE's FDEs instead. */
	if (readelf_frames(path, 0, 0, &rf)) {
		for (size_t i = 0; i < rf.nfdes; i++) {
			const struct rf_fde *f = &rf.fdes[i];

			if (!f->signal)
				continue;
			nsig++;
			CHECK_ROW(&t, f->start, CPROF_CFA_SIGNAL, 0, CPROF_RBP_SAME, 0,
				  "libc: the signal trampoline's FDE is SIGNAL");
			CHECK_ROW(&t, f->end - 1, CPROF_CFA_SIGNAL, 0, CPROF_RBP_SAME, 0,
				  "libc: ... to its last byte");
		}
	}
	rf_free(&rf);
	CHECK(nsig > 0, "libc: has a signal frame FDE ('S' augmentation)", "none found");
	for (size_t i = 0; i < t.n; i++)
		nstop += CPROF_ROW_CFA(unwind_rule(&t, i)) == CPROF_CFA_STOP;
	/* clone's and clone3's children mark the return address undefined. */
	CHECK(nstop >= 2, "libc: clone and clone3 children are STOP", "%zu STOP rows", nstop);
	if (nm_sym(path, true, "__clone", &a, &sz))
		CHECK(any_row(&t, a, a + sz, is_stop), "libc: a STOP row inside clone",
		      "none in %#llx+%llu", (unsigned long long)a, (unsigned long long)sz);
	if (nm_sym(path, true, "__libc_start_main", &a, &sz))
		CHECK_ROW(&t, a, CPROF_CFA_RSP, 8, CPROF_RBP_SAME, 0,
			  "libc: __libc_start_main's first instruction is rsp+8");
	unwind_table_free(&t);
}

/*
 * ld.so's _start (glibc's RTLD_START) has no CFI: the table makes its
 * entry point the outermost frame, through the return address of its
 * call to _dl_start, and agrees with readelf everywhere else.
 */
static void test_ldso(void)
{
	const char *path = "/lib64/ld-linux-x86-64.so.2";
	struct errbuf err = { "" };
	struct unwind_table t;
	Elf64_Ehdr eh;
	struct rf rf;
	bool described = false;
	FILE *f = fopen(path, "rb");
	int rc;

	if (!f || fread(&eh, sizeof(eh), 1, f) != 1) {
		T_SKIP("ld.so", "%s not readable", path);
		if (f)
			fclose(f);
		return;
	}
	fclose(f);
	if (readelf_frames(path, 0, 0, &rf))
		for (size_t i = 0; i < rf.nfdes; i++)
			described |= rf.fdes[i].start <= eh.e_entry && eh.e_entry < rf.fdes[i].end;
	rf_free(&rf);
	if (described) {
		T_SKIP("ld.so", "an FDE describes its entry point: nothing to add");
		return;
	}
	rc = build_file(path, &t, &err);
	CHECK(rc == 0 && t.n > 1000 && table_sane(&t), "ld.so: table built", "rc %d (%s), %zu rows",
	      rc, err.msg, t.n);
	if (rc)
		return;
	compare_file("ld.so", path, &t);
	CHECK_ROW(&t, eh.e_entry, CPROF_CFA_STOP, 0, CPROF_RBP_SAME, 0,
		  "ld.so: its entry point, with no FDE, is STOP");
	CHECK_ROW(&t, eh.e_entry + 8, CPROF_CFA_STOP, 0, CPROF_RBP_SAME, 0,
		  "ld.so: ... past the call to _dl_start");
	unwind_table_free(&t);
}

static bool vdso_range(uint64_t *start, uint64_t *end)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long long s, e;

		if (strstr(line, "[vdso]") && sscanf(line, "%llx-%llx", &s, &e) == 2) {
			*start = s;
			*end = e;
			found = true;
		}
	}
	fclose(f);
	return found;
}

static void test_vdso(void)
{
	uint64_t base = getauxval(AT_SYSINFO_EHDR), start, end, a, sz;
	const struct cprof_unwind_rule *r;
	char path[PATH_MAX];
	struct errbuf err = { "" };
	struct unwind_table t;
	int rc;

	if (!base || !vdso_range(&start, &end) || start != base) {
		T_SKIP("vDSO", "no vDSO in this process");
		return;
	}
	snprintf(path, sizeof(path), "%s/vdso.so", tmp);
	rc = build_mem((const void *)(uintptr_t)base, end - start, &t, &err);
	CHECK(rc == 0 && t.n > 0 && table_sane(&t), "vDSO: table built from memory",
	      "rc %d (%s), %zu rows", rc, err.msg, t.n);
	if (rc)
		return;
	if (!spit(path, (const void *)(uintptr_t)base, end - start)) {
		T_SKIP("vDSO: readelf", "cannot write %s", path);
	} else {
		compare_file("vDSO", path, &t);
		if (nm_sym(path, true, "__vdso_clock_gettime", &a, &sz)) {
			uint64_t bad = 0;

			r = row_at(&t, a);
			CHECK(r && (CPROF_ROW_CFA(r) == CPROF_CFA_RSP ||
				    CPROF_ROW_CFA(r) == CPROF_CFA_RBP),
			      "vDSO: __vdso_clock_gettime is rsp/rbp-based", "%s", row_str(r));
			for (uint64_t pc = a; pc < a + sz; pc++) {
				r = row_at(&t, pc);
				bad += !r || (CPROF_ROW_CFA(r) != CPROF_CFA_RSP &&
					      CPROF_ROW_CFA(r) != CPROF_CFA_RBP);
			}
			CHECK(sz > 0 && bad == 0,
			      "vDSO: every byte of __vdso_clock_gettime is rsp/rbp-based",
			      "%llu of %llu bytes are not", (unsigned long long)bad,
			      (unsigned long long)sz);
		} else {
			T_SKIP("vDSO: __vdso_clock_gettime", "not in nm -D");
		}
	}
	unwind_table_free(&t);
}

/* --- hostile files ----------------------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	uint64_t x = rng_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng_state = x;
}

/*
 * Random damage to .eh_frame in memory, @iters times: bytes, length fields
 * and operands.  The table must come out sane or an error come back.
 */
static void fuzz_image(const char *label, uint8_t *img, size_t len, unsigned iters)
{
	const Elf64_Shdr *eh = shdr_by_name(img, len, ".eh_frame");
	size_t ok = 0, failed = 0, insane = 0, max_rows = 0;
	uint8_t saved[32];
	size_t at[32];

	if (!eh || eh->sh_offset + eh->sh_size > len || eh->sh_size < 64) {
		T_SKIP(fmt("%s: fuzz", label), "no .eh_frame");
		return;
	}
	uint64_t off = eh->sh_offset, size = eh->sh_size;

	for (unsigned i = 0; i < iters; i++) {
		struct errbuf err = { "" };
		struct unwind_table t;
		unsigned n = 1 + (unsigned)(rng() % 8);

		for (unsigned k = 0; k < n; k++) {
			at[k] = off + rng() % size;
			saved[k] = img[at[k]];
			switch (rng() % 4) {
			case 0:
				img[at[k]] = (uint8_t)rng();
				break;
			case 1:
				img[at[k]] ^= (uint8_t)(1u << (rng() % 8));
				break;
			case 2:
				img[at[k]] = 0xff;
				break;
			default:
				img[at[k]] = (uint8_t)(0x0a + rng() % 2); /* remember/restore */
				break;
			}
		}
		if (build_mem(img, len, &t, &err) == 0) {
			ok++;
			insane += !table_sane(&t);
			if (t.n > max_rows)
				max_rows = t.n;
			for (int k = 0; k < 16; k++)
				(void)row_at(&t, t.base + rng() % (t.n ? 0x100000 : 1));
			unwind_table_free(&t);
		} else {
			failed++;
		}
		while (n-- > 0) /* undo in reverse: positions may repeat */
			img[at[n]] = saved[n];
	}
	CHECK(insane == 0, fmt("%s: %u damaged .eh_frame images: no crash, sane tables", label, iters),
	      "%zu insane tables", insane);
	printf("# %s: %zu built, %zu refused, at most %zu rows\n", label, ok, failed, max_rows);
}

static void test_hostile(void)
{
	char src[PATH_MAX], cut[PATH_MAX];
	struct errbuf err = { "" };
	struct unwind_table t;
	Elf64_Shdr *eh;
	uint8_t *img;
	size_t len = 0;
	int rc;

	snprintf(src, sizeof(src), "%s/fx_omit", tmp);
	snprintf(cut, sizeof(cut), "%s/cut", tmp);
	img = slurp(src, &len);
	eh = img ? (Elf64_Shdr *)shdr_by_name(img, len, ".eh_frame") : NULL;
	if (!eh) {
		T_SKIP("hostile", "no fixture");
		free(img);
		return;
	}
	/* The file cut in the middle of .eh_frame (section headers lost too). */
	rc = spit(cut, img, eh->sh_offset + eh->sh_size / 2) ? build_file(cut, &t, &err) : -1;
	CHECK(rc < 0 && t.pcs == NULL, "hostile: file truncated inside .eh_frame is refused",
	      "rc %d", rc);
	/* Headers intact but .eh_frame said to run past the end of the file. */
	uint64_t size0 = eh->sh_size, off0 = eh->sh_offset;

	eh->sh_offset = len - 16;
	rc = spit(cut, img, len) ? build_file(cut, &t, &err) : -1;
	CHECK(rc < 0 && t.pcs == NULL, "hostile: .eh_frame past the end of the file is refused",
	      "rc %d (%s)", rc, err.msg);
	rc = build_mem(img, len, &t, &err);
	CHECK(rc < 0 && t.pcs == NULL, "hostile: ... and of a memory image", "rc %d", rc);
	eh->sh_offset = off0;
	eh->sh_size = 1ull << 40;
	rc = spit(cut, img, len) ? build_file(cut, &t, &err) : -1;
	CHECK(rc == -EFBIG, "hostile: a 1 TiB .eh_frame is refused (EFBIG)", "rc %d (%s)", rc,
	      err.msg);
	eh->sh_size = size0;
	/* Section count beyond what we let libelf allocate for. */
	{
		Elf64_Ehdr *h = (Elf64_Ehdr *)img;
		uint16_t shnum = h->e_shnum;

		h->e_shnum = 0xffff;
		rc = build_mem(img, len, &t, &err);
		CHECK(rc < 0, "hostile: section headers past the end are refused", "rc %d", rc);
		h->e_shnum = shnum;
	}
	rc = build_mem(img, len, &t, &err);
	CHECK(rc == 0 && t.n > 0, "hostile: the restored image builds again", "rc %d (%s)", rc,
	      err.msg);
	unwind_table_free(&t);
	fuzz_image("fx_omit", img, len, 20000);
	free(img);

	img = slurp("/lib/x86_64-linux-gnu/libc.so.6", &len);
	if (img)
		fuzz_image("libc", img, len, 200);
	else
		T_SKIP("libc: fuzz", "libc not readable");
	free(img);
}

int main(void)
{
	char tmpl[] = "/tmp/test_unwind.XXXXXX";

	if (!mkdtemp(tmpl)) {
		printf("not ok - test_unwind: mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	snprintf(tmp, sizeof(tmp), "%s", tmpl);
	setvbuf(stdout, NULL, _IOLBF, 0);
	T_PLAN(63);
	test_fixtures();
	test_libc();
	test_ldso();
	test_vdso();
	test_hostile();

	sh(fmt("rm -rf '%s'", tmp));
	return T_EXIT();
}
