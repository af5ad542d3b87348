// SPDX-License-Identifier: MIT
/*
 * unwind: DWARF call frame information compiled into the rows the BPF
 * unwinder binary-searches (see unwind.h and struct cprof_unwind_row).
 *
 * Pipeline, one object at a time:
 *
 *  1. Section headers through libelf (headers only).  Section bytes are
 *     read with pread, every range checked against the file size, never
 *     mmapped: a file truncated under us gives an error, not a SIGBUS.  A
 *     memory image (the vDSO) is used in place, bounds-checked the same way.
 *  2. collect(): walk one CFI section (.eh_frame, or .debug_frame), parse
 *     every CIE (running its initial instructions once) and then every FDE
 *     into a small record {start, end, instructions, CIE}.  The core works
 *     on a (bytes, length, load address) buffer, whatever its origin.
 *  3. finish(): sort the FDEs by start, run each FDE's CFA program and emit
 *     a row wherever the part of the unwind state the BPF side can use
 *     changes, plus an INVALID row at the FDE's end.  Rows are appended in
 *     pc order into one array that grows by doubling: no per-row malloc.
 *
 * Overlapping FDEs (never produced by a sane toolchain): FDEs are run in
 * order of their start address and an FDE that starts inside an earlier
 * one truncates it there; past the later FDE's end the pc range is INVALID
 * (or whatever FDE starts next), never a stale rule.
 *
 * .debug_frame is read only when .eh_frame is absent or covers less than
 * half of the executable sections' bytes; its FDEs then only fill the gaps
 * that .eh_frame leaves (an .eh_frame FDE always wins).
 *
 * Row conventions the BPF side may rely on:
 *  - INVALID, STOP and SIGNAL rows carry cfa_off 0, rbp SAME, rbp_off 0,
 *    so that equal rows merge whatever the CFA program said around them;
 *  - a return address saved anywhere but CFA-8 (offset rule other than -8,
 *    register, expression) makes the row INVALID: the BPF side always
 *    reads it at CFA-8.  An RA column never mentioned is taken as CFA-8;
 *  - FDEs outside executable sections (discarded functions at 0, or
 *    tombstones) are skipped, and counted.
 * DWARF64 entries (length 0xffffffff) have 8-byte CIE ids/pointers in
 * .eh_frame too, as binutils and gdb read them.  Returns -ENOENT when the
 * object has neither section; malformed content is skipped and counted in
 * unwind_table.skipped, never an error.
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "unwind.h"

/* Bounds on what an object may make us allocate. */
#define SECTION_MAX (512ull << 20) /* bytes of one CFI section, after inflating */
#define SHSTRTAB_MAX (16ull << 20) /* section name table libelf may read */
#define SECTIONS_MAX 65536u        /* section headers libelf may load */
#define ROWS_MAX (16u << 20)       /* rows of one table (128 MiB) */
#define FDES_MAX (16u << 20)
#define CIES_MAX (1u << 20)
#define STATE_DEPTH 16             /* DW_CFA_remember_state nesting */

/* x86-64 DWARF register numbers. */
#define REG_RBP 6
#define REG_RSP 7

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

/* DWARF expression opcodes of the PLT CFA expression. */
#define OP_and 0x1a
#define OP_plus 0x22
#define OP_shl 0x24
#define OP_ge 0x2a
#define OP_lit0 0x30
#define OP_breg0 0x70

/* ---- byte cursor ------------------------------------------------------- */

/* Reads never pass @end; running out (or an undecodable value) sets @bad. */
struct cur {
	const uint8_t *p, *end;
	bool bad;
};

static inline bool need(struct cur *c, size_t n)
{
	if ((size_t)(c->end - c->p) >= n)
		return true;
	c->bad = true;
	c->p = c->end;
	return false;
}

static inline uint8_t rd_u8(struct cur *c)
{
	return need(c, 1) ? *c->p++ : 0;
}

#define RD_FIXED(name, type)                                                  \
	static inline type name(struct cur *c)                                \
	{                                                                     \
		type v = 0;                                                   \
		if (need(c, sizeof(v))) {                                     \
			memcpy(&v, c->p, sizeof(v));                          \
			c->p += sizeof(v);                                    \
		}                                                             \
		return v;                                                     \
	}
RD_FIXED(rd_u16, uint16_t)
RD_FIXED(rd_u32, uint32_t)
RD_FIXED(rd_u64, uint64_t)

/*
 * LEB128, unsigned or sign-extended: bits past the 64th are dropped, the
 * bytes still consumed.
 */
static inline uint64_t rd_leb(struct cur *c, bool sign)
{
	uint64_t v = 0;
	unsigned shift = 0;

	while (c->p < c->end) {
		uint8_t b = *c->p++;

		if (shift < 64) {
			v |= (uint64_t)(b & 0x7f) << shift;
			shift += 7;
		}
		if (!(b & 0x80)) {
			if (sign && shift < 64 && (b & 0x40))
				v |= ~0ull << shift;
			return v;
		}
	}
	c->bad = true;
	return 0;
}

static inline uint64_t rd_uleb(struct cur *c)
{
	return rd_leb(c, false);
}

static inline int64_t rd_sleb(struct cur *c)
{
	return (int64_t)rd_leb(c, true);
}

/* Skips a ULEB128-sized block and returns where it starts. */
static const uint8_t *rd_block(struct cur *c, uint64_t *len)
{
	const uint8_t *p;

	*len = rd_uleb(c);
	if (c->bad || !need(c, *len))
		return NULL;
	p = c->p;
	c->p += *len;
	return p;
}

/* ---- CFI sections, CIEs, FDEs ----------------------------------------- */

/* One CFI section: its bytes and where they are loaded. */
struct cfisec {
	const uint8_t *p;
	size_t len;
	uint64_t vaddr;      /* of byte 0: the base of DW_EH_PE_pcrel */
	uint64_t text, data; /* DW_EH_PE_textrel, _datarel bases (.text, .got) */
	bool debug;          /* .debug_frame: CIE id ~0, CIE pointers are offsets */
};

/*
 * The part of a CFA row the BPF side can use.  Everything else a CFA
 * program says (other registers) is parsed and dropped.
 */
enum { CFA_UNDEF, CFA_REG, CFA_PLT, CFA_OTHER };
enum { RULE_SAME, RULE_OFFSET, RULE_OTHER };
enum { RA_CFA8, RA_UNDEF, RA_OTHER };

struct state {
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
 * x86-64 psABI puts it (every real CIE says so explicitly anyway).
 */
static const struct state initial_state = { .cfa = CFA_UNDEF };

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
	struct state init; /* after the initial instructions */
};

struct fde {
	uint64_t start, end;
	const uint8_t *insns, *insns_end;
	uint32_t cie; /* index in builder.cies */
	uint32_t seq; /* order found: a stable sort key */
};

struct range {
	uint64_t lo, hi;
};

struct builder {
	struct cie *cies;
	size_t ncies, cap_cies;
	struct fde *fdes;
	size_t nfdes, cap_fdes;
	const struct range *exec; /* executable sections, sorted, disjoint */
	size_t nexec;
	const struct range *claimed; /* pc ranges .debug_frame must not override */
	size_t nclaimed;
	struct cprof_unwind_row *rows;
	size_t nrows, cap_rows;
	uint64_t base;
	size_t used, skipped;
	struct errbuf *err;
};

/* Grows @*v (of @size-byte elements) to hold one more, doubling up to @max. */
static int grow(void **v, size_t *cap, size_t n, size_t size, size_t first, size_t max)
{
	size_t ncap;
	void *nv;

	if (n < *cap)
		return 0;
	if (*cap >= max)
		return -E2BIG;
	ncap = *cap ? *cap * 2 : first;
	if (ncap > max)
		ncap = max;
	nv = realloc(*v, ncap * size);
	if (!nv)
		return -ENOMEM;
	*v = nv;
	*cap = ncap;
	return 0;
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

enum rule_kind { RK_OFFSET, RK_SAME, RK_UNDEF, RK_OTHER, RK_RESTORE };

/* A register rule changed: only rbp and the return address matter. */
static void set_rule(struct state *st, const struct cie *ci, const struct state *init,
		     uint64_t reg, enum rule_kind k, int64_t off)
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
	if (reg == ci->ra_reg) {
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

static struct cprof_unwind_row make_row(const struct state *st, bool signal)
{
	struct cprof_unwind_row r = { 0 };
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
		   st->cfa_off >= INT16_MIN && st->cfa_off <= INT16_MAX) {
		cfa = st->cfa_reg == REG_RSP ? CPROF_CFA_RSP : CPROF_CFA_RBP;
		r.cfa_off = (int16_t)st->cfa_off;
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

static inline bool same_row(const struct cprof_unwind_row *a, const struct cprof_unwind_row *b)
{
	return a->rules == b->rules && a->cfa_off == b->cfa_off && a->rbp_off == b->rbp_off;
}

/* Appends the row @r at @vaddr (>= every row's pc), merging repeats. */
static int emit(struct builder *b, uint64_t vaddr, struct cprof_unwind_row r)
{
	int rc;

	r.pc = (uint32_t)(vaddr - b->base);
	if (b->nrows) {
		struct cprof_unwind_row *last = &b->rows[b->nrows - 1];

		if (last->pc == r.pc) {
			*last = r;
			if (b->nrows >= 2 && same_row(last - 1, last))
				b->nrows--;
			return 0;
		}
		if (same_row(last, &r))
			return 0;
	}
	rc = grow((void **)&b->rows, &b->cap_rows, b->nrows, sizeof(r), 1024, ROWS_MAX);
	if (rc)
		return errf(b->err, rc, "more than %u unwind rows", ROWS_MAX);
	b->rows[b->nrows++] = r;
	return 0;
}

/*
 * Runs the CFA instructions [p, end).  With @f NULL they are a CIE's
 * initial instructions: there are no locations and nothing is emitted, and
 * -EINVAL says they are malformed.  With an FDE, a row is emitted for each
 * location the state holds at; a malformed or unknown instruction makes
 * the rest of the FDE INVALID (its operand length is unknown, so nothing
 * after it can be decoded).  Returns < 0 only for fatal errors then.
 */
static int run_cfa(struct builder *b, const struct cie *ci, const struct fde *f,
		   struct state *st, const uint8_t *p, const uint8_t *end)
{
	const struct state *init = f ? &ci->init : &initial_state;
	const struct cfisec *s = ci->sec;
	struct state stack[STATE_DEPTH];
	struct cur c = { p, end, false };
	uint64_t loc = f ? f->start : 0;
	unsigned depth = 0;

	while (c.p < c.end && !c.bad) {
		uint8_t op = *c.p++;
		uint64_t reg, delta = 0, len;
		const uint8_t *blk;
		int n;

		switch (op >> 6) {
		case 1:
			delta = op & 0x3f;
			break;
		case 2:
			set_rule(st, ci, init, op & 0x3f, RK_OFFSET,
				 factor(uleb_i64(rd_uleb(&c)), ci->data_align));
			break;
		case 3:
			set_rule(st, ci, init, op & 0x3f, RK_RESTORE, 0);
			break;
		default:
			switch (op) {
			case CFA_nop:
				break;
			case CFA_set_loc: {
				uint64_t to = rd_ptr(&c, ci->fde_enc, s, ci->addr_size);

				if (f && !c.bad && to < loc)
					c.bad = true; /* locations only go forward */
				else if (f)
					delta = to - loc;
				break;
			}
			case CFA_advance_loc1:
				delta = rd_u8(&c);
				break;
			case CFA_advance_loc2:
				delta = rd_u16(&c);
				break;
			case CFA_advance_loc4:
				delta = rd_u32(&c);
				break;
			case CFA_MIPS_advance_loc8:
				delta = rd_u64(&c);
				break;
			case CFA_offset_extended:
				reg = rd_uleb(&c);
				set_rule(st, ci, init, reg, RK_OFFSET,
					 factor(uleb_i64(rd_uleb(&c)), ci->data_align));
				break;
			case CFA_offset_extended_sf:
				reg = rd_uleb(&c);
				set_rule(st, ci, init, reg, RK_OFFSET,
					 factor(rd_sleb(&c), ci->data_align));
				break;
			case CFA_GNU_negative_offset_extended:
				reg = rd_uleb(&c);
				set_rule(st, ci, init, reg, RK_OFFSET,
					 factor(-uleb_i64(rd_uleb(&c)), ci->data_align));
				break;
			case CFA_restore_extended:
				set_rule(st, ci, init, rd_uleb(&c), RK_RESTORE, 0);
				break;
			case CFA_undefined:
				set_rule(st, ci, init, rd_uleb(&c), RK_UNDEF, 0);
				break;
			case CFA_same_value:
				set_rule(st, ci, init, rd_uleb(&c), RK_SAME, 0);
				break;
			case CFA_register:
				reg = rd_uleb(&c);
				(void)rd_uleb(&c);
				set_rule(st, ci, init, reg, RK_OTHER, 0);
				break;
			case CFA_val_offset:
			case CFA_val_offset_sf:
				/* The caller's value is CFA+N itself: not a saved slot. */
				reg = rd_uleb(&c);
				(void)rd_uleb(&c);
				set_rule(st, ci, init, reg, RK_OTHER, 0);
				break;
			case CFA_expression:
			case CFA_val_expression:
				reg = rd_uleb(&c);
				if (rd_block(&c, &len))
					set_rule(st, ci, init, reg, RK_OTHER, 0);
				break;
			case CFA_remember_state:
				/* The CFA is saved too, as GCC's and binutils' readers do. */
				if (depth == STATE_DEPTH)
					c.bad = true;
				else
					stack[depth++] = *st;
				break;
			case CFA_restore_state:
				if (depth == 0)
					c.bad = true;
				else
					*st = stack[--depth];
				break;
			case CFA_def_cfa:
				st->cfa_reg = rd_uleb(&c);
				st->cfa_off = uleb_i64(rd_uleb(&c));
				st->cfa = CFA_REG;
				break;
			case CFA_def_cfa_sf:
				st->cfa_reg = rd_uleb(&c);
				st->cfa_off = factor(rd_sleb(&c), ci->data_align);
				st->cfa = CFA_REG;
				break;
			case CFA_def_cfa_register:
				/* Valid only on a register+offset rule (DWARF 5 6.4.2.2). */
				st->cfa_reg = rd_uleb(&c);
				if (st->cfa != CFA_REG)
					st->cfa = CFA_OTHER;
				break;
			case CFA_def_cfa_offset:
				st->cfa_off = uleb_i64(rd_uleb(&c));
				if (st->cfa != CFA_REG)
					st->cfa = CFA_OTHER;
				break;
			case CFA_def_cfa_offset_sf:
				st->cfa_off = factor(rd_sleb(&c), ci->data_align);
				if (st->cfa != CFA_REG)
					st->cfa = CFA_OTHER;
				break;
			case CFA_def_cfa_expression:
				blk = rd_block(&c, &len);
				if (!blk)
					break;
				n = match_plt(blk, len);
				st->cfa = n < 0 ? CFA_OTHER : CFA_PLT;
				st->plt = n < 0 ? 0 : (uint8_t)n;
				break;
			case CFA_GNU_args_size:
				(void)rd_uleb(&c);
				break;
			default:
				c.bad = true; /* unknown: its operands cannot be skipped */
				break;
			}
		}
		if (c.bad || !delta || !f)
			continue; /* in a CIE, advances have nothing to advance */

		/* The state holds from loc up to the new location. */
		uint64_t step, to;
		int rc = emit(b, loc, make_row(st, ci->signal));

		if (rc)
			return rc;
		if (__builtin_mul_overflow(delta, ci->code_align, &step) ||
		    __builtin_add_overflow(loc, step, &to))
			to = UINT64_MAX;
		loc = to;
		if (loc >= f->end)
			return 0; /* the rest describes code past the FDE */
	}
	if (c.bad && !f)
		return -EINVAL; /* the caller counts the CIE as skipped */
	if (c.bad) {
		b->skipped++;
		return emit(b, loc, make_row(&initial_state, false));
	}
	return f ? emit(b, loc, make_row(st, ci->signal)) : 0;
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
	ci->init = initial_state;
	return run_cfa(NULL, ci, NULL, &ci->init, c.p, c.end) == 0;
}

/* The CIE at section offset @off among cies[lo, hi) (sorted by offset). */
static const struct cie *find_cie(const struct builder *b, size_t lo, size_t hi, uint64_t off,
				  size_t *idx)
{
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (b->cies[mid].off == off) {
			*idx = mid;
			return &b->cies[mid];
		}
		if (b->cies[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Index of the last range with lo <= addr, or -1. */
static ssize_t range_le(const struct range *r, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (ssize_t)lo - 1;
}

static bool range_contains(const struct range *r, size_t n, uint64_t addr)
{
	ssize_t i = range_le(r, n, addr);

	return i >= 0 && addr < r[i].hi;
}

/* Does [lo, hi) meet any of the sorted, disjoint ranges? */
static bool range_overlaps(const struct range *r, size_t n, uint64_t lo, uint64_t hi)
{
	ssize_t i = range_le(r, n, hi - 1);

	return i >= 0 && r[i].hi > lo;
}

static int range_cmp(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Sorts and merges ranges in place; returns the new count. */
static size_t range_normalize(struct range *r, size_t n)
{
	size_t m = 0;

	qsort(r, n, sizeof(*r), range_cmp);
	for (size_t i = 0; i < n; i++) {
		if (m && r[i].lo <= r[m - 1].hi) {
			if (r[i].hi > r[m - 1].hi)
				r[m - 1].hi = r[i].hi;
		} else {
			r[m++] = r[i];
		}
	}
	return m;
}

/* Records one FDE, or counts it as skipped; < 0 only when out of room. */
static int parse_fde(struct builder *b, const struct cfisec *s, const struct entry *e,
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
	if (c.bad || start + range < start) {
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
	f = &b->fdes[b->nfdes];
	f->start = start;
	f->end = start + range;
	f->insns = c.p;
	f->insns_end = e->end;
	f->cie = (uint32_t)idx;
	f->seq = (uint32_t)b->nfdes;
	b->nfdes++;
	return 0;
}

/* Adds the CIEs and FDEs of one section. */
static int collect(struct builder *b, const struct cfisec *s)
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
	return 0;
}

static int fde_cmp(const void *a, const void *b)
{
	const struct fde *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void sort_fdes(struct builder *b)
{
	for (size_t i = 1; i < b->nfdes; i++) {
		if (fde_cmp(&b->fdes[i - 1], &b->fdes[i]) > 0) {
			qsort(b->fdes, b->nfdes, sizeof(*b->fdes), fde_cmp);
			return;
		}
	}
}

/* ---- the page index (bpf/cprof.h) --------------------------------------- */

/*
 * Pages of 1 KiB, coarser when the rows are spread thin (code far apart in
 * an odd object) so that the index stays within the size of the rows.
 */
static int build_index(struct unwind_table *t)
{
	uint32_t last, shift = CPROF_INDEX_SHIFT;
	size_t r = 0;

	if (!t->n)
		return 0;
	last = t->rows[t->n - 1].pc;
	while (shift < 31 && (last >> shift) + 1 > t->n + 64)
		shift++;
	t->index_shift = shift;
	t->npages = (last >> shift) + 1;
	t->index = malloc(((size_t)t->npages + 1) * sizeof(*t->index));
	if (!t->index)
		return -ENOMEM;
	for (uint64_t k = 0; k <= t->npages; k++) {
		while (r < t->n && t->rows[r].pc < (k << shift))
			r++;
		t->index[k] = (uint32_t)r;
	}
	return 0;
}

size_t unwind_slots(const struct unwind_table *t)
{
	return t->n ? CPROF_INDEX_SLOTS(t->npages) + t->n : 0;
}

void unwind_layout(const struct unwind_table *t, union cprof_table_slot *out)
{
	size_t islots = CPROF_INDEX_SLOTS(t->npages);

	if (!t->n)
		return;
	memset(out, 0, islots * sizeof(*out));
	for (size_t k = 0; k <= t->npages; k++)
		out[k / 2].index[k & 1] = t->index[k];
	for (size_t i = 0; i < t->n; i++)
		out[islots + i].row = t->rows[i];
}

/* Runs every FDE, in start order, into rows. */
static int finish(struct builder *b, struct unwind_table *out)
{
	struct cprof_unwind_row *rows;
	int rc;

	sort_fdes(b);
	if (b->nfdes)
		b->base = b->fdes[0].start;
	for (size_t i = 0; i < b->nfdes; i++) {
		const struct fde *f = &b->fdes[i];
		const struct cie *ci = &b->cies[f->cie];
		struct state st = ci->init;
		uint32_t rel;

		if (f->end - b->base > UINT32_MAX) {
			b->skipped++; /* too far from the rest to share a u32 pc */
			continue;
		}
		/* A later FDE overrides what an earlier one said about its range. */
		rel = (uint32_t)(f->start - b->base);
		while (b->nrows && b->rows[b->nrows - 1].pc >= rel)
			b->nrows--;
		rc = run_cfa(b, ci, f, &st, f->insns, f->insns_end);
		if (!rc)
			rc = emit(b, f->end, make_row(&initial_state, false));
		if (rc)
			return rc;
		b->used++;
	}
	rows = b->nrows ? realloc(b->rows, b->nrows * sizeof(*rows)) : NULL;
	if (b->nrows && !rows)
		rows = b->rows; /* keep the slack rather than fail */
	if (!b->nrows)
		free(b->rows);
	b->rows = NULL;
	out->rows = rows;
	out->n = b->nrows;
	out->base = b->base;
	out->fdes = b->used;
	out->skipped = b->skipped;
	return build_index(out);
}

/* ---- reading the object ----------------------------------------------- */

/* A byte source: an open file or a memory image, with its size. */
struct src {
	int fd;             /* -1 for a memory image */
	const uint8_t *mem;
	uint64_t size;
};

static int src_read(const struct src *s, uint64_t off, void *buf, size_t n)
{
	size_t done = 0;

	if (off > s->size || n > s->size - off)
		return -EIO;
	if (s->mem) {
		memcpy(buf, s->mem + off, n);
		return 0;
	}
	while (done < n) {
		ssize_t r = pread(s->fd, (char *)buf + done, n - done, (off_t)(off + done));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -EIO; /* the file shrank under us */
		done += (size_t)r;
	}
	return 0;
}

struct secref {
	uint64_t off, size, addr, flags;
	bool found;
};

struct layout {
	struct secref eh, dbg;
	uint64_t text, got;
	struct range *exec;
	size_t nexec;
};

/* Checks what libelf will allocate for before letting it see the object. */
static int check_ehdr(const struct src *s, struct errbuf *err)
{
	Elf64_Ehdr eh;
	uint64_t n;

	if (src_read(s, 0, &eh, sizeof(eh)) || memcmp(eh.e_ident, ELFMAG, SELFMAG))
		return errf(err, -ENOEXEC, "not an ELF file");
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh.e_machine != EM_X86_64)
		return errf(err, -ENOEXEC, "not an x86-64 ELF file");
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)
		return errf(err, -ENOEXEC, "not an executable or shared object (ELF type %u)",
			    eh.e_type);
	if (!eh.e_shoff)
		return errf(err, -ENOENT, "no section headers, so no .eh_frame to find");
	if (eh.e_shentsize != sizeof(Elf64_Shdr))
		return errf(err, -ENOEXEC, "bad section header size %u", eh.e_shentsize);
	n = eh.e_shnum;
	if (n == 0) { /* extended numbering: the count is in section 0 */
		Elf64_Shdr sh0;

		if (src_read(s, eh.e_shoff, &sh0, sizeof(sh0)))
			return errf(err, -ENOEXEC, "section headers past the end of the file");
		n = sh0.sh_size;
	}
	if (n > SECTIONS_MAX)
		return errf(err, -ENOEXEC, "too many sections (%llu)", (unsigned long long)n);
	if (eh.e_shoff > s->size || n * sizeof(Elf64_Shdr) > s->size - eh.e_shoff)
		return errf(err, -ENOEXEC, "section headers past the end of the file");
	return 0;
}

static void note_section(struct secref *r, const GElf_Shdr *sh)
{
	r->off = sh->sh_offset;
	r->size = sh->sh_size;
	r->addr = sh->sh_addr;
	r->flags = sh->sh_flags;
	r->found = true;
}

static int read_layout(Elf *e, const struct src *s, struct layout *lay, struct errbuf *err)
{
	size_t shstrndx, nsec = 0;
	GElf_Shdr sh;
	Elf_Scn *scn;

	if (elf_getshdrstrndx(e, &shstrndx) || elf_getshdrnum(e, &nsec) ||
	    !(scn = elf_getscn(e, shstrndx)) || !gelf_getshdr(scn, &sh))
		return errf(err, -ENOEXEC, "no section name table: %s", elf_errmsg(-1));
	/* libelf reads the whole name table: bound it first. */
	if (sh.sh_type == SHT_NOBITS || sh.sh_size > SHSTRTAB_MAX || sh.sh_offset > s->size ||
	    sh.sh_size > s->size - sh.sh_offset)
		return errf(err, -ENOEXEC, "bad section name table");
	lay->exec = calloc(nsec ? nsec : 1, sizeof(*lay->exec));
	if (!lay->exec)
		return errf(err, -ENOMEM, "out of memory");
	scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		if ((sh.sh_flags & (SHF_ALLOC | SHF_EXECINSTR)) == (SHF_ALLOC | SHF_EXECINSTR) &&
		    sh.sh_size && sh.sh_addr + sh.sh_size > sh.sh_addr && lay->nexec < nsec)
			lay->exec[lay->nexec++] = (struct range){ sh.sh_addr, sh.sh_addr + sh.sh_size };
		name = elf_strptr(e, shstrndx, sh.sh_name);
		if (!name)
			continue;
		if (strcmp(name, ".eh_frame") == 0)
			note_section(&lay->eh, &sh);
		else if (strcmp(name, ".debug_frame") == 0)
			note_section(&lay->dbg, &sh);
		else if (strcmp(name, ".text") == 0)
			lay->text = sh.sh_addr;
		else if (strcmp(name, ".got") == 0)
			lay->got = sh.sh_addr;
	}
	lay->nexec = range_normalize(lay->exec, lay->nexec);
	return 0;
}

/* A section's bytes: in the image, or in @owned. */
struct bytes {
	const uint8_t *p;
	size_t len;
	uint8_t *owned;
};

static int inflate_section(const uint8_t *z, size_t zlen, const char *name, struct bytes *out,
			   struct errbuf *err)
{
	Elf64_Chdr ch;
	uLongf dlen;

	if (zlen < sizeof(ch))
		return errf(err, -ENOEXEC, "%s: truncated compression header", name);
	memcpy(&ch, z, sizeof(ch));
	if (ch.ch_type != ELFCOMPRESS_ZLIB)
		return errf(err, -ENOTSUP, "%s: compression type %u not supported", name,
			    ch.ch_type);
	if (ch.ch_size > SECTION_MAX)
		return errf(err, -EFBIG, "%s: %llu bytes inflated, more than we read", name,
			    (unsigned long long)ch.ch_size);
	out->owned = malloc(ch.ch_size ? ch.ch_size : 1);
	if (!out->owned)
		return errf(err, -ENOMEM, "%s: out of memory", name);
	dlen = ch.ch_size;
	if (uncompress(out->owned, &dlen, z + sizeof(ch), zlen - sizeof(ch)) != Z_OK ||
	    dlen != ch.ch_size)
		return errf(err, -ENOEXEC, "%s: corrupt compressed data", name);
	out->p = out->owned;
	out->len = dlen;
	return 0;
}

static int load_section(const struct src *s, const struct secref *r, const char *name,
			struct bytes *out, struct errbuf *err)
{
	uint8_t *raw;
	int rc;

	if (r->size > SECTION_MAX)
		return errf(err, -EFBIG, "%s: %llu bytes, more than we read", name,
			    (unsigned long long)r->size);
	if (r->off > s->size || r->size > s->size - r->off)
		return errf(err, -ENOEXEC, "%s: extends past the end of the file", name);
	if (s->mem && !(r->flags & SHF_COMPRESSED)) {
		out->p = s->mem + r->off;
		out->len = r->size;
		return 0;
	}
	if (s->mem)
		return inflate_section(s->mem + r->off, r->size, name, out, err);
	raw = malloc(r->size ? r->size : 1);
	if (!raw)
		return errf(err, -ENOMEM, "%s: out of memory", name);
	rc = src_read(s, r->off, raw, r->size);
	if (rc) {
		free(raw);
		return errf(err, rc, "%s: read failed: %s", name, strerror(-rc));
	}
	if (r->flags & SHF_COMPRESSED) {
		rc = inflate_section(raw, r->size, name, out, err);
		free(raw);
		return rc;
	}
	out->p = out->owned = raw;
	out->len = r->size;
	return 0;
}

/* Union of the FDE ranges found so far: what .debug_frame may not touch. */
static struct range *fde_ranges(const struct builder *b, size_t *n, uint64_t *covered)
{
	struct range *r = malloc((b->nfdes ? b->nfdes : 1) * sizeof(*r));

	*n = 0;
	*covered = 0;
	if (!r)
		return NULL;
	for (size_t i = 0; i < b->nfdes; i++)
		r[i] = (struct range){ b->fdes[i].start, b->fdes[i].end };
	*n = range_normalize(r, b->nfdes);
	for (size_t i = 0; i < *n; i++)
		*covered += r[i].hi - r[i].lo;
	return r;
}

static int build(const struct src *s, struct unwind_table *out, struct errbuf *err)
{
	struct builder b = { .err = err };
	struct layout lay = { 0 };
	struct bytes eh = { 0 }, dbg = { 0 };
	struct cfisec eh_sec, dbg_sec; /* CIEs point at these until finish() */
	struct range *claimed = NULL;
	uint64_t exec_bytes = 0, covered = 0;
	Elf *e;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = check_ehdr(s, err);
	if (rc)
		return rc;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return errf(err, -ENOTSUP, "libelf: %s", elf_errmsg(-1));
	/* ELF_C_READ: libelf preads the headers, nothing is mapped. */
	e = s->mem ? elf_memory((char *)(uintptr_t)s->mem, s->size)
		   : elf_begin(s->fd, ELF_C_READ, NULL);
	if (!e)
		return errf(err, -ENOEXEC, "libelf: %s", elf_errmsg(-1));
	rc = read_layout(e, s, &lay, err);
	elf_end(e);
	if (rc)
		goto out;
	if (!lay.eh.found && !lay.dbg.found) {
		rc = errf(err, -ENOENT, "no .eh_frame or .debug_frame");
		goto out;
	}
	b.exec = lay.exec;
	b.nexec = lay.nexec;
	for (size_t i = 0; i < lay.nexec; i++)
		exec_bytes += lay.exec[i].hi - lay.exec[i].lo;
	if (lay.eh.found) {
		rc = load_section(s, &lay.eh, ".eh_frame", &eh, err);
		if (rc)
			goto out;
		eh_sec = (struct cfisec){ eh.p, eh.len, lay.eh.addr, lay.text, lay.got, false };
		rc = collect(&b, &eh_sec);
		if (rc)
			goto out;
		claimed = fde_ranges(&b, &b.nclaimed, &covered);
		if (!claimed) {
			rc = errf(err, -ENOMEM, "out of memory");
			goto out;
		}
		b.claimed = claimed;
	}
	/* A thin .eh_frame (crt files only, say): .debug_frame fills the gaps. */
	if (lay.dbg.found && covered < exec_bytes / 2) {
		rc = load_section(s, &lay.dbg, ".debug_frame", &dbg, err);
		if (rc == 0) {
			/* Addresses are absolute: pcrel & co do not occur. */
			dbg_sec = (struct cfisec){ dbg.p, dbg.len, 0, lay.text, lay.got, true };
			rc = collect(&b, &dbg_sec);
			if (rc)
				goto out;
		} else if (lay.eh.found) {
			/* zstd-compressed, say: .eh_frame alone is still worth having. */
			b.skipped++;
			rc = 0;
		} else {
			goto out;
		}
	}
	rc = finish(&b, out);
out:
	free(b.rows);
	free(b.fdes);
	free(b.cies);
	free(claimed);
	free(lay.exec);
	free(eh.owned);
	free(dbg.owned);
	if (rc)
		unwind_table_free(out);
	return rc;
}

int unwind_build_fd(int fd, struct unwind_table *out, struct errbuf *err)
{
	struct stat st;

	memset(out, 0, sizeof(*out));
	if (fstat(fd, &st))
		return errf(err, -errno, "fstat: %s", strerror(errno));
	if (!S_ISREG(st.st_mode))
		return errf(err, -ENOEXEC, "not a regular file");
	return build(&(struct src){ .fd = fd, .size = (uint64_t)st.st_size }, out, err);
}

int unwind_build_mem(const void *image, size_t len, struct unwind_table *out,
		     struct errbuf *err)
{
	memset(out, 0, sizeof(*out));
	if (!image)
		return errf(err, -EINVAL, "no image");
	return build(&(struct src){ .fd = -1, .mem = image, .size = len }, out, err);
}

const struct cprof_unwind_row *unwind_find(const struct unwind_table *t, uint64_t vaddr)
{
	uint64_t rel, page;
	size_t lo, hi;

	if (!t || !t->n || !t->index || vaddr < t->base || vaddr - t->base > UINT32_MAX)
		return NULL;
	rel = vaddr - t->base;
	page = rel >> t->index_shift;
	if (page >= t->npages)
		return &t->rows[t->n - 1];
	/* the rows of the page, and the one before them that covers its start */
	lo = t->index[page] ? t->index[page] - 1 : 0;
	hi = t->index[page + 1];
	while (lo < hi) { /* the first row with pc > rel */
		size_t mid = lo + (hi - lo) / 2;

		if (t->rows[mid].pc <= rel)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &t->rows[lo - 1] : NULL;
}

void unwind_table_free(struct unwind_table *t)
{
	if (!t)
		return;
	free(t->rows);
	free(t->index);
	memset(t, 0, sizeof(*t));
}
