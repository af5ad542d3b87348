/* SPDX-License-Identifier: MIT */
/*
 * unwind_cfa: a DWARF CFA program (DW_CFA_* instructions) run into rows.
 *
 * The instructions come from files any process can hand us: every operand
 * is read through a bounded cursor, and an instruction that is unknown or
 * malformed ends the program (its operands' length is unknown, so nothing
 * after it can be decoded).  unwind_cfi parses the CIEs and FDEs that hold
 * the programs and says what each runs with.
 */
#ifndef CPROF_UNWIND_CFA_H
#define CPROF_UNWIND_CFA_H

#include <stdbool.h>
#include <stdint.h>

#include "util/cursor.h"
#include "unwind/rows.h"
#include "unwind/unwind_x86.h"

/* What a program runs with: its CIE's factors and rules, its FDE's range. */
struct unwind_cfa {
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;
	bool signal; /* a signal trampoline's frame ('S') */
	/* what DW_CFA_restore goes back to: in an FDE the CIE's state after its
	 * initial instructions, in those instructions the initial state */
	const struct unwind_x86_state *init;
	/* the FDE's pc range; @fde false: a CIE's initial instructions (no locations) */
	bool fde;
	uint64_t start, end;
	/* DW_CFA_set_loc's operand, read as the CIE encodes addresses */
	uint64_t (*read_addr)(struct cur *c, const void *arg);
	const void *arg;
};

/*
 * Runs the instructions [p, end) on @st.  For a CIE's initial
 * instructions nothing is emitted, and -EINVAL says they are malformed.
 * For an FDE a row is emitted for each location the state holds at, the
 * last at the end of the instructions or of the range; a malformed or
 * unknown instruction makes the rest of the range INVALID and sets
 * @*malformed.  Returns < 0 then only for want of room in @rows.
 */
int unwind_cfa_run(const struct unwind_cfa *x, const uint8_t *p, const uint8_t *end,
		   struct unwind_x86_state *st, struct rowbuf *rows, bool *malformed);

#endif
