// SPDX-License-Identifier: MIT
/*
 * fuzz_ehframe: .eh_frame / .debug_frame contents -> unwind rows.
 *
 * The input is a small header saying where things are, then the section
 * bytes; the harness wraps them in a valid ELF (synth_elf.h) so that every
 * mutation lands in the CIE/FDE parser and the CFA interpreter:
 *
 *   u8  flags    bit 0: the bytes are .debug_frame, not .eh_frame
 *                bit 1: both: the first `split` bytes are .eh_frame, the
 *                       rest .debug_frame
 *                bit 2: mark the section SHF_COMPRESSED (the bytes are then
 *                       an Elf64_Chdr and a zlib stream)
 *                bit 3: ET_EXEC instead of ET_DYN
 *                bit 4: also build through a file descriptor
 *                bit 5: add a .got section (DW_EH_PE_datarel base)
 *   u8  pad[3]
 *   u32 split
 *   u64 eh_addr   sh_addr of .eh_frame (pcrel base)
 *   u64 text_addr .text: the executable range FDEs must fall in
 *   u64 text_size
 *   u64 got_addr
 *   ... section bytes
 *
 * tests/fuzz/seedgen.c writes seeds in this format from real objects.
 */
#include <stdint.h>

#include "fuzz_common.h"
#include "synth_elf.h"
#include "unwind/unwind.h"
#include "unwindcheck.h"

enum {
	F_DEBUG = 1 << 0,
	F_BOTH = 1 << 1,
	F_COMPRESSED = 1 << 2,
	F_EXEC = 1 << 3,
	F_FD = 1 << 4,
	F_GOT = 1 << 5,
};

static void check_table(const struct unwind_table *t, uint64_t text_addr, uint64_t text_size)
{
	/* CPROF_FUZZ_DUMP=1 replay-ehframe FILE: see the rows of a failing input. */
	if (getenv("CPROF_FUZZ_DUMP")) {
		fprintf(stderr, "text [%#llx, +%#llx) base %#llx, %zu rows, %zu fdes, %zu skipped\n",
			(unsigned long long)text_addr, (unsigned long long)text_size,
			(unsigned long long)t->base, t->n, t->fdes, t->skipped);
		for (size_t i = 0; i < t->n; i++)
			fprintf(stderr, "  %#llx cfa rule %u off %d rbp rule %u off %d\n",
				(unsigned long long)(t->base + t->pcs[i]),
				unwind_rule(t, i)->rules & 15, unwind_rule(t, i)->cfa_off,
				unwind_rule(t, i)->rules >> 4, unwind_rule(t, i)->rbp_off);
	}
	for (size_t i = 0; i < t->n; i++) {
		FUZZ_ASSERT(t->ids[i] < t->nrules);
		const struct cprof_unwind_rule *r = unwind_rule(t, i);
		unsigned cfa = r->rules & 15, rbp = r->rules >> 4;

		FUZZ_ASSERT(i == 0 || t->pcs[i - 1] < t->pcs[i]);
		FUZZ_ASSERT(cfa <= CPROF_CFA_STOP);
		FUZZ_ASSERT(rbp <= CPROF_RBP_INVALID);
		/* unwind.h: rows without a CFA offset carry nothing else either. */
		if (cfa == CPROF_CFA_INVALID || cfa == CPROF_CFA_STOP || cfa == CPROF_CFA_SIGNAL)
			FUZZ_ASSERT(r->cfa_off == 0 && rbp == CPROF_RBP_SAME && r->rbp_off == 0);
		/* the BPF unwinder's lookup (tests/unwindcheck.h) finds each row at its pc */
		const struct cprof_unwind_rule *found = row_at(t, t->base + t->pcs[i]);

		FUZZ_ASSERT(found && memcmp(found, r, sizeof(*r)) == 0);
	}
	/*
	 * FDEs are kept only when they start in executable code (when the
	 * object says where that is: .text here, unless its range wraps), so
	 * no row of a real rule lies below .text.  (An FDE may run past the
	 * end of .text: only its start is checked, by design.)
	 */
	if (text_size && text_addr + text_size > text_addr)
		for (size_t i = 0; i < t->n; i++)
			if ((unwind_rule(t, i)->rules & 15) != CPROF_CFA_INVALID)
				FUZZ_ASSERT(t->base + t->pcs[i] >= text_addr);
	(void)row_at(t, 0);
	(void)row_at(t, UINT64_MAX);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fdp f = fdp_init(data, size);
	uint8_t flags = fdp_u8(&f);
	uint32_t split;
	uint64_t eh_addr, text_addr, text_size, got_addr;
	const uint8_t *body;
	size_t blen, eh_len, dbg_len, img_len;
	struct unwind_table t;
	struct synth s;
	uint8_t *img;
	uint64_t sflags;

	fdp_u8(&f);
	fdp_u16(&f);
	split = fdp_u32(&f);
	eh_addr = fdp_u64(&f);
	text_addr = fdp_u64(&f);
	text_size = fdp_u64(&f);
	got_addr = fdp_u64(&f);
	body = fdp_bytes(&f, f.left, &blen);

	if (flags & F_BOTH) {
		eh_len = split < blen ? split : blen;
		dbg_len = blen - eh_len;
	} else if (flags & F_DEBUG) {
		eh_len = 0;
		dbg_len = blen;
	} else {
		eh_len = blen;
		dbg_len = 0;
	}
	sflags = (flags & F_COMPRESSED) ? SHF_COMPRESSED : 0;

	synth_init(&s, (flags & F_EXEC) ? ET_EXEC : ET_DYN);
	/* .text needs no bytes: the unwinder reads only its address range. */
	synth_section(&s, ".text",
		      &(Elf64_Shdr){ .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC | SHF_EXECINSTR,
				     .sh_addr = text_addr, .sh_size = text_size, .sh_addralign = 16 });
	if (flags & F_GOT)
		synth_section(&s, ".got",
			      &(Elf64_Shdr){ .sh_type = SHT_PROGBITS,
					     .sh_flags = SHF_ALLOC | SHF_WRITE,
					     .sh_addr = got_addr, .sh_addralign = 8 });
	if (eh_len || !dbg_len) {
		uint64_t off = synth_blob(&s, body, eh_len, 8);

		synth_section(&s, ".eh_frame",
			      &(Elf64_Shdr){ .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC | sflags,
					     .sh_addr = eh_addr, .sh_offset = off,
					     .sh_size = eh_len, .sh_addralign = 8 });
	}
	if (dbg_len) {
		uint64_t off = synth_blob(&s, body + eh_len, dbg_len, 8);

		synth_section(&s, ".debug_frame",
			      &(Elf64_Shdr){ .sh_type = SHT_PROGBITS, .sh_flags = sflags,
					     .sh_offset = off, .sh_size = dbg_len,
					     .sh_addralign = 8 });
	}
	synth_phdr(&s, &(Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R | PF_X,
				      .p_vaddr = text_addr, .p_filesz = text_size,
				      .p_memsz = text_size, .p_align = 4096 });
	img = synth_finish(&s, &img_len);
	if (!img)
		return 0;

	int rc = build_mem(img, img_len, &t, NULL);

	if (rc == 0)
		check_table(&t, text_addr, text_size);
	if (flags & F_FD) {
		/* The fd path must read exactly what the memory path sees. */
		int fd = fuzz_memfd(img, img_len);
		struct unwind_table t2;

		if (fd >= 0) {
			int rc2 = build_fd(fd, &t2, NULL);

			FUZZ_ASSERT(rc2 == rc);
			if (rc2 == 0) {
				FUZZ_ASSERT(tables_same(&t, &t2));
				unwind_table_free(&t2);
			}
			close(fd);
		}
	}
	if (rc == 0)
		unwind_table_free(&t);
	free(img);
	return 0;
}
