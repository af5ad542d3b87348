// SPDX-License-Identifier: MIT
/*
 * Two passes over a section: every CIE is parsed first (its initial
 * instructions run once), then every FDE into a small record {start, end,
 * instructions, CIE}.  cfi_run() sorts the FDEs by start and runs each
 * FDE's CFA program, emitting a row wherever the part of the unwind state
 * the BPF side can use changes, plus an INVALID row at the FDE's end.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/addrsearch.h"
#include "util/cursor.h"
#include "util/grow.h"
#include "unwind/unwind_cfa.h"
#include "unwind/unwind_cfi.h"
#include "unwind/unwind_x86.h"

/* Bounds on what an object may make us allocate. */
#define FDES_MAX (16u << 20)
#define CIES_MAX (1u << 20)
/* The code at an entry point without CFI taken as outermost: ld.so's is 61 bytes. */
#define ENTRY_STOP_MAX 256

/* Pointer encodings (DW_EH_PE_*). */
#define PE_ABSPTR 0x00
#define PE_ULEB128 0x01
#define PE_UDATA2 0x02
#define PE_UDATA4 0x03
#define PE_UDATA8 0x04
#define PE_SLEB128 0x09
#define PE_SDATA2 0x0a
#define PE_SDATA4 0x0b
#define PE_SDATA8 0x0c
#define PE_PCREL 0x10
#define PE_TEXTREL 0x20
#define PE_DATAREL 0x30
#define PE_FUNCREL 0x40
#define PE_ALIGNED 0x50
#define PE_INDIRECT 0x80
#define PE_OMIT 0xff


struct cie {
	size_t off; /* in its section: FDEs name their CIE by it */
	const struct cfisec *sec;
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;
	uint8_t fde_enc;   /* how FDE addresses are encoded */
	uint8_t addr_size; /* of DW_EH_PE_absptr */
	bool aug_z;        /* FDEs carry augmentation data (skipped) */
	bool signal;       /* 'S': a signal trampoline's frame */
	struct unwind_x86_state init; /* after the initial instructions */
};

/*
 * 24 bytes, not the 40 that pointers and a 64-bit end take: libLLVM has
 * 95k FDEs, held with its .eh_frame and its rows while they run.
 */
struct fde {
	uint64_t start;
	uint32_t len;      /* of its pc range */
	uint32_t cie : 28; /* index in cfi.cies */
	uint32_t sec : 4;  /* the cfi_collect() call it came from and */
	uint32_t insns;    /* its CFA program's offset there: a stable sort key */
	uint32_t ninsns;
};

static inline uint64_t fde_end(const struct fde *f)
{
	return f->start + f->len;
}

/*
 * Reads a pointer encoded as @enc (DW_EH_PE_*, without the indirect bit:
 * callers decide what that means).  pcrel is relative to the address of
 * the encoded value itself.
 */
static uint64_t rd_ptr(struct cur *c, uint8_t enc, const struct cfisec *s, uint8_t addr_size)
{
	uint64_t base = 0;

	switch (enc & 0x70) {
	case 0:
		break;
	case PE_PCREL:
		base = s->vaddr + (uint64_t)(c->p - s->p);
		break;
	case PE_TEXTREL:
		base = s->text;
		break;
	case PE_DATAREL:
		base = s->data;
		break;
	case PE_ALIGNED: {
		uint64_t at = s->vaddr + (uint64_t)(c->p - s->p);
		size_t pad = (size_t)((addr_size - at % addr_size) % addr_size);

		if (need(c, pad))
			c->p += pad;
		enc = PE_ABSPTR;
		break;
	}
	default: /* funcrel: meaningless where we read pointers */
		c->bad = true;
		return 0;
	}
	switch (enc & 0x0f) {
	case PE_ABSPTR:
		return base + (addr_size == 4 ? rd_u32(c) : rd_u64(c));
	case PE_ULEB128:
		return base + rd_uleb(c);
	case PE_UDATA2:
		return base + rd_u16(c);
	case PE_UDATA4:
		return base + rd_u32(c);
	case PE_UDATA8:
		return base + rd_u64(c);
	case PE_SLEB128:
		return base + (uint64_t)rd_sleb(c);
	case PE_SDATA2:
		return base + (uint64_t)(int64_t)(int16_t)rd_u16(c);
	case PE_SDATA4:
		return base + (uint64_t)(int64_t)(int32_t)rd_u32(c);
	case PE_SDATA8:
		return base + rd_u64(c);
	default:
		c->bad = true;
		return 0;
	}
}

/* One CIE or FDE, as delimited by its length field. */
struct entry {
	size_t off;            /* of the length field */
	const uint8_t *id_at;  /* CIE id, or the FDE's CIE pointer */
	const uint8_t *body;   /* what follows it */
	const uint8_t *end;
	uint64_t id;
	bool cie;
};

/*
 * Steps to the next entry from @*off.  Zero lengths (the .eh_frame
 * terminator, padding) are stepped over like readelf does.  Returns false
 * at the end, setting @*bad when a length cannot be trusted: the entries
 * after it cannot be found.
 */
static bool next_entry(const struct cfisec *s, size_t *off, struct entry *e, bool *bad)
{
	for (;;) {
		size_t rem = s->len - *off, hdr = 4, idsize = 4;
		const uint8_t *p = s->p + *off;
		uint64_t len;
		uint32_t len32;

		if (rem < 4)
			return false;
		memcpy(&len32, p, 4);
		len = len32;
		if (len == 0) {
			*off += 4;
			continue;
		}
		if (len32 == 0xffffffffu) { /* 64-bit DWARF */
			if (rem < 12) {
				*bad = true;
				return false;
			}
			memcpy(&len, p + 4, 8);
			hdr = 12;
			idsize = 8;
		} else if (len32 >= 0xfffffff0u) { /* reserved */
			*bad = true;
			return false;
		}
		if (len > rem - hdr || len < idsize) {
			*bad = true;
			return false;
		}
		e->off = *off;
		e->id_at = p + hdr;
		e->body = p + hdr + idsize;
		e->end = p + hdr + len;
		e->id = 0;
		memcpy(&e->id, e->id_at, idsize); /* little-endian host */
		if (s->debug)
			e->cie = e->id == (idsize == 4 ? 0xffffffffull : UINT64_MAX);
		else
			e->cie = e->id == 0;
		*off += hdr + (size_t)len;
		return true;
	}
}

static bool pe_supported(uint8_t enc)
{
	uint8_t app = enc & 0x70, fmt = enc & 0x0f;

	if (enc & PE_INDIRECT)
		return false; /* an FDE address to dereference: not in a file */
	if (app == PE_ALIGNED)
		return true;
	if (app > PE_DATAREL)
		return false;
	return fmt == PE_ABSPTR || fmt == PE_ULEB128 || fmt == PE_UDATA2 ||
	       fmt == PE_UDATA4 || fmt == PE_UDATA8 || fmt == PE_SLEB128 ||
	       fmt == PE_SDATA2 || fmt == PE_SDATA4 || fmt == PE_SDATA8;
}

/* ---- running CFA programs --------------------------------------------- */

/* Where a program's addresses are read from: its CIE's encoding, its section's bases. */
struct addr_source {
	const struct cie *ci;
	const struct cfisec *s;
};

static uint64_t read_addr(struct cur *c, const void *arg)
{
	const struct addr_source *a = arg;

	return rd_ptr(c, a->ci->fde_enc, a->s, a->ci->addr_size);
}

/*
 * Runs the program [p, end) of @ci's initial instructions (@f NULL) or of
 * the FDE @f, on @st: unwind_cfa_run() told what the CIE says.
 */
static int run_program(const struct cie *ci, const struct fde *f, const struct cfisec *s,
		       const uint8_t *p, const uint8_t *end, struct unwind_x86_state *st,
		       struct rowbuf *rows, bool *malformed)
{
	const struct addr_source a = { ci, s };
	const struct unwind_cfa x = {
		.code_align = ci->code_align,
		.data_align = ci->data_align,
		.ra_reg = ci->ra_reg,
		.signal = ci->signal,
		.init = f ? &ci->init : &unwind_x86_initial_state,
		.fde = f != NULL,
		.start = f ? f->start : 0,
		.end = f ? fde_end(f) : 0,
		.read_addr = read_addr,
		.arg = &a,
	};

	return unwind_cfa_run(&x, p, end, st, rows, malformed);
}

/* ---- collecting CIEs and FDEs ----------------------------------------- */

static bool parse_cie(const struct cfisec *s, const struct entry *e, struct cie *ci)
{
	struct cur c = { e->body, e->end, false };
	const char *aug;
	size_t auglen;
	uint8_t ver;
	bool malformed = false;

	memset(ci, 0, sizeof(*ci));
	ci->off = e->off;
	ci->sec = s;
	ci->addr_size = 8;
	ci->fde_enc = PE_ABSPTR;
	ver = rd_u8(&c);
	if (ver != 1 && ver != 3 && ver != 4)
		return false;
	aug = (const char *)c.p;
	auglen = strnlen(aug, (size_t)(c.end - c.p));
	if (!need(&c, auglen + 1))
		return false;
	c.p += auglen + 1;
	if (aug[0] == 'e' && aug[1] == 'h') { /* pre-'z' GCC: an EH data pointer */
		if (!need(&c, 8))
			return false;
		c.p += 8;
		aug += 2;
	}
	if (ver == 4) {
		ci->addr_size = rd_u8(&c);
		if ((ci->addr_size != 4 && ci->addr_size != 8) || rd_u8(&c) != 0)
			return false; /* segmented addresses: not on x86-64 */
	}
	ci->code_align = rd_uleb(&c);
	ci->data_align = rd_sleb(&c);
	ci->ra_reg = ver == 1 ? rd_u8(&c) : rd_uleb(&c);
	if (aug[0] == 'z') {
		uint64_t alen;
		const uint8_t *adata = rd_block(&c, &alen);
		struct cur a;
		bool known = true;

		if (!adata) /* before any arithmetic on it: NULL + n is undefined */
			return false;
		a = (struct cur){ adata, adata + alen, false };
		ci->aug_z = true;
		for (const char *q = aug + 1; *q; q++) {
			switch (*q) {
			case 'S': /* no data: recognised even after unknown letters */
				ci->signal = true;
				break;
			case 'R':
				if (known)
					ci->fde_enc = rd_u8(&a);
				break;
			case 'L': /* LSDA encoding; the LSDA is in each FDE's skipped data */
				if (known)
					(void)rd_u8(&a);
				break;
			case 'P': /* personality routine: skipped, never dereferenced */
				if (known) {
					uint8_t enc = rd_u8(&a);

					if (enc != PE_OMIT)
						(void)rd_ptr(&a, enc & 0x7f, s, ci->addr_size);
				}
				break;
			case 'B': /* AArch64 BTI, MTE: no data */
			case 'G':
				break;
			default:
				/* Its data (if any) is unknown; 'z' lets us skip the rest. */
				known = false;
				break;
			}
		}
		if (a.bad)
			return false;
	} else if (aug[0] != '\0') {
		return false; /* no 'z': unknown data follows, cannot skip it */
	}
	if (c.bad || !pe_supported(ci->fde_enc))
		return false;
	ci->init = unwind_x86_initial_state;
	return run_program(ci, NULL, s, c.p, c.end, &ci->init, NULL, &malformed) == 0;
}

/* The CIE at section offset @off among cies[lo, hi) (sorted by offset). */
static const struct cie *find_cie(const struct cfi *b, size_t lo, size_t hi, uint64_t off,
				  size_t *idx)
{
	const struct cie *ci;

	if (lo == hi)
		return NULL; /* b->cies may be NULL, not to be offset */
	ci = addrsearch_find(&b->cies[lo], hi - lo, ADDRSEARCH_KEY(struct cie, off), off);
	if (ci)
		*idx = (size_t)(ci - b->cies);
	return ci;
}

/* Records one FDE, or counts it as skipped; < 0 only when out of room. */
static int parse_fde(struct cfi *b, const struct cfisec *s, const struct entry *e,
		     size_t cie_lo, size_t cie_hi, size_t *last)
{
	const struct cie *ci = NULL;
	struct cur c = { e->body, e->end, false };
	uint64_t cie_off, start, range;
	size_t idx = 0;
	struct fde *f;
	int rc;

	if (s->debug) {
		cie_off = e->id;
	} else {
		uint64_t at = (uint64_t)(e->id_at - s->p);

		if (e->id > at) {
			b->skipped++;
			return 0;
		}
		cie_off = at - e->id;
	}
	/* FDEs mostly share one CIE: try the last one first. */
	if (*last < b->ncies && *last >= cie_lo && *last < cie_hi && b->cies[*last].off == cie_off)
		ci = &b->cies[*last], idx = *last;
	else if ((ci = find_cie(b, cie_lo, cie_hi, cie_off, &idx)))
		*last = idx;
	if (!ci) {
		b->skipped++;
		return 0;
	}
	start = rd_ptr(&c, ci->fde_enc, s, ci->addr_size);
	range = rd_ptr(&c, ci->fde_enc & 0x0f, s, ci->addr_size);
	if (ci->aug_z) {
		uint64_t alen;

		(void)rd_block(&c, &alen);
	}
	if (c.bad || start + range < start || range > UINT32_MAX) {
		b->skipped++;
		return 0;
	}
	if (range == 0)
		return 0; /* covers nothing */
	if (b->nexec && !range_contains(b->exec, b->nexec, start)) {
		/* Not code: a discarded function's FDE (address 0, or a tombstone). */
		b->skipped++;
		return 0;
	}
	if (b->nclaimed && range_overlaps(b->claimed, b->nclaimed, start, start + range))
		return 0; /* .debug_frame for code .eh_frame describes */
	rc = grow((void **)&b->fdes, &b->cap_fdes, b->nfdes, sizeof(*f), 256, FDES_MAX);
	if (rc)
		return errf(b->err, rc, "more than %u FDEs, or out of memory", FDES_MAX);
	f = &b->fdes[b->nfdes++];
	*f = (struct fde){
		.start = start,
		.len = (uint32_t)range,
		.cie = (uint32_t)idx & 0xfffffff, /* < CIES_MAX */
		.sec = b->nsecs & 0xf,
		.insns = (uint32_t)(c.p - s->p), /* sections are < SECTION_MAX */
		.ninsns = (uint32_t)(e->end - c.p),
	};
	return 0;
}

int cfi_collect(struct cfi *b, const struct cfisec *s)
{
	size_t cie_lo = b->ncies, cie_hi, off = 0, last = SIZE_MAX;
	bool bad = false;
	struct entry e;
	int rc;

	while (next_entry(s, &off, &e, &bad)) {
		if (!e.cie)
			continue;
		if (b->ncies >= CIES_MAX) {
			b->skipped++;
			continue;
		}
		if (grow((void **)&b->cies, &b->cap_cies, b->ncies, sizeof(struct cie), 16,
			 CIES_MAX))
			return errf(b->err, -ENOMEM, "out of memory for CIEs");
		if (parse_cie(s, &e, &b->cies[b->ncies]))
			b->ncies++;
		else
			b->skipped++;
	}
	if (bad)
		b->skipped++; /* an entry whose length runs past the section */
	cie_hi = b->ncies;

	off = 0;
	bad = false;
	while (next_entry(s, &off, &e, &bad)) {
		if (e.cie)
			continue;
		rc = parse_fde(b, s, &e, cie_lo, cie_hi, &last);
		if (rc)
			return rc;
	}
	b->nsecs++;
	return 0;
}

static int fde_cmp(const void *a, const void *b)
{
	const struct fde *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->sec != y->sec)
		return x->sec < y->sec ? -1 : 1;
	return x->insns < y->insns ? -1 : x->insns > y->insns;
}

static void sort_fdes(struct cfi *b)
{
	for (size_t i = 1; i < b->nfdes; i++) {
		if (fde_cmp(&b->fdes[i - 1], &b->fdes[i]) > 0) {
			qsort(b->fdes, b->nfdes, sizeof(*b->fdes), fde_cmp);
			return;
		}
	}
}

struct range *cfi_fde_ranges(const struct cfi *b, size_t *n, uint64_t *covered)
{
	struct range *r = malloc((b->nfdes ? b->nfdes : 1) * sizeof(*r));

	*n = 0;
	*covered = 0;
	if (!r)
		return NULL;
	for (size_t i = 0; i < b->nfdes; i++)
		r[i] = (struct range){ b->fdes[i].start, fde_end(&b->fdes[i]) };
	*n = range_normalize(r, b->nfdes);
	for (size_t i = 0; i < *n; i++)
		*covered += r[i].hi - r[i].lo;
	return r;
}

/*
 * The pcs [*lo, *hi) from the ELF entry point on that no FDE describes
 * (ld.so's _start has no CFI): the outermost frame, up to the next FDE
 * and at most ENTRY_STOP_MAX bytes.  false when an FDE does describe the
 * entry (the executable's _start: its CFI says so itself), or it is not
 * in code, or no FDE at all was found (an object without usable CFI is
 * left to frame pointers and counted, not made a table of one row).
 * FDEs are sorted; the last to start at or below the entry is the one
 * whose rows hold there.
 */
static bool entry_gap(const struct cfi *b, uint64_t *lo, uint64_t *hi)
{
	uint64_t e = b->entry, end;
	size_t i, x;

	if (!e || !b->nfdes || !b->nexec || !range_contains(b->exec, b->nexec, e))
		return false;
	x = range_count_le(b->exec, b->nexec, e);
	end = b->exec[x - 1].hi - e < ENTRY_STOP_MAX ? b->exec[x - 1].hi : e + ENTRY_STOP_MAX;
	for (i = 0; i < b->nfdes && b->fdes[i].start <= e; i++)
		;
	if (i > 0 && fde_end(&b->fdes[i - 1]) > e)
		return false;
	if (i < b->nfdes && b->fdes[i].start < end)
		end = b->fdes[i].start;
	*lo = e;
	*hi = end;
	return true;
}

/*
 * @f's CFA program, as a section of its own (its vaddr that of the
 * program's first byte, for pc-relative operands), from @s or read again.
 */
static bool fde_program(const struct cfisec *s, const struct fde *f, struct cfisec *view)
{
	*view = *s;
	view->p = s->p ? s->p + f->insns : secread_get(s->again, f->insns, f->ninsns);
	view->len = f->ninsns;
	view->vaddr = s->vaddr + f->insns;
	return view->p != NULL;
}

static int emit_stop(struct rowbuf *rows, uint64_t lo, uint64_t hi)
{
	static const struct cprof_unwind_rule stop = {
		.rules = CPROF_ROW_RULES(CPROF_CFA_STOP, CPROF_RBP_SAME),
	};
	int rc = rows_emit(rows, lo, stop);

	return rc ? rc : rows_emit(rows, hi, unwind_x86_make_rule(&unwind_x86_initial_state, false));
}

int cfi_run(struct cfi *b, struct rowbuf *rows)
{
	uint64_t stop_lo = 0, stop_hi = 0;
	bool stop;
	int rc;

	sort_fdes(b);
	stop = entry_gap(b, &stop_lo, &stop_hi);
	if (b->nfdes)
		rows->base = b->fdes[0].start;
	if (stop && stop_lo < rows->base)
		rows->base = stop_lo;
	for (size_t i = 0; i < b->nfdes; i++) {
		const struct fde *f = &b->fdes[i];
		const struct cie *ci = &b->cies[f->cie];
		struct unwind_x86_state st = ci->init;
		struct cfisec view;
		bool malformed = false;

		if (stop && f->start > stop_lo) {
			stop = false;
			if (rows_reach(rows, stop_hi)) {
				rc = emit_stop(rows, stop_lo, stop_hi);
				if (rc)
					return rc;
			}
		}
		if (!rows_reach(rows, fde_end(f))) {
			b->skipped++; /* too far from the rest to share a u32 pc */
			continue;
		}
		if (!fde_program(ci->sec, f, &view)) {
			b->skipped++; /* its file shrank since it was collected */
			continue;
		}
		/* A later FDE overrides what an earlier one said about its range. */
		rows_cut(rows, f->start);
		rc = run_program(ci, f, &view, view.p, view.p + view.len, &st, rows, &malformed);
		b->skipped += malformed;
		if (!rc)
			rc = rows_emit(rows, fde_end(f), unwind_x86_make_rule(&unwind_x86_initial_state, false));
		if (rc)
			return rc;
		b->used++;
	}
	if (stop && rows_reach(rows, stop_hi)) /* past the last FDE */
		return emit_stop(rows, stop_lo, stop_hi);
	return 0;
}

void cfi_free(struct cfi *b)
{
	free(b->fdes);
	free(b->cies);
	b->fdes = NULL;
	b->cies = NULL;
	b->nfdes = b->ncies = b->cap_fdes = b->cap_cies = 0;
}
