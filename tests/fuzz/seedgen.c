// SPDX-License-Identifier: MIT
/*
 * seedgen: turns a real ELF object into a seed for the structured fuzz
 * targets, in the input formats documented at the top of fuzz_ehframe.c
 * and fuzz_elfsyms.c.  Used by tests/fuzz/seed.sh on the machine's own
 * binaries; the inputs are trusted local files, but are still
 * bounds-checked so a strange one is skipped rather than crashing us.
 *
 *   seedgen ehframe FILE OUT [MAXBYTES]   .eh_frame (+ .debug_frame)
 *   seedgen debugframe FILE OUT [MAXBYTES] .debug_frame alone
 *   seedgen elfsyms FILE OUT [MAXBYTES]   symbol/string tables, notes, debuglink
 *   seedgen dwarf FILE OUT [MAXBYTES]     DWARF sections lines read, 8 function starts
 *   seedgen symbolize FILE OUT [MAXBYTES] symbol tables, the code segment, 48 sampled
 *                                         addresses in functions
 *
 * Exit status 0: seed written; 1: the object lacks what the mode needs.
 */
#include <elf.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

struct obj {
	const uint8_t *p;
	size_t size;
	const Elf64_Ehdr *eh;
	const Elf64_Shdr *sh;
	size_t nsh;
	const char *shstr;
	size_t shstr_size;
};

static int obj_open(struct obj *o, const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	void *m;

	if (fd < 0 || fstat(fd, &st) || (size_t)st.st_size < sizeof(Elf64_Ehdr)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return -1;
	o->p = m;
	o->size = (size_t)st.st_size;
	o->eh = m;
	if (memcmp(o->eh->e_ident, ELFMAG, SELFMAG) || o->eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    o->eh->e_shentsize != sizeof(Elf64_Shdr) || o->eh->e_shoff > o->size ||
	    (size_t)o->eh->e_shnum * sizeof(Elf64_Shdr) > o->size - o->eh->e_shoff ||
	    o->eh->e_shstrndx >= o->eh->e_shnum)
		return -1;
	o->sh = (const Elf64_Shdr *)(o->p + o->eh->e_shoff);
	o->nsh = o->eh->e_shnum;
	const Elf64_Shdr *ss = &o->sh[o->eh->e_shstrndx];

	if (ss->sh_offset > o->size || ss->sh_size > o->size - ss->sh_offset)
		return -1;
	o->shstr = (const char *)o->p + ss->sh_offset;
	o->shstr_size = ss->sh_size;
	return 0;
}

static const Elf64_Shdr *find(const struct obj *o, const char *name)
{
	for (size_t i = 1; i < o->nsh; i++) {
		size_t n = strlen(name) + 1;

		if (o->sh[i].sh_name < o->shstr_size && o->shstr_size - o->sh[i].sh_name >= n &&
		    !memcmp(o->shstr + o->sh[i].sh_name, name, n))
			return &o->sh[i];
	}
	return NULL;
}

/* The section's bytes clamped to @max and to the file; NULL if it has none. */
static const uint8_t *bytes(const struct obj *o, const Elf64_Shdr *s, size_t max, size_t *len)
{
	*len = 0;
	if (!s || s->sh_type == SHT_NOBITS || s->sh_offset > o->size)
		return NULL;
	*len = s->sh_size < o->size - s->sh_offset ? s->sh_size : o->size - s->sh_offset;
	if (*len > max)
		*len = max;
	return o->p + s->sh_offset;
}

static void put(FILE *f, const void *p, size_t n)
{
	if (n)
		fwrite(p, 1, n, f);
}

static int ehframe(const struct obj *o, FILE *out, size_t max, bool debug_only)
{
	const Elf64_Shdr *eh = debug_only ? NULL : find(o, ".eh_frame");
	const Elf64_Shdr *dbg = find(o, ".debug_frame"), *got = find(o, ".got");
	uint64_t lo = UINT64_MAX, hi = 0;
	size_t elen, dlen;
	const uint8_t *e = bytes(o, eh, max, &elen), *d;
	uint8_t flags = 0, pad[3] = { 0 };
	uint32_t split;
	uint64_t v;

	d = bytes(o, dbg, max - elen, &dlen);
	if (!elen && !dlen)
		return 1;
	for (size_t i = 1; i < o->nsh; i++) {
		const Elf64_Shdr *s = &o->sh[i];

		if ((s->sh_flags & (SHF_ALLOC | SHF_EXECINSTR)) == (SHF_ALLOC | SHF_EXECINSTR)) {
			lo = s->sh_addr < lo ? s->sh_addr : lo;
			hi = s->sh_addr + s->sh_size > hi ? s->sh_addr + s->sh_size : hi;
		}
	}
	if (lo > hi)
		lo = hi = 0;
	if (elen && dlen)
		flags |= 2;
	else if (dlen)
		flags |= 1;
	if (dbg && dlen && (dbg->sh_flags & SHF_COMPRESSED) && !elen)
		flags |= 4;
	if (o->eh->e_type == ET_EXEC)
		flags |= 8;
	if (got)
		flags |= 32;
	split = (uint32_t)elen;
	put(out, &flags, 1);
	put(out, pad, 3);
	put(out, &split, 4);
	v = eh ? eh->sh_addr : 0;
	put(out, &v, 8);
	put(out, &lo, 8);
	v = hi - lo;
	put(out, &v, 8);
	v = got ? got->sh_addr : 0;
	put(out, &v, 8);
	put(out, e, elen);
	put(out, d, dlen);
	return 0;
}

static int elfsyms(const struct obj *o, FILE *out, size_t max)
{
	const Elf64_Shdr *secs[6] = {
		find(o, ".symtab"), find(o, ".strtab"), find(o, ".dynsym"),
		find(o, ".dynstr"), find(o, ".note.gnu.build-id"), find(o, ".gnu_debuglink"),
	};
	/* Budgets per blob: symbol tables get most, whole entries only. */
	size_t caps[6] = { max * 3 / 10, max * 3 / 10, max / 8, max / 8, 256, 256 };
	const uint8_t *b[6];
	size_t len[6];
	const Elf64_Phdr *ph = (const Elf64_Phdr *)(o->p + o->eh->e_phoff);
	uint16_t flags = 0;
	uint8_t nload = 0, entsize = sizeof(Elf64_Sym);
	uint64_t absurd = 0;

	if (!secs[0] && !secs[2])
		return 1;
	for (int i = 0; i < 6; i++) {
		b[i] = bytes(o, secs[i], caps[i], &len[i]);
		if (i == 0 || i == 2)
			len[i] -= len[i] % sizeof(Elf64_Sym);
	}
	if (!secs[0])
		flags |= 1 << 4;
	if (o->eh->e_type == ET_EXEC)
		flags |= 1;
	put(out, &flags, 2);
	put(out, &entsize, 1);
	if (o->eh->e_phoff > o->size ||
	    (size_t)o->eh->e_phnum * sizeof(Elf64_Phdr) > o->size - o->eh->e_phoff)
		ph = NULL;
	for (size_t i = 0; ph && i < o->eh->e_phnum; i++)
		nload += ph[i].p_type == PT_LOAD && nload < 4;
	put(out, &nload, 1);
	for (size_t i = 0, k = 0; ph && i < o->eh->e_phnum && k < nload; i++) {
		uint8_t pf;

		if (ph[i].p_type != PT_LOAD)
			continue;
		put(out, &ph[i].p_offset, 8);
		put(out, &ph[i].p_vaddr, 8);
		put(out, &ph[i].p_filesz, 8);
		put(out, &ph[i].p_memsz, 8);
		pf = (uint8_t)ph[i].p_flags;
		put(out, &pf, 1);
		k++;
	}
	for (int i = 0; i < 6; i++) {
		uint32_t l = (uint32_t)len[i];

		put(out, &l, 4);
	}
	put(out, &absurd, 8);
	for (int i = 0; i < 6; i++)
		put(out, b[i], len[i]);
	return 0;
}

/* A section's bytes, inflated if it is ELF-compressed (Debian's debug files), at most @max. */
static const uint8_t *plain_bytes(const struct obj *o, const Elf64_Shdr *s, size_t max,
				  size_t *len, uint8_t **owned)
{
	const uint8_t *raw = bytes(o, s, o->size, len);
	Elf64_Chdr ch;
	uLongf out;

	*owned = NULL;
	if (!raw || !(s->sh_flags & SHF_COMPRESSED)) {
		if (*len > max)
			*len = max;
		return raw;
	}
	if (*len < sizeof(ch))
		return NULL;
	memcpy(&ch, raw, sizeof(ch));
	if (ch.ch_type != ELFCOMPRESS_ZLIB || ch.ch_size > (64u << 20) ||
	    !(*owned = malloc(ch.ch_size ? ch.ch_size : 1)))
		return NULL;
	out = (uLongf)ch.ch_size;
	if (uncompress(*owned, &out, raw + sizeof(ch), (uLong)(*len - sizeof(ch))) != Z_OK) {
		free(*owned);
		*owned = NULL;
		return NULL;
	}
	*len = out < max ? out : max;
	return *owned;
}

/* fuzz_dwarfinfo's format: its sections uncompressed, addresses of 8 functions. */
static int dwarf(const struct obj *o, FILE *out, size_t max)
{
	static const char *const names[11] = {
		".debug_info", ".debug_abbrev", ".debug_line", ".debug_line_str", ".debug_str",
		".debug_aranges", ".debug_rnglists", ".debug_ranges", ".debug_addr",
		".debug_str_offsets", ".debug_types",
	};
	const Elf64_Shdr *symtab = find(o, ".symtab");
	uint8_t *owned[11] = { NULL };
	const uint8_t *b[11];
	size_t len[11], left = max, nsym = 0, nfunc = 0, k = 0;
	uint64_t addrs[8] = { 0 };
	uint16_t flags = 0, zmask = 0;
	uint32_t zero = 0;

	for (int i = 0; i < 11; i++) {
		const Elf64_Shdr *sh = find(o, names[i]);

		b[i] = sh ? plain_bytes(o, sh, left, &len[i], &owned[i]) : NULL;
		if (!b[i])
			len[i] = 0;
		left -= len[i];
	}
	if (!len[0]) {
		for (int i = 0; i < 11; i++)
			free(owned[i]);
		return 1;
	}
	if (symtab && symtab->sh_offset <= o->size &&
	    symtab->sh_size <= o->size - symtab->sh_offset)
		nsym = symtab->sh_size / sizeof(Elf64_Sym);
	for (size_t i = 0; i < nsym; i++) {
		const Elf64_Sym *sym = (const Elf64_Sym *)(o->p + symtab->sh_offset) + i;

		nfunc += ELF64_ST_TYPE(sym->st_info) == STT_FUNC && sym->st_value;
	}
	for (size_t i = 0, seen = 0; i < nsym && k < 8; i++) {
		const Elf64_Sym *sym = (const Elf64_Sym *)(o->p + symtab->sh_offset) + i;

		if (ELF64_ST_TYPE(sym->st_info) != STT_FUNC || !sym->st_value)
			continue;
		/* Spread over the table: every (nfunc / 8)th function. */
		if (seen++ % (nfunc / 8 + 1) == 0)
			addrs[k++] = sym->st_value;
	}
	if (o->eh->e_type == ET_EXEC)
		flags |= 4;
	put(out, &flags, 2);
	put(out, &zmask, 2);
	put(out, &zero, 4);
	put(out, &zero, 4);
	for (int i = 0; i < 11; i++) {
		uint32_t l = (uint32_t)len[i];

		put(out, &l, 4);
	}
	put(out, addrs, sizeof(addrs));
	for (int i = 0; i < 11; i++) {
		put(out, b[i], len[i]);
		free(owned[i]);
	}
	return 0;
}

/* fuzz_symbolize's format: the object mapped at 0x400000, addresses in its functions. */
static int symbolize(const struct obj *o, FILE *out, size_t max)
{
	const Elf64_Shdr *secs[4] = { find(o, ".symtab"), find(o, ".strtab"), find(o, ".dynsym"),
				      find(o, ".dynstr") };
	size_t caps[4] = { max * 3 / 8, max * 3 / 8, max / 8, max / 8 }, len[4];
	const Elf64_Phdr *ph = (const Elf64_Phdr *)(o->p + o->eh->e_phoff), *text = NULL;
	const Elf64_Shdr *tab = secs[0] ? secs[0] : secs[2];
	uint64_t map_start = 0x400000, map_off, addrs[48];
	uint16_t flags = secs[0] ? 0 : 2;
	uint32_t zero = 0;
	uint8_t naddr = 0;
	const uint8_t *b[4];

	if (!tab || o->eh->e_phoff > o->size ||
	    (size_t)o->eh->e_phnum * sizeof(Elf64_Phdr) > o->size - o->eh->e_phoff)
		return 1;
	for (size_t i = 0; i < o->eh->e_phnum && !text; i++)
		if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X))
			text = &ph[i];
	if (!text)
		return 1;
	for (int i = 0; i < 4; i++) {
		b[i] = bytes(o, secs[i], caps[i], &len[i]);
		if (i == 0 || i == 2)
			len[i] -= len[i] % sizeof(Elf64_Sym);
	}
	map_off = text->p_offset & ~0xfffull;
	if (tab->sh_offset <= o->size && tab->sh_size <= o->size - tab->sh_offset) {
		size_t n = tab->sh_size / sizeof(Elf64_Sym);

		for (size_t i = 0; i < n && naddr < 48; i += n / 24 + 1) {
			const Elf64_Sym *sym = (const Elf64_Sym *)(o->p + tab->sh_offset) + i;
			uint64_t v;

			if (ELF64_ST_TYPE(sym->st_info) != STT_FUNC || !sym->st_value)
				continue;
			v = sym->st_value - text->p_vaddr + text->p_offset - map_off + map_start;
			addrs[naddr++] = v;
			addrs[naddr++] = v + sym->st_size / 2;
		}
	}
	if (o->eh->e_type == ET_EXEC)
		flags |= 1;
	put(out, &flags, 2);
	put(out, &zero, 4);
	put(out, &naddr, 1);
	put(out, &map_start, 8);
	put(out, &map_off, 8);
	put(out, &text->p_offset, 8);
	put(out, &text->p_vaddr, 8);
	put(out, &text->p_filesz, 8);
	for (int i = 0; i < 4; i++) {
		uint32_t l = (uint32_t)len[i];

		put(out, &l, 4);
	}
	put(out, addrs, naddr * sizeof(addrs[0]));
	for (int i = 0; i < 4; i++)
		put(out, b[i], len[i]);
	return 0;
}

int main(int argc, char **argv)
{
	struct obj o;
	size_t max;
	FILE *out;
	int rc;

	if (argc < 4 || argc > 5) {
		fprintf(stderr, "usage: seedgen ehframe|debugframe|elfsyms|dwarf|symbolize FILE OUT [MAXBYTES]\n");
		return 2;
	}
	max = argc == 5 ? strtoul(argv[4], NULL, 0) : 65536;
	if (obj_open(&o, argv[2]))
		return 1;
	out = fopen(argv[3], "wb");
	if (!out)
		return 2;
	if (!strcmp(argv[1], "ehframe"))
		rc = ehframe(&o, out, max, false);
	else if (!strcmp(argv[1], "debugframe"))
		rc = ehframe(&o, out, max, true);
	else if (!strcmp(argv[1], "elfsyms"))
		rc = elfsyms(&o, out, max);
	else if (!strcmp(argv[1], "dwarf"))
		rc = dwarf(&o, out, max);
	else if (!strcmp(argv[1], "symbolize"))
		rc = symbolize(&o, out, max);
	else
		rc = 2;
	if (fclose(out) || rc) {
		unlink(argv[3]);
		return rc ? rc : 2;
	}
	return 0;
}
