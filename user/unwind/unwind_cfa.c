// SPDX-License-Identifier: MIT
/*
 * The CFA program interpreter: one switch dispatches each instruction, its
 * operands read through the bounded cursor, and the state it leaves at
 * each location becomes a row where the part the BPF side can use changes.
 */
#include <errno.h>

#include "util/cursor.h"
#include "unwind/unwind_cfa.h"
#include "unwind/unwind_x86.h"

#define STATE_DEPTH 16 /* DW_CFA_remember_state nesting */

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
 * A CFA program as it runs.  The helpers below are inlined into
 * run_op()'s one switch, so that an instruction is dispatched once.
 */
struct cfa_run {
	struct cur *c;            /* apart, since read_addr() takes it: the rest stays in registers */
	const struct unwind_cfa *x;
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
	uint64_t to = r->x->read_addr(r->c, r->x->arg);

	if (r->x->fde && !r->c->bad && to < r->loc)
		r->c->bad = true; /* locations only go forward */
	else if (r->x->fde)
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
	int rc = emit_row(rows, r->loc, r->st, r->x->signal);

	if (rc)
		return rc;
	if (__builtin_mul_overflow(delta, r->x->code_align, &step) ||
	    __builtin_add_overflow(r->loc, step, &to))
		to = UINT64_MAX;
	r->loc = to;
	return 0;
}

/* -- register rules -- */

static inline void reg_rule(struct cfa_run *r, uint64_t reg, enum rule_kind k, int64_t off)
{
	unwind_x86_set_rule(r->st, r->x->ra_reg, r->x->init, reg, k, off);
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
	int64_t align = r->x->data_align, off = 0;
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
	return sf ? factor(rd_sleb(r->c), r->x->data_align) : uleb_i64(rd_uleb(r->c));
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
			 factor(uleb_i64(rd_uleb(r->c)), r->x->data_align));
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

int unwind_cfa_run(const struct unwind_cfa *x, const uint8_t *p, const uint8_t *end,
		   struct unwind_x86_state *st, struct rowbuf *rows, bool *malformed)
{
	struct unwind_x86_state stack[STATE_DEPTH];
	struct cur c = { p, end, false };
	struct cfa_run r = {
		.c = &c,
		.x = x,
		.st = st,
		.loc = x->fde ? x->start : 0,
		.stack = stack,
	};

	while (c.p < c.end && !c.bad) {
		uint64_t delta = run_op(&r, *c.p++);
		int rc;

		if (c.bad || !delta || !x->fde)
			continue; /* in a CIE, advances have nothing to advance */
		rc = advance(&r, rows, delta);
		if (rc)
			return rc;
		if (r.loc >= x->end)
			return 0; /* the rest describes code past the FDE */
	}
	if (c.bad && !x->fde)
		return -EINVAL; /* the caller counts the CIE as skipped */
	if (c.bad) {
		*malformed = true;
		return emit_row(rows, r.loc, &unwind_x86_initial_state, false);
	}
	return x->fde ? emit_row(rows, r.loc, st, x->signal) : 0;
}
