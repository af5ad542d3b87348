// SPDX-License-Identifier: MIT
/*
 * elfobj given hostile inputs: a shared object's headers, sections,
 * dynamic table and symbols corrupted one at a time, then at random; every
 * image is opened and used as a caller would, and must be refused or read
 * within bounds, never crash (the run is under ASan in SANITIZE=1).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <elf.h>

#include "elf/elfobj.h"
#include "elfobjcheck.h"
#include "testlib.h"
#include "testutil.h"

static char tmp[PATH_MAX - 128];
/* The host's root, for the debug links of objects seen from it. */
static int hostroot = -1;

/* libfx.so and lib.o, from elfobjcheck.h's lib_src. */
static bool build_fixtures(void)
{
	if (!spit(fmt("%s/lib.c", tmp), lib_src, strlen(lib_src)))
		return false;
	return sh(fmt("cd '%s' && gcc -O1 -g -shared -fPIC -Wl,--build-id -o libfx.so lib.c && "
		      "gcc -O1 -g -c -o lib.o lib.c",
		      tmp)) == 0;
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

int main(void)
{
	char tmpl[] = "/tmp/cprof-test-elfobj-corrupt-XXXXXX";

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!mkdtemp(tmpl)) {
		CHECK(false, "elfobj: temp dir", "%s", strerror(errno));
		return T_EXIT();
	}
	snprintf(tmp, sizeof(tmp), "%s", tmpl);
	hostroot = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (sh("command -v gcc >/dev/null && command -v readelf >/dev/null")) {
		T_SKIP("elfobj fixtures", "needs gcc and binutils");
	} else if (!build_fixtures()) {
		CHECK(false, "elfobj fixtures", "could not compile them");
	} else {
		T_PLAN(19);
		test_corrupt();
	}
	sh(fmt("rm -rf '%s'", tmp));
	return T_EXIT();
}
