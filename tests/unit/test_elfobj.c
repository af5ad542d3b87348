// SPDX-License-Identifier: MIT
/*
 * Tests for elfobj (build IDs, segments, symbols, debug files) and
 * objcache; test_elfobj_corrupt.c gives it hostile inputs, and
 * test_elfobj_live.c reads this process's own objects.  Fixtures are compiled at test time into
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
	T_PLAN(139);
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
		test_objcache();
	}
	sh(fmt("rm -rf '%s'", tmp));
	return T_EXIT();
}
