// SPDX-License-Identifier: MIT
/*
 * The CFI of an object as binutils' independent reader sees it,
 * `readelf --debug-dump=frames-interp`, parsed here and compared with a
 * table of ours row by row.
 */
#include <elf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "readelf_cfi.h"
#include "testlib.h"
#include "testutil.h"
#include "unwindcheck.h"

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p) {
		fprintf(stderr, "out of memory\n");
		exit(2);
	}
	return p;
}

/* Appends one zeroed element to a growable array. */
#define PUSH(arr, n, cap)                                                     \
	(((n) == (cap) ? ((cap) = (cap) ? 2 * (cap) : 64,                     \
			  (arr) = xrealloc((arr), (cap) * sizeof(*(arr)))) : 0),   \
	 memset(&(arr)[(n)], 0, sizeof(*(arr))), &(arr)[(n)++])

const Elf64_Shdr *shdr_by_name(const uint8_t *img, size_t len, const char *name)
{
	const Elf64_Ehdr *eh = (const void *)img;
	const Elf64_Shdr *sh, *str;

	if (len < sizeof(*eh) || !eh->e_shoff || eh->e_shstrndx >= eh->e_shnum ||
	    eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(*sh) > len)
		return NULL;
	sh = (const void *)(img + eh->e_shoff);
	str = &sh[eh->e_shstrndx];
	for (unsigned i = 0; i < eh->e_shnum; i++) {
		uint64_t at = str->sh_offset + sh[i].sh_name;

		if (at < len && strncmp((const char *)img + at, name, len - at) == 0)
			return &sh[i];
	}
	return NULL;
}

size_t exec_ranges(const uint8_t *img, size_t len, struct addr_range *r, size_t max)
{
	const Elf64_Ehdr *eh = (const void *)img;
	const Elf64_Shdr *sh;
	size_t n = 0;

	if (len < sizeof(*eh) || eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(*sh) > len)
		return 0;
	sh = (const void *)(img + eh->e_shoff);
	for (unsigned i = 0; i < eh->e_shnum && n < max; i++)
		if ((sh[i].sh_flags & SHF_EXECINSTR) && (sh[i].sh_flags & SHF_ALLOC) &&
		    sh[i].sh_type != SHT_NOBITS)
			r[n++] = (struct addr_range){ sh[i].sh_addr, sh[i].sh_addr + sh[i].sh_size };
	return n;
}

/* What a row of ours should say; cfa_off -1 for PLT means "10 or 11". */
struct expect {
	int cfa, cfa_off, rbp, rbp_off;
};

struct rf_row {
	uint64_t loc;
	struct expect e;
};

struct rf_cie {
	uint64_t off;
	bool debug, signal;
	char cfa[32], rbp[32], ra[32]; /* its initial row; "" when no column */
};

/*
 * readelf's cells, mapped to our rules: CFA "rsp+8" / "rbp+16" / "exp" /
 * "rdi+0"; rbp "u" (undefined or untouched), "s", "c-16", "r9 (r9)",
 * "exp", "v+8"; ra "c-8" or "u".
 */
static struct expect expect_from(const char *cfa, const char *rbp, const char *ra, bool signal,
				 bool plt)
{
	struct expect e = { CPROF_CFA_INVALID, 0, CPROF_RBP_SAME, 0 };
	char reg[16];
	long off;
	int n = 0;

	if (signal) {
		e.cfa = CPROF_CFA_SIGNAL;
		return e;
	}
	if (ra[0] && strcmp(ra, "u") == 0) {
		e.cfa = CPROF_CFA_STOP;
		return e;
	}
	if (ra[0] && strcmp(ra, "c-8") != 0)
		return e; /* the return address is not at CFA-8 */
	if (strcmp(cfa, "exp") == 0) {
		if (plt) {
			e.cfa = CPROF_CFA_PLT;
			e.cfa_off = -1;
		}
		return e;
	}
	if (sscanf(cfa, "%15[a-z0-9]%ld%n", reg, &off, &n) != 2 || cfa[n] || off < INT32_MIN ||
	    off > INT32_MAX)
		return e;
	if (strcmp(reg, "rsp") == 0)
		e.cfa = CPROF_CFA_RSP;
	else if (strcmp(reg, "rbp") == 0)
		e.cfa = CPROF_CFA_RBP;
	else
		return e;
	e.cfa_off = (int)off;
	if (rbp[0] && strcmp(rbp, "u") && strcmp(rbp, "s")) {
		n = 0;
		if (rbp[0] == 'c' && sscanf(rbp + 1, "%ld%n", &off, &n) == 1 && !rbp[1 + n] &&
		    off % 8 == 0 && off / 8 >= INT8_MIN && off / 8 <= INT8_MAX) {
			e.rbp = CPROF_RBP_OFFSET;
			e.rbp_off = (int)(off / 8);
		} else {
			e.rbp = CPROF_RBP_INVALID;
		}
	}
	return e;
}

static bool expect_ok(const struct cprof_unwind_rule *r, const struct expect *e)
{
	if (!r || CPROF_ROW_CFA(r) != e->cfa)
		return false;
	if (e->cfa == CPROF_CFA_PLT)
		return e->cfa_off < 0 ? (r->cfa_off == 10 || r->cfa_off == 11)
				      : r->cfa_off == e->cfa_off;
	if (e->cfa != CPROF_CFA_RSP && e->cfa != CPROF_CFA_RBP)
		return true;
	return r->cfa_off == e->cfa_off && CPROF_ROW_RBP(r) == e->rbp &&
	       (e->rbp != CPROF_RBP_OFFSET || r->rbp_off == e->rbp_off);
}

static const char *expect_str(const struct expect *e)
{
	return fmt("%s%+d rbp %s%+d", cfa_name((unsigned)e->cfa), e->cfa_off,
		   rbp_name((unsigned)e->rbp), e->rbp_off);
}
/* Whitespace-separated cells; "r9 (r9)" is one cell. */
static int cells(char *line, char **c, int max)
{
	int n = 0;

	for (char *s = strtok(line, " \t\r\n"); s; s = strtok(NULL, " \t\r\n")) {
		if (s[0] == '(' && n > 0) {
			s[-1] = ' ';
			continue;
		}
		if (n < max)
			c[n++] = s;
	}
	return n;
}

static bool is_hex16(const char *s)
{
	return strlen(s) == 16 && strspn(s, "0123456789abcdef") == 16;
}

static struct rf_cie *rf_cie(struct rf *rf, uint64_t off, bool debug)
{
	for (size_t i = rf->ncies; i-- > 0;)
		if (rf->cies[i].off == off && rf->cies[i].debug == debug)
			return &rf->cies[i];
	return NULL;
}

/* An FDE without a table (no instructions) is its CIE's initial row. */
static void rf_end_fde(struct rf *rf, const struct rf_cie *cie, uint64_t plt_lo, uint64_t plt_hi)
{
	struct rf_fde *f;
	struct rf_row *r;

	if (!rf->nfdes || rf->fdes[rf->nfdes - 1].nrows || !cie)
		return;
	f = &rf->fdes[rf->nfdes - 1];
	r = PUSH(rf->rows, rf->nrows, rf->cap_rows);
	r->loc = f->start;
	r->e = expect_from(cie->cfa, cie->rbp, cie->ra, cie->signal,
			   f->start >= plt_lo && f->start < plt_hi);
	f->row0 = rf->nrows - 1;
	f->nrows = 1;
}
bool readelf_frames(const char *path, uint64_t plt_lo, uint64_t plt_hi, struct rf *rf)
{
	FILE *p = popen(fmt("readelf --debug-dump=no-follow-links,frames-interp '%s' 2>/dev/null", path), "r");
	struct rf_cie *cie = NULL, *fde_cie = NULL;
	int col_rbp = -1, col_ra = -1, in = 0; /* 1: a CIE's table, 2: an FDE's */
	char line[8192];
	bool debug = false;

	memset(rf, 0, sizeof(*rf));
	if (!p)
		return false;
	while (fgets(line, sizeof(line), p)) {
		char *c[64];
		int n;

		if (strstr(line, "Contents of the .debug_frame section"))
			debug = true;
		else if (strstr(line, "Contents of the .eh_frame section"))
			debug = false;
		n = cells(line, c, 64);
		if (n >= 5 && strcmp(c[3], "CIE") == 0) {
			rf_end_fde(rf, fde_cie, plt_lo, plt_hi);
			cie = PUSH(rf->cies, rf->ncies, rf->cap_cies);
			cie->off = strtoull(c[0], NULL, 16);
			cie->debug = debug;
			cie->signal = strchr(c[4], 'S') != NULL;
			in = 1;
		} else if (n >= 6 && strcmp(c[3], "FDE") == 0) {
			unsigned long long co, lo, hi;
			struct rf_fde *f;

			rf_end_fde(rf, fde_cie, plt_lo, plt_hi);
			if (sscanf(c[4], "cie=%llx", &co) != 1 ||
			    sscanf(c[5], "pc=%llx..%llx", &lo, &hi) != 2) {
				in = 0;
				continue;
			}
			fde_cie = rf_cie(rf, co, debug);
			f = PUSH(rf->fdes, rf->nfdes, rf->cap_fdes);
			f->start = lo;
			f->end = hi;
			f->debug = debug;
			f->signal = fde_cie && fde_cie->signal;
			f->row0 = rf->nrows;
			in = fde_cie ? 2 : 0;
		} else if (n >= 2 && strcmp(c[0], "LOC") == 0) {
			col_rbp = col_ra = -1;
			for (int i = 2; i < n; i++) {
				if (strcmp(c[i], "rbp") == 0)
					col_rbp = i;
				else if (strcmp(c[i], "ra") == 0)
					col_ra = i;
			}
		} else if (n >= 2 && is_hex16(c[0]) && in) {
			const char *rbp = col_rbp >= 0 && col_rbp < n ? c[col_rbp] : "";
			const char *ra = col_ra >= 0 && col_ra < n ? c[col_ra] : "";

			if (in == 1) {
				snprintf(cie->cfa, sizeof(cie->cfa), "%s", c[1]);
				snprintf(cie->rbp, sizeof(cie->rbp), "%s", rbp);
				snprintf(cie->ra, sizeof(cie->ra), "%s", ra);
				in = 0;
			} else {
				struct rf_fde *f = &rf->fdes[rf->nfdes - 1];
				struct rf_row *r = PUSH(rf->rows, rf->nrows, rf->cap_rows);

				r->loc = strtoull(c[0], NULL, 16);
				r->e = expect_from(c[1], rbp, ra, f->signal,
						   f->start >= plt_lo && f->start < plt_hi);
				f->nrows++;
			}
		}
	}
	rf_end_fde(rf, fde_cie, plt_lo, plt_hi);
	pclose(p); /* not its status: readelf warns about the oddest things */
	return rf->nfdes > 0;
}

void rf_free(struct rf *rf)
{
	free(rf->fdes);
	free(rf->rows);
	free(rf->cies);
	memset(rf, 0, sizeof(*rf));
}

static int fde_start_cmp(const void *a, const void *b)
{
	const struct rf_fde *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static bool u64_has(const uint64_t *v, size_t n, uint64_t x)
{
	return bsearch(&x, v, n, sizeof(*v), u64_cmp) != NULL;
}

/*
 * Every readelf row (the last one at each location inside its FDE) and
 * every FDE end must give the same rules from row_at() (the BPF lookup); and every row
 * of ours must start at a readelf row or an FDE boundary.  FDEs outside
 * executable sections, of zero length, overlapping each other, or
 * .debug_frame FDEs that .eh_frame covers are left out (the library drops
 * or truncates those).  The ELF entry point @entry may begin a STOP row
 * readelf knows nothing of, when no FDE describes it, and the row after
 * that ends it.
 */
static void compare_readelf(const char *label, const char *path, const struct unwind_table *t,
			    uint64_t plt_lo, uint64_t plt_hi, const struct addr_range *exec,
			    size_t nexec, uint64_t entry)
{
	size_t rows = 0, ends = 0, bad = 0, extra = 0, invalid = 0, invalid_inner = 0, nb = 0;
	uint64_t maxend = 0, *bounds = NULL, *endv = NULL;
	size_t maxend_i = 0, nends = 0, cap_b = 0, cap_e = 0;
	struct rf rf;
	struct rf_fde *f;

	if (!readelf_frames(path, plt_lo, plt_hi, &rf)) {
		CHECK(false, fmt("%s: readelf parses", label), "no FDEs from readelf");
		rf_free(&rf);
		return;
	}
	for (size_t i = 0; i < rf.nfdes; i++) {
		f = &rf.fdes[i];
		bool in_exec = false;

		for (size_t k = 0; k < nexec; k++)
			in_exec |= f->start >= exec[k].lo && f->start < exec[k].hi;
		f->skip = f->start >= f->end || !in_exec;
		for (size_t k = 0; f->debug && !f->skip && k < rf.nfdes; k++)
			f->skip = !rf.fdes[k].debug && rf.fdes[k].start < f->end &&
				  f->start < rf.fdes[k].end;
	}
	/* Rows reference FDEs by index range, so sorting the FDEs is safe. */
	qsort(rf.fdes, rf.nfdes, sizeof(*rf.fdes), fde_start_cmp);
	for (size_t i = 0; i < rf.nfdes; i++) {
		f = &rf.fdes[i];
		if (f->skip)
			continue;
		if (f->start < maxend) {
			f->skip = true;
			rf.fdes[maxend_i].skip = true;
		}
		if (f->end > maxend) {
			maxend = f->end;
			maxend_i = i;
		}
	}
	for (size_t i = 0; i < rf.nfdes; i++) {
		f = &rf.fdes[i];
		*PUSH(bounds, nb, cap_b) = f->start;
		*PUSH(bounds, nb, cap_b) = f->end;
		*PUSH(endv, nends, cap_e) = f->end;
		for (size_t k = 0; k < f->nrows; k++)
			*PUSH(bounds, nb, cap_b) = rf.rows[f->row0 + k].loc;
		if (f->skip)
			continue;
		for (size_t k = 0; k < f->nrows; k++) {
			const struct rf_row *r = &rf.rows[f->row0 + k];
			const struct cprof_unwind_rule *got;

			if (r->loc < f->start || r->loc >= f->end ||
			    (k + 1 < f->nrows && rf.rows[f->row0 + k + 1].loc == r->loc))
				continue;
			rows++;
			got = row_at(t, r->loc);
			if (!expect_ok(got, &r->e) && bad++ < 5)
				printf("# %s: at %#" PRIx64 " readelf says %s, we say %s\n", label,
				       r->loc, expect_str(&r->e), row_str(got));
		}
		/* Past the end: INVALID, unless another FDE takes over there. */
		bool covered = false;

		for (size_t k = i + 1; k < rf.nfdes && rf.fdes[k].start <= f->end; k++)
			covered |= rf.fdes[k].end > rf.fdes[k].start && rf.fdes[k].start <= f->end &&
				   rf.fdes[k].end > f->end;
		if (!covered) {
			const struct cprof_unwind_rule *got = row_at(t, f->end);

			ends++;
			if ((!got || (CPROF_ROW_CFA(got) != CPROF_CFA_INVALID &&
				      !(f->end == entry && CPROF_ROW_CFA(got) == CPROF_CFA_STOP))) &&
			    bad++ < 5)
				printf("# %s: at the end of FDE %#" PRIx64 "..%#" PRIx64
				       " we say %s\n",
				       label, f->start, f->end, row_str(got));
		}
	}
	qsort(bounds, nb, sizeof(*bounds), u64_cmp);
	qsort(endv, nends, sizeof(*endv), u64_cmp);
	for (size_t i = 0; i < t->n; i++) {
		uint64_t a = t->base + t->pcs[i];
		bool entry_stop = (a == entry || (i > 0 && t->base + t->pcs[i - 1] == entry)) &&
				  CPROF_ROW_CFA(unwind_rule(t, a == entry ? i : i - 1)) ==
					  CPROF_CFA_STOP;

		if (!u64_has(bounds, nb, a) && !entry_stop && extra++ < 5)
			printf("# %s: our row at %#" PRIx64 " (%s) is at no readelf row\n", label, a,
			       row_str(unwind_rule(t, i)));
		if (CPROF_ROW_CFA(unwind_rule(t, i)) == CPROF_CFA_INVALID) {
			invalid++;
			invalid_inner += !u64_has(endv, nends, a);
		}
	}
	CHECK(bad == 0 && rows > 0, fmt("%s: %zu readelf rows and %zu FDE ends agree", label, rows,
					ends),
	      "%zu disagree", bad);
	CHECK(extra == 0, fmt("%s: each of our %zu rows starts at a readelf row", label, t->n),
	      "%zu do not", extra);
	printf("# %s: %zu rows, %zu FDEs, %zu skipped; %zu INVALID rows, %zu of them not at an "
	       "FDE end\n",
	       label, t->n, t->fdes, t->skipped, invalid, invalid_inner);
	free(bounds);
	free(endv);
	rf_free(&rf);
}

void compare_file(const char *label, const char *path, const struct unwind_table *t)
{
	struct addr_range exec[64];
	const Elf64_Shdr *plt;
	size_t len = 0, nexec;
	uint8_t *img = slurp(path, &len);

	if (!img) {
		CHECK(false, fmt("%s: readable", label), "%s", path);
		return;
	}
	plt = shdr_by_name(img, len, ".plt");
	nexec = exec_ranges(img, len, exec, 64);
	compare_readelf(label, path, t, plt ? plt->sh_addr : 0, plt ? plt->sh_addr + plt->sh_size : 0,
			exec, nexec, len >= sizeof(Elf64_Ehdr) ? ((const Elf64_Ehdr *)img)->e_entry : 0);
	free(img);
}
