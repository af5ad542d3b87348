// SPDX-License-Identifier: MIT
/*
 * The JVM reader on made-up memory: HotSpot's tables, code heaps and
 * methods as a hostile process could lay them out (strides that do not
 * fit, tables without an end, strings without a NUL, members outside
 * their types, segment maps that never end, pools that belong to no
 * class, line tables cut short).  Each must be refused with a message
 * that names what is wrong, never read past its bounds, and a well-made
 * image must read.  Line tables are checked against an encoder written
 * here from the JVM's description of its stream.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "java/jvm_code.h"
#include "java/jvm_layout.h"
#include "java/jvm_method.h"
#include "java/jvm_structs.h"
#include "fakemem.h"
#include "testlib.h"

static uint64_t str(struct img *im, const char *s)
{
	uint64_t a = img_alloc(im, strlen(s) + 1);

	memcpy(at(im, a), s, strlen(s) + 1);
	return a;
}

/* The tables' layout symbols, as JDK 17 sets them. */
static void put_layout_syms(struct img *im, uint64_t *sym)
{
	static const struct {
		enum jvm_sym s;
		uint64_t v;
	} vals[] = {
		{ JVM_SYM_STRUCT_STRIDE, 48 }, { JVM_SYM_STRUCT_TYPE, 0 }, { JVM_SYM_STRUCT_FIELD, 8 },
		{ JVM_SYM_STRUCT_TYPE_STRING, 16 }, { JVM_SYM_STRUCT_STATIC, 24 },
		{ JVM_SYM_STRUCT_OFFSET, 32 }, { JVM_SYM_STRUCT_ADDRESS, 40 },
		{ JVM_SYM_TYPE_STRIDE, 40 }, { JVM_SYM_TYPE_NAME, 0 }, { JVM_SYM_TYPE_SUPER, 8 },
		{ JVM_SYM_TYPE_SIZE, 32 },
		{ JVM_SYM_INT_STRIDE, 16 }, { JVM_SYM_INT_NAME, 0 }, { JVM_SYM_INT_VALUE, 8 },
		{ JVM_SYM_LONG_STRIDE, 16 }, { JVM_SYM_LONG_NAME, 0 }, { JVM_SYM_LONG_VALUE, 8 },
	};

	for (int k = 0; k < JVM_SYM_N; k++)
		sym[k] = img_alloc(im, 8);
	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++)
		put64(im, sym[vals[i].s], vals[i].v);
}

/* One field of the made-up JVM: "Type::_field", its C++ type, offset or static address. */
struct ffield {
	const char *type, *name, *ts;
	uint64_t offset;
	bool is_static;
};

/* The members jvm_layout reads, where JDK 17 has them (a static's address is made). */
static const struct ffield fields17[] = {
	{ "Abstract_VM_Version", "_vm_major_version", "int", 0, true },
	{ "CodeCache", "_heaps", "GrowableArray<CodeHeap*>*", 0, true },
	{ "AbstractInterpreter", "_code", "StubQueue*", 0, true },
	{ "StubQueue", "_stub_buffer", "address", 8, false },
	{ "StubQueue", "_buffer_limit", "int", 20, false },
	{ "CodeCache", "_low_bound", "address", 0, true },
	{ "CodeCache", "_high_bound", "address", 0, true },
	{ "GrowableArrayBase", "_len", "int", 0, false },
	{ "GrowableArray<int>", "_data", "int*", 8, false },
	{ "CodeHeap", "_memory", "VirtualSpace", 8, false },
	{ "CodeHeap", "_segmap", "VirtualSpace", 120, false },
	{ "CodeHeap", "_log2_segment_size", "int", 256, false },
	{ "VirtualSpace", "_low", "char*", 16, false },
	{ "VirtualSpace", "_high", "char*", 24, false },
	{ "CodeBlob", "_name", "const char*", 96, false },
	{ "CodeBlob", "_size", "int", 12, false },
	{ "CodeBlob", "_header_size", "int", 16, false },
	{ "CodeBlob", "_frame_size", "int", 28, false },
	{ "CodeBlob", "_frame_complete_offset", "int", 20, false },
	{ "CodeBlob", "_code_begin", "address", 32, false },
	{ "CompiledMethod", "_method", "Method*", 112, false },
	{ "nmethod", "_compile_id", "int", 304, false },
	{ "nmethod", "_entry_bci", "int", 192, false },
	{ "Method", "_constMethod", "ConstMethod*", 8, false },
	{ "ConstMethod", "_constants", "ConstantPool*", 8, false },
	{ "ConstMethod", "_constMethod_size", "int", 24, false },
	{ "ConstMethod", "_flags", "u2", 28, false },
	{ "ConstMethod", "_code_size", "u2", 32, false },
	{ "ConstMethod", "_name_index", "u2", 34, false },
	{ "ConstMethod", "_signature_index", "u2", 36, false },
	{ "ConstantPool", "_pool_holder", "InstanceKlass*", 24, false },
	{ "ConstantPool", "_source_file_name_index", "u2", 54, false },
	{ "ConstantPool", "_length", "int", 60, false },
	{ "Klass", "_name", "Symbol*", 24, false },
	{ "InstanceKlass", "_constants", "ConstantPool*", 232, false },
	{ "Symbol", "_length", "u2", 4, false },
	{ "Symbol", "_body", "u1", 6, false },
};

static const struct {
	const char *name;
	uint64_t size;
} types17[] = {
	{ "GrowableArrayBase", 8 }, { "GrowableArray<int>", 16 }, { "CodeHeap", 344 },
	{ "VirtualSpace", 112 }, { "CodeBlob", 104 }, { "CompiledMethod", 192 },
	{ "nmethod", 352 }, { "Method", 88 }, { "ConstMethod", 48 }, { "ConstantPool", 72 },
	{ "Klass", 208 }, { "InstanceKlass", 464 }, { "Symbol", 8 }, { "HeapBlock", 16 },
	{ "Abstract_VM_Version", 1 }, { "CodeCache", 1 }, { "AbstractInterpreter", 1 },
	{ "StubQueue", 48 },
};

static const struct {
	const char *name;
	int32_t v;
} ints17[] = {
	{ "ConstMethod::_has_linenumber_table", 1 },
	{ "frame::interpreter_frame_last_sp_offset", -2 },
	{ "frame::interpreter_frame_sender_sp_offset", -1 },
};

/* What a made-up JVM is built from: its fields may be changed before it is built. */
struct fake {
	struct img im;
	uint64_t sym[JVM_SYM_N];
	uint64_t structs, types, ints, longs; /* the tables */
	uint64_t major; /* the static's address */
	struct memsrc m;
};

/* Builds the tables of @fields (@nf), with JDK 17's types and constants, into @f. */
static void fake_build(struct fake *f, const struct ffield *fields, size_t nf)
{
	struct img *im = &f->im;
	size_t nt = sizeof(types17) / sizeof(types17[0]), ni = sizeof(ints17) / sizeof(ints17[0]);

	memset(f, 0, sizeof(*f));
	im->mem = calloc(1, IMG_MAX);
	put_layout_syms(im, f->sym);
	f->structs = img_alloc(im, (nf + 1) * 48);
	for (size_t i = 0; i < nf; i++) {
		uint64_t e = f->structs + i * 48, addr = 0;

		if (fields[i].is_static) {
			addr = img_alloc(im, 8);
			if (!strcmp(fields[i].name, "_vm_major_version")) {
				f->major = addr;
				put32(im, addr, 17);
			}
		}
		put64(im, e, str(im, fields[i].type));
		put64(im, e + 8, str(im, fields[i].name));
		put64(im, e + 16, fields[i].ts ? str(im, fields[i].ts) : 0);
		put32(im, e + 24, fields[i].is_static);
		put64(im, e + 32, fields[i].offset);
		put64(im, e + 40, addr);
	}
	f->types = img_alloc(im, (nt + 1) * 40);
	for (size_t i = 0; i < nt; i++) {
		put64(im, f->types + i * 40, str(im, types17[i].name));
		put64(im, f->types + i * 40 + 32, types17[i].size);
	}
	f->ints = img_alloc(im, (ni + 1) * 16);
	for (size_t i = 0; i < ni; i++) {
		put64(im, f->ints + i * 16, str(im, ints17[i].name));
		put32(im, f->ints + i * 16 + 8, (uint32_t)ints17[i].v);
	}
	f->longs = img_alloc(im, 16);
	put64(im, f->sym[JVM_SYM_STRUCTS], f->structs);
	put64(im, f->sym[JVM_SYM_TYPES], f->types);
	put64(im, f->sym[JVM_SYM_INTS], f->ints);
	put64(im, f->sym[JVM_SYM_LONGS], f->longs);
	f->m = (struct memsrc){ .read = img_read, .ctx = im };
}

static void fake_free(struct fake *f)
{
	free(f->im.mem);
}

/* Reads @f's tables and layout: the error, with @err's message. */
static int fake_read(struct fake *f, struct jvm_layout *l, struct errbuf *err)
{
	struct jvm_structs vm;
	int e = jvm_structs_read(&vm, &f->m, f->sym, err);

	if (e)
		return e;
	e = jvm_layout_from(&vm, &f->m, l, err);
	jvm_structs_free(&vm);
	return e;
}

#define NF17 (sizeof(fields17) / sizeof(fields17[0]))

/* Where fields17 has @type's @name. */
static size_t field17(const char *type, const char *name)
{
	for (size_t i = 0; i < NF17; i++)
		if (!strcmp(fields17[i].type, type) && !strcmp(fields17[i].name, name))
			return i;
	abort();
}

static void check_tables(void)
{
	struct fake f;
	struct jvm_layout l;
	struct errbuf err = { "" };
	struct ffield fs[NF17];
	int e;

	fake_build(&f, fields17, NF17);
	e = fake_read(&f, &l, &err);
	CHECK(!e && l.major == 17 && l.nm_method == 112 && l.blob_code == 32 &&
		      !l.blob_code_is_offset && l.const_flags_size == 2 && l.interp_method == -3 &&
		      l.interp_bcp == -8 && l.heapblock_size == 16 && l.blob_kind == -1,
	      "a well-made image reads: its layout as JDK 17's", "%d: %s", e, err.msg);

	/* a stride past its bound */
	put64(&f.im, f.sym[JVM_SYM_STRUCT_STRIDE], 1000);
	e = fake_read(&f, &l, &err);
	CHECK(e == -EINVAL && strstr(err.msg, "gHotSpotVMStructEntryArrayStride"),
	      "a stride of 1000 bytes is refused, naming it", "%d: %s", e, err.msg);
	put64(&f.im, f.sym[JVM_SYM_STRUCT_STRIDE], 48);

	/* a member's offset past the entry */
	put64(&f.im, f.sym[JVM_SYM_STRUCT_OFFSET], 44);
	e = fake_read(&f, &l, &err);
	CHECK(e == -EINVAL && strstr(err.msg, "gHotSpotVMStructEntryOffsetOffset"),
	      "a member that does not fit its entry is refused, naming it", "%d: %s", e, err.msg);
	put64(&f.im, f.sym[JVM_SYM_STRUCT_OFFSET], 32);

	/* a name without its NUL within 256 bytes */
	{
		uint64_t s = img_alloc(&f.im, 400);

		memset(at(&f.im, s), 'A', 400);
		put64(&f.im, f.structs + 48 * 3 + 8, s);
		e = fake_read(&f, &l, &err);
		CHECK(e == -ENAMETOOLONG && strstr(err.msg, "entry 3") &&
			      strstr(err.msg, "no end within 256"),
		      "a name without an end is refused, naming its entry", "%d: %s", e, err.msg);
		/* one that runs off the image */
		put64(&f.im, f.structs + 48 * 3 + 8, BASE + f.im.size - 10);
		memset(at(&f.im, BASE + f.im.size - 10), 'B', 10);
		e = fake_read(&f, &l, &err);
		CHECK(e == -EFAULT && strstr(err.msg, "unreadable"),
		      "a name that runs into unmapped memory is refused", "%d: %s", e, err.msg);
		put64(&f.im, f.structs + 48 * 3 + 8, 8);
		e = fake_read(&f, &l, &err);
		CHECK(e == -EFAULT && strstr(err.msg, "entry 3"),
		      "a name at an unmapped address is refused", "%d: %s", e, err.msg);
	}
	fake_free(&f);

	/* a table with no end: every entry named, up to the image's end */
	fake_build(&f, fields17, NF17);
	{
		uint64_t name = str(&f.im, "T"), n = (IMG_MAX - f.im.used) / 48 - 1;
		uint64_t t = img_alloc(&f.im, n * 48);

		for (uint64_t i = 0; i < n; i++) {
			put64(&f.im, t + i * 48, name);
			put64(&f.im, t + i * 48 + 8, name);
		}
		put64(&f.im, f.sym[JVM_SYM_STRUCTS], t);
		e = fake_read(&f, &l, &err);
		CHECK(e == -E2BIG && strstr(err.msg, "no end within 8192"),
		      "a table of more than 8192 entries is refused", "%d: %s (%llu entries)", e,
		      err.msg, (unsigned long long)n);
	}
	fake_free(&f);

	/* members missing, or outside their types */
	memcpy(fs, fields17, sizeof(fs));
	fs[field17("nmethod", "_compile_id")].name = "_compile_id_renamed";
	fake_build(&f, fs, NF17);
	e = fake_read(&f, &l, &err);
	CHECK(e == -ENOTSUP && strstr(err.msg, "nmethod::_compile_id"),
	      "a JVM without a member the reader needs is refused, naming it", "%d: %s", e, err.msg);
	fake_free(&f);
	memcpy(fs, fields17, sizeof(fs));
	/* CompiledMethod is 192 bytes: a pointer does not fit at 190 */
	fs[field17("CompiledMethod", "_method")].offset = 190;
	fake_build(&f, fs, NF17);
	e = fake_read(&f, &l, &err);
	CHECK(e == -ENOTSUP && strstr(err.msg, "CompiledMethod::_method") &&
		      strstr(err.msg, "not within its type"),
	      "a member past its type's end is refused, naming it", "%d: %s", e, err.msg);
	fake_free(&f);
	memcpy(fs, fields17, sizeof(fs));
	fs[field17("CodeBlob", "_frame_complete_offset")].ts = "float";
	fake_build(&f, fs, NF17);
	e = fake_read(&f, &l, &err);
	CHECK(e == -ENOTSUP && strstr(err.msg, "_frame_complete_offset is of type float"),
	      "a member of a type the reader cannot take is refused", "%d: %s", e, err.msg);
	fake_free(&f);
}

/* A fake JVM whose layout reads, for the code heap's and methods' checks. */
static int fake_ok(struct fake *f, struct jvm_layout *l)
{
	struct errbuf err;

	fake_build(f, fields17, NF17);
	return fake_read(f, l, &err);
}

static void check_code(void)
{
	struct fake f;
	struct jvm_layout l;
	struct jvm_codecache cc;
	struct jvm_blob b;
	struct errbuf err = { "" };
	const unsigned nseg = 5000, log2 = 4;
	uint64_t heap, map, ch, ga, arr, blob, name;
	int e = fake_ok(&f, &l), e2 = -1;
	uint8_t *sm;

	heap = img_alloc(&f.im, (size_t)nseg << log2);
	map = img_alloc(&f.im, nseg);
	ch = img_alloc(&f.im, 344);
	ga = img_alloc(&f.im, 16);
	arr = img_alloc(&f.im, 8);
	name = str(&f.im, "nmethod");
	put64(&f.im, ch + l.heap_memory + l.space_low, heap);
	put64(&f.im, ch + l.heap_memory + l.space_high, heap + ((uint64_t)nseg << log2));
	put64(&f.im, ch + l.heap_segmap + l.space_low, map);
	put32(&f.im, ch + l.heap_log2_segment, log2);
	put32(&f.im, ga + l.array_len, 1);
	put64(&f.im, ga + l.array_data, arr);
	put64(&f.im, arr, ch);
	if (!e)
		put64(&f.im, l.codecache_heaps, ga);
	/* the interpreter's code: a StubQueue's buffer in the heap */
	{
		uint64_t q = img_alloc(&f.im, 48);

		put64(&f.im, q + l.queue_buffer, heap + (60 << log2));
		put32(&f.im, q + l.queue_limit, 16 << log2);
		if (!e)
			put64(&f.im, l.interp_code, q);
	}
	/* block 0: 40 segments in use, an nmethod; then free segments; then hops of 1 to the end */
	sm = at(&f.im, map);
	for (unsigned k = 0; k < nseg; k++)
		sm[k] = k < 40 ? (uint8_t)(k % 200 ? k % 200 : 0) : k < 100 ? 0xff : 1;
	put64(&f.im, heap, 40);
	((uint8_t *)at(&f.im, heap))[l.heapblock_used] = 1;
	blob = heap + l.heapblock_size;
	put64(&f.im, blob + l.blob_name, name);
	put32(&f.im, blob + l.blob_size, (40 << log2) - 16);
	put32(&f.im, blob + l.blob_frame_size, 6);
	put32(&f.im, blob + l.blob_frame_complete, 12);
	put64(&f.im, blob + l.blob_code, blob + 352);
	put64(&f.im, blob + l.nm_method, 0x5000);
	put32(&f.im, blob + l.nm_compile_id, 42);
	if (!e)
		e = jvm_codecache_read(&l, &f.m, &cc, &err);
	if (!e)
		e2 = jvm_blob_find(&l, &f.m, &cc, heap + (39 << log2) + 3, &b);
	CHECK(!e && !e2 && cc.n == 1 && b.addr == blob && b.is_nmethod && b.compile_id == 42 &&
		      b.frame_size == 6 && b.method == 0x5000 &&
		      jvm_codecache_interpreted(&cc, heap + (70 << log2)) &&
		      !jvm_codecache_interpreted(&cc, heap + (76 << log2)),
	      "a made-up code heap: the nmethod holding a pc found by its segment map",
	      "%d %d: %s; blob %#llx id %d", e, e2, err.msg, (unsigned long long)b.addr,
	      b.compile_id);
	e2 = e ? -1 : jvm_blob_find(&l, &f.m, &cc, heap + (50 << log2), &b);
	CHECK(e2 == -ENOENT, "a pc in a free block is in no blob", "%d", e2);
	e2 = e ? -1 : jvm_blob_find(&l, &f.m, &cc, heap + ((uint64_t)(nseg - 1) << log2), &b);
	CHECK(e2 == -EINVAL, "a segment map whose hops never end is given up", "%d", e2);
	/* a blob that says it runs past its heap */
	put32(&f.im, blob + l.blob_size, nseg << log2);
	e2 = e ? -1 : jvm_blob_find(&l, &f.m, &cc, heap + 20, &b);
	CHECK(e2 == -EINVAL, "a blob larger than its heap is refused", "%d", e2);
	/* too many heaps */
	put32(&f.im, ga + l.array_len, 1000);
	e2 = e ? -1 : jvm_codecache_read(&l, &f.m, &cc, &err);
	CHECK(e2 == -EINVAL && strstr(err.msg, "1000 heaps"), "a code cache of 1000 heaps is refused",
	      "%d: %s", e2, err.msg);
	fake_free(&f);
}

/* A Symbol of @s (@n bytes) at a new address. */
static uint64_t symbol(struct img *im, const char *s, size_t n)
{
	uint64_t a = img_alloc(im, 8 + n);

	memcpy((uint8_t *)at(im, a) + 4, &(uint16_t){ (uint16_t)n }, 2);
	memcpy((uint8_t *)at(im, a) + 6, s, n);
	return a;
}

/* The JVM's line table writer, from its description: pairs as deltas, UNSIGNED5 numbers. */
static size_t u5_put(uint8_t *p, uint32_t v, unsigned x)
{
	const uint32_t L = 256 - 64 - x;
	size_t i = 0;

	for (;; i++) {
		if (v < L || i == 4) {
			p[i] = (uint8_t)(x + v);
			return i + 1;
		}
		v -= L;
		p[i] = (uint8_t)(x + L + (v % 64));
		v >>= 6;
	}
}

static size_t lines_encode(const struct jvm_line *t, size_t n, unsigned x, uint8_t *out)
{
	uint32_t bci = 0, line = 0;
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		int32_t db = (int32_t)(t[i].bci - bci), dl = (int32_t)(t[i].line - line);

		if (!(db & ~0x1f) && !(dl & ~7) && ((db << 3) | dl) != 0xff) {
			out[k++] = (uint8_t)((db << 3) | dl);
		} else {
			out[k++] = 0xff;
			k += u5_put(out + k, ((uint32_t)db << 1) ^ (uint32_t)(db >> 31), x);
			k += u5_put(out + k, ((uint32_t)dl << 1) ^ (uint32_t)(dl >> 31), x);
		}
		bci = t[i].bci;
		line = t[i].line;
	}
	out[k++] = 0;
	return k;
}

static void check_lines(void)
{
	static struct jvm_line t[300], got[300];
	static uint8_t enc[300 * 11 + 1];
	unsigned seed = 1, bad = 0, cut_ok = 0, tables = 0;

	for (int major = 17; major <= 25; major += 8) {
		for (int r = 0; r < 200; r++) {
			size_t n = 1 + (size_t)(rand_r(&seed) % 300), len;
			uint32_t bci = 0, line = 1 + (uint32_t)(rand_r(&seed) % 5000);
			int k;

			for (size_t i = 0; i < n; i++) {
				/* never a pair equal to the one before: its byte would be the end */
				bci += 1 + (uint32_t)(rand_r(&seed) % (r % 3 ? 40 : 70000));
				line += (uint32_t)(rand_r(&seed) % 150) - 50;
				t[i] = (struct jvm_line){ bci, line };
			}
			len = lines_encode(t, n, major >= 20, enc);
			k = jvm_lines_decode(enc, len, (unsigned)major, got, 300);
			tables++;
			if (k != (int)n || memcmp(got, t, n * sizeof(*t)))
				bad++;
			if (jvm_lines_decode(enc, len - 1, (unsigned)major, got, 300) == -EINVAL)
				cut_ok++;
		}
	}
	CHECK(!bad, "line tables of JDK 17 and 25 decode as the JVM's writer wrote them",
	      "%u of %u differ", bad, tables);
	CHECK(cut_ok == tables, "a line table cut before its end is refused", "%u of %u", cut_ok,
	      tables);
}

static void check_method(void)
{
	struct fake f;
	struct jvm_layout l;
	struct jvm_method *m = calloc(1, sizeof(*m));
	uint64_t meth, cm, cp, k, big;
	static const uint8_t lines[] = { 0xff, 0, 18, 2 << 3 | 1, 0 }; /* (0,9) (2,10) */
	char *longname = malloc(5000);
	int e = fake_ok(&f, &l), e2;

	meth = img_alloc(&f.im, 88);
	cm = img_alloc(&f.im, 48 + 3 + sizeof(lines));
	cp = img_alloc(&f.im, 72 + 4 * 8);
	k = img_alloc(&f.im, 464);
	put64(&f.im, meth + l.method_const, cm);
	put64(&f.im, cm + l.const_constants, cp);
	put32(&f.im, cm + l.const_method_size, (48 + 3 + sizeof(lines) + 7) / 8);
	*(uint16_t *)at(&f.im, cm + l.const_flags) = 1;
	*(uint16_t *)at(&f.im, cm + l.const_code_size) = 3;
	*(uint16_t *)at(&f.im, cm + l.const_name_index) = 1;
	*(uint16_t *)at(&f.im, cm + l.const_signature_index) = 2;
	memcpy(at(&f.im, cm + 48 + 3), lines, sizeof(lines));
	put64(&f.im, cp + l.pool_holder, k);
	*(uint16_t *)at(&f.im, cp + l.pool_source_file_index) = 3;
	put32(&f.im, cp + l.pool_length, 4);
	put64(&f.im, cp + 72 + 8, symbol(&f.im, "spin", 4));
	put64(&f.im, cp + 72 + 16, symbol(&f.im, "(J)J", 4));
	put64(&f.im, cp + 72 + 24, symbol(&f.im, "Hot.java", 8));
	put64(&f.im, k + l.klass_name, symbol(&f.im, "p/Hot+0x1234", 12));
	put64(&f.im, k + l.klass_constants, cp);
	e2 = e ? e : jvm_method_read(&l, &f.m, meth, m);
	CHECK(!e2 && !strcmp(m->klass, "p.Hot/0x1234") && !strcmp(m->name, "spin") &&
		      !strcmp(m->sig, "(J)J") && !strcmp(m->file, "Hot.java") && m->nlines == 2 &&
		      jvm_method_line(m, 1) == 9 && jvm_method_line(m, 2) == 10,
	      "a made-up method reads: class (hidden), name, signature, file, lines",
	      "%d: %s.%s%s %s, %zu lines", e2, m->klass, m->name, m->sig, m->file, m->nlines);
	/* a class that does not own the pool */
	put64(&f.im, k + l.klass_constants, cp + 8);
	e2 = e ? e : jvm_method_read(&l, &f.m, meth, m);
	CHECK(e2 == -EINVAL, "a method whose pool is not its class's is refused", "%d", e2);
	put64(&f.im, k + l.klass_constants, cp);
	/* an index past the pool */
	*(uint16_t *)at(&f.im, cm + l.const_name_index) = 9;
	e2 = e ? e : jvm_method_read(&l, &f.m, meth, m);
	CHECK(e2 == -EINVAL, "a name index past the pool is refused", "%d", e2);
	*(uint16_t *)at(&f.im, cm + l.const_name_index) = 1;
	/* a class name of 5000 bytes: cut, the rest read */
	memset(longname, 'x', 5000);
	big = symbol(&f.im, longname, 5000);
	put64(&f.im, k + l.klass_name, big);
	e2 = e ? e : jvm_method_read(&l, &f.m, meth, m);
	CHECK(!e2 && strlen(m->klass) == JVM_CLASS_MAX - 1 &&
		      !strcmp(m->klass + JVM_CLASS_MAX - 4, "...") && !strcmp(m->name, "spin"),
	      "a class name of 5000 bytes is cut to its bound", "%d: %zu bytes", e2,
	      strlen(m->klass));
	free(longname);
	free(m);
	fake_free(&f);
}

int main(void)
{
	T_PLAN(21);
	check_tables();
	check_code();
	check_lines();
	check_method();
	return T_EXIT();
}
