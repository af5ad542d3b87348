/* SPDX-License-Identifier: MIT */
/*
 * symsel: which function symbol names an address, decided from symbol
 * records read one at a time, in any order, in memory that grows with the
 * addresses asked about, not with the symbols there are.
 *
 * A hostile process can map objects with millions of symbols; loading all
 * of them to name a few sampled addresses cost 150 MB for one 100 MB
 * object.  Streaming the symbol table once through a symsel keeps, for
 * each sampled address, only the symbol a full table would have named it
 * with: the one starting nearest below it, the preferred of those
 * starting at the same address (symsel_rec_cmp()), with the size of the
 * first that has one when the preferred has none.
 */
#ifndef CPROF_SYMSEL_H
#define CPROF_SYMSEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A function symbol of a table, before its name is read. */
struct symrec {
	uint64_t start, size;
	uint32_t name_off;
	uint8_t rank; /* 0 GLOBAL, 1 WEAK, 2 LOCAL: lower wins a tie on address */
	uint8_t tab;  /* which of the tables read it came from: lower wins a tie */
	uint8_t pad[2];
};

/*
 * qsort order: by address, then the record that names the address first:
 * rank, then one with a size before one without, then table, then name.
 */
int symsel_rec_cmp(const void *a, const void *b);

/* Rank of an ELF symbol binding (STB_*), as symrec.rank. */
uint8_t symsel_rec_rank(unsigned char bind);

/* One per address asked about: the best symbol starting since the last one. */
struct symsel_gap {
	struct symrec best;  /* at the highest start, the preferred record */
	struct symrec sized; /* ... and the preferred one with a size: its size is kept */
	bool have, have_sized;
};

struct symsel {
	const uint64_t *addrs; /* sorted, strictly increasing; borrowed */
	size_t n;
	struct symsel_gap *gaps;
};

/* For @n addresses sorted strictly increasing (kept by the caller). -ENOMEM. */
int symsel_init(struct symsel *s, const uint64_t *addrs, size_t n);

/* A record read from a table. */
void symsel_offer(struct symsel *s, const struct symrec *r);

/*
 * Writes the records that name one of the addresses into @out (room for
 * n), sorted by start and unique, each with the size it keeps; returns
 * how many.  A lookup of any of the addresses in a table of just these
 * finds what it would find in the full table.
 */
size_t symsel_result(const struct symsel *s, struct symrec *out);

void symsel_free(struct symsel *s);

#endif
