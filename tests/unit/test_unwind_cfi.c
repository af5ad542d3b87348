// SPDX-License-Identifier: MIT
/*
 * Tests for unwind: CFI assembled by hand in a minimal ELF image, one
 * construct at a time (tests/cfiasm.h): CFA programs, register rules,
 * pointer encodings, overlapping FDEs, .debug_frame and .eh_frame
 * together, malformed entries.  Rows are looked up as the BPF unwinder
 * looks them up (tests/unwindcheck.h).
 */
#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfiasm.h"
#include "testlib.h"
#include "testutil.h"
#include "unwindcheck.h"

#define INV CPROF_CFA_INVALID, 0, CPROF_RBP_SAME, 0
#define RSP(n) CPROF_CFA_RSP, n, CPROF_RBP_SAME, 0
#define RSP_R(n, r) CPROF_CFA_RSP, n, CPROF_RBP_OFFSET, r
#define RSP_RX(n) CPROF_CFA_RSP, n, CPROF_RBP_INVALID, 0
#define RBP_R(n, r) CPROF_CFA_RBP, n, CPROF_RBP_OFFSET, r
#define STOP CPROF_CFA_STOP, 0, CPROF_RBP_SAME, 0

static void test_program(void)
{
	struct cfiasm c = { 0 };
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
	CHECK(row_at(&t, 0xfff) == NULL, "cfi: nothing below base", "found a row");
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
	struct cfiasm c = { 0 };
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
	struct cfiasm c = { 0 };
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
	CHECK_ROW(&t, 0x1201, RSP(40000), "cfi: a CFA offset beyond s16 is kept (s32)");
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
	struct cfiasm c = { 0 };
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
	struct cfiasm c = { 0 };
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
	struct cfiasm c = { .debug = true };
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
	struct cfiasm eh = { 0 }, thick = { 0 }, dbg = { .debug = true };
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
		rc = build_mem(img, len, &t, &err);
		if (with_eh)
			CHECK(rc == 0 && t.fdes == 1 && t.skipped == 1,
			      "mixed: an unreadable .debug_frame leaves .eh_frame's rows",
			      "rc %d (%s), %zu FDEs, %zu skipped", rc, err.msg, t.fdes, t.skipped);
		else
			CHECK(rc < 0 && t.pcs == NULL,
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
		struct cfiasm c = { 0 };
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
		struct cfiasm c = { 0 };
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
		struct cfiasm c = { 0 };
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
		rc = build_mem(img, len, &t, &err);
		CHECK(rc == -ENOENT && t.n == 0 && t.pcs == NULL,
		      "malformed: no CFI sections is -ENOENT", "rc %d", rc);
		memcpy(img, "\177ELG", 4);
		rc = build_mem(img, len, &t, &err);
		CHECK(rc < 0 && t.pcs == NULL, "malformed: not ELF", "rc %d", rc);
		rc = build_mem(img, 10, &t, &err);
		CHECK(rc < 0, "malformed: 10-byte image", "rc %d", rc);
		free(img);
	}
	CHECK(row_at(&(struct unwind_table){ 0 }, 0x1000) == NULL,
	      "lookup: empty table", "found a row");
}

/* The table of @c's image with its ELF entry point at @entry. */
static int build_entry(const struct cfiasm *c, uint64_t entry, struct unwind_table *t)
{
	struct errbuf err = { "" };
	size_t len;
	uint8_t *img = c_image(c, NULL, &len);
	int rc;

	((Elf64_Ehdr *)img)->e_entry = entry;
	rc = build_mem(img, len, t, &err);
	if (rc)
		printf("# unwind_build_mem: %d (%s)\n", rc, err.msg);
	free(img);
	return rc;
}

/*
 * An entry point no FDE describes (ld.so's _start) is the outermost
 * frame: a STOP row from it to the next FDE, at most 256 bytes; one an
 * FDE describes keeps that FDE's rows.
 */
static void test_entry_stop(void)
{
	struct cfiasm c = { 0 };
	struct unwind_table t;
	size_t cie = c_cie(&c, "zR", -8, 0x1b, STD, sizeof(STD));

	FDE(&c, cie, 0x1000, 0x20, 0x44, 0x0e, 0x10, 0);
	FDE(&c, cie, 0x1060, 0x10, 0);
	FDE(&c, cie, 0x1800, 0x10, 0);

	CHECK(build_entry(&c, 0x1030, &t) == 0 && table_sane(&t), "entry: a table with a stop row",
	      "failed");
	CHECK_ROW(&t, 0x102f, INV, "entry: the gap before the entry is INVALID");
	CHECK_ROW(&t, 0x1030, STOP, "entry: STOP at the entry point");
	CHECK_ROW(&t, 0x105f, STOP, "entry: STOP up to the next FDE");
	CHECK_ROW(&t, 0x1060, RSP(8), "entry: the next FDE's rows after it");
	CHECK_ROW(&t, 0x1004, RSP(16), "entry: the FDE before it unchanged");
	unwind_table_free(&t);

	CHECK(build_entry(&c, 0x1100, &t) == 0 && table_sane(&t), "entry: far from the next FDE",
	      "failed");
	CHECK_ROW(&t, 0x11ff, STOP, "entry: STOP for 256 bytes");
	CHECK_ROW(&t, 0x1200, INV, "entry: INVALID past 256 bytes");
	CHECK_ROW(&t, 0x1800, RSP(8), "entry: the FDE after it unchanged");
	unwind_table_free(&t);

	CHECK(build_entry(&c, 0x1008, &t) == 0, "entry: in an FDE", "failed");
	CHECK_ROW(&t, 0x1008, RSP(16), "entry: an FDE that covers the entry keeps its rule");
	unwind_table_free(&t);

	CHECK(build_entry(&c, 0x1fff, &t) == 0, "entry: at the end of .text", "failed");
	CHECK_ROW(&t, 0x1fff, STOP, "entry: STOP at the last byte of .text");
	unwind_table_free(&t);

	CHECK(build_entry(&c, 0x800, &t) == 0, "entry: below .text", "failed");
	CHECK_EQ_U64(t.base, 0x1000, "entry: outside code adds nothing");
	unwind_table_free(&t);

	/* Below the first FDE: the table's base moves down to it. */
	c = (struct cfiasm){ 0 };
	cie = c_cie(&c, "zR", -8, 0x1b, STD, sizeof(STD));
	FDE(&c, cie, 0x1100, 0x10, 0);
	CHECK(build_entry(&c, 0x1000, &t) == 0 && table_sane(&t), "entry: below every FDE",
	      "failed");
	CHECK_EQ_U64(t.base, 0x1000, "entry: the base is the entry below every FDE");
	CHECK_ROW(&t, 0x10ff, STOP, "entry: STOP up to the first FDE");
	CHECK_ROW(&t, 0x1100, RSP(8), "entry: the first FDE's rows");
	CHECK_ROW(&t, 0x1110, INV, "entry: INVALID after it");
	unwind_table_free(&t);

	/* Past the last FDE. */
	c = (struct cfiasm){ 0 };
	cie = c_cie(&c, "zR", -8, 0x1b, STD, sizeof(STD));
	FDE(&c, cie, 0x1000, 0x10, 0);
	CHECK(build_entry(&c, 0x1020, &t) == 0 && table_sane(&t), "entry: after every FDE",
	      "failed");
	CHECK_ROW(&t, 0x1010, INV, "entry: the gap before it INVALID");
	CHECK_ROW(&t, 0x111f, STOP, "entry: STOP after the last FDE");
	CHECK_ROW(&t, 0x1120, INV, "entry: INVALID 256 bytes on");
	unwind_table_free(&t);

	/* No FDE at all: no table (frame pointers), not a table of one STOP row. */
	c = (struct cfiasm){ 0 };
	c_cie(&c, "zR", -8, 0x1b, STD, sizeof(STD));
	CHECK(build_entry(&c, 0x1000, &t) == 0 && t.n == 0, "entry: no FDEs, no rows",
	      "%zu rows", t.n);
	unwind_table_free(&t);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	T_PLAN(177);
	test_program();
	test_state_stack();
	test_rules();
	test_encodings();
	test_overlap_and_setloc();
	test_debug_frame();
	test_mixed();
	test_malformed();
	test_entry_stop();
	return T_EXIT();
}
