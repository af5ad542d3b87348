// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "java/jvm_bytes.h"
#include "java/jvm_scopes.h"

/* Bytes of an nmethod's header read: past every member this reads. */
#define HEADER_MAX 512
/* Bytes of each section read at most: C2's largest methods stay well below. */
#define PCS_BYTES_MAX (1u << 20)
#define DATA_BYTES_MAX (4u << 20)
#define META_BYTES_MAX (256u << 10)
/* Bytes of an nmethod's immutable or mutable data at most (its sizes are ints). */
#define ALLOC_BYTES_MAX (64u << 20)
/* PcDesc::upper_offset_limit: the code offset of the sentinel that ends the array. */
#define PC_OFFSET_END INT32_MAX
/* The VM's bcis below InvocationEntryBci (-1): C1's and JVMCI's before/after marks. */
#define BCI_MIN (-8)
#define BCI_MAX 65535

/* A section of the process's memory. */
struct span {
	uint64_t addr;
	uint32_t len;
};

struct sections {
	struct span pcs, data, meta;
};

static int32_t int32_at(const uint8_t *p, size_t off)
{
	return (int32_t)jvm_member(p, off, 4);
}

/* [@lo, @hi) as a section, when @lo <= @hi and it is not longer than @cap. */
static int span_of(uint64_t lo, uint64_t hi, uint32_t cap, struct span *s)
{
	if (hi < lo || hi - lo > cap)
		return -EINVAL;
	*s = (struct span){ lo, (uint32_t)(hi - lo) };
	return 0;
}

/*
 * 17-22: the three sections inside the blob, in the order metadata,
 * scopes stream, PcDescs, dependencies; each offset is from the blob's
 * start and must lie within it, in that order.
 */
static int blob_sections(const struct jvm_layout *l, const struct jvm_blob *b, const uint8_t *h,
			 struct sections *s)
{
	int32_t meta = int32_at(h, l->nm_metadata), pcs = int32_at(h, l->nm_scopes_pcs),
		deps = int32_at(h, l->nm_dependencies);
	uint64_t data = jvm_member(h, l->nm_scopes_data_begin, 8);

	if (meta < 0 || pcs < meta || deps < pcs || (uint32_t)deps > b->size ||
	    data < b->addr + (uint32_t)meta || data > b->addr + (uint32_t)pcs)
		return -EINVAL;
	if (span_of(b->addr + (uint32_t)meta, data, META_BYTES_MAX, &s->meta) ||
	    span_of(data, b->addr + (uint32_t)pcs, DATA_BYTES_MAX, &s->data) ||
	    span_of(b->addr + (uint32_t)pcs, b->addr + (uint32_t)deps, PCS_BYTES_MAX, &s->pcs))
		return -EINVAL;
	return 0;
}

/*
 * 25+: the PcDescs and the scopes stream in the immutable data (C heap),
 * at offsets in it; the stream runs to its end (JVMCI's speculations and
 * a reference count may follow: a bound, not the stream's exact end).
 * The metadata follows the relocations in the mutable data, to its end
 * (or JVMCI's data, again a bound).
 */
static int immutable_sections(const struct jvm_layout *l, const uint8_t *h, struct sections *s)
{
	uint64_t imm = jvm_member(h, l->nm_immutable, 8), mut = jvm_member(h, l->blob_mutable, 8);
	int32_t imm_size = int32_at(h, l->nm_immutable_size), pcs = int32_at(h, l->nm_scopes_pcs),
		data = int32_at(h, l->nm_scopes_data), mut_size = int32_at(h, l->blob_mutable_size),
		reloc = int32_at(h, l->blob_relocation_size);

	if (!imm || imm_size < 0 || (uint32_t)imm_size > ALLOC_BYTES_MAX || pcs < 0 ||
	    data < pcs || imm_size < data || imm > UINT64_MAX - ALLOC_BYTES_MAX)
		return -EINVAL;
	if (mut_size < 0 || (uint32_t)mut_size > ALLOC_BYTES_MAX || reloc < 0 || reloc > mut_size ||
	    (mut_size > reloc && !mut) || mut > UINT64_MAX - ALLOC_BYTES_MAX)
		return -EINVAL;
	if (span_of(imm + (uint32_t)pcs, imm + (uint32_t)data, PCS_BYTES_MAX, &s->pcs) ||
	    span_of(imm + (uint32_t)data, imm + (uint32_t)imm_size, DATA_BYTES_MAX, &s->data) ||
	    span_of(mut + (uint32_t)reloc, mut + (uint32_t)mut_size, META_BYTES_MAX, &s->meta))
		return -EINVAL;
	return 0;
}

/* Where @b's debug info is, from its header. */
static int find_sections(const struct jvm_layout *l, const struct memsrc *m,
			 const struct jvm_blob *b, struct sections *s)
{
	uint8_t h[HEADER_MAX];
	size_t need = 0;
	const uint32_t ends[] = {
		l->nm_scopes_pcs + 4,
		l->scopes_immutable ? l->nm_scopes_data + 4 : l->nm_dependencies + 4,
		l->scopes_immutable ? l->nm_immutable + 8 : l->nm_metadata + 4,
		l->scopes_immutable ? l->nm_immutable_size + 4 : l->nm_scopes_data_begin + 8,
		l->scopes_immutable ? l->blob_mutable + 8 : 0,
		l->scopes_immutable ? l->blob_mutable_size + 4 : 0,
		l->scopes_immutable ? l->blob_relocation_size + 4 : 0,
	};
	int e;

	if (!l->scopes_ok)
		return -ENOTSUP;
	if (!b->is_nmethod)
		return -ENOENT;
	for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++)
		if (ends[i] > need)
			need = ends[i];
	if (need > sizeof(h) || need > b->size)
		return -EINVAL;
	if (memsrc_read(m, b->addr, h, need))
		return -EFAULT;
	e = l->scopes_immutable ? immutable_sections(l, h, s) : blob_sections(l, b, h, s);
	if (e)
		return e;
	/* a native method's wrapper records no PcDescs */
	if (!s->pcs.len)
		return -ENODATA;
	return s->pcs.len % l->pcdesc_size ? -EINVAL : 0;
}

/*
 * The PcDesc for code offset @off: the first whose offset is at or after
 * it.  A PcDesc is recorded at the end of what it describes: at a call's
 * return address, at a safepoint poll, at a trap; the instructions before
 * it, back to the previous one, were emitted for the same bytecode (or
 * the ones leading to it) in the same inlining.  So a return address
 * finds its own PcDesc, exactly, as the VM's frames do, and a pc sampled
 * anywhere finds the next one, as the VM's own approximate lookup does
 * (match_desc: previous < offset <= this one), as async-profiler does.
 * (A debugger such as the serviceability agent takes the nearest one at
 * or before instead: a guess either way between two points.)  The
 * offsets must rise; the sentinel that ends the array covers no code.
 */
static int find_desc(const struct jvm_layout *l, const uint8_t *pcs, size_t n, int32_t off,
		     size_t *at)
{
	int64_t prev = INT64_MIN;

	for (size_t i = 0; i < n; i++) {
		int32_t o = int32_at(pcs, i * l->pcdesc_size + l->pcdesc_pc_offset);

		if (o <= prev)
			return -EINVAL;
		prev = o;
		if (o >= off) {
			*at = i;
			return o == PC_OFFSET_END ? -ENOENT : 0;
		}
	}
	return -ENOENT;
}

/* The scopes stream, the metadata, and what each scope must name. */
struct stream {
	const uint8_t *data;
	size_t len;
	const uint8_t *meta;
	size_t nmeta;
	unsigned x;
	uint64_t own; /* the nmethod's method: the outermost scope's */
};

/* One scope at @d of @s: its method, bci and sender's offset. */
static int decode_one(const struct stream *s, uint32_t d, struct jvm_scope *sc, uint32_t *sender)
{
	size_t pos = d;
	uint32_t index, bci;

	if (d >= s->len)
		return -EINVAL;
	if (jvm_u5(s->data, s->len, &pos, s->x, sender) ||
	    jvm_u5(s->data, s->len, &pos, s->x, &index) ||
	    jvm_u5(s->data, s->len, &pos, s->x, &bci))
		return -EINVAL;
	/* metadata_at(): index 0 stands for no method, and scopes always have one */
	if (!index || index > s->nmeta)
		return -EINVAL;
	sc->method = jvm_member(s->meta, (size_t)(index - 1) * 8, 8);
	/* written as bci - InvocationEntryBci: -1 is 0 */
	sc->bci = (int32_t)(bci - 1);
	if (!sc->method || sc->method % 8 || sc->bci < BCI_MIN || sc->bci > BCI_MAX)
		return -EINVAL;
	return 0;
}

/* The chain of scopes from @d out: how many, or a negative errno. */
static int decode_chain(const struct stream *s, uint32_t d, struct jvm_scope *out, size_t max)
{
	uint32_t seen[JVM_SCOPES_MAX];
	size_t k = 0;

	/*
	 * Offset 0 is DebugInformationRecorder::serialized_null: no scope
	 * recorded; the VM reads it as the method itself, at its entry.
	 */
	if (!d) {
		if (!max)
			return -ENOSPC;
		out[0] = (struct jvm_scope){ s->own, JVM_BCI_ENTRY };
		return 1;
	}
	for (;;) {
		uint32_t sender;
		int e;

		for (size_t i = 0; i < k; i++)
			if (seen[i] == d)
				return -ELOOP;
		if (k == JVM_SCOPES_MAX)
			return -ELOOP;
		if (k == max)
			return -ENOSPC;
		seen[k] = d;
		e = decode_one(s, d, &out[k], &sender);
		if (e)
			return e;
		k++;
		if (!sender)
			break;
		d = sender;
	}
	return out[k - 1].method == s->own ? (int)k : -EINVAL;
}

/* Reads @sp into @p: 0 or -EFAULT. */
static int read_span(const struct memsrc *m, const struct span *sp, uint8_t *p)
{
	return !sp->len || !memsrc_read(m, sp->addr, p, sp->len) ? 0 : -EFAULT;
}

int jvm_scopes_at(const struct jvm_layout *l, const struct memsrc *m, const struct jvm_blob *b,
		  uint64_t pc, struct jvm_scope *out, size_t max)
{
	struct sections s;
	struct stream st;
	uint8_t *buf;
	size_t at = 0;
	int e = find_sections(l, m, b, &s);

	if (e != -ENODATA && e)
		return e;
	if (pc < b->code_begin || pc >= b->addr + b->size)
		return -ENOENT;
	if (e == -ENODATA) {
		/* a native method's wrapper: the method itself, at bci 0 as the VM says */
		if (!max)
			return -ENOSPC;
		out[0] = (struct jvm_scope){ .method = b->method, .bci = 0 };
		return 1;
	}
	buf = malloc((size_t)s.pcs.len + s.data.len + s.meta.len + 1);
	if (!buf)
		return -ENOMEM;
	st = (struct stream){ buf + s.pcs.len, s.data.len, buf + s.pcs.len + s.data.len,
			      s.meta.len / 8, jvm_u5_excluded(l->major), b->method };
	e = read_span(m, &s.pcs, buf);
	if (!e)
		e = find_desc(l, buf, s.pcs.len / l->pcdesc_size, (int32_t)(pc - b->code_begin), &at);
	if (!e)
		e = read_span(m, &s.data, buf + s.pcs.len);
	if (!e)
		e = read_span(m, &s.meta, buf + s.pcs.len + s.data.len);
	if (!e) {
		int32_t d = int32_at(buf, at * l->pcdesc_size + l->pcdesc_scope_offset);

		e = d < 0 ? -EINVAL : decode_chain(&st, (uint32_t)d, out, max);
	}
	free(buf);
	return e;
}

int jvm_scopes_pc_offsets(const struct jvm_layout *l, const struct memsrc *m,
			  const struct jvm_blob *b, int32_t *out, size_t max)
{
	struct sections s;
	uint8_t *buf;
	size_t n;
	int e = find_sections(l, m, b, &s);

	if (e)
		return e == -ENODATA ? -ENOENT : e;
	buf = malloc(s.pcs.len);
	if (!buf)
		return -ENOMEM;
	e = read_span(m, &s.pcs, buf);
	n = s.pcs.len / l->pcdesc_size;
	for (size_t i = 0; !e && i < n && i < max; i++)
		out[i] = int32_at(buf, i * l->pcdesc_size + l->pcdesc_pc_offset);
	free(buf);
	return e ? e : (int)n;
}
