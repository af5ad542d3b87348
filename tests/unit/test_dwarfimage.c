// SPDX-License-Identifier: MIT
/*
 * Tests for dwarfimage: the image libdw reads holds the kept debug sections
 * byte for byte as the file has them (plain, or compressed either way),
 * each followed by zero bytes, and nothing else; sizes that lie, budgets
 * and link sections are refused as promised.  Fixtures are compiled and
 * compressed with binutils at test time; sections are compared with
 * objcopy's own extraction, an independent reader.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dwarf/dwarfimage.h"
#include "testlib.h"
#include "testutil.h"

static char tmp[PATH_MAX - 256];

static const char fixture[] =
	"static volatile int sink;\n"
	"__attribute__((noinline)) static void leaf(int i) { sink += i; }\n"
	"__attribute__((noinline)) void mid(int i) { for (int j = 0; j < i; j++) leaf(j); }\n"
	"int main(int argc, char **argv) { (void)argv; mid(argc); return sink; }\n";

static const char *const kept[] = {
	".debug_info", ".debug_types", ".debug_abbrev", ".debug_addr", ".debug_aranges",
	".debug_line", ".debug_line_str", ".debug_str", ".debug_str_offsets",
	".debug_ranges", ".debug_rnglists",
};

struct built {
	int rc;
	struct dwarfimage img;
	char err[ERRBUF_LEN];
};

static struct built build(const char *path, uint64_t max)
{
	struct built b = { .rc = -EBADF };
	struct errbuf err = { "" };
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *e;

	if (fd < 0)
		return b;
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (e) {
		b.rc = dwarfimage_build(e, fd, max, &b.img, &err);
		elf_end(e);
	}
	close(fd);
	snprintf(b.err, sizeof(b.err), "%s", err.msg);
	return b;
}

static bool is_kept(const char *name)
{
	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
		if (!strcmp(name, kept[i]))
			return true;
	return false;
}

/*
 * Every section of the image is a kept one, equal to what objcopy extracts
 * from @orig (uncompressed), and followed by DWARFIMAGE_PAD zero bytes.
 * Returns the number of sections checked, 0 on a mismatch (printed).
 */
static size_t check_image(const struct dwarfimage *img, const char *orig_arg)
{
	char orig[PATH_MAX];
	Elf *e = elf_memory((char *)img->buf, img->len);
	Elf_Scn *scn = NULL;
	size_t shstrndx, n = 0;
	bool ok = e && !elf_getshdrstrndx(e, &shstrndx);

	snprintf(orig, sizeof(orig), "%s", orig_arg); /* fmt()'s ring turns over below */
	while (ok && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr hdr;
		const char *name;
		uint8_t *want;
		size_t len;

		if (!gelf_getshdr(scn, &hdr) || !(name = elf_strptr(e, shstrndx, hdr.sh_name))) {
			ok = false;
			break;
		}
		if (!strcmp(name, ".shstrtab"))
			continue;
		if (!is_kept(name)) {
			printf("# image holds %s\n", name);
			ok = false;
			break;
		}
		if (hdr.sh_offset + hdr.sh_size + DWARFIMAGE_PAD > img->len) {
			printf("# %s: no room for its pad\n", name);
			ok = false;
			break;
		}
		for (size_t i = 0; i < DWARFIMAGE_PAD; i++)
			if (img->buf[hdr.sh_offset + hdr.sh_size + i]) {
				printf("# %s: pad byte %zu is not zero\n", name, i);
				ok = false;
			}
		if (sh(fmt("objcopy --dump-section %s='%s/sec' '%s' '%s/junk'", name, tmp, orig,
			   tmp)) ||
		    !(want = slurp(fmt("%s/sec", tmp), &len))) {
			ok = false;
			break;
		}
		if (len != hdr.sh_size || memcmp(want, img->buf + hdr.sh_offset, len)) {
			printf("# %s: %zu bytes in the file, %llu in the image, or other bytes\n", name,
			       len, (unsigned long long)hdr.sh_size);
			ok = false;
		}
		free(want);
		n++;
	}
	if (e)
		elf_end(e);
	return ok ? n : 0;
}

static bool section_at(const char *bin, const char *name, unsigned long long *off,
		       unsigned long long *size)
{
	char line[512];
	FILE *f = popen(fmt("readelf -SW '%s'", bin), "r");
	bool found = false;

	while (f && fgets(line, sizeof(line), f)) {
		char *p = strstr(line, name);

		if (p && p[strlen(name)] == ' ' &&
		    sscanf(p, "%*s %*s %*s %llx %llx", off, size) == 2) {
			found = true;
			break;
		}
	}
	if (f)
		pclose(f);
	return found;
}

/* Writes @len bytes at @off of @path. */
static bool poke(const char *path, unsigned long long off, const void *bytes, size_t len)
{
	int fd = open(path, O_WRONLY);
	bool ok = fd >= 0 && pwrite(fd, bytes, len, (off_t)off) == (ssize_t)len;

	if (fd >= 0)
		close(fd);
	return ok;
}

static void test_plain(void)
{
	struct built b = build(fmt("%s/fx", tmp), DWARFIMAGE_MAX_BYTES);
	size_t n;

	CHECK(b.rc == 0 && b.img.scan.has_info && b.img.scan.bytes > 0 && !b.img.scan.alt_id_len,
	      "plain DWARF: image built", "rc %d: %s", b.rc, b.err);
	n = b.rc ? 0 : check_image(&b.img, fmt("%s/fx", tmp));
	CHECK(n >= 4, "plain: each kept section as in the file, then zeros; nothing else",
	      "%zu sections", n);
	dwarfimage_free(&b.img);

	b = build(fmt("%s/fx", tmp), 100);
	CHECK(b.rc == -EFBIG && !b.img.buf && strstr(b.err, "over the"),
	      "over the budget: -EFBIG, nothing allocated", "rc %d: %s", b.rc, b.err);
}

static void test_compressed(void)
{
	static const char *const how[] = { "zlib", "zlib-gnu" };

	for (size_t i = 0; i < 2; i++) {
		const char *z = fmt("%s/fx.%s", tmp, how[i]);
		char name[64];
		struct built b;
		size_t n = 0;

		snprintf(name, sizeof(name), "compressed (%s): the sections as before compression", how[i]);
		if (sh(fmt("objcopy --compress-debug-sections=%s '%s/fx' '%s'", how[i], tmp, z))) {
			T_SKIP(name, "objcopy cannot compress so");
			continue;
		}
		b = build(z, DWARFIMAGE_MAX_BYTES);
		if (b.rc == 0)
			n = check_image(&b.img, fmt("%s/fx", tmp));
		CHECK(n >= 4, name, "rc %d (%s), %zu sections", b.rc, b.err, n);
		dwarfimage_free(&b.img);
	}
}

/* A compressed section whose header claims another size than it inflates to. */
static void test_lying_size(void)
{
	const char *z = fmt("%s/fx.lie", tmp);
	unsigned long long off, size;
	uint64_t real, claim;
	struct built b;

	if (sh(fmt("objcopy --compress-debug-sections=zlib '%s/fx' '%s'", tmp, z)) ||
	    !section_at(z, ".debug_info", &off, &size)) {
		T_SKIP("compressed size that lies", "objcopy cannot compress");
		return;
	}
	/* Elf64_Chdr: ch_type, ch_reserved, then ch_size at byte 8. */
	{
		int fd = open(z, O_RDONLY);

		if (fd < 0 || pread(fd, &real, 8, (off_t)off + 8) != 8) {
			T_SKIP("compressed size that lies", "cannot read the header");
			if (fd >= 0)
				close(fd);
			return;
		}
		close(fd);
	}
	claim = real + 1;
	poke(z, off + 8, &claim, 8);
	b = build(z, DWARFIMAGE_MAX_BYTES);
	CHECK(b.rc == -ENOEXEC && !b.img.buf && strstr(b.err, ".debug_info"),
	      "compressed section claiming a byte more than it holds: refused, named",
	      "rc %d: %s", b.rc, b.err);
	dwarfimage_free(&b.img);
	claim = real - 1;
	poke(z, off + 8, &claim, 8);
	b = build(z, DWARFIMAGE_MAX_BYTES);
	CHECK(b.rc == -ENOEXEC && !b.img.buf, "... and a byte less: refused", "rc %d: %s", b.rc,
	      b.err);
	dwarfimage_free(&b.img);
	claim = 1ull << 60;
	poke(z, off + 8, &claim, 8);
	b = build(z, UINT64_MAX);
	CHECK(b.rc == -ENOEXEC && !b.img.buf, "... and 2^60 bytes, whatever the budget: refused",
	      "rc %d: %s", b.rc, b.err);
	dwarfimage_free(&b.img);
}

/* The case libdw read out of bounds: .debug_line_str without a final NUL. */
static void test_unterminated(void)
{
	const char *bad = fmt("%s/fx5.bad", tmp);
	unsigned long long off, size;
	struct built b;
	uint8_t *sec = NULL;
	size_t len = 0;
	bool pad = false;

	if (sh(fmt("cd '%s' && gcc -O1 -gdwarf-5 -o fx5 fx.c && cp fx5 fx5.bad", tmp)) ||
	    !section_at(bad, ".debug_line_str", &off, &size) || !size) {
		T_SKIP("unterminated .debug_line_str", "no DWARF 5 .debug_line_str");
		return;
	}
	/* Every NUL made an 'X': the strings run into each other and off the end. */
	sec = malloc(size);
	{
		int fd = open(bad, O_RDWR);

		if (!sec || fd < 0 || pread(fd, sec, size, (off_t)off) != (ssize_t)size) {
			T_SKIP("unterminated .debug_line_str", "cannot read it");
			free(sec);
			if (fd >= 0)
				close(fd);
			return;
		}
		for (size_t i = 0; i < size; i++)
			if (!sec[i])
				sec[i] = 'X';
		pwrite(fd, sec, size, (off_t)off);
		close(fd);
	}
	b = build(bad, DWARFIMAGE_MAX_BYTES);
	if (b.rc == 0) {
		Elf *e = elf_memory((char *)b.img.buf, b.img.len);
		Elf_Scn *scn = NULL;
		size_t shstrndx;

		while (e && !elf_getshdrstrndx(e, &shstrndx) && (scn = elf_nextscn(e, scn))) {
			GElf_Shdr s;
			const char *name;

			if (gelf_getshdr(scn, &s) && (name = elf_strptr(e, shstrndx, s.sh_name)) &&
			    !strcmp(name, ".debug_line_str")) {
				len = s.sh_size;
				pad = !memcmp(b.img.buf + s.sh_offset, sec, size) &&
				      !b.img.buf[s.sh_offset + s.sh_size];
			}
		}
		if (e)
			elf_end(e);
	}
	CHECK(b.rc == 0 && len == size && pad,
	      ".debug_line_str without a NUL: kept as it is, a NUL after it in the image",
	      "rc %d (%s), %zu of %llu bytes", b.rc, b.err, len, size);
	dwarfimage_free(&b.img);
	free(sec);
}

static void test_altlink(void)
{
	const char *f = fmt("%s/fx.alt", tmp);
	struct dwarfimage_scan sc;
	struct errbuf err = { "" };
	int fd, rc = -1;
	Elf *e;

	/* "name\0" and a 20-byte ID, as dwz writes it. */
	if (sh(fmt("cd '%s' && printf 'common.dwz\\000ABCDEFGHIJKLMNOPQRST' > link && "
		   "objcopy --add-section .gnu_debugaltlink=link fx fx.alt && "
		   "printf 'no-id-at-all' > badlink && "
		   "objcopy --add-section .gnu_debugaltlink=badlink fx fx.badalt", tmp))) {
		T_SKIP(".gnu_debugaltlink", "objcopy cannot add sections");
		return;
	}
	fd = open(f, O_RDONLY);
	e = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	if (e)
		rc = dwarfimage_scan(e, fd, &sc, &err);
	CHECK(rc == 0 && sc.alt_id_len == 20 && !memcmp(sc.alt_id, "ABCDEFGHIJKLMNOPQRST", 20),
	      ".gnu_debugaltlink: the dwz file's build ID", "rc %d (%s), %zu bytes", rc, err.msg,
	      rc ? 0 : sc.alt_id_len);
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
	fd = open(fmt("%s/fx.badalt", tmp), O_RDONLY);
	e = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	rc = e ? dwarfimage_scan(e, fd, &sc, &err) : -EBADF;
	CHECK(rc == -ENOEXEC && strstr(err.msg, "gnu_debugaltlink"),
	      ".gnu_debugaltlink without a build ID: refused", "rc %d (%s)", rc, err.msg);
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
}

int main(void)
{
	snprintf(tmp, sizeof(tmp), "/tmp/cprof-dwarfimage-XXXXXX");
	if (!mkdtemp(tmp) || elf_version(EV_CURRENT) == EV_NONE ||
	    system("command -v gcc >/dev/null && command -v objcopy >/dev/null")) {
		T_SKIP("dwarfimage", "needs a temporary directory, gcc and objcopy");
		return 0;
	}
	if (!spit(fmt("%s/fx.c", tmp), fixture, sizeof(fixture) - 1) ||
	    sh(fmt("cd '%s' && gcc -O2 -g -o fx fx.c", tmp))) {
		T_SKIP("dwarfimage", "cannot compile the fixture");
		return 0;
	}
	T_PLAN(11);
	test_plain();
	test_compressed();
	test_lying_size();
	test_unterminated();
	test_altlink();
	sh(fmt("rm -rf '%s'", tmp));
	return T_EXIT();
}
