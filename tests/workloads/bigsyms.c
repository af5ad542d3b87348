// SPDX-License-Identifier: MIT
/*
 * bigsyms: objects with millions of symbols, and a process running code in
 * them: what a hostile process can hand a profiler to make it load huge
 * symbol tables (tests/e2e/test_hostile_parsers.sh).
 *
 *   bigsyms gen FILE NSYMS SEED   writes an x86-64 ELF shared object: one
 *                                 executable page of code (four spinning
 *                                 functions, hot_0..hot_3) and a .symtab of
 *                                 NSYMS function symbols (the four, then
 *                                 fillers 16 bytes apart above the code),
 *                                 each with its own name; a build ID
 *                                 derived from SEED
 *   bigsyms run SECS FILE...      maps each FILE's code page and calls its
 *                                 functions in turn for SECS seconds;
 *                                 prints its pid first
 *
 * Written directly (no assembler, no linker): 4M symbols take about a
 * second to write.
 */
#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096u
#define CODE_OFF PAGE       /* file offset and vaddr of the code page */
#define NHOT 4
#define HOT_STRIDE 0x100u   /* bytes between hot functions */
#define FILLER_BASE (2 * PAGE)
#define BUILD_ID_LEN 20

/* dec %rdi; jnz -5; ret: spins @rdi times. */
static const uint8_t spin[] = { 0x48, 0xff, 0xcf, 0x75, 0xfb, 0xc3 };

static const char shstr[] = "\0.text\0.symtab\0.strtab\0.shstrtab\0.note.gnu.build-id";
enum { N_TEXT = 1, N_SYMTAB = 7, N_STRTAB = 15, N_SHSTRTAB = 23, N_NOTE = 33 };

struct note {
	Elf64_Nhdr h;
	char name[4];
	uint8_t id[BUILD_ID_LEN];
};

/* "hot_K" for the first NHOT symbols, then a distinct short name per filler. */
static size_t sym_name(uint64_t i, char *buf)
{
	static const char digits[] =
		"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
	size_t n = 0;

	if (i < NHOT)
		return (size_t)sprintf(buf, "hot_%u", (unsigned)i);
	buf[n++] = 'f';
	for (i -= NHOT; i || n == 1; i /= 62)
		buf[n++] = digits[i % 62];
	buf[n] = '\0';
	return n;
}

static int gen(const char *path, uint64_t nsyms, uint64_t seed)
{
	Elf64_Ehdr eh = { 0 };
	Elf64_Phdr ph[2] = { 0 };
	Elf64_Shdr sh[6] = { 0 };
	struct note nt = { .h = { 4, BUILD_ID_LEN, NT_GNU_BUILD_ID }, .name = "GNU" };
	uint8_t code[PAGE];
	uint64_t strsz = 1, symoff, stroff, shstroff, shoff, noteoff;
	char name[32];
	FILE *f;

	if (nsyms < NHOT)
		nsyms = NHOT;
	for (uint64_t i = 0; i < nsyms; i++)
		strsz += sym_name(i, name) + 1;
	for (int i = 0; i < BUILD_ID_LEN; i++)
		nt.id[i] = (uint8_t)((seed * 0x9e3779b97f4a7c15ull) >> (i % 8 * 8)) ^ (uint8_t)i;
	memset(code, 0xcc, sizeof(code));
	for (int k = 0; k < NHOT; k++)
		memcpy(code + k * HOT_STRIDE, spin, sizeof(spin));

	noteoff = sizeof(eh) + sizeof(ph);
	symoff = 2 * PAGE;
	stroff = symoff + (nsyms + 1) * sizeof(Elf64_Sym);
	shstroff = stroff + strsz;
	shoff = (shstroff + sizeof(shstr) + 7) & ~7ull;

	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_DYN;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_phoff = sizeof(eh);
	eh.e_shoff = shoff;
	eh.e_ehsize = sizeof(eh);
	eh.e_phentsize = sizeof(Elf64_Phdr);
	eh.e_phnum = 2;
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = 6;
	eh.e_shstrndx = 4;
	ph[0] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_offset = CODE_OFF,
			      .p_vaddr = CODE_OFF, .p_paddr = CODE_OFF, .p_filesz = PAGE,
			      .p_memsz = PAGE, .p_align = PAGE };
	ph[1] = (Elf64_Phdr){ .p_type = PT_NOTE, .p_flags = PF_R, .p_offset = noteoff,
			      .p_vaddr = noteoff, .p_filesz = sizeof(nt), .p_memsz = sizeof(nt),
			      .p_align = 4 };
	sh[1] = (Elf64_Shdr){ .sh_name = N_TEXT, .sh_type = SHT_PROGBITS,
			      .sh_flags = SHF_ALLOC | SHF_EXECINSTR, .sh_addr = CODE_OFF,
			      .sh_offset = CODE_OFF, .sh_size = PAGE, .sh_addralign = 16 };
	sh[2] = (Elf64_Shdr){ .sh_name = N_SYMTAB, .sh_type = SHT_SYMTAB, .sh_offset = symoff,
			      .sh_size = (nsyms + 1) * sizeof(Elf64_Sym), .sh_link = 3,
			      .sh_info = 1, .sh_addralign = 8, .sh_entsize = sizeof(Elf64_Sym) };
	sh[3] = (Elf64_Shdr){ .sh_name = N_STRTAB, .sh_type = SHT_STRTAB, .sh_offset = stroff,
			      .sh_size = strsz, .sh_addralign = 1 };
	sh[4] = (Elf64_Shdr){ .sh_name = N_SHSTRTAB, .sh_type = SHT_STRTAB, .sh_offset = shstroff,
			      .sh_size = sizeof(shstr), .sh_addralign = 1 };
	sh[5] = (Elf64_Shdr){ .sh_name = N_NOTE, .sh_type = SHT_NOTE, .sh_flags = SHF_ALLOC,
			      .sh_addr = noteoff, .sh_offset = noteoff, .sh_size = sizeof(nt),
			      .sh_addralign = 4 };

	f = fopen(path, "wb");
	if (!f)
		return -1;
	fwrite(&eh, sizeof(eh), 1, f);
	fwrite(ph, sizeof(ph), 1, f);
	fwrite(&nt, sizeof(nt), 1, f);
	fseek(f, CODE_OFF, SEEK_SET);
	fwrite(code, sizeof(code), 1, f);
	/* Symbol 0 is the null symbol; names follow in symbol order. */
	{
		Elf64_Sym s = { 0 };
		uint32_t off = 1;

		fwrite(&s, sizeof(s), 1, f);
		for (uint64_t i = 0; i < nsyms; i++) {
			s = (Elf64_Sym){
				.st_name = off,
				.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
				.st_shndx = 1,
				.st_value = i < NHOT ? CODE_OFF + i * HOT_STRIDE
						     : FILLER_BASE + (i - NHOT) * 16,
				.st_size = i < NHOT ? HOT_STRIDE : 16,
			};
			fwrite(&s, sizeof(s), 1, f);
			off += (uint32_t)sym_name(i, name) + 1;
		}
	}
	fputc(0, f);
	for (uint64_t i = 0; i < nsyms; i++)
		fwrite(name, sym_name(i, name) + 1, 1, f);
	fwrite(shstr, sizeof(shstr), 1, f);
	fseek(f, (long)shoff, SEEK_SET);
	fwrite(sh, sizeof(sh), 1, f);
	return fclose(f) ? -1 : 0;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int run(double secs, int n, char **files)
{
	typedef void (*spin_fn)(long);
	spin_fn fns[64][NHOT];
	double end = now() + secs;

	if (n > 64)
		n = 64;
	for (int i = 0; i < n; i++) {
		int fd = open(files[i], O_RDONLY | O_CLOEXEC);
		uint8_t *p;

		if (fd < 0) {
			perror(files[i]);
			return 1;
		}
		/* The code page alone, at its file offset, as a loader would map it. */
		p = mmap(NULL, PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, CODE_OFF);
		close(fd);
		if (p == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
		for (int k = 0; k < NHOT; k++)
			fns[i][k] = (spin_fn)(void *)(p + k * HOT_STRIDE);
	}
	printf("%d\n", (int)getpid());
	fflush(stdout);
	while (now() < end)
		for (int i = 0; i < n; i++)
			for (int k = 0; k < NHOT; k++)
				fns[i][k](200000);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "gen"))
		return gen(argv[2], strtoull(argv[3], NULL, 0), strtoull(argv[4], NULL, 0)) ? 1 : 0;
	if (argc >= 4 && !strcmp(argv[1], "run"))
		return run(atof(argv[2]), argc - 3, argv + 3);
	fprintf(stderr, "usage: bigsyms gen FILE NSYMS SEED | bigsyms run SECS FILE...\n");
	return 2;
}
