// SPDX-License-Identifier: MIT
/*
 * Tests for elfobj (build IDs, segments, symbols, debug files, hostile
 * inputs) and objcache; test_elfobj_live.c reads this process's own
 * objects.  Fixtures are compiled at test time into
 * a temporary directory and checked against binutils (readelf, nm), an
 * independent reader.
 */
#include <dlfcn.h>
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
#include <sys/auxv.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <elf.h>

#include "elf/elfobj.h"
#include "elfobjcheck.h"
#include "elf/objcache.h"
#include "readelf_elf.h"
#include "testlib.h"
#include "testutil.h"

static char tmp[PATH_MAX - 128];
/* The host's root, for the debug links of objects seen from it. */
static int hostroot = -1;

/* --- helpers ---------------------------------------------------------- */

/* --- fixtures ------------------------------------------------------------- */

static const char exe_src[] =
	"#include <stdio.h>\n"
	"volatile int sink;\n"
	"__attribute__((noinline)) int cprof_fx_exported_one(int n)\n"
	"{ int s = 0; for (int i = 0; i < n; i++) s += i * sink; return s; }\n"
	"static __attribute__((noinline, used)) int cprof_fx_static_two(int n)\n"
	"{ int s = 1; for (int i = 0; i < n; i++) s ^= i + sink; return s * 3; }\n"
	"__attribute__((noinline)) int cprof_fx_exported_three(int n)\n"
	"{ int s = cprof_fx_static_two(n) + cprof_fx_exported_one(n);\n"
	"  for (int i = 0; i < n; i++) s += sink; return s; }\n"
	"int main(int argc, char **argv)\n"
	"{ (void)argv; printf(\"%d\\n\", cprof_fx_exported_three(argc)); return 0; }\n";

static const char lib_src[] =
	"volatile int lsink;\n"
	"__attribute__((noinline)) int cprof_lib_exported_a(int n)\n"
	"{ int s = 0; for (int i = 0; i < n; i++) s += i * lsink; return s; }\n"
	"static __attribute__((noinline, used)) int cprof_lib_static_b(int n)\n"
	"{ int s = 1; for (int i = 0; i < n; i++) s ^= i + lsink; return s * 5; }\n"
	"__attribute__((noinline)) int cprof_lib_exported_c(int n)\n"
	"{ int s = cprof_lib_static_b(n) + cprof_lib_exported_a(n);\n"
	"  for (int i = 0; i < n; i++) s += lsink; return s; }\n";

static const char *const exe_funcs[] = { "cprof_fx_exported_one", "cprof_fx_static_two",
					 "cprof_fx_exported_three", "main", NULL };
static const char *const lib_funcs[] = { "cprof_lib_exported_a", "cprof_lib_static_b",
					 "cprof_lib_exported_c", NULL };

static bool build_fixtures(void)
{
	if (!spit(fmt("%s/exe.c", tmp), exe_src, strlen(exe_src)) ||
	    !spit(fmt("%s/lib.c", tmp), lib_src, strlen(lib_src)))
		return false;
	return sh(fmt("cd '%s' && gcc -O1 -g -fno-pie -no-pie -Wl,--build-id -o nopie exe.c && "
		      "gcc -O1 -g -fPIE -pie -Wl,--build-id -o pie exe.c && "
		      "gcc -O1 -g -shared -fPIC -Wl,--build-id -o libfx.so lib.c && "
		      "gcc -O1 -g -shared -fPIC -Wl,--build-id -Wl,-z,noseparate-code "
		      "-o libns.so lib.c && "
		      "gcc -O1 -g -fPIE -pie -Wl,--build-id=none -o noid exe.c && "
		      "gcc -O1 -g -c -o lib.o lib.c",
		      tmp)) == 0;
}

/* --- tests ---------------------------------------------------------------- */

static void test_fixture(const char *file, const char *const *funcs, bool want_page_checks)
{
	char path[PATH_MAX], want_id[256], tname[256];
	struct load loads[16];
	struct errbuf err = { "" };
	struct elfobj *o;
	size_t nloads, page_checks = 0;
	uint64_t v, end = 0;
	int rc;

	snprintf(path, sizeof(path), "%s/%s", tmp, file);
	rc = open_obj(path, &o, &err);
	snprintf(tname, sizeof(tname), "%s: open", file);
	CHECK(rc == 0, tname, "rc %d: %s", rc, err.msg);
	if (rc)
		return;

	snprintf(tname, sizeof(tname), "%s: build ID matches readelf -n", file);
	if (readelf_build_id(path, want_id, sizeof(want_id)))
		CHECK_STR(elfobj_build_id(o), want_id, tname);
	else
		CHECK(false, tname, "readelf found no build ID");

	rc = elfobj_load_symbols(o, NULL, &err);
	snprintf(tname, sizeof(tname), "%s: load symbols", file);
	CHECK(rc == 0 && elfobj_nsyms(o) > 0 && !elfobj_syms_from_debug_file(o), tname,
	      "rc %d (%s), %zu symbols", rc, err.msg, elfobj_nsyms(o));
	snprintf(tname, sizeof(tname), "%s: symbols sorted, unique, named", file);
	CHECK(symbols_sane(o), tname, "bad symbol table");

	for (const char *const *f = funcs; *f; f++) {
		uint64_t addr, size;

		snprintf(tname, sizeof(tname), "%s: lookup %s", file, *f);
		if (!nm_sym(path, false, *f, &addr, &size)) {
			CHECK(false, tname, "nm does not list %s", *f);
			continue;
		}
		CHECK_STR(name_at(o, addr), *f, tname);
		snprintf(tname, sizeof(tname), "%s: lookup %s+%#" PRIx64, file, *f, size / 2);
		CHECK_STR(name_at(o, addr + size / 2), *f, tname);
		snprintf(tname, sizeof(tname), "%s: %s's end is not %s", file, *f, *f);
		CHECK(strcmp(name_at(o, addr + size), *f) != 0, tname, "%#" PRIx64 " -> %s",
		      addr + size, name_at(o, addr + size));
	}
	snprintf(tname, sizeof(tname), "%s: lookup below every symbol", file);
	CHECK(elfobj_lookup(o, 0) == NULL, tname, "got %s", name_at(o, 0));

	nloads = readelf_loads(path, loads, 16);
	snprintf(tname, sizeof(tname), "%s: readelf lists an executable LOAD", file);
	bool have_exec = false;

	for (size_t i = 0; i < nloads; i++)
		have_exec |= loads[i].exec;
	CHECK(have_exec, tname, "%zu LOAD segments, none executable", nloads);
	for (size_t i = 0; i < nloads; i++) {
		const struct load *l = &loads[i];
		uint64_t d = l->filesz > 32 ? 16 : l->filesz / 2, pa = l->off & ~4095ull;

		if (l->off + l->filesz > end)
			end = l->off + l->filesz;
		snprintf(tname, sizeof(tname), "%s: file_to_vaddr LOAD %zu%s", file, i,
			 l->exec ? " (text)" : "");
		v = 0;
		rc = elfobj_file_to_vaddr(o, l->off + d, &v);
		CHECK(rc == 0 && v == l->vaddr + d, tname, "rc %d, %#" PRIx64 " -> %#" PRIx64
		      ", expected %#" PRIx64, rc, l->off + d, v, l->vaddr + d);

		/*
		 * The page head a mapping of a code segment starts with, and the
		 * page tail it ends with, where no other segment claims them.
		 */
		if (!l->exec)
			continue;
		for (int k = 0; k < 2; k++) {
			uint64_t f = k ? l->off + l->filesz : pa;
			bool claimed = (k ? (f & 4095) == 0 : f == l->off);

			for (size_t j = 0; j < nloads; j++)
				if (j != i && f >= loads[j].off &&
				    f < loads[j].off + loads[j].filesz)
					claimed = true;
			if (claimed)
				continue;
			page_checks++;
			snprintf(tname, sizeof(tname), "%s: file_to_vaddr page %s of LOAD %zu",
				 file, k ? "tail" : "head", i);
			rc = elfobj_file_to_vaddr(o, f, &v);
			CHECK(rc == 0 && v == f - l->off + l->vaddr, tname,
			      "rc %d, %#" PRIx64 " -> %#" PRIx64, rc, f, v);
		}
	}
	if (want_page_checks) {
		snprintf(tname, sizeof(tname), "%s: page head/tail cases exist", file);
		CHECK(page_checks > 0, tname, "the layout has none");
	}
	snprintf(tname, sizeof(tname), "%s: file_to_vaddr past every segment", file);
	CHECK(elfobj_file_to_vaddr(o, end + (1u << 20), &v) == -ENOENT, tname, "found %#" PRIx64,
	      v);
	elfobj_free(o);
}

/*
 * The first 64 bytes from the entry point are _start where no sized
 * symbol holds them: a stripped program's (as, ld) and ld.so's outermost
 * frames; a real _start keeps its own extent.
 */
static void test_entry_name(void)
{
	const char *ldso = "/lib64/ld-linux-x86-64.so.2";
	char path[PATH_MAX];
	uint64_t e, a, size;
	struct elfobj *o;

	snprintf(path, sizeof(path), "%s/pie", tmp);
	e = entry_of(path);
	o = elfobj_at(path);
	CHECK(o && e && elfobj_load_symbols(o, NULL, NULL) == 0 &&
		      nm_sym(path, false, "_start", &a, &size) && a == e && size < 64,
	      "entry: pie has a sized _start at its entry point", "no");
	if (o) {
		CHECK_STR(name_at(o, e), "_start", "entry: pie's _start by its symbol");
		CHECK(strcmp(name_at(o, e + size), "_start") != 0,
		      "entry: past its sized _start, not _start",
		      "%s", name_at(o, e + size));
		elfobj_free(o);
	}
	if (sh(fmt("strip -o '%s/pie.stripped' '%s'", tmp, path))) {
		CHECK(false, "entry: strip", "failed");
		return;
	}
	snprintf(path, sizeof(path), "%s/pie.stripped", tmp);
	o = elfobj_at(path);
	CHECK(o && elfobj_load_symbols(o, NULL, NULL) == 0 && !elfobj_lookup(o, e + 100),
	      "entry: a stripped program names nothing past its entry", "got %s",
	      o ? name_at(o, e + 100) : "no object");
	if (o) {
		CHECK_STR(name_at(o, e), "_start", "entry: a stripped program's entry is _start");
		CHECK_STR(name_at(o, e + 63), "_start", "entry: ... for 64 bytes");
		CHECK(!elfobj_lookup(o, e + 64), "entry: ... and no further", "got %s",
		      name_at(o, e + 64));
		CHECK(!elfobj_lookup(o, e - 1), "entry: ... nor before it", "got %s",
		      name_at(o, e - 1));
		elfobj_free(o);
	}
	e = entry_of(ldso);
	o = elfobj_at(ldso);
	if (!o || !e) {
		T_SKIP("entry: ld.so", "%s not readable", ldso);
	} else {
		CHECK(elfobj_load_symbols(o, NULL, NULL) == 0, "entry: ld.so's symbols", "failed");
		/* the return address of _start's call to _dl_start */
		CHECK_STR(name_at(o, e + 8), "_start", "entry: ld.so's entry point is _start");
	}
	if (o)
		elfobj_free(o);
}

/* Loads @path's symbols with @opts; looks up @fn (address from nm on @orig). */
static void check_debug_case(const char *tname, const char *path, const char *orig,
			     const struct elfobj_debug_opts *opts, bool want_debug,
			     bool want_static)
{
	struct errbuf err = { "" };
	uint64_t a_static = 0, a_exp = 0, size;
	struct elfobj *o;
	char n1[300], n2[300];
	int rc;

	rc = open_obj(path, &o, &err);
	if (rc) {
		CHECK(false, tname, "open: %s", err.msg);
		return;
	}
	rc = elfobj_load_symbols(o, opts, &err);
	nm_sym(orig, false, "cprof_lib_static_b", &a_static, &size);
	nm_sym(orig, false, "cprof_lib_exported_a", &a_exp, &size);
	snprintf(n1, sizeof(n1), "%s: symbols from debug file: %s", tname,
		 want_debug ? "yes" : "no");
	CHECK(rc == 0 && elfobj_syms_from_debug_file(o) == want_debug, n1,
	      "rc %d (%s), from debug file %d", rc, err.msg, elfobj_syms_from_debug_file(o));
	snprintf(n2, sizeof(n2), "%s: static function %s", tname,
		 want_static ? "found" : "not found");
	if (want_static)
		CHECK_STR(name_at(o, a_static), "cprof_lib_static_b", n2);
	else
		CHECK(strcmp(name_at(o, a_static), "cprof_lib_static_b") != 0, n2, "found it");
	snprintf(n2, sizeof(n2), "%s: exported function found", tname);
	CHECK_STR(name_at(o, a_exp), "cprof_lib_exported_a", n2);
	elfobj_free(o);
}

static void test_debug_files(void)
{
	char id[256], lib[PATH_MAX], nodebug[PATH_MAX], root[PATH_MAX], path[PATH_MAX];
	struct elfobj_debug_opts opts = { 0 };

	snprintf(lib, sizeof(lib), "%s/libfx.so", tmp);

	if (!readelf_build_id(lib, id, sizeof(id)) ||
	    sh(fmt("cd '%s' && objcopy --only-keep-debug libfx.so libfx.debug && "
		   "cp libfx.so libfx.stripped.so && strip --strip-all libfx.stripped.so && "
		   "objcopy --add-gnu-debuglink=libfx.debug libfx.stripped.so && "
		   "cp libfx.so libfx.nolink.so && strip --strip-all libfx.nolink.so && "
		   "objcopy --only-keep-debug pie pie.debug && "
		   "mkdir -p debug/.build-id/%.2s wrongid/.build-id/%.2s nodebug "
		   "b b2/.debug b3 b4 b5 c s && "
		   "cp libfx.debug debug/.build-id/%.2s/%s.debug && "
		   "cp pie.debug wrongid/.build-id/%.2s/%s.debug && "
		   "for d in b b2 b3 b4 b5 c; do cp libfx.stripped.so $d/libfx.so; done && "
		   "cp libfx.debug b/ && cp libfx.debug b2/.debug/ && cp libfx.debug b3/ && "
		   "mkdir -p 'dr%s/b4' && cp libfx.debug 'dr%s/b4/' && "
		   "ln -s /b3/libfx.debug b5/libfx.debug && "
		   "cp libfx.debug c/ && printf x >> c/libfx.debug && "
		   "cp libfx.nolink.so s/libfx.so",
		   tmp, id, id, id, id + 2, id, id + 2, tmp, tmp))) {
		CHECK(false, "debug files: fixtures", "could not build them");
		return;
	}
	snprintf(nodebug, sizeof(nodebug), "%s/nodebug", tmp);

	/* (a) by build ID only: no path, so no debuglink search. */
	snprintf(root, sizeof(root), "%s/debug", tmp);
	opts = (struct elfobj_debug_opts){ .debug_root = root };
	check_debug_case("debug by build ID", fmt("%s/libfx.stripped.so", tmp), lib, &opts,
			 true, true);

	/* A file at the build-ID path whose own build ID differs is refused. */
	snprintf(root, sizeof(root), "%s/wrongid", tmp);
	opts = (struct elfobj_debug_opts){ .debug_root = root };
	check_debug_case("debug with wrong build ID", fmt("%s/libfx.stripped.so", tmp), lib,
			 &opts, false, false);

	/* (b) by .gnu_debuglink: next to the object, in .debug/, under debug_root. */
	snprintf(path, sizeof(path), "%s/b/libfx.so", tmp);
	opts = (struct elfobj_debug_opts){ .debug_root = nodebug, .path = path, .root_fd = hostroot };
	check_debug_case("debuglink beside", path, lib, &opts, true, true);

	snprintf(path, sizeof(path), "%s/b2/libfx.so", tmp);
	opts.path = path;
	check_debug_case("debuglink in .debug/", path, lib, &opts, true, true);

	snprintf(path, sizeof(path), "%s/b4/libfx.so", tmp);
	snprintf(root, sizeof(root), "%s/dr", tmp);
	opts = (struct elfobj_debug_opts){ .debug_root = root, .path = path };
	check_debug_case("debuglink under debug_root", path, lib, &opts, true, true);

	/* As a process in another root sees it: path inside, prefix outside. */
	opts = (struct elfobj_debug_opts){ .debug_root = nodebug, .path = "/b3/libfx.so",
					   .root_fd = open(tmp, O_PATH | O_DIRECTORY | O_CLOEXEC) };
	check_debug_case("debuglink in another root", fmt("%s/b3/libfx.so", tmp), lib, &opts,
			 true, true);

	/* An absolute symlink there resolves inside that root, not on the host. */
	opts.path = "/b5/libfx.so";
	check_debug_case("debuglink symlink stays in root", fmt("%s/b5/libfx.so", tmp), lib,
			 &opts, true, true);
	close(opts.root_fd);

	/* (c) a debug file whose CRC does not match is refused: .dynsym only. */
	snprintf(path, sizeof(path), "%s/c/libfx.so", tmp);
	opts = (struct elfobj_debug_opts){ .debug_root = nodebug, .path = path, .root_fd = hostroot };
	check_debug_case("debuglink with wrong CRC", path, lib, &opts, false, false);

	/* Stripped, no debug file anywhere: .dynsym has the exported functions. */
	snprintf(path, sizeof(path), "%s/s/libfx.so", tmp);
	opts.path = path;
	check_debug_case("stripped, no debug file", path, lib, &opts, false, false);

	/* Idempotent: a second call returns the first's result. */
	{
		struct errbuf err = { "" };
		struct elfobj *o;

		snprintf(root, sizeof(root), "%s/debug", tmp);
		opts = (struct elfobj_debug_opts){ .debug_root = root };
		if (open_obj(fmt("%s/libfx.stripped.so", tmp), &o, &err) == 0) {
			size_t n1;

			elfobj_load_symbols(o, &opts, &err);
			n1 = elfobj_nsyms(o);
			CHECK(elfobj_load_symbols(o, NULL, &err) == 0 && elfobj_nsyms(o) == n1 &&
			      elfobj_syms_from_debug_file(o),
			      "load_symbols is idempotent", "%zu then %zu symbols", n1,
			      elfobj_nsyms(o));
			elfobj_free(o);
		}
	}
}

/* --- hostile inputs ------------------------------------------------------- */

/* Opens @img (written to a file) and does everything a caller would. */
static int exercise_file(const char *path, const void *img, size_t len, struct errbuf *err,
			 size_t *nsyms)
{
	struct elfobj_debug_opts opts = { .debug_root = tmp, .path = path, .root_fd = hostroot };
	struct elfobj *o;
	uint64_t v;
	int rc;

	*nsyms = 0;
	if (!spit(path, img, len))
		return -EIO;
	rc = open_obj(path, &o, err);
	if (rc)
		return rc;
	rc = elfobj_load_symbols(o, &opts, err);
	*nsyms = elfobj_nsyms(o);
	elfobj_find_dynamic(o, (struct elfsyms_named[]){ { .name = "cprof_lib_exported_a" } }, 1,
			    NULL);
	for (uint64_t a = 0; a < 0x10000; a += 0x100) {
		elfobj_lookup(o, a);
		elfobj_file_to_vaddr(o, a, &v);
	}
	elfobj_free(o);
	return rc;
}

static Elf64_Shdr *find_shdr(uint8_t *img, size_t len, const char *name)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
	Elf64_Shdr *sh = (Elf64_Shdr *)(img + eh->e_shoff), *str = &sh[eh->e_shstrndx];

	for (size_t i = 0; i < eh->e_shnum; i++)
		if (str->sh_offset + sh[i].sh_name < len &&
		    strcmp((char *)img + str->sh_offset + sh[i].sh_name, name) == 0)
			return &sh[i];
	return NULL;
}

/*
 * Symbols by name in @orig's .dynsym: as nm -D has them, and the same
 * with its .dynsym or .dynstr claiming 2^62 bytes (read up to the end of
 * the file: the real entries come first).  @img: room for a copy.
 */
static void test_corrupt_dynamic(const uint8_t *orig, uint8_t *img, size_t len)
{
	static const char *const sections[] = { NULL, ".dynsym", ".dynstr" };
	const char *lib = fmt("%s/libfx.so", tmp);
	uint64_t addr[3] = { 0 }, size[3] = { 0 };
	bool nm[3];

	for (int k = 0; k < 2; k++)
		nm[k] = nm_sym(lib, true, k ? "lsink" : "cprof_lib_exported_a", &addr[k], &size[k]);
	nm[2] = nm_sym(lib, true, "cprof_lib_static_b", &addr[2], &size[2]);
	for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]); i++) {
		struct elfsyms_named want[] = {
			{ .name = "cprof_lib_exported_a" }, { .name = "lsink" },
			{ .name = "cprof_lib_static_b" },
		};
		struct errbuf err = { "" };
		Elf64_Shdr *sh = NULL;
		struct elfobj *o;
		char tname[128];
		int rc;

		memcpy(img, orig, len);
		if (sections[i] && (sh = find_shdr(img, len, sections[i])))
			sh->sh_size = 1ull << 62;
		snprintf(tname, sizeof(tname), "dynamic symbols by name%s%s%s", sections[i] ? ", " : "",
			 sections[i] ? sections[i] : "", sections[i] ? " sh_size 2^62" : "");
		if (sections[i] && !sh) {
			CHECK(false, tname, "fixture has no such section");
			continue;
		}
		rc = elfobj_open_mem(&o, img, len, &err);
		if (!rc) {
			rc = elfobj_find_dynamic(o, want, 3, &err);
			elfobj_free(o);
		}
		CHECK(rc == 0 && nm[0] && nm[1] && !nm[2] && want[0].found && want[1].found &&
		      !want[2].found && want[0].value == addr[0] && want[0].size == size[0] &&
		      want[1].value == addr[1] && want[1].size == size[1], tname,
		      "rc %d (%s): found %d %d %d, %#" PRIx64 " %#" PRIx64 ", nm %d %d %d, %#" PRIx64
		      " %#" PRIx64, rc, err.msg, want[0].found, want[1].found, want[2].found,
		      want[0].value, want[1].value, nm[0], nm[1], nm[2], addr[0], addr[1]);
	}
}

static void test_corrupt(void)
{
	char bad[PATH_MAX];
	struct errbuf err = { "" };
	size_t len, nsyms;
	uint8_t *orig = slurp(fmt("%s/libfx.so", tmp), &len), *img;
	Elf64_Shdr *sh;
	int rc;

	snprintf(bad, sizeof(bad), "%s/bad.so", tmp);
	if (!orig || len < 4096) {
		CHECK(false, "corrupt inputs: fixture", "cannot read libfx.so");
		free(orig);
		return;
	}
	img = malloc(len + 4096);

	/* Truncations: an error or fewer symbols, never a crash. */
	static const size_t cuts[] = { 0, 10, 63, 64, 200, 1000, 4096 };
	bool trunc_ok = true;

	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]) + 3; i++) {
		size_t cut = i < sizeof(cuts) / sizeof(cuts[0])
				     ? cuts[i]
				     : len * (i - sizeof(cuts) / sizeof(cuts[0]) + 1) / 4;

		rc = exercise_file(bad, orig, cut, &err, &nsyms);
		if (cut < 64 && (rc == 0 || !strstr(err.msg, bad)))
			trunc_ok = false;
	}
	CHECK(trunc_ok, "truncated files: errors naming the file, no crash", "last: %s",
	      err.msg);

	/* Garbage. */
	srand(1);
	for (size_t i = 0; i < 4096; i++)
		img[i] = (uint8_t)rand();
	rc = exercise_file(bad, img, 4096, &err, &nsyms);
	CHECK(rc == -ENOEXEC && strstr(err.msg, "not an ELF file") && strstr(err.msg, bad),
	      "garbage: not an ELF file", "rc %d: %s", rc, err.msg);
	memcpy(img, ELFMAG, SELFMAG);
	img[EI_CLASS] = ELFCLASS64;
	img[EI_DATA] = ELFDATA2LSB;
	rc = exercise_file(bad, img, 4096, &err, &nsyms);
	CHECK(rc < 0, "ELF magic then garbage: error", "rc %d, %zu symbols", rc, nsyms);

	/* ELF32, relocatable objects: refused with a reason. */
	memcpy(img, orig, len);
	img[EI_CLASS] = ELFCLASS32;
	rc = exercise_file(bad, img, len, &err, &nsyms);
	CHECK(rc < 0 && strstr(err.msg, "64-bit"), "ELF32: refused", "rc %d: %s", rc, err.msg);
	{
		struct elfobj *o;

		rc = open_obj(fmt("%s/lib.o", tmp), &o, &err);
		CHECK(rc < 0 && strstr(err.msg, "type"), "relocatable object: refused",
		      "rc %d: %s", rc, err.msg);
		if (!rc)
			elfobj_free(o);
	}

	/* Section headers past EOF: headers still fine, no symbols. */
	memcpy(img, orig, len);
	((Elf64_Ehdr *)img)->e_shoff = len + 100000;
	rc = exercise_file(bad, img, len, &err, &nsyms);
	CHECK(nsyms == 0, "section headers past EOF: no symbols, no crash", "rc %d, %zu symbols",
	      rc, nsyms);

	/* Extended section count claiming 2^40 sections. */
	memcpy(img, orig, len);
	((Elf64_Ehdr *)img)->e_shnum = 0;
	((Elf64_Shdr *)(img + ((Elf64_Ehdr *)img)->e_shoff))->sh_size = 1ull << 40;
	rc = exercise_file(bad, img, len, &err, &nsyms);
	CHECK(rc < 0 && strstr(err.msg, "sections"), "2^40 sections: refused", "rc %d: %s", rc,
	      err.msg);

	/* .symtab claiming a huge count; then its string table; then its entsize. */
	static const struct {
		const char *what;
		int field;
	} patches[] = {
		{ ".symtab sh_size 2^62", 0 },
		{ ".strtab sh_size 2^62", 1 },
		{ ".symtab sh_offset past EOF", 2 },
		{ ".symtab sh_entsize 1", 3 },
		{ ".symtab sh_link out of range", 4 },
	};
	for (size_t i = 0; i < sizeof(patches) / sizeof(patches[0]); i++) {
		char tname[128];

		memcpy(img, orig, len);
		sh = find_shdr(img, len, patches[i].field == 1 ? ".strtab" : ".symtab");
		if (!sh) {
			CHECK(false, patches[i].what, "fixture has no such section");
			continue;
		}
		switch (patches[i].field) {
		case 0:
		case 1:
			sh->sh_size = 1ull << 62;
			break;
		case 2:
			sh->sh_offset = len + 5;
			break;
		case 3:
			sh->sh_entsize = 1;
			break;
		case 4:
			sh->sh_link = 60000;
			break;
		}
		rc = exercise_file(bad, img, len, &err, &nsyms);
		snprintf(tname, sizeof(tname), "%s: bounded, no crash", patches[i].what);
		CHECK(nsyms <= len / sizeof(Elf64_Sym), tname, "rc %d, %zu symbols", rc, nsyms);
	}

	test_corrupt_dynamic(orig, img, len);

	/* The build-ID note claiming a huge name, then a huge descriptor. */
	for (int field = 0; field < 2; field++) {
		struct elfobj *o;
		const char *tname = field ? "note with huge descsz: no build ID"
					  : "note with huge namesz: no build ID";

		memcpy(img, orig, len);
		sh = find_shdr(img, len, ".note.gnu.build-id");
		if (!sh) {
			CHECK(false, tname, "fixture has no .note.gnu.build-id");
			continue;
		}
		memcpy(img + sh->sh_offset + 4 * field, &(uint32_t){ 0xfffffff0u }, 4);
		rc = elfobj_open_mem(&o, img, len, &err);
		CHECK(rc == 0 && strcmp(elfobj_build_id(o), "") == 0, tname, "rc %d, id '%s'", rc,
		      rc ? "" : elfobj_build_id(o));
		if (!rc)
			elfobj_free(o);
	}

	/*
	 * An 8-aligned note segment (as linkers emit for .note.gnu.property):
	 * a 12-byte property descriptor padded to 16, then the build ID.
	 */
	{
		Elf64_Ehdr *eh = (Elf64_Ehdr *)orig;
		Elf64_Phdr *ph = NULL;
		uint8_t note[68] = { 0 }, id[20];
		char want[41];
		struct elfobj *o;

		memcpy(img, orig, len);
		for (size_t i = 0; i < eh->e_phnum; i++) {
			Elf64_Phdr *p = (Elf64_Phdr *)(img + eh->e_phoff) + i;

			if (p->p_type == PT_NOTE && p->p_filesz == 36 && !ph)
				ph = p;
		}
		if (!ph) {
			CHECK(false, "8-aligned notes: build ID found", "no 36-byte PT_NOTE");
		} else {
			memcpy(id, img + ph->p_offset + 16, 20);
			for (int i = 0; i < 20; i++)
				snprintf(want + 2 * i, 3, "%02x", id[i]);
			memcpy(note, &(uint32_t[]){ 4, 12, 5 }, 12); /* NT_GNU_PROPERTY_TYPE_0 */
			memcpy(note + 12, "GNU", 4);
			memcpy(note + 32, &(uint32_t[]){ 4, 20, NT_GNU_BUILD_ID }, 12);
			memcpy(note + 44, "GNU", 4);
			memcpy(note + 48, id, 20);
			memcpy(img + ph->p_offset, note, sizeof(note));
			ph->p_filesz = ph->p_memsz = sizeof(note);
			ph->p_align = 8;
			rc = elfobj_open_mem(&o, img, len, &err);
			CHECK(rc == 0 && strcmp(elfobj_build_id(o), want) == 0,
			      "8-aligned notes: build ID found", "rc %d, id '%s'", rc,
			      rc ? "" : elfobj_build_id(o));
			if (!rc)
				elfobj_free(o);
		}
	}

	/* Random mutations, mostly in the headers (sanitizer builds catch more). */
	uint64_t x = 0x9e3779b97f4a7c15ull;
	size_t opened = 0, iters = 3000;
	Elf64_Ehdr *eh0 = (Elf64_Ehdr *)orig;

	for (size_t it = 0; it < iters; it++) {
		struct elfobj *o;
		int nmut;

#define RND() (x ^= x << 13, x ^= x >> 7, x ^= x << 17, x)
		memcpy(img, orig, len);
		nmut = 1 + (int)(RND() % 16);
		for (int m = 0; m < nmut; m++) {
			uint64_t r = RND(), pos;

			switch (r % 4) {
			case 0:
				pos = RND() % sizeof(Elf64_Ehdr);
				break;
			case 1:
				pos = eh0->e_phoff + RND() % (eh0->e_phnum * sizeof(Elf64_Phdr));
				break;
			case 2:
				pos = eh0->e_shoff + RND() % (eh0->e_shnum * sizeof(Elf64_Shdr));
				break;
			default:
				pos = RND() % len;
			}
			if (pos >= len)
				continue;
			img[pos] = (r >> 8) % 3 == 0 ? 0xff : (r >> 8) % 3 == 1 ? 0 : (uint8_t)(r >> 16);
		}
		if (elfobj_open_mem(&o, img, len, &err) == 0) {
			uint64_t v;

			opened++;
			elfobj_load_symbols(o, NULL, &err);
			elfobj_find_dynamic(o, (struct elfsyms_named[]){ { .name = "lsink" } }, 1, &err);
			for (uint64_t a = 0; a < 0x6000; a += 0x40) {
				elfobj_lookup(o, a);
				elfobj_file_to_vaddr(o, a, &v);
			}
			if (!symbols_sane_as(o, true))
				t_failed++, printf("not ok - fuzz: insane symbols at iteration %zu\n", it);
			elfobj_free(o);
		}
		if (it % 100 == 0)
			exercise_file(bad, img, len, &err, &nsyms);
	}
	CHECK(opened > 0, "3000 mutated images: no crash", "none even opened");
	printf("# fuzz: %zu of %zu mutated images opened\n", opened, iters);
	free(img);
	free(orig);
}

/* --- objcache ---------------------------------------------------------------- */

static int cache_get(struct objcache *c, const char *path, struct elfobj **o, int *fdp)
{
	struct errbuf err = { "" };
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fdp)
		*fdp = fd;
	return objcache_get(c, fd, o, &err);
}

static void test_objcache(void)
{
	struct objcache *c = objcache_new();
	struct elfobj *a = NULL, *b = NULL, *copy = NULL, *other = NULL, *n1 = NULL, *n2 = NULL,
		      *ncopy = NULL, *g = NULL;
	char lib[PATH_MAX], libcopy[PATH_MAX], noid[PATH_MAX], noidcopy[PATH_MAX];
	int fd2 = -1, rc;

	snprintf(lib, sizeof(lib), "%s/libfx.so", tmp);
	snprintf(libcopy, sizeof(libcopy), "%s/libfx.copy.so", tmp);
	snprintf(noid, sizeof(noid), "%s/noid", tmp);
	snprintf(noidcopy, sizeof(noidcopy), "%s/noid.copy", tmp);

	if (!c) {
		CHECK(false, "objcache: new", "out of memory");
		return;
	}
	if (sh(fmt("cp '%s' '%s' && cp '%s' '%s'", lib, libcopy, noid, noidcopy))) {
		CHECK(false, "objcache: fixtures", "cp failed");
		objcache_free(c);
		return;
	}
	rc = cache_get(c, lib, &a, NULL) | cache_get(c, lib, &b, &fd2);
	CHECK(rc == 0 && a && a == b && objcache_count(c) == 1,
	      "objcache: same file twice, one object", "rc %d, %p %p, count %zu", rc, (void *)a,
	      (void *)b, objcache_count(c));
	CHECK(fd2 >= 0 && fcntl(fd2, F_GETFD) == -1 && errno == EBADF,
	      "objcache: the second fd was closed", "fd %d still open", fd2);
	rc = cache_get(c, libcopy, &copy, NULL);
	CHECK(rc == 0 && copy == a && objcache_count(c) == 1,
	      "objcache: a copy with the same build ID, same object", "rc %d, count %zu", rc,
	      objcache_count(c));
	rc = cache_get(c, libcopy, &g, NULL);
	CHECK(rc == 0 && g == a && objcache_count(c) == 1,
	      "objcache: the copy again (now by file key)", "rc %d, count %zu", rc,
	      objcache_count(c));
	rc = cache_get(c, fmt("%s/pie", tmp), &other, NULL);
	CHECK(rc == 0 && other && other != a && objcache_count(c) == 2,
	      "objcache: another file, another object", "rc %d, count %zu", rc,
	      objcache_count(c));

	/* No build ID: one object per file identity. */
	rc = cache_get(c, noid, &n1, NULL) | cache_get(c, noid, &n2, NULL) |
	     cache_get(c, noidcopy, &ncopy, NULL);
	CHECK(rc == 0 && n1 == n2 && ncopy != n1 && objcache_count(c) == 4 &&
	      strcmp(elfobj_build_id(n1), "") == 0,
	      "objcache: no build ID, keyed by file", "rc %d, count %zu", rc, objcache_count(c));

	{
		struct errbuf err = { "" };
		struct elfobj *bad = NULL;
		int fd = open(fmt("%s/exe.c", tmp), O_RDONLY | O_CLOEXEC);

		rc = objcache_get(c, fd, &bad, &err);
		CHECK(rc < 0 && !bad && objcache_count(c) == 4 && strstr(err.msg, "not an ELF"),
		      "objcache: non-ELF refused, nothing cached", "rc %d: %s", rc, err.msg);
	}

	objcache_ref(c, a);
	objcache_put(c, a); /* the ref's */
	objcache_put(c, a);
	objcache_put(c, b);
	objcache_put(c, copy);
	CHECK(objcache_count(c) == 4, "objcache: held while references remain", "count %zu",
	      objcache_count(c));
	objcache_put(c, g);
	CHECK(objcache_count(c) == 3, "objcache: freed with its last reference", "count %zu",
	      objcache_count(c));
	rc = cache_get(c, lib, &a, NULL);
	CHECK(rc == 0 && objcache_count(c) == 4, "objcache: reopened after release", "count %zu",
	      objcache_count(c));
	objcache_put(c, a);
	objcache_put(c, other);
	objcache_put(c, n1);
	objcache_put(c, n2);
	objcache_put(c, ncopy);
	CHECK(objcache_count(c) == 0, "objcache: empty after every put", "count %zu",
	      objcache_count(c));

	/* Freeing a cache that still holds objects releases them. */
	cache_get(c, lib, &a, NULL);
	cache_get(c, noid, &n1, NULL);
	objcache_free(c);
	T_OK("objcache: free with live objects");
}

int main(void)
{
	char tmpl[] = "/tmp/cprof-test-elfobj-XXXXXX";

	setvbuf(stdout, NULL, _IOLBF, 0);
	T_PLAN(158);
	if (!mkdtemp(tmpl)) {
		CHECK(false, "elfobj: temp dir", "%s", strerror(errno));
		return T_EXIT();
	}
	snprintf(tmp, sizeof(tmp), "%s", tmpl);
	hostroot = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (sh("command -v gcc >/dev/null && command -v readelf >/dev/null && "
	       "command -v nm >/dev/null && command -v objcopy >/dev/null && "
	       "command -v strip >/dev/null")) {
		T_SKIP("elfobj fixtures", "needs gcc and binutils");
	} else if (!build_fixtures()) {
		CHECK(false, "elfobj fixtures", "could not compile them");
	} else {
		test_fixture("nopie", exe_funcs, false);
		test_fixture("pie", exe_funcs, false);
		test_fixture("libfx.so", lib_funcs, false);
		test_fixture("libns.so", lib_funcs, true);
		test_entry_name();
		test_debug_files();
		test_corrupt();
		test_objcache();
	}
	sh(fmt("rm -rf '%s'", tmp));
	return T_EXIT();
}
