// SPDX-License-Identifier: MIT
/*
 * elfobj over the objects this test process itself runs: the vDSO from
 * memory, libc and libelf by a runtime address, and python3 with its debug
 * file where there is one; libc's and python3's dynamic symbols by name,
 * against nm -D.
 */
#include <dlfcn.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "elf/elfobj.h"
#include "elfobjcheck.h"
#include "testlib.h"
#include "testutil.h"

/* The host's root, for the debug links of objects seen from it. */
static int hostroot = -1;

/* --- vDSO, system libraries ------------------------------------------------ */

static bool maps_find(uint64_t addr, const char *name, uint64_t *start, uint64_t *end,
		      uint64_t *off, char *path, size_t pathsz)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[PATH_MAX + 256];
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long long s, e, o;
		int n = 0;

		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %n", &s, &e, &o, &n) < 3 || !n)
			continue;
		line[strcspn(line, "\n")] = '\0';
		if (name ? strcmp(line + n, name) == 0 : (addr >= s && addr < e)) {
			*start = s;
			*end = e;
			*off = o;
			snprintf(path, pathsz, "%s", line + n);
			found = true;
		}
	}
	fclose(f);
	return found;
}

static void test_vdso(void)
{
	uint64_t base = getauxval(AT_SYSINFO_EHDR), start, end, off, v = 1;
	struct errbuf err = { "" };
	const struct elfobj_sym *syms, *cg = NULL;
	struct elfobj *o;
	char path[64];
	size_t n;
	int rc;

	if (!base || !maps_find(0, "[vdso]", &start, &end, &off, path, sizeof(path)) ||
	    start != base) {
		T_SKIP("vDSO", "no vDSO in this process");
		return;
	}
	rc = elfobj_open_mem(&o, (const void *)(uintptr_t)base, end - start, &err);
	CHECK(rc == 0, "vDSO: open_mem", "rc %d: %s", rc, err.msg);
	if (rc)
		return;
	CHECK(strlen(elfobj_build_id(o)) >= 16, "vDSO: has a build ID", "'%s'",
	      elfobj_build_id(o));
	rc = elfobj_load_symbols(o, NULL, &err);
	syms = elfobj_symbols(o, &n);
	for (size_t i = 0; i < n; i++)
		if (strcmp(syms[i].name, "__vdso_clock_gettime") == 0)
			cg = &syms[i];
	CHECK(rc == 0 && cg, "vDSO: __vdso_clock_gettime among its symbols",
	      "rc %d, %zu symbols", rc, n);
	if (cg) {
		CHECK_STR(name_at(o, cg->start + 1), "__vdso_clock_gettime",
			  "vDSO: lookup inside __vdso_clock_gettime");
		CHECK(elfobj_file_to_vaddr(o, cg->start, &v) == 0 && v == cg->start,
		      "vDSO: file offsets are virtual addresses", "%#" PRIx64 " -> %#" PRIx64,
		      cg->start, v);
	}
	elfobj_free(o);
}

/* Opens, maps and symbolizes a runtime address of a loaded library. */
static void test_runtime_lookup(const char *what, void *fn, const char *want_substr)
{
	uint64_t start, end, off, v = 0;
	struct errbuf err = { "" };
	char path[PATH_MAX], tname[PATH_MAX + 128];
	struct elfobj *o;
	double t0, t1;
	long r0, r1;
	int rc;

	if (!fn || !maps_find((uintptr_t)fn, NULL, &start, &end, &off, path, sizeof(path))) {
		T_SKIP(what, "not found in /proc/self/maps");
		return;
	}
	r0 = rss_kib();
	t0 = now_ms();
	rc = open_obj(path, &o, &err);
	if (!rc)
		rc = elfobj_load_symbols(o, &(struct elfobj_debug_opts){ .debug_root = "/usr/lib/debug" },
					 &err);
	t1 = now_ms();
	r1 = rss_kib();
	snprintf(tname, sizeof(tname), "%s: load symbols of %s", what, path);
	CHECK(rc == 0 && symbols_sane(o), tname, "rc %d: %s", rc, err.msg);
	if (rc) {
		elfobj_free(o);
		return;
	}
	printf("# %s: %zu symbols%s in %.1f ms, RSS +%ld KiB\n", path, elfobj_nsyms(o),
	       elfobj_syms_from_debug_file(o) ? " (debug file)" : "", t1 - t0, r1 - r0);
	snprintf(tname, sizeof(tname), "%s: runtime address -> symbol", what);
	rc = elfobj_file_to_vaddr(o, (uintptr_t)fn - start + off, &v);
	CHECK(rc == 0 && strstr(name_at(o, v), want_substr), tname, "rc %d, vaddr %#" PRIx64
	      " -> %s", rc, v, name_at(o, v));
	elfobj_free(o);
}

static void test_python(void)
{
	const char *py = "/usr/bin/python3";
	struct errbuf err = { "" };
	struct elfobj *o;
	double t0, t1;
	long r0, r1;
	int rc;

	if (access(py, R_OK)) {
		T_SKIP("python3 symbols", "%s not installed", py);
		return;
	}
	r0 = rss_kib();
	t0 = now_ms();
	rc = open_obj(py, &o, &err);
	if (!rc)
		rc = elfobj_load_symbols(o, &(struct elfobj_debug_opts){ .debug_root = "/usr/lib/debug",
									 .path = py, .root_fd = hostroot },
					 &err);
	t1 = now_ms();
	r1 = rss_kib();
	CHECK(rc == 0 && elfobj_nsyms(o) > 100 && symbols_sane(o), "python3: load symbols",
	      "rc %d (%s)", rc, err.msg);
	if (!rc)
		printf("# %s: %zu symbols%s in %.1f ms, RSS +%ld KiB\n", py, elfobj_nsyms(o),
		       elfobj_syms_from_debug_file(o) ? " (debug file)" : "", t1 - t0, r1 - r0);
	elfobj_free(o);
}

/*
 * Looks @names up among the dynamic symbols of @path and checks each
 * against nm -D: found where nm finds it, at its address with its size.
 */
static void check_find_dynamic(const char *what, const char *path, const char *const *names,
			       size_t n)
{
	struct elfsyms_named want[8];
	struct errbuf err = { "" };
	char tname[PATH_MAX + 128];
	struct elfobj *o;
	int rc;

	if (n > sizeof(want) / sizeof(want[0]) || open_obj(path, &o, &err)) {
		CHECK(false, what, "cannot open %s: %s", path, err.msg);
		return;
	}
	for (size_t k = 0; k < n; k++)
		want[k] = (struct elfsyms_named){ .name = names[k], .found = true, .value = 1 };
	rc = elfobj_find_dynamic(o, want, n, &err);
	CHECK(rc == 0, what, "rc %d: %s", rc, err.msg);
	for (size_t k = 0; k < n && !rc; k++) {
		uint64_t addr = 0, size = 0;
		bool nm = nm_sym(path, true, names[k], &addr, &size);

		snprintf(tname, sizeof(tname), "%s: %s as nm -D has it", what, names[k]);
		CHECK(want[k].found == nm && (!nm || (want[k].value == addr && want[k].size == size)) &&
		      (nm || (!want[k].value && !want[k].size)), tname,
		      "found %d at %#" PRIx64 " size %" PRIu64 ", nm: %d at %#" PRIx64 " size %" PRIu64,
		      want[k].found, want[k].value, want[k].size, nm, addr, size);
	}
	elfobj_free(o);
}

/* Symbols by name, of libc (functions, weak ones, data) and of python3 (its runtime). */
static void test_find_dynamic(void)
{
	static const char *const libc_names[] = { "malloc", "getpid", "environ",
						  "_IO_2_1_stdout_", "cprof_no_such_symbol" };
	static const char *const py_names[] = { "_PyRuntime", "Py_Version", "PyCode_Type",
						"_PyEval_EvalFrameDefault" };
	uint64_t start, end, off;
	char path[PATH_MAX];

	if (!maps_find((uintptr_t)dlsym(RTLD_DEFAULT, "getpid"), NULL, &start, &end, &off, path,
		       sizeof(path)))
		T_SKIP("libc: dynamic symbols by name", "libc not found in /proc/self/maps");
	else
		check_find_dynamic("libc: dynamic symbols by name", path, libc_names,
				   sizeof(libc_names) / sizeof(libc_names[0]));
	if (access("/usr/bin/python3", R_OK))
		T_SKIP("python3: dynamic symbols by name", "/usr/bin/python3 not installed");
	else
		check_find_dynamic("python3: dynamic symbols by name", "/usr/bin/python3", py_names,
				   sizeof(py_names) / sizeof(py_names[0]));
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	T_PLAN(21);
	hostroot = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	test_vdso();
	test_runtime_lookup("libc", dlsym(RTLD_DEFAULT, "getpid"), "getpid");
	test_runtime_lookup("libelf", dlsym(RTLD_DEFAULT, "elf_begin"), "elf_begin");
	test_python();
	test_find_dynamic();
	if (hostroot >= 0)
		close(hostroot);
	return T_EXIT();
}
