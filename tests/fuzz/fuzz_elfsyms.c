// SPDX-License-Identifier: MIT
/*
 * fuzz_elfsyms: symbol tables, string tables, build-ID notes, debuglink and
 * PT_LOAD segments of an ELF object, wrapped by the harness in valid ELF
 * and section headers (synth_elf.h) so mutations reach elfobj's table
 * readers instead of dying in the ELF header checks.
 *
 *   u16 flags    bit 0: ET_EXEC       bit 1: .symtab sh_entsize 0
 *                bit 2: .symtab sh_entsize = `entsize`
 *                bit 3: .symtab sh_size = `absurd` (a lying count)
 *                bit 4: no .symtab (.dynsym only)
 *                bit 5: look for debug files (nowhere that exists)
 *                bit 6: notes 8-aligned    bit 7: no PT_NOTE (section only)
 *                bit 8: .strtab sh_size = `absurd`
 *                bit 9: .symtab links to a non-STRTAB section
 *   u8  entsize
 *   u8  nload    PT_LOAD segments, at most 4, each:
 *                u64 offset, u64 vaddr, u64 filesz, u64 memsz, u8 p_flags
 *   u32 len[6]   symtab, strtab, dynsym, dynstr, note, debuglink bytes
 *   u64 absurd
 *   ... the six blobs, in that order
 *
 * tests/fuzz/seedgen.c writes seeds in this format from real objects.
 * Checked beyond "no crash": sorted unique symbols, bounded names, lookups
 * that find what is listed, and a table read for some addresses only
 * (symsel.h) naming them as the whole table does.  The dynamic symbols are
 * looked up by name too (elfobj_find_dynamic()): a name too long to read
 * is never found, and a name asked again is found again, at the same place.
 */
#include <stdint.h>

#include "elf/elfobj.h"
#include "fuzz_common.h"
#include "synth_elf.h"

enum {
	F_EXEC = 1 << 0,
	F_ENT0 = 1 << 1,
	F_ENTX = 1 << 2,
	F_ABSURD = 1 << 3,
	F_NOSYMTAB = 1 << 4,
	F_DEBUG = 1 << 5,
	F_NOTE8 = 1 << 6,
	F_NOPTNOTE = 1 << 7,
	F_STRABSURD = 1 << 8,
	F_BADLINK = 1 << 9,
};

enum { B_SYMTAB, B_STRTAB, B_DYNSYM, B_DYNSTR, B_NOTE, B_LINK, NBLOBS };

static const struct elfobj_debug_opts no_files = {
	.debug_root = "/nonexistent-cprof-fuzz/debug",
	.path = "/nonexistent-cprof-fuzz/bin/object",
};

struct seg_in {
	uint64_t off, vaddr, filesz, memsz;
};

static void check(struct elfobj *o, bool debug, const struct seg_in *segs, size_t nseg);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fdp f = fdp_init(data, size);
	uint16_t flags = fdp_u16(&f);
	uint8_t entsize = fdp_u8(&f), nload = fdp_u8(&f) % 5;
	struct seg_in segs[4];
	uint32_t len[NBLOBS];
	const uint8_t *blob[NBLOBS];
	size_t got[NBLOBS];
	uint64_t off[NBLOBS], absurd;
	uint32_t idx[NBLOBS] = { 0 };
	struct synth s;
	struct elfobj *o;
	uint8_t *img;
	size_t img_len;

	synth_init(&s, (flags & F_EXEC) ? ET_EXEC : ET_DYN);
	for (size_t i = 0; i < nload; i++) {
		Elf64_Phdr ph = { .p_type = PT_LOAD, .p_align = 4096 };

		ph.p_offset = segs[i].off = fdp_u64(&f);
		ph.p_vaddr = segs[i].vaddr = fdp_u64(&f);
		ph.p_filesz = segs[i].filesz = fdp_u64(&f);
		ph.p_memsz = segs[i].memsz = fdp_u64(&f);
		ph.p_flags = fdp_u8(&f) & 7;
		synth_phdr(&s, &ph);
	}
	for (int i = 0; i < NBLOBS; i++)
		len[i] = fdp_u32(&f);
	absurd = fdp_u64(&f);
	for (int i = 0; i < NBLOBS; i++) {
		blob[i] = fdp_bytes(&f, len[i], &got[i]);
		off[i] = synth_blob(&s, blob[i], got[i], i == B_SYMTAB || i == B_DYNSYM ? 8 : 4);
	}

	/* String tables first: the symbol tables link to them. */
	idx[B_STRTAB] = synth_section(&s, ".strtab",
		&(Elf64_Shdr){ .sh_type = SHT_STRTAB, .sh_offset = off[B_STRTAB],
			       .sh_size = (flags & F_STRABSURD) ? absurd : got[B_STRTAB],
			       .sh_addralign = 1 });
	idx[B_DYNSTR] = synth_section(&s, ".dynstr",
		&(Elf64_Shdr){ .sh_type = SHT_STRTAB, .sh_flags = SHF_ALLOC,
			       .sh_offset = off[B_DYNSTR], .sh_size = got[B_DYNSTR],
			       .sh_addralign = 1 });
	idx[B_NOTE] = synth_section(&s, ".note.gnu.build-id",
		&(Elf64_Shdr){ .sh_type = SHT_NOTE, .sh_flags = SHF_ALLOC,
			       .sh_offset = off[B_NOTE], .sh_size = got[B_NOTE],
			       .sh_addralign = (flags & F_NOTE8) ? 8 : 4 });
	if (!(flags & F_NOSYMTAB)) {
		uint64_t ent = (flags & F_ENT0) ? 0 : (flags & F_ENTX) ? entsize : sizeof(Elf64_Sym);

		synth_section(&s, ".symtab",
			&(Elf64_Shdr){ .sh_type = SHT_SYMTAB, .sh_offset = off[B_SYMTAB],
				       .sh_size = (flags & F_ABSURD) ? absurd : got[B_SYMTAB],
				       .sh_link = (flags & F_BADLINK) ? idx[B_NOTE] : idx[B_STRTAB],
				       .sh_entsize = ent, .sh_addralign = 8 });
	}
	synth_section(&s, ".dynsym",
		&(Elf64_Shdr){ .sh_type = SHT_DYNSYM, .sh_flags = SHF_ALLOC,
			       .sh_offset = off[B_DYNSYM], .sh_size = got[B_DYNSYM],
			       .sh_link = idx[B_DYNSTR], .sh_entsize = sizeof(Elf64_Sym),
			       .sh_addralign = 8 });
	synth_section(&s, ".gnu_debuglink",
		&(Elf64_Shdr){ .sh_type = SHT_PROGBITS, .sh_offset = off[B_LINK],
			       .sh_size = got[B_LINK], .sh_addralign = 4 });
	if (!(flags & F_NOPTNOTE))
		synth_phdr(&s, &(Elf64_Phdr){ .p_type = PT_NOTE, .p_offset = off[B_NOTE],
					      .p_filesz = got[B_NOTE],
					      .p_align = (flags & F_NOTE8) ? 8 : 4 });
	/* An object needs a PT_LOAD to be opened at all. */
	if (!nload)
		synth_phdr(&s, &(Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R | PF_X,
					      .p_filesz = 4096, .p_memsz = 4096, .p_align = 4096 });
	img = synth_finish(&s, &img_len);
	if (!img)
		return 0;
	if (elfobj_open_mem(&o, img, img_len, NULL) == 0) {
		check(o, flags & F_DEBUG, segs, nload);
		elfobj_free(o);
	}
	free(img);
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* What a lookup found, kept across loads. */
struct found {
	uint64_t start, size;
	char *name; /* a copy, or NULL */
	bool some;
};

/*
 * The table read for some addresses only (elfobj_load_symbols_for) names
 * each of them as the whole table does.  The whole table may have dropped
 * a name the partial one kept (names are bounded in total): then its
 * symbol at that address is nameless.
 */
static void check_partial(struct elfobj *o, const struct elfobj_debug_opts *opts)
{
	size_t n, na = 0, nu = 0, nfull;
	const struct elfobj_sym *sym = elfobj_symbols(o, &n);
	struct elfobj_sym *full;
	struct found *want;
	uint64_t *addrs;

	addrs = malloc((3 * n + 4) * sizeof(*addrs));
	want = calloc(3 * n + 4, sizeof(*want));
	full = malloc((n ? n : 1) * sizeof(*full));
	if (!addrs || !want || !full)
		goto out;
	if (n)
		memcpy(full, sym, n * sizeof(*full));
	nfull = n;
	for (size_t i = 0; i < n; i++) {
		addrs[na++] = sym[i].start;
		addrs[na++] = sym[i].start + sym[i].size / 2;
		addrs[na++] = sym[i].start - 1;
	}
	addrs[na++] = 0;
	addrs[na++] = UINT64_MAX;
	qsort(addrs, na, sizeof(*addrs), cmp_u64);
	for (size_t i = 0; i < na; i++)
		if (!nu || addrs[nu - 1] != addrs[i])
			addrs[nu++] = addrs[i];
	for (size_t i = 0; i < nu; i++) {
		const struct elfobj_sym *s = elfobj_lookup(o, addrs[i]);

		if (s)
			want[i] = (struct found){ s->start, s->size, strdup(s->name), true };
	}
	if (elfobj_load_symbols_for(o, opts, addrs, nu, UINT64_MAX, NULL))
		goto out;
	for (size_t i = 0; i < nu; i++) {
		const struct elfobj_sym *s = elfobj_lookup(o, addrs[i]);

		if (want[i].some) {
			FUZZ_ASSERT(s && s->start == want[i].start && s->size == want[i].size);
			FUZZ_ASSERT(!strcmp(s->name, want[i].name));
		} else if (s) {
			const struct elfobj_sym *f = NULL;

			for (size_t j = 0; j < nfull; j++)
				if (full[j].start == s->start)
					f = &full[j];
			FUZZ_ASSERT(f && !f->name);
		}
	}
out:
	for (size_t i = 0; want && i < nu; i++)
		free(want[i].name);
	free(addrs);
	free(want);
	free(full);
}

/*
 * Looks up by name the first symbols loaded and a name longer than any
 * name read (4096 bytes with its NUL), which is never found.
 */
static void check_by_name(struct elfobj *o)
{
	static char too_long[4200];
	struct elfsyms_named want[5], again[5];
	const struct elfobj_sym *sym;
	size_t n, k = 0;

	memset(too_long, 'x', sizeof(too_long) - 1);
	sym = elfobj_symbols(o, &n);
	for (size_t i = 0; i < n && k < 4; i++)
		if (sym[i].name)
			want[k++] = (struct elfsyms_named){ .name = sym[i].name };
	want[k++] = (struct elfsyms_named){ .name = too_long };
	memcpy(again, want, sizeof(want));
	if (elfobj_find_dynamic(o, want, k, NULL))
		return;
	FUZZ_ASSERT(!want[k - 1].found);
	FUZZ_ASSERT(elfobj_find_dynamic(o, again, k, NULL) == 0);
	for (size_t i = 0; i < k; i++)
		FUZZ_ASSERT(want[i].found == again[i].found && want[i].value == again[i].value &&
			    want[i].size == again[i].size);
}

static void check(struct elfobj *o, bool debug, const struct seg_in *segs, size_t nseg)
{
	const struct elfobj_sym *sym;
	size_t n, idlen;
	uint64_t va;

	elfobj_build_id_raw(o, &idlen);
	FUZZ_ASSERT(idlen <= ELFOBJ_BUILD_ID_MAX);
	FUZZ_ASSERT(strlen(elfobj_build_id(o)) == 2 * idlen);
	/* Offsets at, inside and just past each segment. */
	for (size_t i = 0; i < nseg; i++) {
		uint64_t probes[] = { segs[i].off, segs[i].off + segs[i].filesz / 2,
				      segs[i].off + segs[i].filesz, segs[i].off - 1 };

		for (size_t j = 0; j < sizeof(probes) / sizeof(probes[0]); j++)
			(void)elfobj_file_to_vaddr(o, probes[j], &va);
	}
	if (elfobj_load_symbols(o, debug ? &no_files : NULL, NULL))
		return;
	sym = elfobj_symbols(o, &n);
	FUZZ_ASSERT(n == elfobj_nsyms(o));
	FUZZ_ASSERT(!elfobj_syms_from_debug_file(o));
	for (size_t i = 0; i < n; i++) {
		FUZZ_ASSERT(i == 0 || sym[i - 1].start < sym[i].start);
		/* A name that could not be read leaves its symbol nameless, never found. */
		if (!sym[i].name) {
			FUZZ_ASSERT(!elfobj_lookup(o, sym[i].start));
			continue;
		}
		size_t l = strlen(sym[i].name);

		FUZZ_ASSERT(l > 0 && l < 4096);
		/* Version suffixes are cut: "memcpy@@GLIBC_2.14" -> "memcpy". */
		FUZZ_ASSERT(sym[i].name[0] == '@' || !strchr(sym[i].name, '@'));
		FUZZ_ASSERT(elfobj_lookup(o, sym[i].start) == &sym[i]);
		if (sym[i].size && sym[i].start + sym[i].size > sym[i].start)
			(void)elfobj_lookup(o, sym[i].start + sym[i].size);
	}
	check_by_name(o);
	check_partial(o, debug ? &no_files : NULL);
}
