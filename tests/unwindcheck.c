// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpfunwind.h"
#include "testutil.h"
#include "unwindcheck.h"

/* The table row_at() laid out last, as the loader lays it: at slot 0. */
static struct {
	const struct unwind_table *t; /* NULL: none */
	const struct cprof_unwind_row *rows;
	union cprof_table_slot *slots;
	struct cprof_proc_map m;
} laid;

static void forget(void)
{
	free(laid.slots);
	memset(&laid, 0, sizeof(laid));
}

int build_fd(int fd, struct unwind_table *t, struct errbuf *err)
{
	forget();
	return unwind_build_fd(fd, t, err);
}

int build_file(const char *path, struct unwind_table *t, struct errbuf *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc;

	memset(t, 0, sizeof(*t));
	if (fd < 0)
		return errf(err, -errno, "%s: %s", path, strerror(errno));
	rc = build_fd(fd, t, err);
	close(fd);
	return rc;
}

int build_mem(const void *image, size_t len, struct unwind_table *t, struct errbuf *err)
{
	forget();
	return unwind_build_mem(image, len, t, err);
}

static void lay_out(const struct unwind_table *t)
{
	size_t n = unwind_slots(t);

	forget();
	laid.slots = calloc(n ? n : 1, sizeof(*laid.slots));
	if (!laid.slots) {
		fprintf(stderr, "out of memory\n");
		exit(2);
	}
	unwind_layout(t, laid.slots);
	/* what tables.c writes for a mapping whose runtime addresses are the vaddrs */
	laid.m = (struct cprof_proc_map){ .bias = t->base, .nrows = (uint32_t)t->n,
					  .npages = t->npages, .index_shift = t->index_shift };
	if (t->n)
		laid.m.first_row = CPROF_INDEX_SLOTS(t->npages);
	laid.t = t;
	laid.rows = t->rows;
	bpfu_set_rows(laid.slots, (uint32_t)n);
}

static const struct cprof_unwind_row *lookup(const struct unwind_table *t, uint64_t vaddr,
					     bool cached)
{
	static struct cprof_unwind_row row;
	uint64_t rel;

	if (laid.t != t || laid.rows != t->rows)
		lay_out(t);
	rel = vaddr - laid.m.bias;
	/* search_row is given only what find_row's key takes: offsets below 2^32 */
	if (cached ? bpfu_find_row(&laid.m, rel, &row)
		   : rel >> 32 || bpfu_search_row(&laid.m, rel, &row))
		return NULL;
	return &row;
}

const struct cprof_unwind_row *row_at(const struct unwind_table *t, uint64_t vaddr)
{
	return lookup(t, vaddr, true);
}

const struct cprof_unwind_row *row_at_uncached(const struct unwind_table *t, uint64_t vaddr)
{
	return lookup(t, vaddr, false);
}

static const char *const cfa_names[] = { "INVALID", "RSP", "RBP", "PLT", "SIGNAL", "STOP" };
static const char *const rbp_names[] = { "same", "offset", "invalid" };

const char *cfa_name(unsigned cfa)
{
	return cfa < sizeof(cfa_names) / sizeof(cfa_names[0]) ? cfa_names[cfa] : "?";
}

const char *rbp_name(unsigned rbp)
{
	return rbp < sizeof(rbp_names) / sizeof(rbp_names[0]) ? rbp_names[rbp] : "?";
}

const char *row_str(const struct cprof_unwind_row *r)
{
	if (!r)
		return "(no row)";
	return fmt("%s%+d rbp %s%+d", cfa_name(CPROF_ROW_CFA(r)), r->cfa_off,
		   rbp_name(CPROF_ROW_RBP(r)), r->rbp_off);
}

bool row_is(const struct cprof_unwind_row *r, int cfa, int off, int rbp, int rbp_off)
{
	return r && CPROF_ROW_CFA(r) == cfa && r->cfa_off == off && CPROF_ROW_RBP(r) == rbp &&
	       r->rbp_off == rbp_off;
}

bool table_sane(const struct unwind_table *t)
{
	for (size_t i = 0; i < t->n; i++) {
		if (i && t->rows[i].pc <= t->rows[i - 1].pc)
			return false;
		if (CPROF_ROW_CFA(&t->rows[i]) > CPROF_CFA_STOP ||
		    CPROF_ROW_RBP(&t->rows[i]) > CPROF_RBP_INVALID)
			return false;
	}
	return t->n == 0 || t->rows != NULL;
}
