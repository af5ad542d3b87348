// SPDX-License-Identifier: MIT
/*
 * elfpatch: corrupts a copy of an x86-64 ELF executable in ways that leave
 * it runnable (the kernel and ld.so read program headers and the dynamic
 * segment, not section headers) but hand a profiler bad metadata: the
 * binaries a hostile or broken container could run.  Used by
 * tests/e2e/test_faults.sh.
 *
 *   elfpatch FILE shdrs-garbage       section header table -> pseudo-random bytes
 *   elfpatch FILE shoff-past-end      e_shoff -> beyond the end of the file
 *   elfpatch FILE truncate NAME       section NAME cut in the middle of an
 *                                     entry (sh_size = size/2 + 3), and the
 *                                     bytes after the cut -> 0xff
 *   elfpatch FILE absurd-size NAME    section NAME's sh_size -> 2^63 - 8
 *                                     (a symbol table claiming ~4e17 symbols)
 *   elfpatch FILE unterminate NAME    every NUL of section NAME -> 'X': a
 *                                     string table (.debug_line_str) whose
 *                                     strings run into each other and off
 *                                     its end
 *
 * Exit 0 when patched; 1 with a message when FILE lacks what the patch
 * needs.  FILE is ours (a copy the test made): checks are for clear
 * messages, not for defence.
 */
#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static int die(const char *file, const char *what)
{
	fprintf(stderr, "elfpatch: %s: %s\n", file, what);
	return 1;
}

static Elf64_Shdr *section(uint8_t *p, size_t size, const char *name)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)p;
	Elf64_Shdr *sh = (Elf64_Shdr *)(p + eh->e_shoff);
	const Elf64_Shdr *str = &sh[eh->e_shstrndx];

	for (size_t i = 1; i < eh->e_shnum; i++) {
		size_t n = strlen(name) + 1;

		if (sh[i].sh_name + n <= str->sh_size && str->sh_offset + str->sh_size <= size &&
		    memcmp(p + str->sh_offset + sh[i].sh_name, name, n) == 0)
			return &sh[i];
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *file, *op;
	struct stat st;
	Elf64_Ehdr *eh;
	uint8_t *p;
	int fd, rc = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: elfpatch FILE shdrs-garbage|shoff-past-end|"
				"truncate NAME|absurd-size NAME|unterminate NAME\n");
		return 2;
	}
	file = argv[1];
	op = argv[2];
	fd = open(file, O_RDWR);
	if (fd < 0 || fstat(fd, &st) || (size_t)st.st_size < sizeof(Elf64_Ehdr))
		return die(file, "cannot open, or too small");
	p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return die(file, "cannot map");
	eh = (Elf64_Ehdr *)p;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shstrndx >= eh->e_shnum ||
	    eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > (uint64_t)st.st_size)
		return die(file, "not a 64-bit ELF file with section headers");

	if (strcmp(op, "shdrs-garbage") == 0) {
		uint8_t *sh = p + eh->e_shoff;
		uint32_t x = 0x9e3779b9;

		for (size_t i = 0; i < (size_t)eh->e_shnum * sizeof(Elf64_Shdr); i++) {
			x ^= x << 13, x ^= x >> 17, x ^= x << 5; /* xorshift32 */
			sh[i] = (uint8_t)x;
		}
	} else if (strcmp(op, "shoff-past-end") == 0) {
		eh->e_shoff = (uint64_t)st.st_size + 4096;
	} else if (strcmp(op, "truncate") == 0 && argc == 4) {
		Elf64_Shdr *s = section(p, (size_t)st.st_size, argv[3]);
		uint64_t cut;

		if (!s || s->sh_offset + s->sh_size > (uint64_t)st.st_size || s->sh_size < 16)
			return die(file, "no such section with contents");
		cut = s->sh_size / 2 + 3;
		memset(p + s->sh_offset + cut, 0xff, s->sh_size - cut);
		s->sh_size = cut;
	} else if (strcmp(op, "unterminate") == 0 && argc == 4) {
		Elf64_Shdr *s = section(p, (size_t)st.st_size, argv[3]);

		if (!s || s->sh_type == SHT_NOBITS || s->sh_offset + s->sh_size > (uint64_t)st.st_size)
			return die(file, "no such section with contents");
		for (uint64_t i = 0; i < s->sh_size; i++)
			if (!p[s->sh_offset + i])
				p[s->sh_offset + i] = 'X';
	} else if (strcmp(op, "absurd-size") == 0 && argc == 4) {
		Elf64_Shdr *s = section(p, (size_t)st.st_size, argv[3]);

		if (!s)
			return die(file, "no such section");
		s->sh_size = (1ull << 63) - 8;
	} else {
		fprintf(stderr, "elfpatch: unknown operation '%s'\n", op);
		rc = 2;
	}
	if (msync(p, (size_t)st.st_size, MS_SYNC))
		return die(file, "cannot write back");
	munmap(p, (size_t)st.st_size);
	return rc;
}
