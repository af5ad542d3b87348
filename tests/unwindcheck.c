// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unwind/bpfunwind.h"
#include "testutil.h"
#include "unwindcheck.h"

/* The table row_at() laid out last, as the loader lays it: at slot 1. */
static struct {
	const struct unwind_table *t; /* NULL: none */
	const uint32_t *pcs;
	union cprof_table_slot *slots;
	struct cprof_table desc;
} laid;

void forget_layout(void)
{
	free(laid.slots);
	memset(&laid, 0, sizeof(laid));
}

int build_fd(int fd, struct unwind_table *t, struct errbuf *err)
{
	forget_layout();
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
	forget_layout();
	return unwind_build_mem(image, len, t, err);
}

static int copy_slots(void *ctx, uint32_t off, const union cprof_table_slot *slots, uint32_t n)
{
	memcpy(&laid.slots[1 + off], slots, n * sizeof(*slots));
	return 0;
}

static void lay_out(const struct unwind_table *t)
{
	struct unwind_layout lay;

	forget_layout();
	laid.t = t;
	laid.pcs = t->pcs;
	if (!t->n)
		return;
	if (unwind_plan(t, &lay) || !(laid.slots = calloc(1 + lay.nslots, sizeof(*laid.slots))) ||
	    unwind_emit(t, &lay, copy_slots, NULL)) {
		fprintf(stderr, "laying out a table failed\n");
		exit(2);
	}
	laid.desc = lay.desc;
	laid.desc.first = 1;
	bpfu_set_rows(laid.slots, 1 + lay.nslots);
	unwind_layout_free(&lay);
}

const struct cprof_table *laid_out(const struct unwind_table *t)
{
	if (laid.t != t || laid.pcs != t->pcs)
		lay_out(t);
	return &laid.desc;
}

static const struct cprof_unwind_rule *lookup(const struct unwind_table *t, uint64_t vaddr,
					      bool cached)
{
	static struct cprof_unwind_rule rule;
	const struct cprof_table *d = laid_out(t);
	uint64_t rel = vaddr - d->base;

	/* search_row is given only what find_row's key takes: offsets below 2^32 */
	if (cached ? bpfu_find_row(d, rel, &rule) : rel >> 32 || bpfu_search_row(d, rel, &rule))
		return NULL;
	return &rule;
}

const struct cprof_unwind_rule *row_at(const struct unwind_table *t, uint64_t vaddr)
{
	return lookup(t, vaddr, true);
}

const struct cprof_unwind_rule *row_at_uncached(const struct unwind_table *t, uint64_t vaddr)
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

const char *row_str(const struct cprof_unwind_rule *r)
{
	if (!r)
		return "(no row)";
	return fmt("%s%+d rbp %s%+d", cfa_name(CPROF_ROW_CFA(r)), r->cfa_off,
		   rbp_name(CPROF_ROW_RBP(r)), r->rbp_off);
}

bool row_is(const struct cprof_unwind_rule *r, int cfa, int off, int rbp, int rbp_off)
{
	return r && CPROF_ROW_CFA(r) == cfa && r->cfa_off == off && CPROF_ROW_RBP(r) == rbp &&
	       r->rbp_off == rbp_off;
}

bool table_sane(const struct unwind_table *t)
{
	for (size_t i = 0; i < t->n; i++) {
		if (i && t->pcs[i] <= t->pcs[i - 1])
			return false;
		if (t->ids[i] >= t->nrules || CPROF_ROW_CFA(unwind_rule(t, i)) > CPROF_CFA_STOP ||
		    CPROF_ROW_RBP(unwind_rule(t, i)) > CPROF_RBP_INVALID)
			return false;
	}
	return t->n == 0 || (t->pcs && t->ids && t->rules);
}

bool tables_same(const struct unwind_table *a, const struct unwind_table *b)
{
	if (a->n != b->n || a->base != b->base)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (a->pcs[i] != b->pcs[i] ||
		    memcmp(unwind_rule(a, i), unwind_rule(b, i), sizeof(struct cprof_unwind_rule)))
			return false;
	return true;
}
