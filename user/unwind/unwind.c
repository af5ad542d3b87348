// SPDX-License-Identifier: MIT
/*
 * unwind: DWARF call frame information compiled into the rows the BPF
 * unwinder binary-searches (see unwind.h and struct cprof_unwind_rule).
 *
 * Pipeline, one object at a time, a module a step:
 *
 *  1. unwind_elf.c: where the CFI sections and the code are, and their
 *     bytes, from a file or a memory image (the vDSO).
 *  2. unwind_cfi.c: every CIE and FDE of a CFI section (.eh_frame, or
 *     .debug_frame) collected, then each FDE's CFA program run, in order of
 *     the FDEs' start addresses;
 *  3. unwind_x86.c: the x86-64 registers' rules at each location made into
 *     a row;
 *  4. rows.c: the rows merged and their rules numbered;
 *  5. unwind_layout.c: the table laid out as the BPF side reads it.
 *
 * .debug_frame is read only when .eh_frame is absent or covers less than
 * half of the executable sections' bytes; its FDEs then only fill the gaps
 * that .eh_frame leaves (an .eh_frame FDE always wins).
 *
 * Returns -ENOENT when the object has neither section; malformed content is
 * skipped and counted in unwind_table.skipped, never an error.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "unwind/unwind.h"
#include "unwind/unwind_cfi.h"
#include "unwind/unwind_elf.h"
#include "unwind/rows.h"

/* A section this big is let go once its FDEs are collected. */
#define REREAD_MIN (1u << 20)

static int build(const struct elfsrc *s, struct unwind_table *out, struct errbuf *err)
{
	struct cfi b = { .err = err };
	struct rowbuf rows = { .err = err };
	struct cfi_sections lay = { 0 };
	struct elfsrc_bytes eh = { 0 }, dbg = { 0 };
	struct cfisec eh_sec, dbg_sec; /* CIEs point at these until cfi_run() */
	struct secread again = { 0 };
	struct range *claimed = NULL;
	uint64_t exec_bytes = 0, covered = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = unwind_elf_sections(s, &lay, err);
	if (rc)
		goto out;
	if (!lay.eh.found && !lay.dbg.found) {
		rc = errf(err, -ENOENT, "no .eh_frame or .debug_frame");
		goto out;
	}
	b.exec = lay.exec;
	b.nexec = lay.nexec;
	b.entry = lay.entry;
	for (size_t i = 0; i < lay.nexec; i++)
		exec_bytes += lay.exec[i].hi - lay.exec[i].lo;
	if (lay.eh.found) {
		rc = unwind_elf_load(s, &lay.eh, &eh, err);
		if (rc)
			goto out;
		eh_sec = (struct cfisec){ .p = eh.p, .len = eh.len, .vaddr = lay.eh.addr,
					  .text = lay.text, .data = lay.got };
		rc = cfi_collect(&b, &eh_sec);
		if (rc)
			goto out;
		/* Only to ask .debug_frame: for libLLVM, 1.5 MB more at the peak. */
		if (lay.dbg.found) {
			claimed = cfi_fde_ranges(&b, &b.nclaimed, &covered);
			if (!claimed) {
				rc = errf(err, -ENOMEM, "out of memory");
				goto out;
			}
			b.claimed = claimed;
		}
	}
	/* A thin .eh_frame (crt files only, say): .debug_frame fills the gaps. */
	if (lay.dbg.found && covered < exec_bytes / 2) {
		rc = unwind_elf_load(s, &lay.dbg, &dbg, err);
		if (rc == 0) {
			/* Addresses are absolute: pcrel & co do not occur. */
			dbg_sec = (struct cfisec){ .p = dbg.p, .len = dbg.len, .text = lay.text,
						   .data = lay.got, .debug = true };
			rc = cfi_collect(&b, &dbg_sec);
			if (rc)
				goto out;
		} else if (lay.eh.found) {
			/* zstd-compressed, say: .eh_frame alone is still worth having. */
			b.skipped++;
			rc = 0;
		} else {
			goto out;
		}
	}
	/* The rows are made next: the peak of memory, so let go what is done with. */
	free(claimed);
	claimed = NULL;
	b.claimed = NULL;
	b.nclaimed = 0;
	if (lay.eh.found && eh.owned && eh.len >= REREAD_MIN &&
	    !(lay.eh.scn.sh.sh_flags & SHF_COMPRESSED)) {
		/* its FDEs' programs read again as they run (secread.h) */
		secread_init(&again, s, lay.eh.scn.sh.sh_offset, eh.len);
		free(eh.owned);
		eh = (struct elfsrc_bytes){ 0 };
		eh_sec.p = NULL;
		eh_sec.again = &again;
	}
	rc = cfi_run(&b, &rows);
	if (rc == 0) {
		out->fdes = b.used;
		out->skipped = b.skipped;
		rows_finish(&rows, out);
	}
out:
	rows_free(&rows);
	cfi_free(&b);
	free(claimed);
	free(lay.exec);
	free(eh.owned);
	free(dbg.owned);
	secread_free(&again);
	if (rc)
		unwind_table_free(out);
	return rc;
}

int unwind_build_fd(int fd, struct unwind_table *out, struct errbuf *err)
{
	struct stat st;

	memset(out, 0, sizeof(*out));
	if (fstat(fd, &st))
		return errf(err, -errno, "fstat: %s", strerror(errno));
	if (!S_ISREG(st.st_mode))
		return errf(err, -ENOEXEC, "not a regular file");
	return build(&(struct elfsrc){ .fd = fd, .size = (uint64_t)st.st_size }, out, err);
}

int unwind_build_mem(const void *image, size_t len, struct unwind_table *out,
		     struct errbuf *err)
{
	memset(out, 0, sizeof(*out));
	if (!image)
		return errf(err, -EINVAL, "no image");
	return build(&(struct elfsrc){ .fd = -1, .mem = image, .size = len }, out, err);
}

void unwind_table_free(struct unwind_table *t)
{
	if (!t)
		return;
	free(t->pcs);
	free(t->ids);
	free(t->rules);
	memset(t, 0, sizeof(*t));
}
