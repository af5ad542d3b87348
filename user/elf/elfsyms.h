/* SPDX-License-Identifier: MIT */
/*
 * elfsyms: the function symbol table of one ELF object, read from its
 * .symtab, else from its separate debug file's .symtab (debugfile.h)
 * merged with its .dynsym; all of it, or only the symbols that name a
 * given set of addresses (symsel.h).  elfobj keeps one per object.  And
 * the symbols of its .dynsym asked for by name (elfsyms_find_dynamic()):
 * what a program exports, such as an interpreter's runtime state.
 *
 * Tables are streamed through elfsrc in bounded chunks: what is kept is
 * the sorted symbols and their names (in an arena of blocks that never
 * move), never the file's tables.
 */
#ifndef CPROF_ELFSYMS_H
#define CPROF_ELFSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "elf/debugfile.h"
#include "elf/elfsrc.h"
#include "util/arena.h"
#include "util/errbuf.h"

struct elfobj_sym {
	uint64_t start; /* st_value: ELF virtual address */
	uint64_t size;  /* 0 when the symbol table did not say */
	const char *name;
};

struct elfsyms {
	struct elfobj_sym *v; /* sorted by start, one per address */
	size_t n;
	struct arena names;
	uint64_t bytes;       /* what v and names take */
	bool from_debug_file;
};

/*
 * Reads into @t (empty) the function symbols of the object @s (@label in
 * messages), looking for its debug file through @q (NULL: none) when it
 * has no .symtab.  With @vaddrs, only those naming one of its @n sorted
 * addresses.  -EFBIG, nothing kept, past @max_bytes; a table with no
 * function symbols is no error.
 */
int elfsyms_load(struct elfsyms *t, const struct elfsrc *s, const char *label,
		 const struct debugfile_query *q, const uint64_t *vaddrs, size_t n,
		 uint64_t max_bytes, struct errbuf *err);

void elfsyms_free(struct elfsyms *t);

/* The symbol containing @vaddr (see elfobj_lookup()), or NULL. */
const struct elfobj_sym *elfsyms_lookup(const struct elfsyms *t, uint64_t vaddr);

/* Most .dynsym entries elfsyms_find_dynamic() looks through. */
#define ELFSYMS_DYNSYM_MAX (1u << 20)

/* A dynamic symbol asked for by name, and what was found. */
struct elfsyms_named {
	const char *name;
	bool found;
	uint64_t value, size; /* st_value, st_size */
};

/*
 * Looks up in the .dynsym of the object @s (@label in messages) each of
 * the @n names of @want: the first defined symbol of that name, of any
 * type, among the table's first ELFSYMS_DYNSYM_MAX entries.  An object
 * without a .dynsym is no error: nothing is found.  Memory grows with the
 * table (8 bytes an entry) and the string table is read about once.
 */
int elfsyms_find_dynamic(const struct elfsrc *s, const char *label, struct elfsyms_named *want,
			 size_t n, struct errbuf *err);

#endif
