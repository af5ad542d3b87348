/* SPDX-License-Identifier: MIT */
/*
 * strpool: interned copies of strings (function and file names), one copy
 * per distinct string, in blocks that never move, drawing their memory
 * from a budget several pools share.
 *
 * The symbolizer keeps one pool per object, so an object's names outlive
 * its symbol table and DWARF, and bounds all of them (and the symbol
 * tables it loads) with one budget: past it a pool refuses new strings
 * and the frame keeps no name, rather than the agent growing with
 * whatever names a hostile process makes up.
 */
#ifndef CPROF_STRPOOL_H
#define CPROF_STRPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/arena.h"
#include "util/membudget.h"
#include "util/hmap.h"

struct strpool {
	struct hmap strs; /* (hash, length) -> the copy */
	struct arena arena; /* the copies, drawn from the budget */
};

void strpool_init(struct strpool *p, struct membudget *budget);

/* The pool's copy of @s; NULL for NULL, or when over the budget or out of memory. */
const char *strpool_intern(struct strpool *p, const char *s);

/* @file, made absolute with @dir when it is relative and @dir is known, interned. */
const char *strpool_intern_path(struct strpool *p, const char *dir, const char *file);

/* Frees the copies and gives their memory back to the budget. */
void strpool_free(struct strpool *p);

#endif
