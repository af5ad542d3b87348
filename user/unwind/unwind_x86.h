/* SPDX-License-Identifier: MIT */
/*
 * unwind_x86: the x86-64 half of CFI: which registers the BPF unwinder
 * can use, the state a CFA program leaves for them, and the row
 * (struct cprof_unwind_rule in bpf/cprof.h) that state becomes.
 *
 * Only what an x86-64 unwinder needs is kept: how to compute the CFA (from
 * rsp or rbp plus an offset, or the PLT and signal-frame special cases),
 * where the caller's rbp was saved, and where the outermost frame is.  The
 * return address is always at CFA - 8 on x86-64.  Rules for every other
 * register are decoded by unwind_cfi.c and dropped here.
 */
#ifndef CPROF_UNWIND_X86_H
#define CPROF_UNWIND_X86_H

#include <stdbool.h>
#include <stdint.h>

#include "cprof.h"

/* x86-64 DWARF register numbers. */
#define REG_RBP 6
#define REG_RSP 7

/* How the CFA is found. */
enum { CFA_UNDEF, CFA_REG, CFA_PLT, CFA_OTHER };
/* Where the caller's rbp is. */
enum { RULE_SAME, RULE_OFFSET, RULE_OTHER };
/* Where the return address is. */
enum { RA_CFA8, RA_UNDEF, RA_OTHER };

/*
 * The part of a CFA row the BPF side can use.  Everything else a CFA
 * program says (other registers) is parsed and dropped.
 */
struct unwind_x86_state {
	int64_t cfa_off; /* bytes; saturated when out of any sane range */
	int64_t rbp_off; /* bytes from the CFA, for RULE_OFFSET */
	uint64_t cfa_reg;
	uint8_t cfa;     /* CFA_* */
	uint8_t plt;     /* CFA_PLT: the (rip & 15) threshold */
	uint8_t rbp;     /* RULE_* */
	uint8_t ra;      /* RA_*: where the return address is */
};

/*
 * Before any instruction: no CFA, rbp untouched, return address where the
 * x86-64 psABI puts it (every real CIE says so explicitly anyway).  Its
 * row is INVALID.
 */
extern const struct unwind_x86_state unwind_x86_initial_state;

/* What a CFA instruction says about one register. */
enum rule_kind { RK_OFFSET, RK_SAME, RK_UNDEF, RK_OTHER, RK_RESTORE };

/*
 * Register @reg's rule changed to @k (@off: bytes from the CFA, for
 * RK_OFFSET; RK_RESTORE goes back to @init's).  Only rbp and @ra_reg, the
 * return address column, matter.
 */
void unwind_x86_set_rule(struct unwind_x86_state *st, uint64_t ra_reg,
			 const struct unwind_x86_state *init, uint64_t reg, enum rule_kind k,
			 int64_t off);

/*
 * A DW_CFA_def_cfa_expression: the standard PLT expression becomes
 * CFA_PLT, any other CFA_OTHER.
 */
void unwind_x86_def_cfa_expression(struct unwind_x86_state *st, const uint8_t *expr, uint64_t len);

/* The rule for @st; @signal: the FDE is a signal trampoline's ('S'). */
struct cprof_unwind_rule unwind_x86_make_rule(const struct unwind_x86_state *st, bool signal);

#endif
