// SPDX-License-Identifier: MIT
/*
 * fuzz_symbolize: the naming path a sampled address takes, over a made-up
 * process mapping a mutated object: collect_prepare(), the window's way
 * into symbolizer_prepare() (symbol tables read for the sampled addresses
 * only, within a symbol memory bound that may be tiny), then
 * symbolize_user() per address, against a second symbolizer resolving the
 * same addresses one at a time (whole tables).
 *
 *   u16 flags    bit 0: ET_EXEC    bit 1: no .symtab (.dynsym only)
 *                bit 2: the symbol memory bound is `budget` bytes
 *                bit 3: the object read from a file descriptor, not memory
 *   u32 budget
 *   u8  naddr    sampled addresses (at most 64), each a stack of 1-3 frames
 *   u64 map_start, map_offset          the mapping of the object
 *   u64 seg_offset, seg_vaddr, seg_size its executable PT_LOAD
 *   u32 len[4]   .symtab, .strtab, .dynsym, .dynstr bytes
 *   u64 addr[naddr]
 *   ... the four blobs
 *
 * Checked: frames have at most SYM_MAX_LINES lines, names are non-empty
 * and bounded, no DWARF is claimed (there is none), the bound is never
 * exceeded, and both symbolizers name an address alike wherever both name
 * it.  Rust v0 names are turned into other names first: their demangler
 * can loop 2^64 times (demangle.h), which is why the agent runs it in the
 * worker's child, not here.
 */
#include <stdint.h>
#include <stdio.h>

#include "elf/elfobj.h"
#include "fuzz_common.h"
#include "util/stackstore.h"
#include "output/collect.h"
#include "symbols/symbolize.h"
#include "synth_elf.h"

enum { F_EXEC = 1, F_NOSYMTAB = 2, F_BUDGET = 4, F_FD = 8 };
enum { B_SYMTAB, B_STRTAB, B_DYNSYM, B_DYNSTR, NBLOBS };
#define MAX_ADDRS 64

/* The names a frame got, for comparing two symbolizers. */
struct named {
	unsigned n;
	char name[SYM_MAX_LINES][64];
};

static void no_v0(uint8_t *s, size_t n)
{
	for (size_t i = 0; i + 1 < n; i++)
		if ((i == 0 || s[i - 1] == 0) && s[i] == '_' && s[i + 1] == 'R')
			s[i + 1] = 'X';
}

static void check_sym(const struct sym *sym, struct named *out)
{
	FUZZ_ASSERT(sym->nlines <= SYM_MAX_LINES);
	FUZZ_ASSERT(!sym->dwarf && !sym->jit);
	out->n = sym->nlines;
	for (unsigned i = 0; i < sym->nlines; i++) {
		const struct sym_line *l = &sym->lines[i];

		FUZZ_ASSERT(!l->file && !l->line && !l->start_line);
		if (l->name) {
			FUZZ_ASSERT(l->name[0] && strlen(l->name) < 8192);
			FUZZ_ASSERT(!l->system_name || strlen(l->system_name) < 8192);
		}
		snprintf(out->name[i], sizeof(out->name[i]), "%s", l->name ? l->name : "");
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fdp f = fdp_init(data, size);
	uint16_t flags = fdp_u16(&f);
	uint32_t budget = fdp_u32(&f), len[NBLOBS];
	size_t naddr = fdp_u8(&f) % (MAX_ADDRS + 1);
	uint64_t map_start = fdp_u64(&f) & ~0xfffull, map_off = fdp_u64(&f) & ~0xfffull;
	uint64_t seg_off = fdp_u64(&f), seg_vaddr = fdp_u64(&f), seg_size = fdp_u64(&f);
	uint64_t addrs[MAX_ADDRS];
	uint32_t idx[NBLOBS] = { 0 };
	uint64_t off[NBLOBS];
	uint8_t *blob[NBLOBS] = { NULL };
	size_t got[NBLOBS];
	struct named first[MAX_ADDRS];
	struct process p = { .pid = 7 };
	struct process *procs[1] = { &p };
	struct sym_process view;
	struct stackstore stacks;
	struct elfobj *o = NULL;
	struct synth s;
	char maps[160];
	uint8_t *img;
	size_t img_len;

	if (map_start > UINT64_MAX - (2u << 20))
		map_start = 0x400000;
	for (int i = 0; i < NBLOBS; i++)
		len[i] = fdp_u32(&f);
	for (size_t i = 0; i < naddr; i++)
		addrs[i] = fdp_u64(&f);
	synth_init(&s, (flags & F_EXEC) ? ET_EXEC : ET_DYN);
	synth_phdr(&s, &(Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R | PF_X,
				      .p_offset = seg_off, .p_vaddr = seg_vaddr,
				      .p_filesz = seg_size, .p_memsz = seg_size, .p_align = 4096 });
	for (int i = 0; i < NBLOBS; i++) {
		const uint8_t *b = fdp_bytes(&f, len[i], &got[i]);

		blob[i] = malloc(got[i] ? got[i] : 1);
		if (!blob[i])
			goto out;
		memcpy(blob[i], b, got[i]);
		if (i == B_STRTAB || i == B_DYNSTR)
			no_v0(blob[i], got[i]);
		off[i] = synth_blob(&s, blob[i], got[i], i == B_SYMTAB || i == B_DYNSYM ? 8 : 1);
	}
	idx[B_STRTAB] = synth_section(&s, ".strtab",
		&(Elf64_Shdr){ .sh_type = SHT_STRTAB, .sh_offset = off[B_STRTAB],
			       .sh_size = got[B_STRTAB], .sh_addralign = 1 });
	idx[B_DYNSTR] = synth_section(&s, ".dynstr",
		&(Elf64_Shdr){ .sh_type = SHT_STRTAB, .sh_flags = SHF_ALLOC,
			       .sh_offset = off[B_DYNSTR], .sh_size = got[B_DYNSTR], .sh_addralign = 1 });
	if (!(flags & F_NOSYMTAB))
		synth_section(&s, ".symtab",
			&(Elf64_Shdr){ .sh_type = SHT_SYMTAB, .sh_offset = off[B_SYMTAB],
				       .sh_size = got[B_SYMTAB], .sh_link = idx[B_STRTAB],
				       .sh_entsize = sizeof(Elf64_Sym), .sh_addralign = 8 });
	synth_section(&s, ".dynsym",
		&(Elf64_Shdr){ .sh_type = SHT_DYNSYM, .sh_flags = SHF_ALLOC,
			       .sh_offset = off[B_DYNSYM], .sh_size = got[B_DYNSYM],
			       .sh_link = idx[B_DYNSTR], .sh_entsize = sizeof(Elf64_Sym),
			       .sh_addralign = 8 });
	img = synth_finish(&s, &img_len);
	if (!img)
		goto out;
	if (flags & F_FD) {
		int fd = fuzz_memfd(img, img_len);

		if (fd < 0 || elfobj_open(&o, fd, NULL))
			o = NULL;
	} else if (elfobj_open_mem(&o, img, img_len, NULL)) {
		o = NULL;
	}
	free(img);
	if (!o)
		goto out;

	snprintf(maps, sizeof(maps), "%llx-%llx r-xp %08llx 08:01 1 /fuzz/object\n",
		 (unsigned long long)map_start, (unsigned long long)(map_start + (1u << 20)),
		 (unsigned long long)map_off);
	if (procmaps_parse(maps, strlen(maps), &p.maps, NULL) || p.maps.n != 1) {
		procmaps_free(&p.maps);
		elfobj_free(o);
		goto out;
	}
	p.objs = &o;
	view = collect_view(&p);
	aggregate_init(&p.samples);
	stackstore_init(&stacks);
	for (size_t i = 0; i < naddr; i++) {
		struct cprof_sample_key k = { .pid = 7, .tid = 7, .ustack = CPROF_STACK_HASHED | i };
		uint32_t depth = 1 + (uint32_t)(i % 3);

		if (i + depth > naddr)
			depth = (uint32_t)(naddr - i);
		stackstore_add(&stacks, k.ustack, &addrs[i], depth, 0);
		aggregate_add(&p.samples, &stacks, &k, 1);
	}

	for (int pass = 0; pass < 2; pass++) {
		struct symbolizer sym = {
			.debug_root = "/nonexistent-cprof-fuzz/debug",
			.symbol_max_bytes = (flags & F_BUDGET) ? budget : 0,
			.lines_in_process = true,
		};
		struct symbolizer_stats st;

		if (pass == 0)
			collect_prepare(&sym, procs, 1, &stacks, NULL);
		for (size_t i = 0; i < naddr; i++) {
			/* The addresses profile.c asks for: the leaf, and return addresses - 1. */
			uint64_t a = symbolize_frame_addr(addrs[i], (uint32_t)(i % 3));
			struct named now;
			struct sym out;

			symbolize_user(&sym, &view, a, &out);
			check_sym(&out, pass ? &now : &first[i]);
			(void)symbolize_maybe_jit(&view, out.vma);
			if (!pass || !now.n || !first[i].n)
				continue;
			/* Both named it: alike, unless a bound cut one of them short. */
			if (first[i].name[0][0] && now.name[0][0] && !(flags & F_BUDGET))
				FUZZ_ASSERT(!strcmp(first[i].name[0], now.name[0]));
		}
		symbolizer_stats(&sym, &st);
		if (flags & F_BUDGET)
			FUZZ_ASSERT(st.symbol_peak <= (budget ? budget : SYMBOLIZE_SYMBOL_MEMORY));
		symbolizer_done(&sym, &view);
		symbolizer_free(&sym);
	}
	aggregate_free(&p.samples);
	stackstore_free(&stacks);
	procmaps_free(&p.maps);
	elfobj_free(o);
out:
	for (int i = 0; i < NBLOBS; i++)
		free(blob[i]);
	return 0;
}
