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
#include "unwind/unwind_cfi.h"
#include "unwind/unwind_x86.h"

/* Bounds on what an object may make us allocate. */
#define FDES_MAX (16u << 20)
#define CIES_MAX (1u << 20)
#define STATE_DEPTH 16             /* DW_CFA_remember_state nesting */
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

/* Call frame instructions (DW_CFA_*) that are not in the top two bits. */
enum {
	CFA_nop = 0x00,
	CFA_set_loc = 0x01,
	CFA_advance_loc1 = 0x02,
	CFA_advance_loc2 = 0x03,
	CFA_advance_loc4 = 0x04,
	CFA_offset_extended = 0x05,
	CFA_restore_extended = 0x06,
	CFA_undefined = 0x07,
	CFA_same_value = 0x08,
	CFA_register = 0x09,
	CFA_remember_state = 0x0a,
	CFA_restore_state = 0x0b,
	CFA_def_cfa = 0x0c,
	CFA_def_cfa_register = 0x0d,
	CFA_def_cfa_offset = 0x0e,
	CFA_def_cfa_expression = 0x0f,
	CFA_expression = 0x10,
	CFA_offset_extended_sf = 0x11,
	CFA_def_cfa_sf = 0x12,
	CFA_def_cfa_offset_sf = 0x13,
	CFA_val_offset = 0x14,
	CFA_val_offset_sf = 0x15,
	CFA_val_expression = 0x16,
	CFA_MIPS_advance_loc8 = 0x1d,
	CFA_GNU_args_size = 0x2e,
	CFA_GNU_negative_offset_extended = 0x2f,
};

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

/* a * b, saturated to INT64_MAX: a value no range check will accept. */
static inline int64_t factor(int64_t a, int64_t b)
{
	int64_t r;

	return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

static inline int64_t uleb_i64(uint64_t v)
{
	return v > INT64_MAX ? INT64_MAX : (int64_t)v;
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

/* ---- the CFA program --------------------------------------------------- */

/*
 * A CFA program as it runs.  The helpers below are inlined into
 * run_op()'s one switch, so that an instruction is dispatched once.
 */
struct cfa_run {
	struct cur *c;            /* apart, since rd_ptr() takes it: the rest stays in registers */
	const struct cie *ci;
	const struct fde *f;      /* NULL: a CIE's initial instructions */
	const struct cfisec *s;
	const struct unwind_x86_state *init; /* what DW_CFA_restore goes back to */
	struct unwind_x86_state *st;
	uint64_t loc;             /* where the state begins to hold */
	unsigned depth;           /* states remembered in @stack */
	struct unwind_x86_state *stack;      /* STATE_DEPTH of them */
};

/* The one place a state becomes a row. */
static inline int emit_row(struct rowbuf *rows, uint64_t loc, const struct unwind_x86_state *st,
			   bool signal)
{
	return rows_emit(rows, loc, unwind_x86_make_rule(st, signal));
}

/* -- advancing the location -- */

/* DW_CFA_set_loc: code alignment units to the new location (0: none, or unknown). */
static inline uint64_t op_set_loc(struct cfa_run *r)
{
	uint64_t to = rd_ptr(r->c, r->ci->fde_enc, r->s, r->ci->addr_size);

	if (r->f && !r->c->bad && to < r->loc)
		r->c->bad = true; /* locations only go forward */
	else if (r->f)
		return to - r->loc;
	return 0;
}

/*
 * The state holds from the location up to @delta code alignment units on:
 * its row, then the new location (saturated: past any FDE's end).
 */
static inline int advance(struct cfa_run *r, struct rowbuf *rows, uint64_t delta)
{
	uint64_t step, to;
	int rc = emit_row(rows, r->loc, r->st, r->ci->signal);

	if (rc)
		return rc;
	if (__builtin_mul_overflow(delta, r->ci->code_align, &step) ||
	    __builtin_add_overflow(r->loc, step, &to))
		to = UINT64_MAX;
	r->loc = to;
	return 0;
}

/* -- register rules -- */

static inline void reg_rule(struct cfa_run *r, uint64_t reg, enum rule_kind k, int64_t off)
{
	unwind_x86_set_rule(r->st, r->ci->ra_reg, r->init, reg, k, off);
}

/* What follows the register of an extended register rule. */
enum reg_operand {
	OPND_NONE,
	OPND_ULEB,     /* a factored offset */
	OPND_SLEB,     /* likewise, signed */
	OPND_NEG_ULEB, /* likewise, negated */
	OPND_SKIP,     /* a number that does not matter */
	OPND_BLOCK,    /* a block that does not matter */
};

/* The extended register rules: what each says of its register, and how its operand is read. */
static const struct {
	uint8_t kind; /* enum rule_kind */
	uint8_t how;  /* enum reg_operand */
} reg_ops[] = {
	[CFA_offset_extended] = { RK_OFFSET, OPND_ULEB },
	[CFA_offset_extended_sf] = { RK_OFFSET, OPND_SLEB },
	[CFA_GNU_negative_offset_extended] = { RK_OFFSET, OPND_NEG_ULEB },
	[CFA_restore_extended] = { RK_RESTORE, OPND_NONE },
	[CFA_undefined] = { RK_UNDEF, OPND_NONE },
	[CFA_same_value] = { RK_SAME, OPND_NONE },
	[CFA_register] = { RK_OTHER, OPND_SKIP },
	/* the caller's value is CFA+N itself: not a saved slot */
	[CFA_val_offset] = { RK_OTHER, OPND_SKIP },
	[CFA_val_offset_sf] = { RK_OTHER, OPND_SKIP },
	[CFA_expression] = { RK_OTHER, OPND_BLOCK },
	[CFA_val_expression] = { RK_OTHER, OPND_BLOCK },
};

/* An extended register rule (one of reg_ops): a ULEB128 register, then its operand. */
static inline void op_reg(struct cfa_run *r, uint8_t op)
{
	struct cur *c = r->c;
	int64_t align = r->ci->data_align, off = 0;
	uint64_t reg = rd_uleb(c), len;

	switch (reg_ops[op].how) {
	case OPND_NONE:
		break;
	case OPND_ULEB:
		off = factor(uleb_i64(rd_uleb(c)), align);
		break;
	case OPND_SLEB:
		off = factor(rd_sleb(c), align);
		break;
	case OPND_NEG_ULEB:
		off = factor(-uleb_i64(rd_uleb(c)), align);
		break;
	case OPND_SKIP:
		(void)rd_uleb(c);
		break;
	case OPND_BLOCK:
		if (!rd_block(c, &len))
			return;
		break;
	}
	reg_rule(r, reg, reg_ops[op].kind, off);
}

/* -- CFA rules -- */

/* A CFA offset operand: a ULEB128, or with @sf a factored SLEB128. */
static inline int64_t cfa_offset(struct cfa_run *r, bool sf)
{
	return sf ? factor(rd_sleb(r->c), r->ci->data_align) : uleb_i64(rd_uleb(r->c));
}

/* DW_CFA_def_cfa(_sf): a register plus an offset. */
static inline void op_def_cfa(struct cfa_run *r, bool sf)
{
	r->st->cfa_reg = rd_uleb(r->c);
	r->st->cfa_off = cfa_offset(r, sf);
	r->st->cfa = CFA_REG;
}

/* A CFA rule given in parts is valid only as register+offset (DWARF 5 6.4.2.2). */
static inline void cfa_part_set(struct unwind_x86_state *st)
{
	if (st->cfa != CFA_REG)
		st->cfa = CFA_OTHER;
}

static inline void op_def_cfa_register(struct cfa_run *r)
{
	r->st->cfa_reg = rd_uleb(r->c);
	cfa_part_set(r->st);
}

static inline void op_def_cfa_offset(struct cfa_run *r, bool sf)
{
	r->st->cfa_off = cfa_offset(r, sf);
	cfa_part_set(r->st);
}

static inline void op_def_cfa_expression(struct cfa_run *r)
{
	uint64_t len;
	const uint8_t *blk = rd_block(r->c, &len);

	if (blk)
		unwind_x86_def_cfa_expression(r->st, blk, len);
}

/* -- remembered states -- */

/* The CFA is saved too, as GCC's and binutils' readers do. */
static inline void op_remember_state(struct cfa_run *r)
{
	if (r->depth == STATE_DEPTH)
		r->c->bad = true;
	else
		r->stack[r->depth++] = *r->st;
}

static inline void op_restore_state(struct cfa_run *r)
{
	if (r->depth == 0)
		r->c->bad = true;
	else
		*r->st = r->stack[--r->depth];
}

/*
 * Runs the instruction @op, its operands read: how many code alignment
 * units it advances the location by (0: none).  An unknown one makes the
 * cursor bad, since its operands cannot be skipped.
 */
static inline uint64_t run_op(struct cfa_run *r, uint8_t op)
{
	switch (op >> 6) {
	case 1: /* DW_CFA_advance_loc */
		return op & 0x3f;
	case 2: /* DW_CFA_offset */
		reg_rule(r, op & 0x3f, RK_OFFSET,
			 factor(uleb_i64(rd_uleb(r->c)), r->ci->data_align));
		return 0;
	case 3: /* DW_CFA_restore */
		reg_rule(r, op & 0x3f, RK_RESTORE, 0);
		return 0;
	}
	switch (op) {
	case CFA_nop:
		return 0;
	case CFA_set_loc:
		return op_set_loc(r);
	case CFA_advance_loc1:
		return rd_u8(r->c);
	case CFA_advance_loc2:
		return rd_u16(r->c);
	case CFA_advance_loc4:
		return rd_u32(r->c);
	case CFA_MIPS_advance_loc8:
		return rd_u64(r->c);
	case CFA_offset_extended:
	case CFA_offset_extended_sf:
	case CFA_GNU_negative_offset_extended:
	case CFA_restore_extended:
	case CFA_undefined:
	case CFA_same_value:
	case CFA_register:
	case CFA_val_offset:
	case CFA_val_offset_sf:
	case CFA_expression:
	case CFA_val_expression:
		op_reg(r, op);
		return 0;
	case CFA_def_cfa:
		op_def_cfa(r, false);
		return 0;
	case CFA_def_cfa_sf:
		op_def_cfa(r, true);
		return 0;
	case CFA_def_cfa_register:
		op_def_cfa_register(r);
		return 0;
	case CFA_def_cfa_offset:
		op_def_cfa_offset(r, false);
		return 0;
	case CFA_def_cfa_offset_sf:
		op_def_cfa_offset(r, true);
		return 0;
	case CFA_def_cfa_expression:
		op_def_cfa_expression(r);
		return 0;
	case CFA_remember_state:
		op_remember_state(r);
		return 0;
	case CFA_restore_state:
		op_restore_state(r);
		return 0;
	case CFA_GNU_args_size:
		(void)rd_uleb(r->c);
		return 0;
	default:
		r->c->bad = true;
		return 0;
	}
}

/*
 * Runs the CFA instructions [p, end).  With @f NULL they are a CIE's
 * initial instructions: there are no locations and nothing is emitted, and
 * -EINVAL says they are malformed.  With an FDE, a row is emitted for each
 * location the state holds at; a malformed or unknown instruction makes
 * the rest of the FDE INVALID (its operand length is unknown, so nothing
 * after it can be decoded).  Returns < 0 only for fatal errors then.
 */
static int run_cfa(struct cfi *b, struct rowbuf *rows, const struct cie *ci,
		   const struct fde *f, struct unwind_x86_state *st, const struct cfisec *s,
		   const uint8_t *p, const uint8_t *end)
{
	struct unwind_x86_state stack[STATE_DEPTH];
	struct cur c = { p, end, false };
	struct cfa_run r = {
		.c = &c,
		.ci = ci,
		.f = f,
		.s = s,
		.init = f ? &ci->init : &unwind_x86_initial_state,
		.st = st,
		.loc = f ? f->start : 0,
		.stack = stack,
	};

	while (c.p < c.end && !c.bad) {
		uint64_t delta = run_op(&r, *c.p++);
		int rc;

		if (c.bad || !delta || !f)
			continue; /* in a CIE, advances have nothing to advance */
		rc = advance(&r, rows, delta);
		if (rc)
			return rc;
		if (r.loc >= fde_end(f))
			return 0; /* the rest describes code past the FDE */
	}
	if (c.bad && !f)
		return -EINVAL; /* the caller counts the CIE as skipped */
	if (c.bad) {
		b->skipped++;
		return emit_row(rows, r.loc, &unwind_x86_initial_state, false);
	}
	return f ? emit_row(rows, r.loc, st, ci->signal) : 0;
}

/* ---- collecting CIEs and FDEs ----------------------------------------- */

static bool parse_cie(const struct cfisec *s, const struct entry *e, struct cie *ci)
{
	struct cur c = { e->body, e->end, false };
	const char *aug;
	size_t auglen;
	uint8_t ver;

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
	return run_cfa(NULL, NULL, ci, NULL, &ci->init, s, c.p, c.end) == 0;
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
		rc = run_cfa(b, rows, ci, f, &st, &view, view.p, view.p + view.len);
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
