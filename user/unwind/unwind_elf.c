// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/unwind_elf.h"

static void note_section(struct secref *r, const struct elfsrc_scn *c)
{
	r->scn = *c;
	r->addr = c->sh.sh_addr;
	r->found = true;
}

static int read_layout(Elf *e, const struct elfsrc *s, struct cfi_sections *lay,
		       struct errbuf *err)
{
	struct elfsrc_walk w;
	struct elfsrc_scn c;
	size_t nsec = 0;

	elfsrc_walk_init(&w, e, s);
	if (!w.names || elf_getshdrnum(e, &nsec))
		return errf(err, -ENOEXEC, "bad section name table");
	lay->exec = calloc(nsec ? nsec : 1, sizeof(*lay->exec));
	if (!lay->exec)
		return errf(err, -ENOMEM, "out of memory");
	while (elfsrc_walk_next(&w, &c)) {
		const GElf_Shdr *sh = &c.sh;

		if (sh->sh_type == SHT_NOBITS)
			continue;
		if ((sh->sh_flags & (SHF_ALLOC | SHF_EXECINSTR)) == (SHF_ALLOC | SHF_EXECINSTR) &&
		    sh->sh_size && sh->sh_addr + sh->sh_size > sh->sh_addr && lay->nexec < nsec)
			lay->exec[lay->nexec++] = (struct range){ sh->sh_addr,
								  sh->sh_addr + sh->sh_size };
		if (strcmp(c.name, ".eh_frame") == 0)
			note_section(&lay->eh, &c);
		else if (strcmp(c.name, ".debug_frame") == 0)
			note_section(&lay->dbg, &c);
		else if (strcmp(c.name, ".text") == 0)
			lay->text = sh->sh_addr;
		else if (strcmp(c.name, ".got") == 0)
			lay->got = sh->sh_addr;
	}
	lay->nexec = range_normalize(lay->exec, lay->nexec);
	return 0;
}

int unwind_elf_sections(const struct elfsrc *s, struct cfi_sections *out, struct errbuf *err)
{
	Elf *e;
	int rc;

	rc = elfsrc_begin(s, EM_X86_64, ELFSRC_LOADABLE | ELFSRC_SECTIONS, &e, err);
	if (rc == -ENOENT)
		return errf(err, rc, "no section headers, so no .eh_frame to find");
	if (rc)
		return rc;
	{
		GElf_Ehdr eh;

		if (gelf_getehdr(e, &eh))
			out->entry = eh.e_entry;
	}
	rc = read_layout(e, s, out, err);
	elf_end(e);
	return rc;
}

int unwind_elf_load(const struct elfsrc *s, const struct secref *r, struct elfsrc_bytes *out,
		    struct errbuf *err)
{
	return elfsrc_section_bytes(s, &r->scn, SECTION_MAX, out, err);
}
