// SPDX-License-Identifier: MIT
/*
 * Tests for dwarfinfo: file, line and inline chains of fixtures compiled at
 * test time (gcc, clang without .debug_aranges, g++), checked address by
 * address against binutils' addr2line -i, an independent DWARF reader (for
 * clang in DWARF 4: binutils 2.40 misses clang's DWARF 5 inlines); the
 * separate debug file by build ID and by .gnu_debuglink, and the files that
 * must be refused (wrong build ID, wrong CRC, a hostile compressed size).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dwarf/dwarfinfo.h"
#include "elf/elfobj.h"
#include "elfobjcheck.h"
#include "testlib.h"
#include "testutil.h"

static char tmp[PATH_MAX - 256];

static const char fixture[] =
	"static volatile int sink;\n"
	"static inline __attribute__((always_inline)) int leaf(int x)\n"
	"{\n"
	"\tsink += x; /* L_LEAF */\n"
	"\treturn sink * 3;\n"
	"}\n"
	"static inline __attribute__((always_inline)) int mid(int x)\n"
	"{\n"
	"\treturn leaf(x + 1) /* L_MID */ + leaf(x + 2);\n"
	"}\n"
	"__attribute__((noinline)) int outer(int x)\n"
	"{\n"
	"\tint s = 0;\n"
	"\tfor (int i = 0; i < x; i++)\n"
	"\t\ts += mid(i); /* L_OUTER */\n"
	"\treturn s;\n"
	"}\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"\treturn outer(argc) & 1;\n"
	"}\n";

static const char fixture_cc[] =
	"namespace ns {\n"
	"template <typename T> struct Type {\n"
	"\tvolatile T acc;\n"
	"\t__attribute__((noinline)) long method(long n);\n"
	"};\n"
	"template <typename T> long Type<T>::method(long n)\n"
	"{\n"
	"\tlong s = 0;\n"
	"\tfor (long i = 0; i < n; i++)\n"
	"\t\ts += i ^ (acc = (T)i);\n"
	"\treturn s;\n"
	"}\n"
	"template struct Type<int>;\n"
	"}\n"
	"int main(int argc, char **) { ns::Type<int> t{}; return (int)t.method(argc); }\n";

static bool have(const char *tool)
{
	return system(fmt("command -v %s >/dev/null 2>&1", tool)) == 0;
}

static int line_of(const char *src, const char *marker)
{
	const char *p = strstr(src, marker);
	int line = 1;

	for (const char *c = src; p && c < p; c++)
		line += *c == '\n';
	return p ? line : -1;
}

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

/* Start and size of function @name in @bin, from nm. */
static bool func_range(const char *bin, const char *name, uint64_t *start, uint64_t *size)
{
	char line[512];
	FILE *f = popen(fmt("nm -S '%s'", bin), "r");
	bool found = false;

	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long a, s;
		char type, sym[256];

		if (sscanf(line, "%llx %llx %c %255s", &a, &s, &type, sym) == 4 &&
		    !strcmp(sym, name)) {
			*start = a;
			*size = s;
			found = true;
		}
	}
	if (f)
		pclose(f);
	return found;
}

static const char *base(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : path ? path : "";
}

/*
 * For every address of function @fn: our chain equals addr2line -i's, frame
 * by frame (function name, file name, line).  Returns the number of
 * addresses compared (0 on a mismatch, which is printed).
 */
static size_t compare_with_addr2line(struct dwarfinfo *d, const char *bin, const char *fn,
				     size_t *inlined)
{
	uint64_t start, size;
	char cmd[PATH_MAX + 64], line[1024];
	FILE *f;
	size_t compared = 0;
	bool ok = true;

	if (!func_range(bin, fn, &start, &size) || !size)
		return 0;
	snprintf(cmd, sizeof(cmd), "addr2line -a -i -f -e '%s' --", bin);
	/* One addr2line run for all addresses: "0xADDR", then name / file:line pairs. */
	{
		size_t len = strlen(cmd);
		char *all = malloc(len + size * 20 + 1);

		memcpy(all, cmd, len);
		for (uint64_t a = start; a < start + size; a++)
			len += (size_t)sprintf(all + len, " %#" PRIx64, a);
		f = popen(all, "r");
		free(all);
	}
	if (!f)
		return 0;
	struct dwarf_frame want[DWARFINFO_MAX_FRAMES];
	size_t nwant = 0;
	uint64_t addr = 0;
	bool have_addr = false;

	for (;;) {
		bool eof = !fgets(line, sizeof(line), f);

		line[strcspn(line, "\n")] = '\0';
		if (eof || !strncmp(line, "0x", 2)) {
			if (have_addr && ok) {
				struct dwarf_frame got[DWARFINFO_MAX_FRAMES];
				size_t n = dwarfinfo_lookup(d, addr, got, DWARFINFO_MAX_FRAMES);
				bool same = n == nwant;

				for (size_t i = 0; same && i < n; i++)
					same = got[i].name && want[i].name &&
					       !strcmp(got[i].name, want[i].name) &&
					       !strcmp(base(got[i].file), base(want[i].file)) &&
					       got[i].line == want[i].line;
				if (!same) {
					printf("# %s %#" PRIx64 ": ours %zu frames, addr2line %zu\n",
					       fn, addr, n, nwant);
					for (size_t i = 0; i < n; i++)
						printf("#   ours %s %s:%d\n", got[i].name,
						       base(got[i].file), got[i].line);
					for (size_t i = 0; i < nwant; i++)
						printf("#   a2l  %s %s:%d\n", want[i].name,
						       base(want[i].file), want[i].line);
					ok = false;
				}
				compared++;
				*inlined += n > 1;
			}
			for (size_t i = 0; i < nwant; i++) {
				free((char *)want[i].name);
				free((char *)want[i].file);
			}
			nwant = 0;
			if (eof)
				break;
			addr = strtoull(line, NULL, 16);
			have_addr = true;
			continue;
		}
		/* A pair: function name, then "file:line (discriminator N)". */
		char loc[1024];

		if (!fgets(loc, sizeof(loc), f))
			break;
		loc[strcspn(loc, "\n")] = '\0';
		loc[strcspn(loc, " ")] = '\0';
		char *colon = strrchr(loc, ':');

		if (nwant < DWARFINFO_MAX_FRAMES && colon) {
			*colon = '\0';
			want[nwant++] = (struct dwarf_frame){
				.name = strdup(line),
				.file = strdup(loc),
				.line = atoi(colon + 1),
			};
		}
	}
	pclose(f);
	return ok ? compared : 0;
}

static struct dwarfinfo *open_dwarf(struct elfobj *o, const char *debug_root, const char *path,
				    int *rc)
{
	/* The host's root, in which @path is found. */
	struct elfobj_debug_opts opts = { .debug_root = debug_root, .path = path,
					  .root_fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC) };
	struct dwarfinfo *d = NULL;

	*rc = o ? dwarfinfo_open(&d, o, &opts, 0, NULL) : -EBADF;
	if (opts.root_fd > 0)
		close(opts.root_fd);
	return d;
}

static void test_gcc(void)
{
	const char *bin = fmt("%s/fx", tmp);
	struct dwarfinfo *d;
	struct elfobj *o;
	uint64_t start, size;
	size_t compared, inlined = 0;
	int rc, l_leaf = line_of(fixture, "L_LEAF"), l_mid = line_of(fixture, "L_MID"),
		l_outer = line_of(fixture, "L_OUTER");

	o = elfobj_at(bin);
	d = open_dwarf(o, NULL, NULL, &rc);
	CHECK(rc == 0 && d && !dwarfinfo_separate(d) && dwarfinfo_bytes(d) > 0,
	      "gcc -g: DWARF in the binary opened", "rc %d", rc);
	if (!d) {
		elfobj_free(o);
		return;
	}
	compared = compare_with_addr2line(d, bin, "outer", &inlined);
	CHECK(compared > 10 && inlined > 0,
	      "gcc -O2 -g: every address of outer() has addr2line -i's chain",
	      "%zu addresses compared, %zu with inlines", compared, inlined);
	inlined = 0;
	compared = compare_with_addr2line(d, bin, "main", &inlined);
	CHECK(compared > 0, "gcc -O2 -g: every address of main() too", "%zu", compared);

	/* A leaf in leaf() inlined in mid() inlined in outer(): three frames. */
	bool found = false;

	if (func_range(bin, "outer", &start, &size)) {
		for (uint64_t a = start; a < start + size && !found; a++) {
			struct dwarf_frame f[DWARFINFO_MAX_FRAMES], two[2];
			size_t n = dwarfinfo_lookup(d, a, f, DWARFINFO_MAX_FRAMES);

			if (n != 3 || !f[0].name || strcmp(f[0].name, "leaf") || f[0].line != l_leaf)
				continue;
			found = true;
			CHECK(!strcmp(f[1].name, "mid") && f[1].line == l_mid &&
			      !strcmp(f[2].name, "outer") && f[2].line == l_outer,
			      "inline chain: leaf (its line), mid (line of the call), outer (line of the call)",
			      "%s:%d %s:%d", f[1].name, f[1].line, f[2].name, f[2].line);
			CHECK(f[0].start_line == l_leaf - 2 && f[1].start_line == l_mid - 2 &&
			      f[2].start_line == l_outer - 4,
			      "start lines: each function's declaration line", "%d %d %d",
			      f[0].start_line, f[1].start_line, f[2].start_line);
			CHECK(!strcmp(base(f[0].file), "fx.c") && f[0].dir && f[0].file[0] != '/'
				      ? !strcmp(f[0].dir, tmp) : f[0].file[0] == '/',
			      "file: relative names come with the compilation directory",
			      "%s in %s", f[0].file, f[0].dir ? f[0].dir : "(none)");
			n = dwarfinfo_lookup(d, a, two, 2);
			CHECK(n == 2 && !strcmp(two[0].name, "leaf") && !strcmp(two[1].name, "outer"),
			      "chain longer than max: innermost and outermost kept", "%zu %s %s", n,
			      two[0].name, n > 1 ? two[1].name : "");
		}
	}
	CHECK(found, "an address of outer() is in leaf() inlined via mid()", "none found");
	{
		struct elfobj_debug_opts opts = { 0 };
		struct dwarfinfo *small = NULL;

		struct errbuf err = { "" };

		rc = dwarfinfo_open(&small, o, &opts, dwarfinfo_bytes(d) - 1, &err);
		CHECK(rc == -EFBIG && !small && strstr(err.msg, " MB, over the "),
		      "max_bytes below the object's DWARF: not opened, -EFBIG saying how big",
		      "rc %d: %s", rc, err.msg);
		dwarfinfo_free(small);
		rc = dwarfinfo_open(&small, o, &opts, dwarfinfo_bytes(d), NULL);
		CHECK(rc == 0 && small, "max_bytes equal to it: opened", "rc %d", rc);
		dwarfinfo_free(small);
	}
	CHECK(dwarfinfo_lookup(d, 0x10, (struct dwarf_frame[1]){ 0 }, 1) == 0,
	      "address in no compilation unit: no frames", "frames");
	dwarfinfo_free(d);
	elfobj_free(o);
}

static void test_clang(void)
{
	const char *bin = fmt("%s/fx-clang", tmp);
	struct dwarfinfo *d;
	struct elfobj *o;
	size_t compared, inlined = 0;
	int rc;

	if (!have("clang") ||
	    sh(fmt("cd '%s' && clang -O2 -g -gdwarf-4 -o fx-clang fx.c 2>/dev/null", tmp))) {
		T_SKIP("clang: CUs found without .debug_aranges", "clang not available");
		return;
	}
	if (!system(fmt("readelf -SW '%s' | grep -q debug_aranges", bin))) {
		T_SKIP("clang: CUs found without .debug_aranges", "this clang emits aranges");
		return;
	}
	o = elfobj_at(bin);
	d = open_dwarf(o, NULL, NULL, &rc);
	compared = d ? compare_with_addr2line(d, bin, "outer", &inlined) : 0;
	CHECK(compared > 5 && inlined > 0,
	      "clang (no .debug_aranges): every address of outer() matches addr2line -i",
	      "rc %d, %zu compared, %zu inlined", rc, compared, inlined);
	dwarfinfo_free(d);
	elfobj_free(o);
}

static void test_cxx(void)
{
	const char *bin = fmt("%s/fxx", tmp);
	struct dwarf_frame f[4];
	struct dwarfinfo *d;
	struct elfobj *o;
	uint64_t start, size;
	size_t n = 0;
	int rc;

	if (!have("g++") || write_file(fmt("%s/fxx.cc", tmp), fixture_cc) ||
	    sh(fmt("cd '%s' && g++ -O1 -g -o fxx fxx.cc", tmp))) {
		T_SKIP("g++: linkage name of a template method", "g++ not available");
		return;
	}
	o = elfobj_at(bin);
	d = open_dwarf(o, NULL, NULL, &rc);
	if (d && func_range(bin, "_ZN2ns4TypeIiE6methodEl", &start, &size))
		n = dwarfinfo_lookup(d, start + size / 2, f, 4);
	CHECK(n >= 1 && f[n - 1].name && !strcmp(f[n - 1].name, "_ZN2ns4TypeIiE6methodEl") &&
	      f[n - 1].start_line == line_of(fixture_cc, "long Type<T>::method"),
	      "g++: the function's linkage (mangled) name and its start line",
	      "%zu frames, %s s=%d", n, n ? f[n - 1].name : "", n ? f[n - 1].start_line : 0);
	dwarfinfo_free(d);
	elfobj_free(o);
}

static void test_separate(void)
{
	struct dwarfinfo *d;
	struct elfobj *o;
	char id[ELFOBJ_BUILD_ID_MAX * 2 + 1];
	size_t compared, inlined = 0;
	int rc;

	/* fx.debug (only DWARF), fx.stripped (no DWARF), fx.linked (+ debuglink). */
	if (sh(fmt("cd '%s' && objcopy --only-keep-debug fx fx.debug && "
		   "objcopy --strip-debug fx fx.stripped && "
		   "objcopy --strip-debug --add-gnu-debuglink=fx.debug fx fx.linked && "
		   "mkdir -p other && cp fx.linked other/ && "
		   "gcc -O1 -g -o other/fx.debug fx.c && "
		   "objcopy --strip-debug --remove-section=.note.gnu.build-id fx fx.noid", tmp))) {
		T_SKIP("separate debug files", "objcopy failed");
		return;
	}
	o = elfobj_at(fmt("%s/fx.stripped", tmp));
	d = open_dwarf(o, fmt("%s/dbg", tmp), NULL, &rc);
	CHECK(rc == -ENOENT && !d, "stripped, no debug file: -ENOENT", "rc %d", rc);
	dwarfinfo_free(d);

	snprintf(id, sizeof(id), "%s", o ? elfobj_build_id(o) : "");
	sh(fmt("mkdir -p '%s/dbg/.build-id/%.2s' && cp '%s/fx.debug' '%s/dbg/.build-id/%.2s/%s.debug'",
	       tmp, id, tmp, tmp, id, id + 2));
	d = open_dwarf(o, fmt("%s/dbg", tmp), NULL, &rc);
	compared = d ? compare_with_addr2line(d, fmt("%s/fx", tmp), "outer", &inlined) : 0;
	CHECK(rc == 0 && d && dwarfinfo_separate(d) && compared > 10,
	      "debug file by build ID under debug_root: same chains as the unstripped binary",
	      "rc %d, %zu compared", rc, compared);
	dwarfinfo_free(d);
	elfobj_free(o);

	o = elfobj_at(fmt("%s/fx.linked", tmp));
	d = open_dwarf(o, fmt("%s/nodbg", tmp), fmt("%s/fx.linked", tmp), &rc);
	compared = d ? compare_with_addr2line(d, fmt("%s/fx", tmp), "outer", &inlined) : 0;
	CHECK(rc == 0 && d && dwarfinfo_separate(d) && compared > 10,
	      "debug file by .gnu_debuglink next to the object", "rc %d, %zu compared", rc,
	      compared);
	dwarfinfo_free(d);
	d = open_dwarf(o, fmt("%s/nodbg", tmp), fmt("%s/other/fx.linked", tmp), &rc);
	CHECK(rc == -ENOENT, "debuglink target with the wrong CRC: refused", "rc %d", rc);
	dwarfinfo_free(d);
	elfobj_free(o);

	/* The build-ID path holding another build's debug file. */
	o = elfobj_at(fmt("%s/fx.stripped", tmp));
	sh(fmt("cp '%s/other/fx.debug' '%s/dbg/.build-id/%.2s/%s.debug'", tmp, tmp, id, id + 2));
	d = open_dwarf(o, fmt("%s/dbg", tmp), NULL, &rc);
	CHECK(rc == -ENOENT, "debug file with another build ID: refused", "rc %d", rc);
	dwarfinfo_free(d);
	/* ... and a file that is not ELF at all. */
	sh(fmt("head -c 100 /dev/urandom > '%s/dbg/.build-id/%.2s/%s.debug'", tmp, id, id + 2));
	d = open_dwarf(o, fmt("%s/dbg", tmp), NULL, &rc);
	CHECK(rc == -ENOENT, "garbage at the build-ID path: refused", "rc %d", rc);
	dwarfinfo_free(d);
	elfobj_free(o);
}

/*
 * DWARF shrunk by dwz: the shared file is used only when found by its build
 * ID under debug_root, never at the path the object names.
 */
static void test_dwz(void)
{
	char bid[ELFOBJ_BUILD_ID_MAX * 2 + 1] = "", line[256];
	size_t compared, inlined = 0;
	struct dwarfinfo *d;
	struct elfobj *o;
	FILE *f;
	int rc;

	if (!have("dwz") ||
	    sh(fmt("cd '%s' && gcc -O2 -g -o fz1 fx.c && gcc -O1 -g -o fz2 fx.c && "
		   "dwz -m '%s/common.dwz' -M '%s/common.dwz' fz1 fz2", tmp, tmp, tmp))) {
		T_SKIP("dwz: alt file by build ID", "dwz not installed or failed");
		return;
	}
	f = popen(fmt("readelf -n '%s/common.dwz'", tmp), "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, " Build ID: %128s", bid) == 1)
			break;
	if (f)
		pclose(f);
	o = elfobj_at(fmt("%s/fz1", tmp));
	d = open_dwarf(o, fmt("%s/dwzroot", tmp), NULL, &rc);
	CHECK(rc == -ENOENT && !d,
	      "dwz: alt file only at the path the object names: not used", "rc %d", rc);
	dwarfinfo_free(d);
	sh(fmt("mkdir -p '%s/dwzroot/.build-id/%.2s' && cp '%s/common.dwz' '%s/dwzroot/.build-id/%.2s/%s.debug'",
	       tmp, bid, tmp, tmp, bid, bid + 2));
	d = open_dwarf(o, fmt("%s/dwzroot", tmp), NULL, &rc);
	/* binutils cannot read this dwz output: compare with fx, the same build unshrunk. */
	compared = d ? compare_with_addr2line(d, fmt("%s/fx", tmp), "outer", &inlined) : 0;
	CHECK(rc == 0 && compared > 10 && inlined > 0,
	      "dwz: alt file by build ID under debug_root: chains as addr2line -i gives unshrunk",
	      "rc %d, %zu compared, %zu inlined", rc, compared, inlined);
	dwarfinfo_free(d);
	elfobj_free(o);
}

/* A compressed .debug_info whose header claims 2^60 bytes: never allocated. */
static void test_hostile_size(void)
{
	char line[512];
	unsigned long long off = 0;
	struct dwarfinfo *d;
	struct elfobj *o;
	FILE *f;
	int rc;

	if (sh(fmt("cd '%s' && objcopy --compress-debug-sections=zlib fx fx.z", tmp))) {
		T_SKIP("hostile compressed size", "objcopy cannot compress");
		return;
	}
	f = popen(fmt("readelf -SW '%s/fx.z'", tmp), "r");
	while (f && fgets(line, sizeof(line), f)) {
		char *p = strstr(line, ".debug_info ");

		if (p && sscanf(p, "%*s %*s %*s %llx", &off) == 1)
			break;
	}
	if (f)
		pclose(f);
	if (!off) {
		T_SKIP("hostile compressed size", "no .debug_info found");
		return;
	}
	/* Elf64_Chdr: ch_type, ch_reserved, then ch_size at byte 8. */
	sh(fmt("printf '\\000\\000\\000\\000\\000\\000\\000\\020' | "
	       "dd of='%s/fx.z' bs=1 seek=%llu conv=notrunc status=none", tmp, off + 8));
	o = elfobj_at(fmt("%s/fx.z", tmp));
	d = open_dwarf(o, NULL, NULL, &rc);
	CHECK(rc == -ENOENT && !d, "compressed section claiming 2^60 bytes: refused", "rc %d", rc);
	dwarfinfo_free(d);
	elfobj_free(o);
}

/* Replaces every NUL of section @name of @path with 'X'; false if it has none. */
static bool unterminate(const char *path, const char *name)
{
	unsigned long long off = 0, size = 0;
	char line[512];
	FILE *f = popen(fmt("readelf -SW '%s'", path), "r");
	uint8_t *buf;
	bool ok = false;
	int fd;

	while (f && fgets(line, sizeof(line), f)) {
		char *p = strstr(line, name);

		if (p && p[strlen(name)] == ' ' && sscanf(p, "%*s %*s %*s %llx %llx", &off, &size) == 2)
			break;
	}
	if (f)
		pclose(f);
	fd = size ? open(path, O_RDWR) : -1;
	buf = fd >= 0 ? malloc(size) : NULL;
	if (buf && pread(fd, buf, size, (off_t)off) == (ssize_t)size) {
		for (size_t i = 0; i < size; i++)
			if (!buf[i])
				buf[i] = 'X';
		ok = pwrite(fd, buf, size, (off_t)off) == (ssize_t)size;
	}
	free(buf);
	if (fd >= 0)
		close(fd);
	return ok;
}

/*
 * Lookups in @bad against @good, at every address of outer(): how many have
 * the same lines (and names, when @names) in as many frames.
 */
static size_t alike(struct dwarfinfo *good, struct dwarfinfo *bad, uint64_t start,
		    uint64_t size, bool names, size_t *total)
{
	size_t same = 0;

	*total = 0;
	for (uint64_t a = start; good && bad && a < start + size; a++) {
		struct dwarf_frame fg[DWARFINFO_MAX_FRAMES], fb[DWARFINFO_MAX_FRAMES];
		size_t ng = dwarfinfo_lookup(good, a, fg, DWARFINFO_MAX_FRAMES);
		size_t nb = dwarfinfo_lookup(bad, a, fb, DWARFINFO_MAX_FRAMES);
		bool eq = ng == nb;

		for (size_t i = 0; eq && i < ng; i++)
			eq = fg[i].line == fb[i].line &&
			     (!names || (fg[i].name && fb[i].name && !strcmp(fg[i].name, fb[i].name)));
		(*total)++;
		same += eq;
	}
	return same;
}

/*
 * The string sections libdw read past the end of, with every NUL gone:
 * lookups go on (under ASan: without a read out of bounds) with the lines
 * right, and the names too where they are not in the broken section.
 */
static void test_unterminated(void)
{
	const char *good = fmt("%s/fx5", tmp);
	struct dwarfinfo *dg, *db;
	struct elfobj *og, *ob;
	uint64_t start = 0, size = 0;
	size_t same, total;
	int rc, rcb;

	if (sh(fmt("cd '%s' && gcc -O2 -gdwarf-5 -o fx5 fx.c && cp fx5 fx5.ls && cp fx5 fx5.s", tmp)) ||
	    !unterminate(fmt("%s/fx5.ls", tmp), ".debug_line_str") ||
	    !unterminate(fmt("%s/fx5.s", tmp), ".debug_str") ||
	    !func_range(good, "outer", &start, &size)) {
		T_SKIP("unterminated string sections", "no DWARF 5 build with .debug_line_str");
		return;
	}
	og = elfobj_at(good);
	dg = open_dwarf(og, NULL, NULL, &rc);
	for (int i = 0; i < 2; i++) {
		/* Names are in .debug_str (or inline): with it broken, lines only are compared. */
		static const char *const what[2] = {
			".debug_line_str without a NUL: every address of outer() keeps its names and lines",
			".debug_str without a NUL: every address of outer() keeps its lines",
		};

		ob = elfobj_at(fmt("%s/fx5.%s", tmp, i ? "s" : "ls"));
		db = open_dwarf(ob, NULL, NULL, &rcb);
		same = alike(dg, db, start, size, i == 0, &total);
		CHECK(rc == 0 && rcb == 0 && total > 10 && same == total, what[i],
		      "rc %d/%d, %zu of %zu addresses alike", rc, rcb, same, total);
		dwarfinfo_free(db);
		elfobj_free(ob);
	}
	dwarfinfo_free(dg);
	elfobj_free(og);
}

/* Compressed debug sections (both encodings): the same chains as addr2line. */
static void test_compressed(void)
{
	static const char *const how[] = { "zlib", "zlib-gnu" };

	for (size_t i = 0; i < 2; i++) {
		const char *bin = fmt("%s/fx.c-%s", tmp, how[i]);
		char name[96];
		struct dwarfinfo *d;
		struct elfobj *o;
		size_t compared = 0, inlined = 0;
		int rc;

		snprintf(name, sizeof(name),
			 "compressed DWARF (%s): every address of outer() matches addr2line -i", how[i]);
		if (sh(fmt("objcopy --compress-debug-sections=%s '%s/fx' '%s'", how[i], tmp, bin))) {
			T_SKIP(name, "objcopy cannot compress so");
			continue;
		}
		o = elfobj_at(bin);
		d = open_dwarf(o, NULL, NULL, &rc);
		if (d)
			compared = compare_with_addr2line(d, fmt("%s/fx", tmp), "outer", &inlined);
		CHECK(rc == 0 && compared > 10 && inlined > 0, name, "rc %d, %zu compared", rc,
		      compared);
		dwarfinfo_free(d);
		elfobj_free(o);
	}
}

int main(void)
{
	snprintf(tmp, sizeof(tmp), "/tmp/cprof-dwarfinfo-XXXXXX");
	if (!mkdtemp(tmp) || !have("gcc") || !have("addr2line")) {
		T_SKIP("dwarfinfo", "needs a temporary directory, gcc and addr2line");
		return 0;
	}
	if (write_file(fmt("%s/fx.c", tmp), fixture) ||
	    sh(fmt("cd '%s' && gcc -O2 -g -o fx fx.c", tmp))) {
		T_SKIP("dwarfinfo", "cannot compile the fixture");
		return 0;
	}
	T_PLAN(26);
	test_gcc();
	test_clang();
	test_cxx();
	test_separate();
	test_dwz();
	test_hostile_size();
	test_unterminated();
	test_compressed();
	sh(fmt("rm -rf '%s'", tmp));
	return T_EXIT();
}
