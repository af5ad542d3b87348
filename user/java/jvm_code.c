// SPDX-License-Identifier: MIT
#include <errno.h>
#include <string.h>

#include "java/jvm_bytes.h"
#include "java/jvm_code.h"

/* Hops through a segment map before giving up: a 16 MB method is 1000. */
#define HOPS_MAX 4096
/* Segment map bytes read at a time, ending at the segment looked at. */
#define MAP_CHUNK 256
/* Bytes of a blob's header read: past every member this reads. */
#define HEADER_MAX 512

static int64_t sword(const uint8_t *p, size_t off, unsigned size)
{
	uint64_t v = jvm_member(p, off, size);

	return size == 2 ? (int16_t)v : size == 4 ? (int32_t)v : (int64_t)v;
}

/* The interpreter's code: its StubQueue's buffer, which must lie in a code heap. */
static int read_interpreter(const struct jvm_layout *l, const struct memsrc *m,
			    struct jvm_codecache *cc, struct errbuf *err)
{
	uint64_t queue, buf;
	int32_t limit;

	if (memsrc_read(m, l->interp_code, &queue, 8) || !queue ||
	    memsrc_read(m, queue + l->queue_buffer, &buf, 8) ||
	    memsrc_read(m, queue + l->queue_limit, &limit, 4))
		return errf(err, -EFAULT, "AbstractInterpreter::_code unreadable");
	if (limit <= 0 || !jvm_codecache_has(cc, buf) || !jvm_codecache_has(cc, buf + limit - 1))
		return errf(err, -EINVAL, "the interpreter's code (%d bytes) is not in a code heap",
			    limit);
	cc->interp_lo = buf;
	cc->interp_hi = buf + (uint32_t)limit;
	return 0;
}

int jvm_codecache_read(const struct jvm_layout *l, const struct memsrc *m,
		       struct jvm_codecache *cc, struct errbuf *err)
{
	uint64_t heaps, data, ptrs[JVM_HEAPS_MAX];
	int32_t len;
	uint8_t h[512];
	size_t need = l->heap_log2_segment + 4;

	memset(cc, 0, sizeof(*cc));
	if (memsrc_read(m, l->codecache_heaps, &heaps, 8) || !heaps ||
	    memsrc_read(m, heaps + l->array_len, &len, 4) ||
	    memsrc_read(m, heaps + l->array_data, &data, 8))
		return errf(err, -EFAULT, "CodeCache::_heaps unreadable");
	if (len < 1 || len > JVM_HEAPS_MAX)
		return errf(err, -EINVAL, "CodeCache::_heaps holds %d heaps", len);
	if (memsrc_read(m, data, ptrs, (size_t)len * 8))
		return errf(err, -EFAULT, "CodeCache::_heaps' array unreadable");
	if (l->heap_memory + 32 > need)
		need = l->heap_memory + 32;
	if (l->heap_segmap + 32 > need)
		need = l->heap_segmap + 32;
	if (need > sizeof(h))
		return errf(err, -EINVAL, "CodeHeap of %zu bytes", need);
	for (int i = 0; i < len; i++) {
		struct jvm_heap *hp = &cc->heap[cc->n];

		if (memsrc_read(m, ptrs[i], h, need))
			return errf(err, -EFAULT, "code heap %d unreadable", i);
		hp->low = jvm_member(h, l->heap_memory + l->space_low, 8);
		hp->high = jvm_member(h, l->heap_memory + l->space_high, 8);
		hp->segmap = jvm_member(h, l->heap_segmap + l->space_low, 8);
		hp->log2_segment = (unsigned)jvm_member(h, l->heap_log2_segment, 4);
		if (hp->log2_segment < 4 || hp->log2_segment > 16 || hp->high < hp->low ||
		    hp->high - hp->low > (1ull << 40) || !hp->segmap)
			return errf(err, -EINVAL, "code heap %d does not hold together", i);
		if (hp->high > hp->low) /* an empty heap holds nothing */
			cc->n++;
	}
	return read_interpreter(l, m, cc, err);
}

bool jvm_codecache_has(const struct jvm_codecache *cc, uint64_t pc)
{
	for (unsigned i = 0; i < cc->n; i++)
		if (pc >= cc->heap[i].low && pc < cc->heap[i].high)
			return true;
	return false;
}

/* The segment where the block holding segment @seg of heap @hp starts. */
static int block_start(const struct memsrc *m, const struct jvm_heap *hp, uint64_t seg,
		       uint64_t *start)
{
	uint8_t map[MAP_CHUNK];
	uint64_t lo = 0; /* map[0] is segment lo; the chunk holds lo .. lo+n-1 */
	size_t n = 0;

	for (int hop = 0; hop < HOPS_MAX; hop++) {
		uint8_t b;

		if (!n || seg < lo || seg >= lo + n) {
			lo = seg >= MAP_CHUNK - 1 ? seg - (MAP_CHUNK - 1) : 0;
			n = (size_t)(seg - lo) + 1;
			if (memsrc_read(m, hp->segmap + lo, map, n))
				return -EFAULT;
		}
		b = map[seg - lo];
		if (b == 0xff)
			return -ENOENT;
		if (!b) {
			*start = seg;
			return 0;
		}
		if (b > seg)
			return -EINVAL;
		seg -= b;
	}
	return -EINVAL;
}

/* The blob's members from its header @h (read from @addr). */
static int take_blob(const struct jvm_layout *l, const struct memsrc *m, const uint8_t *h,
		     uint64_t addr, struct jvm_blob *out)
{
	uint64_t name = jvm_member(h, l->blob_name, 8), code = jvm_member(h, l->blob_code, l->blob_code_size);
	int32_t complete = (int32_t)sword(h, l->blob_frame_complete, l->blob_frame_complete_size);

	out->addr = addr;
	out->size = (uint32_t)jvm_member(h, l->blob_size, 4);
	out->frame_size = (int32_t)jvm_member(h, l->blob_frame_size, 4);
	out->frame_complete = complete;
	out->code_begin = l->blob_code_is_offset ? addr + code : code;
	if (!out->size || out->size > (1u << 30) || out->frame_size < 0 ||
	    out->frame_size > (1 << 16) || out->code_begin < addr ||
	    out->code_begin >= addr + out->size)
		return -EINVAL;
	if (!name || memsrc_read_str(m, name, out->name, sizeof(out->name)))
		return -EINVAL;
	if (l->blob_kind >= 0)
		out->is_nmethod = h[l->blob_kind] == l->blob_kind_nmethod;
	else /* the name a compiled Java method or a JNI wrapper is given */
		out->is_nmethod = !strcmp(out->name, "nmethod") ||
				  !strcmp(out->name, "native nmethod");
	if (out->is_nmethod) {
		out->method = jvm_member(h, l->nm_method, 8);
		out->compile_id = (int32_t)jvm_member(h, l->nm_compile_id, 4);
		out->entry_bci = (int32_t)jvm_member(h, l->nm_entry_bci, 4);
		if (!out->method || out->method % 8)
			return -EINVAL;
	}
	return 0;
}

int jvm_blob_find(const struct jvm_layout *l, const struct memsrc *m,
		  const struct jvm_codecache *cc, uint64_t pc, struct jvm_blob *out)
{
	uint8_t h[HEADER_MAX], used;
	size_t need = 0;
	const uint32_t ends[] = {
		l->blob_name + 8, l->blob_size + 4, l->blob_frame_size + 4,
		l->blob_frame_complete + l->blob_frame_complete_size, l->blob_code + l->blob_code_size,
		l->nm_method + 8, l->nm_compile_id + 4, l->nm_entry_bci + 4,
		(uint32_t)(l->blob_kind + 1),
	};

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++)
		if (ends[i] > need)
			need = ends[i];
	if (need > sizeof(h))
		return -EINVAL;
	for (unsigned i = 0; i < cc->n; i++) {
		const struct jvm_heap *hp = &cc->heap[i];
		uint64_t seg, block, blob;
		int e;

		if (pc < hp->low || pc >= hp->high)
			continue;
		e = block_start(m, hp, (pc - hp->low) >> hp->log2_segment, &seg);
		if (e)
			return e;
		block = hp->low + (seg << hp->log2_segment);
		blob = block + l->heapblock_size;
		if (memsrc_read(m, block + l->heapblock_used, &used, 1))
			return -EFAULT;
		if (!used)
			return -ENOENT;
		/* a small blob near the heap's end: read what there is */
		if (blob + need > hp->high)
			need = (size_t)(hp->high - blob);
		if (need < sizeof(uint64_t) || memsrc_read(m, blob, h, need))
			return -EFAULT;
		memset(h + need, 0, sizeof(h) - need);
		e = take_blob(l, m, h, blob, out);
		if (e)
			return e;
		return pc < blob + out->size && blob + out->size <= hp->high ? 0 : -EINVAL;
	}
	return -ENOENT;
}
