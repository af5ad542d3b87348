// SPDX-License-Identifier: MIT
#include <string.h>

#include "util/cursor.h"
#include "unwind/unwind_x86.h"

/* DWARF expression opcodes of the PLT CFA expression. */
#define OP_and 0x1a
#define OP_plus 0x22
#define OP_shl 0x24
#define OP_ge 0x2a
#define OP_lit0 0x30
#define OP_breg0 0x70

const struct unwind_x86_state unwind_x86_initial_state = { .cfa = CFA_UNDEF };

void unwind_x86_set_rule(struct unwind_x86_state *st, uint64_t ra_reg,
			 const struct unwind_x86_state *init, uint64_t reg, enum rule_kind k,
			 int64_t off)
{
	if (reg == REG_RBP) {
		switch (k) {
		case RK_OFFSET:
			st->rbp = RULE_OFFSET;
			st->rbp_off = off;
			break;
		case RK_SAME:
		case RK_UNDEF: /* nothing to restore: treat as unchanged */
			st->rbp = RULE_SAME;
			break;
		case RK_OTHER:
			st->rbp = RULE_OTHER;
			break;
		case RK_RESTORE:
			st->rbp = init->rbp;
			st->rbp_off = init->rbp_off;
			break;
		}
	}
	if (reg == ra_reg) {
		switch (k) {
		case RK_OFFSET:
			/* The BPF side always reads the return address at CFA-8. */
			st->ra = off == -8 ? RA_CFA8 : RA_OTHER;
			break;
		case RK_UNDEF:
			st->ra = RA_UNDEF;
			break;
		case RK_SAME:
		case RK_OTHER:
			st->ra = RA_OTHER;
			break;
		case RK_RESTORE:
			st->ra = init->ra;
			break;
		}
	}
}

/*
 * The standard x86-64 PLT CFA expression (binutils' lazy .plt entries):
 *   DW_OP_breg7 8; DW_OP_breg16 0; DW_OP_lit15; DW_OP_and; DW_OP_lit<N>;
 *   DW_OP_ge; DW_OP_lit3; DW_OP_shl; DW_OP_plus
 * i.e. rsp + 8, plus 8 once the stub has pushed its relocation index.
 * Returns N, or -1 for any other expression.
 */
static int match_plt(const uint8_t *p, uint64_t len)
{
	static const uint8_t tail[] = { OP_ge, OP_lit0 + 3, OP_shl, OP_plus };
	struct cur c = { p, p + len, false };
	int n;

	if (rd_u8(&c) != OP_breg0 + REG_RSP || rd_sleb(&c) != 8 ||
	    rd_u8(&c) != OP_breg0 + 16 || rd_sleb(&c) != 0 ||
	    rd_u8(&c) != OP_lit0 + 15 || rd_u8(&c) != OP_and)
		return -1;
	n = rd_u8(&c) - OP_lit0;
	if (c.bad || (n != 10 && n != 11) || (size_t)(c.end - c.p) != sizeof(tail) ||
	    memcmp(c.p, tail, sizeof(tail)))
		return -1;
	return n;
}

void unwind_x86_def_cfa_expression(struct unwind_x86_state *st, const uint8_t *expr, uint64_t len)
{
	int n = match_plt(expr, len);

	st->cfa = n < 0 ? CFA_OTHER : CFA_PLT;
	st->plt = n < 0 ? 0 : (uint8_t)n;
}

/*
 * Row conventions the BPF side may rely on:
 *  - INVALID, STOP and SIGNAL rows carry cfa_off 0, rbp SAME, rbp_off 0,
 *    so that equal rows merge whatever the CFA program said around them;
 *  - a return address saved anywhere but CFA-8 (offset rule other than -8,
 *    register, expression) makes the row INVALID: the BPF side always
 *    reads it at CFA-8.  An RA column never mentioned is taken as CFA-8.
 */
struct cprof_unwind_rule unwind_x86_make_rule(const struct unwind_x86_state *st, bool signal)
{
	struct cprof_unwind_rule r = { 0 };
	unsigned cfa = CPROF_CFA_INVALID, rbp = CPROF_RBP_SAME;

	if (signal) {
		cfa = CPROF_CFA_SIGNAL;
	} else if (st->ra == RA_UNDEF) {
		cfa = CPROF_CFA_STOP;
	} else if (st->ra != RA_CFA8) {
		cfa = CPROF_CFA_INVALID;
	} else if (st->cfa == CFA_PLT) {
		cfa = CPROF_CFA_PLT;
		r.cfa_off = st->plt;
	} else if (st->cfa == CFA_REG && (st->cfa_reg == REG_RSP || st->cfa_reg == REG_RBP) &&
		   st->cfa_off >= INT32_MIN && st->cfa_off <= INT32_MAX) {
		cfa = st->cfa_reg == REG_RSP ? CPROF_CFA_RSP : CPROF_CFA_RBP;
		r.cfa_off = (int32_t)st->cfa_off;
		if (st->rbp == RULE_OFFSET) {
			if (st->rbp_off % 8 == 0 && st->rbp_off / 8 >= INT8_MIN &&
			    st->rbp_off / 8 <= INT8_MAX) {
				rbp = CPROF_RBP_OFFSET;
				r.rbp_off = (int8_t)(st->rbp_off / 8);
			} else {
				rbp = CPROF_RBP_INVALID;
			}
		} else if (st->rbp == RULE_OTHER) {
			rbp = CPROF_RBP_INVALID;
		}
	}
	r.rules = CPROF_ROW_RULES(cfa, rbp);
	return r;
}
