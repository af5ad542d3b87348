// SPDX-License-Identifier: MIT
/*
 * Tests for elfsrc, the one ELF reader: the header check refuses what each
 * caller must not read with the error elfsrc.h documents, reads stay
 * inside the source, section names are read bounded, compressed sections
 * inflate to exactly what they claim or are refused, and the build ID is
 * found in notes whose sizes may lie.  Images are made with synth_elf.h
 * (the fuzzers' builder), so every byte of every header is the test's.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "elf/elfsrc.h"
#include "fuzz/synth_elf.h"
#include "testlib.h"
#include "testutil.h"

static char tmp[PATH_MAX - 64];

/* An ET_DYN image with a .text section and nothing else. */
static uint8_t *plain_image(size_t *len)
{
	static const uint8_t code[16] = { 0xc3 };
	struct synth s;

	synth_init(&s, ET_DYN);
	synth_section(&s, ".text", &(Elf64_Shdr){
		.sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC | SHF_EXECINSTR,
		.sh_addr = 0x1000, .sh_offset = synth_blob(&s, code, sizeof(code), 16),
		.sh_size = sizeof(code) });
	return synth_finish(&s, len);
}

static int check_mem(const uint8_t *img, size_t len, unsigned machine, unsigned need,
		     struct errbuf *err)
{
	struct elfsrc s = elfsrc_from_mem(img, len);

	err->msg[0] = '\0';
	return elfsrc_check(&s, machine, need, err);
}

static void test_header(void)
{
	struct errbuf err;
	size_t len;
	uint8_t *img = plain_image(&len), *bad;
	Elf64_Ehdr *eh;
	Elf64_Shdr sh0 = { 0 };
	int rc;

	if (!img) {
		CHECK(false, "header: fixture", "synth_finish failed");
		return;
	}
	bad = malloc(len + sizeof(Elf64_Shdr));
	eh = (Elf64_Ehdr *)bad;
	rc = check_mem(img, len, EM_X86_64, ELFSRC_LOADABLE | ELFSRC_SECTIONS, &err);
	CHECK(rc == 0, "header: an x86-64 shared object passes", "rc %d (%s)", rc, err.msg);
	rc = check_mem(img, len, EM_AARCH64, 0, &err);
	CHECK(rc == -ENOEXEC && strstr(err.msg, "aarch64") && strstr(err.msg, "machine 62"),
	      "header: another machine than the one expected: -ENOEXEC naming both",
	      "rc %d (%s)", rc, err.msg);
	rc = check_mem(img, len, EM_NONE, 0, &err);
	CHECK(rc == 0, "header: EM_NONE takes any machine", "rc %d (%s)", rc, err.msg);

	memcpy(bad, img, len);
	bad[EI_CLASS] = ELFCLASS32;
	rc = check_mem(bad, len, EM_NONE, 0, &err);
	CHECK(rc == -ENOEXEC && strstr(err.msg, "64-bit"), "header: 32-bit: -ENOEXEC",
	      "rc %d (%s)", rc, err.msg);
	memcpy(bad, img, len);
	bad[EI_DATA] = ELFDATA2MSB;
	rc = check_mem(bad, len, EM_NONE, 0, &err);
	CHECK(rc == -ENOEXEC && strstr(err.msg, "byte order"), "header: big-endian: -ENOEXEC",
	      "rc %d (%s)", rc, err.msg);
	rc = check_mem(img, 40, EM_NONE, 0, &err);
	CHECK(rc == -ENOEXEC && strstr(err.msg, "truncated"), "header: cut at 40 bytes: -ENOEXEC",
	      "rc %d (%s)", rc, err.msg);
	rc = check_mem((const uint8_t *)"#!/bin/sh\n", 10, EM_NONE, 0, &err);
	CHECK(rc == -ENOEXEC && strstr(err.msg, "not an ELF file"), "header: a script: -ENOEXEC",
	      "rc %d (%s)", rc, err.msg);

	memcpy(bad, img, len);
	eh->e_type = ET_REL;
	rc = check_mem(bad, len, EM_NONE, ELFSRC_LOADABLE, &err);
	CHECK(rc == -ENOEXEC && strstr(err.msg, "type 1"),
	      "header: ET_REL where a loadable object is needed: -ENOEXEC", "rc %d (%s)", rc,
	      err.msg);
	rc = check_mem(bad, len, EM_NONE, ELFSRC_SECTIONS, &err);
	CHECK(rc == 0, "header: ET_REL where any type will do: accepted", "rc %d (%s)", rc,
	      err.msg);

	memcpy(bad, img, len);
	eh->e_shoff = 0;
	rc = check_mem(bad, len, EM_NONE, ELFSRC_SECTIONS, &err);
	CHECK(rc == -ENOENT, "header: no section headers where they are needed: -ENOENT",
	      "rc %d (%s)", rc, err.msg);
	rc = check_mem(bad, len, EM_NONE, 0, &err);
	CHECK(rc == 0, "header: no section headers where none are needed: accepted",
	      "rc %d (%s)", rc, err.msg);

	memcpy(bad, img, len);
	eh->e_shoff = len - sizeof(Elf64_Shdr);
	rc = check_mem(bad, len, EM_NONE, ELFSRC_SECTIONS, &err);
	CHECK(rc == -ENOEXEC && strstr(err.msg, "past the end"),
	      "header: section headers past the end of the file where they are needed: -ENOEXEC",
	      "rc %d (%s)", rc, err.msg);
	rc = check_mem(bad, len, EM_NONE, ELFSRC_LOADABLE, &err);
	CHECK(rc == 0,
	      "header: ... where only segments are needed (a truncated object): accepted",
	      "rc %d (%s)", rc, err.msg);

	/* Extended numbering: the count is section 0's sh_size, a 64-bit field. */
	memcpy(bad, img, len);
	eh->e_shnum = 0;
	sh0.sh_size = ELFSRC_MAX_SECTIONS + 1;
	memcpy(bad + eh->e_shoff, &sh0, sizeof(sh0));
	rc = check_mem(bad, len, EM_NONE, 0, &err);
	CHECK(rc == -ENOEXEC && strstr(err.msg, "too many sections"),
	      "header: 65537 sections by extended numbering: -ENOEXEC", "rc %d (%s)", rc,
	      err.msg);

	memcpy(bad, img, len);
	eh->e_phnum = PN_XNUM;
	rc = check_mem(bad, len, EM_NONE, 0, &err);
	CHECK(rc == -ENOEXEC, "header: extended program header numbering: -ENOEXEC",
	      "rc %d (%s)", rc, err.msg);
	free(bad);
	free(img);
}

static void test_reads(void)
{
	const char *path = fmt("%s/shrinks", tmp), *fifo = fmt("%s/fifo", tmp);
	uint8_t buf[64] = { 0 };
	struct elfsrc s = elfsrc_from_mem(buf, sizeof(buf));
	int fd, rc;

	CHECK(elfsrc_read(&s, 60, buf, 4) == 0 && elfsrc_read(&s, 60, buf, 5) == -ERANGE &&
		      elfsrc_read(&s, UINT64_MAX, buf, 1) == -ERANGE,
	      "reads: a range outside the source is -ERANGE, up to its end is read", "no");
	CHECK(elfsrc_avail(&s, 60, 100) == 4 && elfsrc_avail(&s, 64, 1) == 0 &&
		      elfsrc_avail(&s, UINT64_MAX, 2) == 0,
	      "reads: elfsrc_avail clamps to the source", "no");

	spit(path, buf, sizeof(buf));
	fd = open(path, O_RDWR);
	rc = fd >= 0 ? elfsrc_from_fd(&s, fd) : -errno;
	if (!rc && ftruncate(fd, 10) == 0)
		rc = elfsrc_read(&s, 0, buf, 64);
	CHECK(rc == -EIO, "reads: a file truncated after it was opened: -EIO, no SIGBUS",
	      "rc %d", rc);
	if (fd >= 0)
		close(fd);

	rc = mkfifo(fifo, 0600) ? -errno : 0;
	fd = rc ? -1 : open(fifo, O_RDONLY | O_NONBLOCK);
	rc = fd >= 0 ? elfsrc_from_fd(&s, fd) : -errno;
	CHECK(rc == -EINVAL, "reads: a FIFO is no source (-EINVAL)", "rc %d", rc);
	if (fd >= 0)
		close(fd);
}

static void test_names(void)
{
	char longname[100];
	struct synth s;
	struct elfsrc src;
	struct elfsrc_walk w;
	struct elfsrc_scn c;
	uint8_t *img;
	size_t len, n = 0;
	Elf *e = NULL;
	bool ok = true;
	int rc;

	memset(longname, 'x', sizeof(longname) - 1);
	longname[0] = '.';
	longname[sizeof(longname) - 1] = '\0';
	synth_init(&s, ET_DYN);
	synth_section(&s, ".eh_frame", &(Elf64_Shdr){ .sh_type = SHT_PROGBITS });
	synth_section(&s, longname, &(Elf64_Shdr){ .sh_type = SHT_PROGBITS });
	synth_section(&s, ".debug_str_offsets", &(Elf64_Shdr){ .sh_type = SHT_PROGBITS });
	img = synth_finish(&s, &len);
	/* A fourth name offset past the end of the name table. */
	if (img)
		((Elf64_Shdr *)(img + ((Elf64_Ehdr *)img)->e_shoff))[3].sh_name = 100000;
	src = elfsrc_from_mem(img, len);
	rc = img ? elfsrc_begin(&src, EM_X86_64, ELFSRC_SECTIONS, &e, NULL) : -ENOMEM;
	if (!rc) {
		elfsrc_walk_init(&w, e, &src);
		ok = w.names;
		while (elfsrc_walk_next(&w, &c)) {
			static const char *const want[] = { ".eh_frame", "", "", ".shstrtab" };

			ok = ok && n < 4 && c.index == n + 1 && !strcmp(c.name, want[n]);
			n++;
		}
		elf_end(e);
	}
	CHECK(!rc && ok && n == 4,
	      "names: read bounded; one longer than ELFSRC_NAME_MAX or outside the table is \"\"",
	      "rc %d, %zu sections", rc, n);

	/* The name table said to lie past the end of the file: no names at all. */
	if (!rc) {
		Elf64_Ehdr *eh = (Elf64_Ehdr *)img;

		((Elf64_Shdr *)(img + eh->e_shoff))[eh->e_shstrndx].sh_size = len;
		rc = elfsrc_begin(&src, EM_X86_64, 0, &e, NULL);
		if (!rc) {
			elfsrc_walk_init(&w, e, &src);
			ok = !w.names && elfsrc_walk_next(&w, &c) && c.name[0] == '\0';
			elf_end(e);
		}
		CHECK(!rc && ok, "names: a name table past the end of the file gives none",
		      "rc %d", rc);
	}
	free(img);
}

/* The image of one section @name holding @data as stored (compressed or not). */
static uint8_t *one_section(const char *name, const void *data, size_t n, uint64_t flags,
			    size_t *len)
{
	struct synth s;

	synth_init(&s, ET_DYN);
	synth_section(&s, name, &(Elf64_Shdr){ .sh_type = SHT_PROGBITS, .sh_flags = flags,
					       .sh_offset = synth_blob(&s, data, n, 8),
					       .sh_size = n, .sh_addralign = 1 });
	return synth_finish(&s, len);
}

/* elfsrc_section_bytes() of the first section of @img, through a file when @file. */
static int section_bytes(const uint8_t *img, size_t len, bool file, uint64_t max,
			 uint8_t *out, size_t *outlen, bool *in_place, struct errbuf *err)
{
	const char *path = fmt("%s/section", tmp);
	struct elfsrc s = elfsrc_from_mem(img, len);
	struct elfsrc_bytes b;
	struct elfsrc_walk w;
	struct elfsrc_scn c;
	int fd = -1, rc;
	Elf *e;

	err->msg[0] = '\0';
	if (file) {
		if (!spit(path, img, len) || (fd = open(path, O_RDONLY)) < 0)
			return -EIO;
		elfsrc_from_fd(&s, fd);
	}
	rc = elfsrc_begin(&s, EM_NONE, ELFSRC_SECTIONS, &e, err);
	if (!rc) {
		elfsrc_walk_init(&w, e, &s);
		rc = elfsrc_walk_next(&w, &c) ? elfsrc_section_bytes(&s, &c, max, &b, err)
					      : -ENOENT;
		elf_end(e);
	}
	if (!rc) {
		*outlen = b.len;
		memcpy(out, b.p, b.len);
		*in_place = b.p >= img && b.p < img + len;
		free(b.owned);
	}
	if (fd >= 0)
		close(fd);
	return rc;
}

static void test_compressed(void)
{
	uint8_t plain[3000], z[4096], out[4096];
	uLongf zlen = sizeof(z) - sizeof(Elf64_Chdr);
	Elf64_Chdr ch = { .ch_type = ELFCOMPRESS_ZLIB, .ch_size = sizeof(plain), .ch_addralign = 1 };
	struct errbuf err;
	size_t len, n = 0;
	bool in_place;
	uint8_t *img;
	int rc;

	for (size_t i = 0; i < sizeof(plain); i++)
		plain[i] = (uint8_t)(i * 7 / 13);
	compress2(z + sizeof(ch), &zlen, plain, sizeof(plain), 9);

	img = one_section(".debug_frame", plain, sizeof(plain), 0, &len);
	rc = section_bytes(img, len, false, 1 << 20, out, &n, &in_place, &err);
	CHECK(rc == 0 && n == sizeof(plain) && !memcmp(out, plain, n) && in_place,
	      "sections: a plain section of a memory image is used in place", "rc %d (%s)", rc,
	      err.msg);
	rc = section_bytes(img, len, true, 1 << 20, out, &n, &in_place, &err);
	CHECK(rc == 0 && n == sizeof(plain) && !memcmp(out, plain, n),
	      "sections: a plain section of a file is read", "rc %d (%s)", rc, err.msg);
	rc = section_bytes(img, len, true, 100, out, &n, &in_place, &err);
	CHECK(rc == -EFBIG, "sections: over the caller's bound: -EFBIG", "rc %d (%s)", rc,
	      err.msg);
	((Elf64_Shdr *)(img + ((Elf64_Ehdr *)img)->e_shoff))[1].sh_size = len;
	rc = section_bytes(img, len, true, 1 << 20, out, &n, &in_place, &err);
	CHECK(rc == -ENOEXEC && strstr(err.msg, "past the end"),
	      "sections: one past the end of the file: -ENOEXEC", "rc %d (%s)", rc, err.msg);
	free(img);

	memcpy(z, &ch, sizeof(ch));
	img = one_section(".debug_frame", z, sizeof(ch) + zlen, SHF_COMPRESSED, &len);
	rc = section_bytes(img, len, true, 1 << 20, out, &n, &in_place, &err);
	CHECK(rc == 0 && n == sizeof(plain) && !memcmp(out, plain, n),
	      "sections: SHF_COMPRESSED (zlib) inflates to the original", "rc %d (%s)", rc,
	      err.msg);
	rc = section_bytes(img, len, false, 1 << 20, out, &n, &in_place, &err);
	CHECK(rc == 0 && n == sizeof(plain) && !memcmp(out, plain, n) && !in_place,
	      "sections: ... from a memory image too, into a copy", "rc %d (%s)", rc, err.msg);
	free(img);

	for (int lie = -1; lie <= 1; lie += 2) {
		Elf64_Chdr liar = ch;

		liar.ch_size = sizeof(plain) + (uint64_t)lie;
		memcpy(z, &liar, sizeof(liar));
		img = one_section(".debug_frame", z, sizeof(ch) + zlen, SHF_COMPRESSED, &len);
		rc = section_bytes(img, len, true, 1 << 20, out, &n, &in_place, &err);
		CHECK(rc == -ENOEXEC && strstr(err.msg, "inflate"),
		      lie < 0 ? "sections: claims one byte less than it inflates to: -ENOEXEC"
			      : "sections: claims one byte more than it inflates to: -ENOEXEC",
		      "rc %d (%s)", rc, err.msg);
		free(img);
	}

	ch.ch_type = 2; /* ELFCOMPRESS_ZSTD */
	memcpy(z, &ch, sizeof(ch));
	img = one_section(".debug_frame", z, sizeof(ch) + zlen, SHF_COMPRESSED, &len);
	rc = section_bytes(img, len, true, 1 << 20, out, &n, &in_place, &err);
	CHECK(rc == -ENOTSUP, "sections: zstd: -ENOTSUP", "rc %d (%s)", rc, err.msg);
	free(img);

	/* GNU .zdebug_: "ZLIB", the size big-endian, the stream. */
	memcpy(z + sizeof(ch) - 12, "ZLIB\0\0\0\0\0\0\x0b\xb8", 12);
	img = one_section(".zdebug_line", z + sizeof(ch) - 12, 12 + zlen, 0, &len);
	rc = section_bytes(img, len, true, 1 << 20, out, &n, &in_place, &err);
	CHECK(rc == 0 && n == sizeof(plain) && !memcmp(out, plain, n),
	      "sections: GNU .zdebug_ inflates to the original", "rc %d (%s)", rc, err.msg);
	free(img);
}

/* A GNU build-ID note: namesz 4, descsz @n, type 3, "GNU\0", the ID. */
static size_t note(uint8_t *buf, const uint8_t *id, uint32_t n)
{
	uint32_t h[3] = { 4, n, NT_GNU_BUILD_ID };

	memcpy(buf, h, sizeof(h));
	memcpy(buf + 12, "GNU", 4);
	memcpy(buf + 16, id, n);
	return 16 + ((n + 3) & ~3u);
}

static size_t build_id_of(const uint8_t *img, size_t len, bool sections_first, uint8_t *id)
{
	struct elfsrc s = elfsrc_from_mem(img, len);
	size_t n = 0;
	Elf *e;

	if (img && !elfsrc_begin(&s, EM_NONE, 0, &e, NULL)) {
		n = elfsrc_build_id(e, &s, sections_first, id);
		elf_end(e);
	}
	return n;
}

static void test_build_id(void)
{
	static const uint8_t a[20] = "AAAAAAAAAAAAAAAAAAA", b[8] = "BBBBBBB";
	static const uint8_t too_long[ELFSRC_BUILD_ID_MAX + 1] = "CCCC";
	uint8_t na[64], nb[64], big[128] = { 0 }, id[ELFSRC_BUILD_ID_MAX], *img;
	size_t la = note(na, a, sizeof(a)), lb = note(nb, b, sizeof(b)), len, n;
	uint64_t off;
	struct synth s;

	/* The segment's note says A, the section's B (as in a debug file). */
	synth_init(&s, ET_DYN);
	off = synth_blob(&s, na, la, 4);
	synth_phdr(&s, &(Elf64_Phdr){ .p_type = PT_NOTE, .p_offset = off, .p_filesz = la,
				      .p_align = 4 });
	synth_section(&s, ".note.gnu.build-id", &(Elf64_Shdr){
		.sh_type = SHT_NOTE, .sh_offset = synth_blob(&s, nb, lb, 4), .sh_size = lb,
		.sh_addralign = 4 });
	img = synth_finish(&s, &len);
	n = build_id_of(img, len, false, id);
	CHECK(n == sizeof(a) && !memcmp(id, a, n), "build ID: from PT_NOTE first",
	      "%zu bytes", n);
	n = build_id_of(img, len, true, id);
	CHECK(n == sizeof(b) && !memcmp(id, b, n), "build ID: from SHT_NOTE first when asked",
	      "%zu bytes", n);
	free(img);

	/* A descriptor longer than ELFSRC_BUILD_ID_MAX, and one that runs off the note. */
	la = note(big, too_long, sizeof(too_long));
	synth_init(&s, ET_DYN);
	synth_section(&s, ".note", &(Elf64_Shdr){ .sh_type = SHT_NOTE,
						  .sh_offset = synth_blob(&s, big, la, 4),
						  .sh_size = la, .sh_addralign = 4 });
	synth_section(&s, ".note2", &(Elf64_Shdr){ .sh_type = SHT_NOTE,
						   .sh_offset = synth_blob(&s, na, 20, 4),
						   .sh_size = 20, .sh_addralign = 4 });
	img = synth_finish(&s, &len);
	n = build_id_of(img, len, true, id);
	CHECK(n == 0, "build ID: over 64 bytes, or cut short: none", "%zu bytes", n);
	free(img);
}

int main(void)
{
	T_PLAN(34);
	if (!temp_dir(tmp, sizeof(tmp), "elfsrc")) {
		CHECK(false, "elfsrc: temporary directory", "cannot make one");
		return T_EXIT();
	}
	test_header();
	test_reads();
	test_names();
	test_compressed();
	test_build_id();
	sh(fmt("rm -rf '%s'", tmp));
	return T_EXIT();
}
