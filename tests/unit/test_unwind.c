// SPDX-License-Identifier: MIT
/*
 * Tests for unwind: .eh_frame/.debug_frame compiled into unwind rows.
 *
 *  - real objects (libc, fixtures compiled at test time with and without
 *    frame pointers, with only .debug_frame, the vDSO) checked row by row
 *    against binutils' independent reader, `readelf --debug-dump=frames-interp`;
 *  - known places: first instructions, _start, the PLT, the signal
 *    trampoline, clone's child;
 *  - hand-assembled CFI in a minimal ELF image, one construct at a time;
 *  - hostile input: truncated files, lying section headers, random byte
 *    mutations of real .eh_frame sections.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gnu/libc-version.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"
#include "testutil.h"
#include "unwind.h"

static char tmp[PATH_MAX - 128];

/* --- helpers ---------------------------------------------------------- */

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

static int build_file(const char *path, struct unwind_table *t, struct errbuf *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc;

	memset(t, 0, sizeof(*t));
	if (fd < 0)
		return errf(err, -errno, "%s: %s", path, strerror(errno));
	rc = unwind_build_fd(fd, t, err);
	close(fd);
	return rc;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static const char *const cfa_names[] = { "INVALID", "RSP", "RBP", "PLT", "SIGNAL", "STOP" };
static const char *const rbp_names[] = { "same", "offset", "invalid" };

static const char *row_str(const struct cprof_unwind_row *r)
{
	if (!r)
		return "(no row)";
	return fmt("%s%+d rbp %s%+d", CPROF_ROW_CFA(r) < 6 ? cfa_names[CPROF_ROW_CFA(r)] : "?",
		   r->cfa_off, CPROF_ROW_RBP(r) < 3 ? rbp_names[CPROF_ROW_RBP(r)] : "?",
		   r->rbp_off);
}

static bool row_is(const struct cprof_unwind_row *r, int cfa, int off, int rbp, int rbp_off)
{
	return r && CPROF_ROW_CFA(r) == cfa && r->cfa_off == off && CPROF_ROW_RBP(r) == rbp &&
	       r->rbp_off == rbp_off;
}

/*
 * The row at @a is exactly {cfa, off, rbp, rbp_off, name}; a level of
 * indirection so that RSP(8) and friends expand into four arguments.
 */
#define CHECK_ROW(t, a, ...) CHECK_ROW_(t, a, __VA_ARGS__)
#define CHECK_ROW_(t, a, cfa, off, rbp, roff, name)                           \
	do {                                                                  \
		const struct cprof_unwind_row *_r = unwind_find((t), (a));    \
		CHECK(row_is(_r, cfa, off, rbp, roff), name, "at %#llx: %s",  \
		      (unsigned long long)(a), row_str(_r));                  \
	} while (0)

/* Rows strictly sorted, rules in range: what the BPF side relies on. */
static bool table_sane(const struct unwind_table *t)
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

/* --- ELF section headers of a trusted image (our fixtures, libc) ------- */

static const Elf64_Shdr *shdr_by_name(const uint8_t *img, size_t len, const char *name)
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

struct range {
	uint64_t lo, hi;
};

/* The executable sections: FDEs elsewhere are not code (discarded functions). */
static size_t exec_ranges(const uint8_t *img, size_t len, struct range *r, size_t max)
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
			r[n++] = (struct range){ sh[i].sh_addr, sh[i].sh_addr + sh[i].sh_size };
	return n;
}

/* Address and size of a defined symbol according to nm. */
static bool nm_sym(const char *path, bool dynamic, const char *name, uint64_t *addr,
		   uint64_t *size)
{
	FILE *p = popen(fmt("nm -S --defined-only %s '%s' 2>/dev/null", dynamic ? "-D" : "",
			    path), "r");
	char line[1024];
	bool found = false;

	if (!p)
		return false;
	while (fgets(line, sizeof(line), p)) {
		unsigned long long a, s;
		char type, sym[512];

		if (!found && sscanf(line, "%llx %llx %c %511s", &a, &s, &type, sym) == 4) {
			sym[strcspn(sym, "@")] = '\0';
			if (strcmp(sym, name) == 0) {
				*addr = a;
				*size = s;
				found = true;
			}
		}
	}
	pclose(p);
	return found;
}

/* --- readelf --debug-dump=frames-interp, independently parsed ---------- */

/* What a row of ours should say; cfa_off -1 for PLT means "10 or 11". */
struct expect {
	int cfa, cfa_off, rbp, rbp_off;
};

struct rf_row {
	uint64_t loc;
	struct expect e;
};

struct rf_fde {
	uint64_t start, end;
	size_t row0, nrows;
	bool debug, signal, skip;
};

struct rf_cie {
	uint64_t off;
	bool debug, signal;
	char cfa[32], rbp[32], ra[32]; /* its initial row; "" when no column */
};

struct rf {
	struct rf_fde *fdes;
	size_t nfdes, cap_fdes;
	struct rf_row *rows;
	size_t nrows, cap_rows;
	struct rf_cie *cies;
	size_t ncies, cap_cies;
};

static void rf_free(struct rf *rf)
{
	free(rf->fdes);
	free(rf->rows);
	free(rf->cies);
	memset(rf, 0, sizeof(*rf));
}

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
	if (sscanf(cfa, "%15[a-z0-9]%ld%n", reg, &off, &n) != 2 || cfa[n] || off < INT16_MIN ||
	    off > INT16_MAX)
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

static bool expect_ok(const struct cprof_unwind_row *r, const struct expect *e)
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
	return fmt("%s%+d rbp %s%+d", cfa_names[e->cfa], e->cfa_off, rbp_names[e->rbp],
		   e->rbp_off);
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

static bool readelf_frames(const char *path, uint64_t plt_lo, uint64_t plt_hi, struct rf *rf)
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
 * every FDE end must give the same rules from unwind_find(); and every row
 * of ours must start at a readelf row or an FDE boundary.  FDEs outside
 * executable sections, of zero length, overlapping each other, or
 * .debug_frame FDEs that .eh_frame covers are left out (the library drops
 * or truncates those).
 */
static void compare_readelf(const char *label, const char *path, const struct unwind_table *t,
			    uint64_t plt_lo, uint64_t plt_hi, const struct range *exec,
			    size_t nexec)
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
			const struct cprof_unwind_row *got;

			if (r->loc < f->start || r->loc >= f->end ||
			    (k + 1 < f->nrows && rf.rows[f->row0 + k + 1].loc == r->loc))
				continue;
			rows++;
			got = unwind_find(t, r->loc);
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
			const struct cprof_unwind_row *got = unwind_find(t, f->end);

			ends++;
			if ((!got || CPROF_ROW_CFA(got) != CPROF_CFA_INVALID) && bad++ < 5)
				printf("# %s: at the end of FDE %#" PRIx64 "..%#" PRIx64
				       " we say %s\n",
				       label, f->start, f->end, row_str(got));
		}
	}
	qsort(bounds, nb, sizeof(*bounds), u64_cmp);
	qsort(endv, nends, sizeof(*endv), u64_cmp);
	for (size_t i = 0; i < t->n; i++) {
		uint64_t a = t->base + t->rows[i].pc;

		if (!u64_has(bounds, nb, a) && extra++ < 5)
			printf("# %s: our row at %#" PRIx64 " (%s) is at no readelf row\n", label, a,
			       row_str(&t->rows[i]));
		if (CPROF_ROW_CFA(&t->rows[i]) == CPROF_CFA_INVALID) {
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

/* Compares the table of @path with readelf; the image is for section headers. */
static void compare_file(const char *label, const char *path, const struct unwind_table *t)
{
	struct range exec[64];
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
			exec, nexec);
	free(img);
}

/* Some row inside [lo, hi) (FDE ends excluded) satisfies @pred. */
static bool any_row(const struct unwind_table *t, uint64_t lo, uint64_t hi,
		    bool (*pred)(const struct cprof_unwind_row *))
{
	for (size_t i = 0; i < t->n; i++) {
		uint64_t a = t->base + t->rows[i].pc;

		if (a >= lo && a < hi && pred(&t->rows[i]))
			return true;
	}
	const struct cprof_unwind_row *r = unwind_find(t, lo);

	return r && pred(r);
}

static bool is_rsp_rbp_saved(const struct cprof_unwind_row *r)
{
	return CPROF_ROW_CFA(r) == CPROF_CFA_RSP && CPROF_ROW_RBP(r) == CPROF_RBP_OFFSET;
}

static bool is_rbp_cfa(const struct cprof_unwind_row *r)
{
	return CPROF_ROW_CFA(r) == CPROF_CFA_RBP;
}

static bool is_fp_frame(const struct cprof_unwind_row *r)
{
	return row_is(r, CPROF_CFA_RBP, 16, CPROF_RBP_OFFSET, -2);
}

static bool is_invalid(const struct cprof_unwind_row *r)
{
	return CPROF_ROW_CFA(r) == CPROF_CFA_INVALID;
}

static bool is_stop(const struct cprof_unwind_row *r)
{
	return CPROF_ROW_CFA(r) == CPROF_CFA_STOP;
}

/* --- fixtures ---------------------------------------------------------- */

static const char fixture_src[] =
	"#include <alloca.h>\n"
	"#include <stdio.h>\n"
	"#include <stdlib.h>\n"
	"#include <string.h>\n"
	"__attribute__((noinline)) int leaf(int x) { return x * 3 + 1; }\n"
	"/* alloca: an rbp-based CFA even without frame pointers */\n"
	"__attribute__((noinline)) int with_alloca(int n) {\n"
	"	char *p = alloca(n + 16);\n"
	"	memset(p, n, n + 16);\n"
	"	return p[n / 2] + leaf(n);\n"
	"}\n"
	"/* a CFA offset that does not fit the row's s16 */\n"
	"__attribute__((noinline)) int big_frame(int n) {\n"
	"	volatile char big[40000];\n"
	"	big[n] = 1;\n"
	"	return big[n / 2] + leaf(n);\n"
	"}\n"
	"/* eight values live across calls: rbp saved as a general register */\n"
	"__attribute__((noinline)) long pressure(const long *v, int n) {\n"
	"	long a = v[0], b = v[1], c = v[2], d = v[3], e = v[4], f = v[5], g = v[6], h = v[7];\n"
	"	for (int i = 0; i < n; i++) {\n"
	"		a += leaf(b); b += leaf(c); c ^= leaf(d); d -= leaf(e);\n"
	"		e += leaf(f); f ^= leaf(g); g += leaf(h); h += leaf(a);\n"
	"	}\n"
	"	return a + b + c + d + e + f + g + h;\n"
	"}\n"
	"int main(int argc, char **argv) {\n"
	"	long v[8] = { argc, 2, 3, 4, 5, 6, 7, 8 };\n"
	"	printf(\"%d %ld\\n\", leaf(argc) + with_alloca(argc) + big_frame(argc),\n"
	"	       pressure(v, argc));\n"
	"	return atoi(argv[0]);\n"
	"}\n";

static bool sym(const char *path, const char *name, uint64_t *addr, uint64_t *size)
{
	bool ok = nm_sym(path, false, name, addr, size);

	if (!ok)
		printf("# %s: no symbol %s\n", path, name);
	return ok;
}

/* Checks shared by all fixtures: first instructions, _start, the PLT. */
static void check_fixture_places(const char *label, const char *path,
				 const struct unwind_table *t, bool has_start)
{
	uint64_t a, sz;
	size_t len = 0;
	uint8_t *img;
	const Elf64_Shdr *plt;

	if (sym(path, "main", &a, &sz))
		CHECK_ROW(t, a, CPROF_CFA_RSP, 8, CPROF_RBP_SAME, 0,
			  fmt("%s: main's first instruction is rsp+8", label));
	if (sym(path, "leaf", &a, &sz))
		CHECK_ROW(t, a, CPROF_CFA_RSP, 8, CPROF_RBP_SAME, 0,
			  fmt("%s: leaf's first instruction is rsp+8", label));
	if (has_start && sym(path, "_start", &a, &sz)) {
		const struct cprof_unwind_row *r = unwind_find(t, a);

		CHECK(r && CPROF_ROW_CFA(r) == CPROF_CFA_STOP,
		      fmt("%s: _start is the outermost frame (STOP)", label), "%s", row_str(r));
	}
	img = slurp(path, &len);
	plt = img ? shdr_by_name(img, len, ".plt") : NULL;
	if (has_start && plt && plt->sh_size > 16) {
		size_t bad = 0;

		/* PLT0 pushes twice; every later 16-byte entry follows the expression. */
		CHECK_ROW(t, plt->sh_addr, CPROF_CFA_RSP, 16, CPROF_RBP_SAME, 0,
			  fmt("%s: PLT0 is rsp+16", label));
		for (uint64_t pc = plt->sh_addr + 16; pc < plt->sh_addr + plt->sh_size; pc++)
			bad += !row_is(unwind_find(t, pc), CPROF_CFA_PLT, 11, CPROF_RBP_SAME, 0);
		CHECK(bad == 0, fmt("%s: all of .plt after PLT0 is PLT (threshold 11)", label),
		      "%zu of %llu bytes are not", bad,
		      (unsigned long long)plt->sh_size - 16);
	} else if (has_start) {
		T_SKIP(fmt("%s: .plt", label), "no lazy .plt in this fixture");
	}
	free(img);
}

/*
 * The same .debug_frame, zlib-compressed (-gz): the same rows, from a file
 * and from memory.  @plain: the table of the uncompressed build.
 */
static void test_compressed(const char *src, const struct unwind_table *plain)
{
	char path[PATH_MAX];
	struct errbuf err = { "" };
	struct unwind_table t, m;
	uint8_t *img;
	size_t len = 0;
	int rc;

	snprintf(path, sizeof(path), "%s/fx_gz", tmp);
	if (sh(fmt("gcc -O2 -g -gz=zlib -fno-asynchronous-unwind-tables -Wl,-z,lazy -o '%s' '%s' "
		   "&& objcopy --remove-section=.eh_frame --remove-section=.eh_frame_hdr '%s'",
		   path, src, path))) {
		T_SKIP("fx_gz", "gcc -gz=zlib failed");
		return;
	}
	rc = build_file(path, &t, &err);
	CHECK(rc == 0 && t.n == plain->n && t.n &&
		      memcmp(t.rows, plain->rows, t.n * sizeof(*t.rows)) == 0,
	      "fx_gz: compressed .debug_frame gives the same rows", "rc %d (%s), %zu rows vs %zu",
	      rc, err.msg, t.n, plain->n);
	img = slurp(path, &len);
	rc = img ? unwind_build_mem(img, len, &m, &err) : -1;
	CHECK(rc == 0 && m.n == t.n && (t.n == 0 || memcmp(m.rows, t.rows, t.n * 8) == 0),
	      "fx_gz: ... from memory too", "rc %d (%s)", rc, err.msg);
	if (rc == 0)
		unwind_table_free(&m);
	unwind_table_free(&t);
	free(img);
}

static void test_fixtures(void)
{
	struct {
		const char *name, *flags;
		bool fp;
	} fx[] = {
		{ "fx_omit", "-O2 -fomit-frame-pointer -Wl,-z,lazy", false },
		{ "fx_fp", "-O0 -fno-omit-frame-pointer -Wl,-z,lazy", true },
	};
	char src[PATH_MAX], dbg[PATH_MAX], noeh[PATH_MAX];

	snprintf(src, sizeof(src), "%s/fx.c", tmp);
	snprintf(dbg, sizeof(dbg), "%s/fx_debug", tmp);
	snprintf(noeh, sizeof(noeh), "%s/fx_noeh", tmp);
	if (!spit(src, fixture_src, strlen(fixture_src))) {
		CHECK(false, "fixtures: source written", "%s", src);
		return;
	}
	for (size_t i = 0; i < sizeof(fx) / sizeof(fx[0]); i++) {
		struct errbuf err = { "" };
		char path[PATH_MAX];
		struct unwind_table t;
		uint64_t a, sz;
		int rc;

		snprintf(path, sizeof(path), "%s/%s", tmp, fx[i].name);
		if (sh(fmt("gcc %s -o '%s' '%s'", fx[i].flags, path, src))) {
			T_SKIP(fx[i].name, "gcc failed");
			continue;
		}
		rc = build_file(path, &t, &err);
		CHECK(rc == 0 && t.n > 0 && table_sane(&t), fmt("%s: table built", fx[i].name),
		      "rc %d (%s), %zu rows", rc, err.msg, t.n);
		if (rc)
			continue;
		compare_file(fx[i].name, path, &t);
		check_fixture_places(fx[i].name, path, &t, true);
		if (fx[i].fp) {
			if (sym(path, "main", &a, &sz))
				CHECK(any_row(&t, a, a + sz, is_fp_frame),
				      fmt("%s: main has an rbp+16 frame with rbp saved at CFA-16",
					  fx[i].name),
				      "none in %#llx+%llu", (unsigned long long)a,
				      (unsigned long long)sz);
		} else {
			if (sym(path, "pressure", &a, &sz))
				CHECK(any_row(&t, a, a + sz, is_rsp_rbp_saved),
				      fmt("%s: pressure saves rbp under an rsp-based CFA",
					  fx[i].name),
				      "no such row");
			if (sym(path, "with_alloca", &a, &sz))
				CHECK(any_row(&t, a, a + sz, is_rbp_cfa),
				      fmt("%s: with_alloca has an rbp-based CFA", fx[i].name),
				      "no such row");
			if (sym(path, "big_frame", &a, &sz))
				CHECK(any_row(&t, a + 1, a + sz, is_invalid),
				      fmt("%s: big_frame's 40 KB frame is INVALID (CFA offset > s16)",
					  fx[i].name),
				      "no such row");
		}
		unwind_table_free(&t);
	}

	/*
	 * No unwind tables, -g: .eh_frame keeps only crt's FDEs (thin), so
	 * .debug_frame fills in; then with .eh_frame removed altogether.
	 */
	struct errbuf err = { "" };
	struct unwind_table t;
	uint64_t a, sz;
	int rc;

	if (sh(fmt("gcc -O2 -g -fno-asynchronous-unwind-tables -Wl,-z,lazy -o '%s' '%s'", dbg,
		   src))) {
		T_SKIP("fx_debug", "gcc failed");
		return;
	}
	rc = build_file(dbg, &t, &err);
	CHECK(rc == 0 && table_sane(&t), "fx_debug: table built", "rc %d (%s)", rc, err.msg);
	if (rc == 0) {
		compare_file("fx_debug", dbg, &t);
		check_fixture_places("fx_debug", dbg, &t, true);
		if (sym(dbg, "pressure", &a, &sz))
			CHECK(any_row(&t, a, a + sz, is_rsp_rbp_saved),
			      "fx_debug: pressure's rows come from .debug_frame", "no such row");
		unwind_table_free(&t);
	}
	if (sh(fmt("objcopy --remove-section=.eh_frame --remove-section=.eh_frame_hdr '%s' '%s'",
		   dbg, noeh))) {
		T_SKIP("fx_noeh", "objcopy failed");
		return;
	}
	rc = build_file(noeh, &t, &err);
	if (rc == 0)
		test_compressed(src, &t);
	CHECK(rc == 0 && t.n > 0 && table_sane(&t), "fx_noeh: table from .debug_frame alone",
	      "rc %d (%s), %zu rows", rc, err.msg, t.n);
	if (rc == 0) {
		compare_file("fx_noeh", noeh, &t);
		check_fixture_places("fx_noeh", noeh, &t, false);
		unwind_table_free(&t);
	}
}

/* --- libc and the vDSO ------------------------------------------------- */

static void test_libc(void)
{
	const char *path = "/lib/x86_64-linux-gnu/libc.so.6";
	struct errbuf err = { "" };
	struct unwind_table t;
	Dl_info di;
	uint64_t a, sz;
	struct rf rf;
	size_t nsig = 0, nstop = 0;
	double t0;
	int rc;

	/* Not an interposable function: under ASan, fopen lives in libasan. */
	if (dladdr((void *)gnu_get_libc_version, &di) && di.dli_fname && di.dli_fname[0] == '/')
		path = di.dli_fname;
	if (access(path, R_OK)) {
		T_SKIP("libc", "%s not readable", path);
		return;
	}
	t0 = now_ms();
	rc = build_file(path, &t, &err);
	printf("# libc (%s): %.2f ms, %zu rows, %zu bytes\n", path, now_ms() - t0, t.n,
	       t.n * sizeof(*t.rows));
	CHECK(rc == 0 && t.n > 10000 && table_sane(&t), "libc: table built", "rc %d (%s), %zu rows",
	      rc, err.msg, t.n);
	if (rc)
		return;
	compare_file("libc", path, &t);

	/* __restore_rt has no exported symbol: find its 'S' CIE's FDEs instead. */
	if (readelf_frames(path, 0, 0, &rf)) {
		for (size_t i = 0; i < rf.nfdes; i++) {
			const struct rf_fde *f = &rf.fdes[i];

			if (!f->signal)
				continue;
			nsig++;
			CHECK_ROW(&t, f->start, CPROF_CFA_SIGNAL, 0, CPROF_RBP_SAME, 0,
				  "libc: the signal trampoline's FDE is SIGNAL");
			CHECK_ROW(&t, f->end - 1, CPROF_CFA_SIGNAL, 0, CPROF_RBP_SAME, 0,
				  "libc: ... to its last byte");
		}
	}
	rf_free(&rf);
	CHECK(nsig > 0, "libc: has a signal frame FDE ('S' augmentation)", "none found");
	for (size_t i = 0; i < t.n; i++)
		nstop += CPROF_ROW_CFA(&t.rows[i]) == CPROF_CFA_STOP;
	/* clone's and clone3's children mark the return address undefined. */
	CHECK(nstop >= 2, "libc: clone and clone3 children are STOP", "%zu STOP rows", nstop);
	if (nm_sym(path, true, "__clone", &a, &sz))
		CHECK(any_row(&t, a, a + sz, is_stop), "libc: a STOP row inside clone",
		      "none in %#llx+%llu", (unsigned long long)a, (unsigned long long)sz);
	if (nm_sym(path, true, "__libc_start_main", &a, &sz))
		CHECK_ROW(&t, a, CPROF_CFA_RSP, 8, CPROF_RBP_SAME, 0,
			  "libc: __libc_start_main's first instruction is rsp+8");
	unwind_table_free(&t);
}

static bool vdso_range(uint64_t *start, uint64_t *end)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long long s, e;

		if (strstr(line, "[vdso]") && sscanf(line, "%llx-%llx", &s, &e) == 2) {
			*start = s;
			*end = e;
			found = true;
		}
	}
	fclose(f);
	return found;
}

static void test_vdso(void)
{
	uint64_t base = getauxval(AT_SYSINFO_EHDR), start, end, a, sz;
	const struct cprof_unwind_row *r;
	char path[PATH_MAX];
	struct errbuf err = { "" };
	struct unwind_table t;
	int rc;

	if (!base || !vdso_range(&start, &end) || start != base) {
		T_SKIP("vDSO", "no vDSO in this process");
		return;
	}
	snprintf(path, sizeof(path), "%s/vdso.so", tmp);
	rc = unwind_build_mem((const void *)(uintptr_t)base, end - start, &t, &err);
	CHECK(rc == 0 && t.n > 0 && table_sane(&t), "vDSO: table built from memory",
	      "rc %d (%s), %zu rows", rc, err.msg, t.n);
	if (rc)
		return;
	if (!spit(path, (const void *)(uintptr_t)base, end - start)) {
		T_SKIP("vDSO: readelf", "cannot write %s", path);
	} else {
		compare_file("vDSO", path, &t);
		if (nm_sym(path, true, "__vdso_clock_gettime", &a, &sz)) {
			uint64_t bad = 0;

			r = unwind_find(&t, a);
			CHECK(r && (CPROF_ROW_CFA(r) == CPROF_CFA_RSP ||
				    CPROF_ROW_CFA(r) == CPROF_CFA_RBP),
			      "vDSO: __vdso_clock_gettime is rsp/rbp-based", "%s", row_str(r));
			for (uint64_t pc = a; pc < a + sz; pc++) {
				r = unwind_find(&t, pc);
				bad += !r || (CPROF_ROW_CFA(r) != CPROF_CFA_RSP &&
					      CPROF_ROW_CFA(r) != CPROF_CFA_RBP);
			}
			CHECK(sz > 0 && bad == 0,
			      "vDSO: every byte of __vdso_clock_gettime is rsp/rbp-based",
			      "%llu of %llu bytes are not", (unsigned long long)bad,
			      (unsigned long long)sz);
		} else {
			T_SKIP("vDSO: __vdso_clock_gettime", "not in nm -D");
		}
	}
	unwind_table_free(&t);
}

/* --- hand-assembled CFI ------------------------------------------------ */

#define TEXT_VADDR 0x1000u
#define TEXT_SIZE 0x1000u
#define CFI_VADDR 0x3000u

struct cfi {
	uint8_t b[4096];
	size_t n;
	bool debug;   /* .debug_frame rules */
	bool dwarf64; /* 64-bit lengths (and ids) for the next entries */
	int version;  /* of the next CIE: 0 for the default (1, or 4 for debug) */
};

static void c_put(struct cfi *c, const void *p, size_t n)
{
	if (n == 0)
		return; /* p may be NULL */
	if (c->n + n > sizeof(c->b)) {
		fprintf(stderr, "cfi buffer overflow\n");
		exit(2);
	}
	memcpy(c->b + c->n, p, n);
	c->n += n;
}

static void c_u8(struct cfi *c, uint8_t v) { c_put(c, &v, 1); }
static void c_u16(struct cfi *c, uint16_t v) { c_put(c, &v, 2); }
static void c_u32(struct cfi *c, uint32_t v) { c_put(c, &v, 4); }
static void c_u64(struct cfi *c, uint64_t v) { c_put(c, &v, 8); }

static void c_uleb(struct cfi *c, uint64_t v)
{
	do {
		uint8_t b = v & 0x7f;

		v >>= 7;
		c_u8(c, b | (v ? 0x80 : 0));
	} while (v);
}

static void c_sleb(struct cfi *c, int64_t v)
{
	for (;;) {
		uint8_t b = v & 0x7f;

		v >>= 7;
		if ((v == 0 && !(b & 0x40)) || (v == -1 && (b & 0x40))) {
			c_u8(c, b);
			return;
		}
		c_u8(c, b | 0x80);
	}
}

/* A pointer as an FDE would encode it (the formats and bases we test). */
static void c_ptr(struct cfi *c, uint8_t enc, uint64_t v)
{
	if ((enc & 0x70) == 0x10)
		v -= (c->debug ? 0 : CFI_VADDR) + c->n;
	else if ((enc & 0x70) == 0x20)
		v -= TEXT_VADDR;
	switch (enc & 0x0f) {
	case 0x01:
		c_uleb(c, v);
		break;
	case 0x02:
	case 0x0a:
		c_u16(c, (uint16_t)v);
		break;
	case 0x03:
	case 0x0b:
		c_u32(c, (uint32_t)v);
		break;
	case 0x09:
		c_sleb(c, (int64_t)v);
		break;
	default:
		c_u64(c, v);
		break;
	}
}

/* Opens an entry: its length is patched by c_close(). */
static size_t c_open(struct cfi *c)
{
	size_t at = c->n;

	if (c->dwarf64) {
		c_u32(c, 0xffffffffu);
		c_u64(c, 0);
	} else {
		c_u32(c, 0);
	}
	return at;
}

static void c_close(struct cfi *c, size_t at)
{
	if (c->dwarf64) {
		uint64_t len = c->n - at - 12;

		memcpy(c->b + at + 4, &len, 8);
	} else {
		uint32_t len = (uint32_t)(c->n - at - 4);

		memcpy(c->b + at, &len, 4);
	}
}

static void c_id(struct cfi *c, uint64_t v)
{
	if (c->dwarf64)
		c_u64(c, v);
	else
		c_u32(c, (uint32_t)v);
}

/* def_cfa rsp+8; return address at CFA-8. */
static const uint8_t STD[] = { 0x0c, 0x07, 0x08, 0x90, 0x01 };

/*
 * A CIE with augmentation @aug ('z' forms get R = @enc, P = an indirect
 * pcrel personality, L = pcrel LSDAs), code alignment 1, @data_align.
 */
static size_t c_cie(struct cfi *c, const char *aug, int64_t data_align, uint8_t enc,
		    const uint8_t *ins, size_t nins)
{
	size_t at = c_open(c);
	int ver = c->version ? c->version : c->debug ? 4 : 1;

	c_id(c, c->debug ? (c->dwarf64 ? UINT64_MAX : 0xffffffffu) : 0);
	c_u8(c, (uint8_t)ver);
	c_put(c, aug, strlen(aug) + 1);
	if (ver == 4) {
		c_u8(c, 8); /* address size */
		c_u8(c, 0); /* segment selector size */
	}
	c_uleb(c, 1);
	c_sleb(c, data_align);
	if (ver == 1)
		c_u8(c, 16);
	else
		c_uleb(c, 16);
	if (aug[0] == 'z') {
		struct cfi a = { .debug = c->debug };

		for (const char *q = aug + 1; *q; q++) {
			if (*q == 'R') {
				c_u8(&a, enc);
			} else if (*q == 'L') {
				c_u8(&a, 0x1b);
			} else if (*q == 'P') {
				c_u8(&a, 0x9b);
				c_u32(&a, 0x12345678);
			}
		}
		c_uleb(c, a.n);
		c_put(c, a.b, a.n);
	}
	c_put(c, ins, nins);
	c_close(c, at);
	return at;
}

/* An FDE of the CIE at @cie (whose FDE encoding is @enc; @lsda: it has 'L'). */
static size_t c_fde(struct cfi *c, size_t cie, uint8_t enc, bool lsda, uint64_t start,
		    uint64_t len, const uint8_t *ins, size_t nins)
{
	size_t at = c_open(c);

	c_id(c, c->debug ? cie : c->n - cie);
	if (c->debug) {
		c_u64(c, start);
		c_u64(c, len);
	} else {
		c_ptr(c, enc, start);
		c_ptr(c, enc & 0x0f, len);
		c_uleb(c, lsda ? 4 : 0);
		if (lsda)
			c_u32(c, 0);
	}
	c_put(c, ins, nins);
	c_close(c, at);
	return at;
}

#define FDE(c, cie, start, len, ...)                                          \
	do {                                                                  \
		static const uint8_t _ins[] = { __VA_ARGS__ };                \
		c_fde((c), (cie), 0x1b, false, (start), (len), _ins,          \
		      sizeof(_ins) - 1); /* the trailing dummy 0 */           \
	} while (0)

/*
 * A minimal x86-64 ET_DYN image: .text at TEXT_VADDR (TEXT_SIZE bytes),
 * @eh as .eh_frame at CFI_VADDR, @dbg as .debug_frame (either may be NULL:
 * that section is then an empty ".data") and .shstrtab.
 */
static uint8_t *c_image(const struct cfi *eh, const struct cfi *dbg, size_t *len)
{
	static const char strtab[] = "\0.text\0.eh_frame\0.shstrtab\0.debug_frame\0.data";
	size_t neh = eh ? eh->n : 0, ndbg = dbg ? dbg->n : 0;
	size_t text_off = sizeof(Elf64_Ehdr), eh_off = text_off + TEXT_SIZE;
	size_t dbg_off = eh_off + neh, str_off = dbg_off + ndbg;
	size_t sh_off = (str_off + sizeof(strtab) + 7) & ~(size_t)7;
	uint8_t *img = calloc(1, sh_off + 5 * sizeof(Elf64_Shdr));
	Elf64_Ehdr *h = (Elf64_Ehdr *)img;
	Elf64_Shdr *sh;

	if (!img)
		exit(2);
	memcpy(h->e_ident, ELFMAG, SELFMAG);
	h->e_ident[EI_CLASS] = ELFCLASS64;
	h->e_ident[EI_DATA] = ELFDATA2LSB;
	h->e_ident[EI_VERSION] = EV_CURRENT;
	h->e_type = ET_DYN;
	h->e_machine = EM_X86_64;
	h->e_version = EV_CURRENT;
	h->e_shoff = sh_off;
	h->e_ehsize = sizeof(*h);
	h->e_shentsize = sizeof(Elf64_Shdr);
	h->e_shnum = 5;
	h->e_shstrndx = 4;
	if (neh)
		memcpy(img + eh_off, eh->b, neh);
	if (ndbg)
		memcpy(img + dbg_off, dbg->b, ndbg);
	memcpy(img + str_off, strtab, sizeof(strtab));
	sh = (Elf64_Shdr *)(img + sh_off);
	sh[1] = (Elf64_Shdr){ .sh_name = 1, .sh_type = SHT_PROGBITS,
			      .sh_flags = SHF_ALLOC | SHF_EXECINSTR, .sh_addr = TEXT_VADDR,
			      .sh_offset = text_off, .sh_size = TEXT_SIZE, .sh_addralign = 16 };
	sh[2] = (Elf64_Shdr){ .sh_name = eh ? 7 : 40, .sh_type = SHT_PROGBITS,
			      .sh_flags = SHF_ALLOC, .sh_addr = CFI_VADDR,
			      .sh_offset = eh_off, .sh_size = neh, .sh_addralign = 8 };
	sh[3] = (Elf64_Shdr){ .sh_name = dbg ? 27 : 40, .sh_type = SHT_PROGBITS,
			      .sh_offset = dbg_off, .sh_size = ndbg, .sh_addralign = 8 };
	sh[4] = (Elf64_Shdr){ .sh_name = 17, .sh_type = SHT_STRTAB, .sh_offset = str_off,
			      .sh_size = sizeof(strtab), .sh_addralign = 1 };
	*len = sh_off + 5 * sizeof(Elf64_Shdr);
	return img;
}

static int c_build2(const struct cfi *eh, const struct cfi *dbg, struct unwind_table *t)
{
	struct errbuf err = { "" };
	size_t len;
	uint8_t *img = c_image(eh, dbg, &len);
	int rc = unwind_build_mem(img, len, t, &err);

	if (rc)
		printf("# unwind_build_mem: %d (%s)\n", rc, err.msg);
	free(img);
	return rc;
}

static int c_build(const struct cfi *c, struct unwind_table *t)
{
	return c->debug ? c_build2(NULL, c, t) : c_build2(c, NULL, t);
}

#define INV CPROF_CFA_INVALID, 0, CPROF_RBP_SAME, 0
#define RSP(n) CPROF_CFA_RSP, n, CPROF_RBP_SAME, 0
#define RSP_R(n, r) CPROF_CFA_RSP, n, CPROF_RBP_OFFSET, r
#define RSP_RX(n) CPROF_CFA_RSP, n, CPROF_RBP_INVALID, 0
#define RBP_R(n, r) CPROF_CFA_RBP, n, CPROF_RBP_OFFSET, r

/* The row at @vaddr by a plain binary search of all rows: the index's reference. */
static const struct cprof_unwind_row *find_plain(const struct unwind_table *t, uint64_t vaddr)
{
	size_t lo = 0, hi = t->n;

	if (vaddr < t->base || vaddr - t->base > UINT32_MAX)
		return NULL;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->rows[mid].pc <= vaddr - t->base)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &t->rows[lo - 1] : NULL;
}

/*
 * The page index: every row, the byte before it and random addresses give
 * the row a search of the whole table gives; the BPF layout holds the index
 * entries two to a slot, then the rows.
 */
static void test_index(const char *name, const char *path)
{
	struct errbuf err = { "" };
	struct unwind_table t;
	union cprof_table_slot *slots;
	size_t bad = 0, islots, nslots, badlay = 0;
	uint64_t x = 88172645463325252ULL;

	if (access(path, R_OK)) {
		T_SKIP(fmt("index: %s", name), "%s not readable", path);
		return;
	}
	if (build_file(path, &t, &err) || !t.n) {
		CHECK(0, fmt("index: %s table built", name), "%s", err.msg);
		return;
	}
	for (size_t i = 0; i < t.n; i++) {
		uint64_t a = t.base + t.rows[i].pc;

		bad += unwind_find(&t, a) != &t.rows[i];
		bad += unwind_find(&t, a - 1) != find_plain(&t, a - 1);
	}
	for (int i = 0; i < 100000; i++) {
		uint64_t a;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		a = t.base + x % ((uint64_t)t.rows[t.n - 1].pc + 4096);
		bad += unwind_find(&t, a) != find_plain(&t, a);
	}
	CHECK(bad == 0, fmt("index: %s: indexed lookups equal a full search (%zu rows, %u pages of %u B)",
			    name, t.n, t.npages, 1u << t.index_shift),
	      "%zu differ", bad);
	CHECK(t.npages <= t.n + 64, fmt("index: %s: the index is no larger than the rows", name),
	      "%u pages for %zu rows", t.npages, t.n);

	islots = CPROF_INDEX_SLOTS(t.npages);
	nslots = unwind_slots(&t);
	slots = calloc(nslots, sizeof(*slots));
	if (slots) {
		unwind_layout(&t, slots);
		for (size_t k = 0; k <= t.npages; k++)
			badlay += slots[k / 2].index[k & 1] != t.index[k];
		for (size_t i = 0; i < t.n; i++)
			badlay += memcmp(&slots[islots + i].row, &t.rows[i], sizeof(t.rows[i])) != 0;
	}
	CHECK(slots && nslots == islots + t.n && badlay == 0,
	      fmt("index: %s: BPF layout is the index, then the rows", name),
	      "%zu slots, %zu wrong", nslots, badlay);
	free(slots);
	unwind_table_free(&t);
}

static void test_program(void)
{
	struct cfi c = { 0 };
	struct unwind_table t;
	size_t cie = c_cie(&c, "zR", -8, 0x1b, STD, sizeof(STD));

	/* Listed out of order on purpose: the table is sorted by pc. */
	FDE(&c, cie, 0x1040, 0x10, 0x44, 0x0e, 0x10, 0);
	FDE(&c, cie, 0x1000, 0x10,
	    0x41, 0x0e, 0x10, 0x86, 0x02, /* push rbp */
	    0x43, 0x0d, 0x06,             /* mov rsp, rbp */
	    0x48, 0x0c, 0x07, 0x08, 0xc6, /* leave */
	    0);
	FDE(&c, cie, 0x1010, 0x10, 0);      /* adjacent: no INVALID between */
	FDE(&c, cie, 0x1060, 0, 0x41, 0);   /* zero length: ignored */
	FDE(&c, cie, 0x5000, 0x10, 0);      /* not in .text: skipped */
	CHECK(c_build(&c, &t) == 0 && table_sane(&t), "cfi: basic program builds", "failed");
	CHECK_EQ_U64(t.base, 0x1000, "cfi: base is the lowest FDE start");
	CHECK_EQ_U64(t.fdes, 3, "cfi: zero-length and non-code FDEs are not used");
	CHECK_EQ_U64(t.skipped, 1, "cfi: the non-code FDE is counted as skipped");
	CHECK_EQ_U64(t.n, 8, "cfi: one row per change, repeats merged");
	CHECK(unwind_find(&t, 0xfff) == NULL, "cfi: nothing below base", "found a row");
	CHECK_ROW(&t, 0x1000, RSP(8), "cfi: entry is rsp+8");
	CHECK_ROW(&t, 0x1001, RSP_R(16, -2), "cfi: after push rbp");
	CHECK_ROW(&t, 0x1003, RSP_R(16, -2), "cfi: a row holds until the next");
	CHECK_ROW(&t, 0x1004, RBP_R(16, -2), "cfi: def_cfa_register rbp");
	CHECK_ROW(&t, 0x100c, RSP(8), "cfi: def_cfa and restore rbp");
	CHECK_ROW(&t, 0x1010, RSP(8), "cfi: adjacent FDE takes over at its start");
	CHECK_ROW(&t, 0x101f, RSP(8), "cfi: adjacent FDE's last byte");
	CHECK_ROW(&t, 0x1020, INV, "cfi: INVALID after the last FDE of a run");
	CHECK_ROW(&t, 0x103f, INV, "cfi: INVALID in a gap");
	CHECK_ROW(&t, 0x1044, RSP(16), "cfi: advance_loc");
	CHECK_ROW(&t, 0x1050, INV, "cfi: INVALID at the end");
	CHECK_ROW(&t, 0x5000, INV, "cfi: the skipped FDE has no rows");
	unwind_table_free(&t);
	unwind_table_free(&t); /* idempotent */
}

static void test_state_stack(void)
{
	struct cfi c = { 0 };
	struct unwind_table t;
	size_t cie = c_cie(&c, "zR", -8, 0x1b, STD, sizeof(STD));

	FDE(&c, cie, 0x1000, 0x20, 0x41, 0x0e, 0x10, 0x86, 0x02, 0x0a, /* remember */
	    0x41, 0x0e, 0x08, 0xc6, 0x41, 0x0b,                         /* restore */
	    0x41, 0x0e, 0x18, 0);
	FDE(&c, cie, 0x1100, 0x10, 0x41, 0x0e, 0x10, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a,
	    0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x41,
	    0x0e, 0x20, 0);
	FDE(&c, cie, 0x1200, 0x10, 0x41, 0x0b, 0x41, 0x0e, 0x10, 0); /* pop of nothing */
	FDE(&c, cie, 0x1300, 0x10, 0x42, 0x0e, 0x10, 0x42, 0x3f, 0x0e, 0x08, 0); /* 0x3f: ? */
	FDE(&c, cie, 0x1400, 0x10, 0x41, 0x0e, 0);                   /* operand cut off */
	CHECK(c_build(&c, &t) == 0 && table_sane(&t), "cfi: state programs build", "failed");
	CHECK_ROW(&t, 0x1001, RSP_R(16, -2), "cfi: before remember_state");
	CHECK_ROW(&t, 0x1002, RSP(8), "cfi: between remember and restore");
	CHECK_ROW(&t, 0x1003, RSP_R(16, -2), "cfi: restore_state brings back CFA and rbp");
	CHECK_ROW(&t, 0x1004, RSP_R(24, -2), "cfi: and rules go on from there");
	CHECK_ROW(&t, 0x1100, RSP(8), "cfi: deep remember_state: rows before it kept");
	CHECK_ROW(&t, 0x1101, INV, "cfi: deep remember_state: INVALID from there");
	CHECK_ROW(&t, 0x110f, INV, "cfi: ... to the FDE's end");
	CHECK_ROW(&t, 0x1200, RSP(8), "cfi: restore_state of nothing: rows before it kept");
	CHECK_ROW(&t, 0x1201, INV, "cfi: restore_state of nothing: INVALID from there");
	CHECK_ROW(&t, 0x1302, RSP(16), "cfi: rows before an unknown opcode kept");
	CHECK_ROW(&t, 0x1304, INV, "cfi: unknown opcode: INVALID from there");
	CHECK_ROW(&t, 0x1400, RSP(8), "cfi: truncated operand: rows before it kept");
	CHECK_ROW(&t, 0x1401, INV, "cfi: truncated operand: INVALID from there");
	CHECK_EQ_U64(t.skipped, 4, "cfi: the four bad programs are counted");
	unwind_table_free(&t);
}

static void test_rules(void)
{
	struct cfi c = { 0 };
	struct unwind_table t;
	size_t cie = c_cie(&c, "zR", -8, 0x1b, STD, sizeof(STD));
	size_t sig;

	/* binutils' PLT: PLT0 then entries following the expression. */
	FDE(&c, cie, 0x1000, 0x30, 0x0e, 0x10, 0x46, 0x0e, 0x18, 0x4a, 0x0f, 11, 0x77, 0x08,
	    0x80, 0x00, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22, 0);
	FDE(&c, cie, 0x1040, 0x10, 0x0f, 11, 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x3a, 0x2a, 0x33,
	    0x24, 0x22, 0);
	FDE(&c, cie, 0x1060, 0x10, 0x0f, 3, 0x77, 0x10, 0x06, 0); /* *(rsp+16) */
	FDE(&c, cie, 0x1080, 0x10, 0x07, 0x10, 0);                /* RA undefined */
	FDE(&c, cie, 0x1100, 0x20,
	    0x41, 0x0e, 0x10, 0x86, 0x02,      /* 1101: rbp at CFA-16 */
	    0x41, 0x09, 0x06, 0x03,            /* 1102: rbp in rbx */
	    0x41, 0x08, 0x06,                  /* 1103: same_value */
	    0x41, 0x2f, 0x06, 0x02,            /* 1104: GNU_negative_offset_extended: +16 */
	    0x41, 0x14, 0x06, 0x02,            /* 1105: val_offset */
	    0x41, 0x07, 0x06,                  /* 1106: undefined */
	    0x41, 0x11, 0x06, 0xc8, 0x01,      /* 1107: offset_extended_sf 200: -1600 */
	    0x41, 0x10, 0x06, 0x01, 0x30,      /* 1108: expression */
	    0x41, 0xc6,                        /* 1109: restore: CIE says nothing */
	    0x41, 0x05, 0x06, 0x03,            /* 110a: offset_extended: -24 */
	    0x41, 0x15, 0x06, 0x01,            /* 110b: val_offset_sf */
	    0x41, 0x16, 0x06, 0x01, 0x30,      /* 110c: val_expression */
	    0x41, 0x06, 0x06, 0);              /* 110d: restore_extended */
	FDE(&c, cie, 0x1200, 0x20,
	    0x41, 0x0e, 0xc0, 0xb8, 0x02,      /* 1201: rsp+40000 */
	    0x41, 0x0e, 0x10,                  /* 1202: rsp+16 */
	    0x41, 0x0c, 0x03, 0x08,            /* 1203: rbx+8 */
	    0x41, 0x12, 0x07, 0x7e,            /* 1204: def_cfa_sf rsp, -2*-8 */
	    0x41, 0x13, 0x7d,                  /* 1205: def_cfa_offset_sf -3*-8 */
	    0x41, 0x0d, 0x06,                  /* 1206: rbp+24 */
	    0x41, 0x05, 0x10, 0x02,            /* 1207: RA at CFA-16 */
	    0x41, 0xd0,                        /* 1208: RA restored */
	    0x2e, 0x10, 0x00,                  /* GNU_args_size, nop */
	    0x02, 0x10, 0x0c, 0x07, 0x08, 0);  /* 1218: advance_loc1, rsp+8 */
	FDE(&c, cie, 0x1300, 0x100, 0x03, 0x10, 0x00, 0x0e, 0x10, /* advance_loc2 */
	    0x04, 0x10, 0x00, 0x00, 0x00, 0x0e, 0x18,             /* advance_loc4 */
	    0x1d, 0x10, 0, 0, 0, 0, 0, 0, 0, 0x0e, 0x20, 0);      /* MIPS_advance_loc8 */
	FDE(&c, cie, 0x1400, 0x10, 0x0e, 0x10, 0x02, 0x40, 0x0e, 0x18, 0); /* past the end */
	sig = c_cie(&c, "zRS", -8, 0x1b, STD, sizeof(STD));
	FDE(&c, sig, 0x1500, 0x10, 0x41, 0x0e, 0x10, 0);
	CHECK(c_build(&c, &t) == 0 && table_sane(&t), "cfi: rule programs build", "failed");
	CHECK_ROW(&t, 0x1000, RSP(16), "cfi: PLT0 rsp+16");
	CHECK_ROW(&t, 0x1006, RSP(24), "cfi: PLT0 rsp+24");
	CHECK_ROW(&t, 0x1010, CPROF_CFA_PLT, 11, CPROF_RBP_SAME, 0, "cfi: PLT expression, lit11");
	CHECK_ROW(&t, 0x102f, CPROF_CFA_PLT, 11, CPROF_RBP_SAME, 0, "cfi: PLT to the FDE's end");
	CHECK_ROW(&t, 0x1040, CPROF_CFA_PLT, 10, CPROF_RBP_SAME, 0, "cfi: PLT expression, lit10");
	CHECK_ROW(&t, 0x1060, INV, "cfi: any other CFA expression is INVALID");
	CHECK_ROW(&t, 0x1080, CPROF_CFA_STOP, 0, CPROF_RBP_SAME, 0, "cfi: RA undefined is STOP");
	CHECK_ROW(&t, 0x1101, RSP_R(16, -2), "cfi: rbp offset");
	CHECK_ROW(&t, 0x1102, RSP_RX(16), "cfi: rbp in another register is INVALID");
	CHECK_ROW(&t, 0x1103, RSP(16), "cfi: rbp same_value");
	CHECK_ROW(&t, 0x1104, RSP_R(16, 2), "cfi: GNU_negative_offset_extended");
	CHECK_ROW(&t, 0x1105, RSP_RX(16), "cfi: rbp val_offset is INVALID");
	CHECK_ROW(&t, 0x1106, RSP(16), "cfi: rbp undefined is SAME");
	CHECK_ROW(&t, 0x1107, RSP_RX(16), "cfi: rbp offset beyond s8 is INVALID");
	CHECK_ROW(&t, 0x1108, RSP_RX(16), "cfi: rbp expression is INVALID");
	CHECK_ROW(&t, 0x1109, RSP(16), "cfi: restore rbp to the CIE's (unset) rule");
	CHECK_ROW(&t, 0x110a, RSP_R(16, -3), "cfi: offset_extended");
	CHECK_ROW(&t, 0x110b, RSP_RX(16), "cfi: rbp val_offset_sf is INVALID");
	CHECK_ROW(&t, 0x110c, RSP_RX(16), "cfi: rbp val_expression is INVALID");
	CHECK_ROW(&t, 0x110d, RSP(16), "cfi: restore_extended");
	CHECK_ROW(&t, 0x1201, INV, "cfi: CFA offset beyond s16 is INVALID");
	CHECK_ROW(&t, 0x1202, RSP(16), "cfi: def_cfa_offset");
	CHECK_ROW(&t, 0x1203, INV, "cfi: CFA from another register is INVALID");
	CHECK_ROW(&t, 0x1204, RSP(16), "cfi: def_cfa_sf");
	CHECK_ROW(&t, 0x1205, RSP(24), "cfi: def_cfa_offset_sf");
	CHECK_ROW(&t, 0x1206, CPROF_CFA_RBP, 24, CPROF_RBP_SAME, 0, "cfi: def_cfa_register");
	CHECK_ROW(&t, 0x1207, INV, "cfi: return address not at CFA-8 is INVALID");
	CHECK_ROW(&t, 0x1217, CPROF_CFA_RBP, 24, CPROF_RBP_SAME, 0,
		  "cfi: RA restored; args_size and nop change nothing");
	CHECK_ROW(&t, 0x1218, RSP(8), "cfi: advance_loc1");
	CHECK_ROW(&t, 0x1310, RSP(16), "cfi: advance_loc2");
	CHECK_ROW(&t, 0x1320, RSP(24), "cfi: advance_loc4");
	CHECK_ROW(&t, 0x1330, RSP(32), "cfi: MIPS_advance_loc8");
	CHECK_ROW(&t, 0x140f, RSP(16), "cfi: rules past the FDE's end are dropped");
	CHECK_ROW(&t, 0x1410, INV, "cfi: ... and its end is INVALID");
	CHECK_ROW(&t, 0x1500, CPROF_CFA_SIGNAL, 0, CPROF_RBP_SAME, 0, "cfi: 'S' CIE is SIGNAL");
	CHECK_ROW(&t, 0x150f, CPROF_CFA_SIGNAL, 0, CPROF_RBP_SAME, 0, "cfi: ... for all its rows");
	CHECK_EQ_U64(t.skipped, 0, "cfi: nothing skipped in valid programs");
	unwind_table_free(&t);
}

static void test_encodings(void)
{
	static const uint8_t std4[] = { 0x0c, 0x07, 0x08, 0x90, 0x02 }; /* data_align -4 */
	static const uint8_t push[] = { 0x41, 0x0e, 0x10 };
	static const uint8_t rbp12[] = { 0x41, 0x0e, 0x10, 0x86, 0x04, 0x41, 0x86, 0x03 };
	struct cfi c = { 0 };
	struct unwind_table t;
	size_t cie;
	struct {
		uint8_t enc;
		uint64_t start;
	} encs[] = { { 0x03, 0x1000 }, { 0x1c, 0x1020 }, { 0x01, 0x1040 },
		     { 0x23, 0x1060 }, { 0x0b, 0x1080 }, { 0x1a, 0x10a0 },
		     { 0x04, 0x10c0 }, { 0x19, 0x10e0 } };

	for (size_t i = 0; i < sizeof(encs) / sizeof(encs[0]); i++) {
		cie = c_cie(&c, "zR", -8, encs[i].enc, STD, sizeof(STD));
		c_fde(&c, cie, encs[i].enc, false, encs[i].start, 0x10, push, sizeof(push));
	}
	cie = c_cie(&c, "zPLR", -8, 0x1b, STD, sizeof(STD));
	c_fde(&c, cie, 0x1b, true, 0x1100, 0x10, push, sizeof(push));
	cie = c_cie(&c, "zRX", -8, 0x1b, STD, sizeof(STD)); /* unknown letter after R */
	c_fde(&c, cie, 0x1b, false, 0x1120, 0x10, push, sizeof(push));
	cie = c_cie(&c, "zR", -4, 0x1b, std4, sizeof(std4));
	c_fde(&c, cie, 0x1b, false, 0x1140, 0x10, rbp12, sizeof(rbp12));
	c.dwarf64 = true;
	cie = c_cie(&c, "zR", -8, 0x1b, STD, sizeof(STD));
	c_fde(&c, cie, 0x1b, false, 0x1160, 0x10, push, sizeof(push));
	c.dwarf64 = false;
	c.version = 3;
	cie = c_cie(&c, "zR", -8, 0x1b, STD, sizeof(STD));
	c_fde(&c, cie, 0x1b, false, 0x1180, 0x10, push, sizeof(push));
	c.version = 0;
	c_u32(&c, 0); /* a terminator in the middle: entries go on after it */
	cie = c_cie(&c, "zR", -8, 0x9b, STD, sizeof(STD)); /* indirect FDE pointers */
	c_fde(&c, cie, 0x1b, false, 0x11a0, 0x10, push, sizeof(push));
	c.version = 2;
	cie = c_cie(&c, "zR", -8, 0x1b, STD, sizeof(STD)); /* no such version */
	c_fde(&c, cie, 0x1b, false, 0x11c0, 0x10, push, sizeof(push));
	c.version = 0;
	cie = c_cie(&c, "xy", -8, 0x1b, STD, sizeof(STD)); /* no 'z': cannot skip */
	c_fde(&c, cie, 0x1b, false, 0x11e0, 0x10, push, sizeof(push));
	cie = c_cie(&c, "zR", -8, 0x1b, STD, sizeof(STD));
	c_fde(&c, cie, 0x1b, false, 0x1200, 0x10, push, sizeof(push));
	CHECK(c_build(&c, &t) == 0 && table_sane(&t), "cfi: encodings build", "failed");
	for (size_t i = 0; i < sizeof(encs) / sizeof(encs[0]); i++) {
		CHECK_ROW(&t, encs[i].start, RSP(8), fmt("cfi: FDE encoding %#x: start", encs[i].enc));
		CHECK_ROW(&t, encs[i].start + 1, RSP(16),
			  fmt("cfi: FDE encoding %#x: program", encs[i].enc));
		CHECK_ROW(&t, encs[i].start + 0x10, INV,
			  fmt("cfi: FDE encoding %#x: range", encs[i].enc));
	}
	CHECK_ROW(&t, 0x1101, RSP(16), "cfi: zPLR: personality and LSDA skipped");
	CHECK_ROW(&t, 0x1121, RSP(16), "cfi: unknown augmentation letter skipped by 'z' length");
	CHECK_ROW(&t, 0x1141, RSP_R(16, -2), "cfi: data alignment -4: rbp at CFA-16");
	CHECK_ROW(&t, 0x1142, RSP_RX(16), "cfi: rbp at CFA-12 is INVALID (not 8-aligned)");
	CHECK_ROW(&t, 0x1161, RSP(16), "cfi: 64-bit lengths");
	CHECK_ROW(&t, 0x1181, RSP(16), "cfi: CIE version 3");
	CHECK_ROW(&t, 0x11a1, INV, "cfi: indirect FDE pointers rejected");
	CHECK_ROW(&t, 0x11c1, INV, "cfi: CIE version 2 rejected");
	CHECK_ROW(&t, 0x11e1, INV, "cfi: augmentation without 'z' rejected");
	CHECK_ROW(&t, 0x1201, RSP(16), "cfi: entries after a zero terminator");
	CHECK_EQ_U64(t.skipped, 6, "cfi: three bad CIEs and their FDEs counted");
	unwind_table_free(&t);
}

static void test_overlap_and_setloc(void)
{
	struct cfi c = { 0 };
	struct unwind_table t;
	size_t cie = c_cie(&c, "zR", -8, 0x1b, STD, sizeof(STD));
	size_t abs = c_cie(&c, "zR", -8, 0x03, STD, sizeof(STD));
	static const uint8_t fwd[] = { 0x01, 0x08, 0x13, 0, 0, 0x0e, 0x10 };
	static const uint8_t back[] = { 0x01, 0x08, 0x12, 0, 0, 0x0e, 0x10, 0x01, 0x04, 0x12, 0, 0 };

	FDE(&c, cie, 0x1000, 0x40, 0x50, 0x0e, 0x10, 0); /* 1000 rsp+8, 1010 rsp+16 */
	FDE(&c, cie, 0x1020, 0x10, 0);                   /* inside it */
	FDE(&c, cie, 0x1100, 0x10, 0x0e, 0x10, 0);
	FDE(&c, cie, 0x1100, 0x10, 0x0e, 0x18, 0); /* same start: the later one wins */
	c_fde(&c, abs, 0x03, false, 0x1200, 0x20, back, sizeof(back));
	c_fde(&c, abs, 0x03, false, 0x1300, 0x20, fwd, sizeof(fwd));
	CHECK(c_build(&c, &t) == 0 && table_sane(&t), "cfi: overlap and set_loc build", "failed");
	CHECK_ROW(&t, 0x1010, RSP(16), "cfi: overlap: the outer FDE up to the inner one");
	CHECK_ROW(&t, 0x1020, RSP(8), "cfi: overlap: the inner FDE in its range");
	CHECK_ROW(&t, 0x1030, INV, "cfi: overlap: INVALID after the inner FDE (outer truncated)");
	CHECK_ROW(&t, 0x1100, RSP(24), "cfi: two FDEs at one pc: the later wins");
	CHECK_ROW(&t, 0x1207, RSP(8), "cfi: set_loc: before it");
	CHECK_ROW(&t, 0x1208, INV, "cfi: set_loc backwards: INVALID from there");
	CHECK_ROW(&t, 0x1307, RSP(8), "cfi: set_loc forward: before it");
	CHECK_ROW(&t, 0x1308, RSP(16), "cfi: set_loc forward: from it");
	unwind_table_free(&t);
}

static void test_debug_frame(void)
{
	struct cfi c = { .debug = true };
	struct unwind_table t;
	static const uint8_t push[] = { 0x41, 0x0e, 0x10 };
	size_t cie = c_cie(&c, "", -8, 0, STD, sizeof(STD));

	c_fde(&c, cie, 0, false, 0x1000, 0x10, push, sizeof(push));
	c_fde(&c, cie, 0, false, 0, 0x10, push, sizeof(push)); /* a discarded function */
	c.version = 1;
	cie = c_cie(&c, "", -8, 0, STD, sizeof(STD));
	c_fde(&c, cie, 0, false, 0x1020, 0x10, push, sizeof(push));
	c.version = 3;
	cie = c_cie(&c, "", -8, 0, STD, sizeof(STD));
	c_fde(&c, cie, 0, false, 0x1040, 0x10, push, sizeof(push));
	c.dwarf64 = true;
	cie = c_cie(&c, "", -8, 0, STD, sizeof(STD));
	c_fde(&c, cie, 0, false, 0x1060, 0x10, push, sizeof(push));
	c.dwarf64 = false;
	c_fde(&c, 0x7fff0, 0, false, 0x1080, 0x10, push, sizeof(push)); /* no CIE there */
	CHECK(c_build(&c, &t) == 0 && table_sane(&t), "cfi: .debug_frame builds", "failed");
	CHECK_ROW(&t, 0x1001, RSP(16), "cfi: .debug_frame CIE version 4");
	CHECK_ROW(&t, 0x1021, RSP(16), "cfi: .debug_frame CIE version 1");
	CHECK_ROW(&t, 0x1041, RSP(16), "cfi: .debug_frame CIE version 3");
	CHECK_ROW(&t, 0x1061, RSP(16), "cfi: .debug_frame 64-bit DWARF");
	CHECK_ROW(&t, 0x1081, INV, "cfi: .debug_frame FDE with a bad CIE offset skipped");
	CHECK_EQ_U64(t.base, 0x1000, "cfi: .debug_frame FDE at address 0 skipped");
	CHECK_EQ_U64(t.skipped, 2, "cfi: .debug_frame skips counted");
	unwind_table_free(&t);
}

/* .debug_frame fills the gaps of a thin .eh_frame, never overrides it. */
static void test_mixed(void)
{
	static const uint8_t push[] = { 0x41, 0x0e, 0x10 }, push24[] = { 0x41, 0x0e, 0x18 };
	struct cfi eh = { 0 }, thick = { 0 }, dbg = { .debug = true };
	struct unwind_table t;
	size_t cie = c_cie(&eh, "zR", -8, 0x1b, STD, sizeof(STD)), dcie;

	FDE(&eh, cie, 0x1000, 0x10, 0x41, 0x0e, 0x10, 0);
	cie = c_cie(&thick, "zR", -8, 0x1b, STD, sizeof(STD));
	FDE(&thick, cie, 0x1000, 0x900, 0x41, 0x0e, 0x10, 0);
	dcie = c_cie(&dbg, "", -8, 0, STD, sizeof(STD));
	c_fde(&dbg, dcie, 0, false, 0x1000, 0x10, push24, sizeof(push24)); /* same range */
	c_fde(&dbg, dcie, 0, false, 0x1008, 0x10, push24, sizeof(push24)); /* overlaps */
	c_fde(&dbg, dcie, 0, false, 0x1020, 0x10, push, sizeof(push));     /* a gap */
	c_fde(&dbg, dcie, 0, false, 0x1a00, 0x10, push, sizeof(push));     /* a gap */
	CHECK(c_build2(&eh, &dbg, &t) == 0 && table_sane(&t), "mixed: thin .eh_frame builds",
	      "failed");
	CHECK_EQ_U64(t.fdes, 3, "mixed: .debug_frame FDEs .eh_frame covers are dropped");
	CHECK_ROW(&t, 0x1001, RSP(16), "mixed: .eh_frame wins where both describe code");
	CHECK_ROW(&t, 0x1010, INV, "mixed: a .debug_frame FDE overlapping .eh_frame is dropped");
	CHECK_ROW(&t, 0x1021, RSP(16), "mixed: .debug_frame fills a gap");
	CHECK_ROW(&t, 0x1a01, RSP(16), "mixed: ... every gap");
	unwind_table_free(&t);
	CHECK(c_build2(&thick, &dbg, &t) == 0 && table_sane(&t), "mixed: thick .eh_frame builds",
	      "failed");
	CHECK_EQ_U64(t.fdes, 1, "mixed: .debug_frame unread when .eh_frame covers half the code");
	CHECK_ROW(&t, 0x1a01, INV, "mixed: ... so its gaps stay INVALID");
	unwind_table_free(&t);

	/* A .debug_frame we cannot read (compressed, unknown format). */
	for (int with_eh = 0; with_eh < 2; with_eh++) {
		struct errbuf err = { "" };
		size_t len;
		uint8_t *img = c_image(with_eh ? &eh : NULL, &dbg, &len);
		Elf64_Shdr *sh = (Elf64_Shdr *)(img + ((Elf64_Ehdr *)img)->e_shoff);
		int rc;

		sh[3].sh_flags |= SHF_COMPRESSED;
		rc = unwind_build_mem(img, len, &t, &err);
		if (with_eh)
			CHECK(rc == 0 && t.fdes == 1 && t.skipped == 1,
			      "mixed: an unreadable .debug_frame leaves .eh_frame's rows",
			      "rc %d (%s), %zu FDEs, %zu skipped", rc, err.msg, t.fdes, t.skipped);
		else
			CHECK(rc < 0 && t.rows == NULL,
			      "mixed: an unreadable .debug_frame alone is an error", "rc %d", rc);
		unwind_table_free(&t);
		free(img);
	}
}

static void test_malformed(void)
{
	struct unwind_table t;
	struct errbuf err = { "" };
	size_t len;
	uint8_t *img;
	int rc;

	/* An FDE whose CIE pointer leads before the section, one into an FDE. */
	{
		struct cfi c = { 0 };
		size_t cie = c_cie(&c, "zR", -8, 0x1b, STD, sizeof(STD));
		size_t f1;

		FDE(&c, cie, 0x1000, 0x10, 0x41, 0x0e, 0x10, 0);
		f1 = c_fde(&c, 0, 0x1b, false, 0x1100, 0x10, NULL, 0);
		c_fde(&c, f1, 0x1b, false, 0x1200, 0x10, NULL, 0);
		/* Point the first 1000 bytes before the section's start. */
		{
			uint32_t bogus = (uint32_t)(f1 + 4 + 1000);

			memcpy(c.b + f1 + 4, &bogus, 4);
		}
		rc = c_build(&c, &t);
		CHECK(rc == 0 && table_sane(&t), "malformed: bad CIE pointers build", "rc %d", rc);
		CHECK_ROW(&t, 0x1001, RSP(16), "malformed: the good FDE is kept");
		CHECK_ROW(&t, 0x1100, INV, "malformed: CIE pointer before the section skipped");
		CHECK_ROW(&t, 0x1200, INV, "malformed: CIE pointer to an FDE skipped");
		CHECK_EQ_U64(t.skipped, 2, "malformed: both counted");
		unwind_table_free(&t);
	}
	/* Lengths: reserved, past the section, huge 64-bit. */
	for (int k = 0; k < 3; k++) {
		struct cfi c = { 0 };
		size_t cie = c_cie(&c, "zR", -8, 0x1b, STD, sizeof(STD));

		FDE(&c, cie, 0x1000, 0x10, 0x41, 0x0e, 0x10, 0);
		if (k == 0) {
			c_u32(&c, 0xfffffff0u);
		} else if (k == 1) {
			c_u32(&c, 0x7fffffffu);
			c_u32(&c, 0);
		} else {
			c_u32(&c, 0xffffffffu);
			c_u64(&c, UINT64_MAX - 3);
		}
		c_u64(&c, 0);
		rc = c_build(&c, &t);
		CHECK(rc == 0 && table_sane(&t) && t.skipped == 1,
		      fmt("malformed: bad length %d: entries before it kept, walk stops", k),
		      "rc %d, %zu skipped", rc, t.skipped);
		CHECK_ROW(&t, 0x1001, RSP(16), fmt("malformed: bad length %d: good FDE kept", k));
		unwind_table_free(&t);
	}
	/* A CIE whose initial instructions are broken: it and its FDEs go. */
	{
		struct cfi c = { 0 };
		static const uint8_t broken[] = { 0x0c, 0x07, 0x08, 0x3f };
		size_t cie = c_cie(&c, "zR", -8, 0x1b, broken, sizeof(broken));

		FDE(&c, cie, 0x1000, 0x10, 0);
		rc = c_build(&c, &t);
		CHECK(rc == 0 && t.n == 0 && t.skipped == 2,
		      "malformed: a CIE with a bad program is skipped with its FDEs",
		      "rc %d, %zu rows, %zu skipped", rc, t.n, t.skipped);
		unwind_table_free(&t);
	}
	/* No CFI section at all; and a section that is not ELF. */
	{
		img = c_image(NULL, NULL, &len);
		rc = unwind_build_mem(img, len, &t, &err);
		CHECK(rc == -ENOENT && t.n == 0 && t.rows == NULL,
		      "malformed: no CFI sections is -ENOENT", "rc %d", rc);
		memcpy(img, "\177ELG", 4);
		rc = unwind_build_mem(img, len, &t, &err);
		CHECK(rc < 0 && t.rows == NULL, "malformed: not ELF", "rc %d", rc);
		rc = unwind_build_mem(img, 10, &t, &err);
		CHECK(rc < 0, "malformed: 10-byte image", "rc %d", rc);
		free(img);
	}
	CHECK(unwind_find(&(struct unwind_table){ 0 }, 0x1000) == NULL,
	      "unwind_find: empty table", "found a row");
}

/* --- hostile files ----------------------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	uint64_t x = rng_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng_state = x;
}

/*
 * Random damage to .eh_frame in memory, @iters times: bytes, length fields
 * and operands.  The table must come out sane or an error come back.
 */
static void fuzz_image(const char *label, uint8_t *img, size_t len, unsigned iters)
{
	const Elf64_Shdr *eh = shdr_by_name(img, len, ".eh_frame");
	size_t ok = 0, failed = 0, insane = 0, max_rows = 0;
	uint8_t saved[32];
	size_t at[32];

	if (!eh || eh->sh_offset + eh->sh_size > len || eh->sh_size < 64) {
		T_SKIP(fmt("%s: fuzz", label), "no .eh_frame");
		return;
	}
	uint64_t off = eh->sh_offset, size = eh->sh_size;

	for (unsigned i = 0; i < iters; i++) {
		struct errbuf err = { "" };
		struct unwind_table t;
		unsigned n = 1 + (unsigned)(rng() % 8);

		for (unsigned k = 0; k < n; k++) {
			at[k] = off + rng() % size;
			saved[k] = img[at[k]];
			switch (rng() % 4) {
			case 0:
				img[at[k]] = (uint8_t)rng();
				break;
			case 1:
				img[at[k]] ^= (uint8_t)(1u << (rng() % 8));
				break;
			case 2:
				img[at[k]] = 0xff;
				break;
			default:
				img[at[k]] = (uint8_t)(0x0a + rng() % 2); /* remember/restore */
				break;
			}
		}
		if (unwind_build_mem(img, len, &t, &err) == 0) {
			ok++;
			insane += !table_sane(&t);
			if (t.n > max_rows)
				max_rows = t.n;
			for (int k = 0; k < 16; k++)
				(void)unwind_find(&t, t.base + rng() % (t.n ? 0x100000 : 1));
			unwind_table_free(&t);
		} else {
			failed++;
		}
		while (n-- > 0) /* undo in reverse: positions may repeat */
			img[at[n]] = saved[n];
	}
	CHECK(insane == 0, fmt("%s: %u damaged .eh_frame images: no crash, sane tables", label, iters),
	      "%zu insane tables", insane);
	printf("# %s: %zu built, %zu refused, at most %zu rows\n", label, ok, failed, max_rows);
}

static void test_hostile(void)
{
	char src[PATH_MAX], cut[PATH_MAX];
	struct errbuf err = { "" };
	struct unwind_table t;
	Elf64_Shdr *eh;
	uint8_t *img;
	size_t len = 0;
	int rc;

	snprintf(src, sizeof(src), "%s/fx_omit", tmp);
	snprintf(cut, sizeof(cut), "%s/cut", tmp);
	img = slurp(src, &len);
	eh = img ? (Elf64_Shdr *)shdr_by_name(img, len, ".eh_frame") : NULL;
	if (!eh) {
		T_SKIP("hostile", "no fixture");
		free(img);
		return;
	}
	/* The file cut in the middle of .eh_frame (section headers lost too). */
	rc = spit(cut, img, eh->sh_offset + eh->sh_size / 2) ? build_file(cut, &t, &err) : -1;
	CHECK(rc < 0 && t.rows == NULL, "hostile: file truncated inside .eh_frame is refused",
	      "rc %d", rc);
	/* Headers intact but .eh_frame said to run past the end of the file. */
	uint64_t size0 = eh->sh_size, off0 = eh->sh_offset;

	eh->sh_offset = len - 16;
	rc = spit(cut, img, len) ? build_file(cut, &t, &err) : -1;
	CHECK(rc < 0 && t.rows == NULL, "hostile: .eh_frame past the end of the file is refused",
	      "rc %d (%s)", rc, err.msg);
	rc = unwind_build_mem(img, len, &t, &err);
	CHECK(rc < 0 && t.rows == NULL, "hostile: ... and of a memory image", "rc %d", rc);
	eh->sh_offset = off0;
	eh->sh_size = 1ull << 40;
	rc = spit(cut, img, len) ? build_file(cut, &t, &err) : -1;
	CHECK(rc == -EFBIG, "hostile: a 1 TiB .eh_frame is refused (EFBIG)", "rc %d (%s)", rc,
	      err.msg);
	eh->sh_size = size0;
	/* Section count beyond what we let libelf allocate for. */
	{
		Elf64_Ehdr *h = (Elf64_Ehdr *)img;
		uint16_t shnum = h->e_shnum;

		h->e_shnum = 0xffff;
		rc = unwind_build_mem(img, len, &t, &err);
		CHECK(rc < 0, "hostile: section headers past the end are refused", "rc %d", rc);
		h->e_shnum = shnum;
	}
	rc = unwind_build_mem(img, len, &t, &err);
	CHECK(rc == 0 && t.n > 0, "hostile: the restored image builds again", "rc %d (%s)", rc,
	      err.msg);
	unwind_table_free(&t);
	fuzz_image("fx_omit", img, len, 20000);
	free(img);

	img = slurp("/lib/x86_64-linux-gnu/libc.so.6", &len);
	if (img)
		fuzz_image("libc", img, len, 200);
	else
		T_SKIP("libc: fuzz", "libc not readable");
	free(img);
}

int main(void)
{
	char tmpl[] = "/tmp/test_unwind.XXXXXX";

	if (!mkdtemp(tmpl)) {
		printf("not ok - test_unwind: mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	snprintf(tmp, sizeof(tmp), "%s", tmpl);
	setvbuf(stdout, NULL, _IOLBF, 0);

	test_program();
	test_state_stack();
	test_rules();
	test_encodings();
	test_overlap_and_setloc();
	test_debug_frame();
	test_mixed();
	test_malformed();
	test_fixtures();
	test_libc();
	test_index("libc", "/lib/x86_64-linux-gnu/libc.so.6");
	test_index("python3", "/usr/bin/python3.11");
	test_vdso();
	test_hostile();

	sh(fmt("rm -rf '%s'", tmp));
	return T_EXIT();
}
