// SPDX-License-Identifier: MIT
/*
 * The V8 reader on made-up memory: node's v8dbg_* constants and heap
 * objects as a hostile process (or a stale pointer) could lay them out.
 * Missing or out-of-bounds constants, pointer compression and an unknown
 * release are refused naming why; maps that are no maps, cons strings
 * that loop or nest too deep, lengths past the cap, unmapped pointers,
 * slots of the wrong type, external strings uncached or whose data is
 * NULL, unmapped or runs past 2^64 each give their error, never a wrong
 * name; a well-made image names its function, file and lines, from a
 * source in V8's heap or an external one.  Source position
 * tables are checked against an encoder written here from V8's
 * description of its format.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "node/v8_heap.h"
#include "node/v8_layout.h"
#include "node/v8_names.h"
#include "node/v8_script.h"
#include "node/v8_sfi.h"
#include "fakemem.h"
#include "testlib.h"

static uint64_t smi(int32_t v)
{
	return (uint64_t)(uint32_t)v << 32;
}

/* node 20's values (V8 11.3.244.8), in enum v8_sym's order. */
static const int32_t node20[V8_SYM_N] = {
	11, 3, 244, 8, 8, 8, 1, 3, 0, 1, 31, 1, 128, 7, 0, 1, 2, 3, 5, 8, 8, 0, 0, 12, 12, 16,
	16, 16, 24, 16, 16, 24, 16, 24, 16, 32, 8, 8, 16, 56, 8, 16, 8, 16, 54, 16, 1, 2, 3, 255,
	2066, 262, 167, 261, 191, 245, 175, 190, 159, 153, 131, 222, 220, 223, 221, -16, -8,
	-32, -40,
};

/* A made-up V8: its symbols, its layout once read, its meta map and maps by type. */
struct fake {
	struct img im;
	uint64_t sym[V8_SYM_N];
	struct v8_layout l;
	struct memsrc m;
	uint64_t meta;
};

static void fake_syms(struct fake *f)
{
	memset(f, 0, sizeof(*f));
	f->im.mem = calloc(1, IMG_MAX);
	for (int k = 0; k < V8_SYM_N; k++) {
		f->sym[k] = img_alloc(&f->im, 8);
		put32(&f->im, f->sym[k], (uint32_t)node20[k]);
	}
	f->m = (struct memsrc){ .read = img_read, .ctx = &f->im };
}

/* A heap object of @size bytes whose map is @map (tagged): its tagged pointer. */
static uint64_t obj(struct fake *f, size_t size, uint64_t map)
{
	uint64_t a = img_alloc(&f->im, size);

	put64(&f->im, a, map);
	return a + 1;
}

/* A map for instance type @t. */
static uint64_t map_of(struct fake *f, uint16_t t)
{
	uint64_t m = obj(f, 80, f->meta);

	memcpy(at(&f->im, m - 1 + 12), &t, 2);
	return m;
}

static uint64_t new_of(struct fake *f, size_t size, uint16_t t)
{
	return obj(f, size, map_of(f, t));
}

/* A made-up V8 whose layout reads, with its meta map (its own map, MAP_TYPE). */
static int fake_ok(struct fake *f, struct errbuf *err)
{
	uint64_t meta;
	int e;

	fake_syms(f);
	e = v8_layout_read(&f->l, &f->m, f->sym, err);
	meta = img_alloc(&f->im, 80);
	put64(&f->im, meta, meta + 1);
	memcpy(at(&f->im, meta + 12), &(uint16_t){ 255 }, 2);
	f->meta = meta + 1;
	return e;
}

/* A sequential string of @n characters (@two: UTF-16 units in @s16). */
static uint64_t seq1(struct fake *f, const char *s)
{
	size_t n = strlen(s);
	uint64_t o = new_of(f, 16 + n, 40);

	put32(&f->im, o - 1 + 12, (uint32_t)n);
	memcpy(at(&f->im, o - 1 + 16), s, n);
	return o;
}

static uint64_t seq2(struct fake *f, const uint16_t *s, size_t n)
{
	uint64_t o = new_of(f, 16 + 2 * n, 32);

	put32(&f->im, o - 1 + 12, (uint32_t)n);
	memcpy(at(&f->im, o - 1 + 16), s, 2 * n);
	return o;
}

static uint64_t cons(struct fake *f, uint64_t first, uint64_t second, uint32_t len)
{
	uint64_t o = new_of(f, 32, 41);

	put32(&f->im, o - 1 + 12, len);
	put64(&f->im, o - 1 + 16, first);
	put64(&f->im, o - 1 + 24, second);
	return o;
}

static void check_layout(void)
{
	struct fake f;
	struct errbuf err = { "" };
	int e = fake_ok(&f, &err);

	CHECK(!e && f.l.t_sfi == 262 && f.l.sfi_name == 16 && f.l.bytecode_positions == 32 &&
		      f.l.fp_bytecode_offset == -40 && f.l.scope_inlined_max == 75 &&
		      f.l.ext_resource == 16 && f.l.ext_data == 24 && f.l.uncached_mask == 16 &&
		      f.l.uncached_tag == 16,
	      "node 20's constants read: its layout as V8 11.3's", "%d: %s", e, err.msg);
	/* each refusal on its own copy of the constants */
	struct {
		enum v8_sym k;
		int32_t v; /* INT32_MIN: the symbol missing; INT32_MAX: unreadable */
		const char *says, *name;
	} bad[] = {
		{ V8_SYM_SCRIPT_LINE_ENDS, INT32_MIN, "v8dbg_class_Script__line_ends__Object",
		  "a V8 without a symbol the reader needs is refused, naming it" },
		{ V8_SYM_T_SFI, INT32_MAX, "unreadable", "a symbol at an unmapped address is refused" },
		{ V8_SYM_TAGGED_SIZE, 4, "pointer compression",
		  "pointer compression (TaggedSize 4) is refused as such" },
		{ V8_SYM_SMI_SHIFT, 0, "v8dbg_SmiShiftSize", "31-bit Smis are refused" },
		{ V8_SYM_MINOR, 4, "V8 11.4.244.8", "an unknown release is refused, naming its version" },
		{ V8_SYM_SFI_NAME, 5000, "out of its bounds", "an offset of 5000 is refused" },
		{ V8_SYM_T_SCRIPT, 70000, "v8dbg_type_Script__SCRIPT_TYPE", "a type past 65535 is refused" },
		{ V8_SYM_FP_FUNCTION, -20, "v8dbg_off_fp_function", "a frame slot not of 8 bytes is refused" },
		{ V8_SYM_CONS_TAG, 9, "string tags", "a string tag outside its mask is refused" },
		{ V8_SYM_REP_MASK, 0x1f, "uncached bit",
		  "a representation mask over the uncached bit (bit 4) is refused" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint64_t addr = f.sym[bad[i].k];
		struct v8_layout l;

		if (bad[i].v == INT32_MIN)
			f.sym[bad[i].k] = 0;
		else if (bad[i].v == INT32_MAX)
			f.sym[bad[i].k] = BASE + IMG_MAX * 2ull;
		else
			put32(&f.im, addr, (uint32_t)bad[i].v);
		err.msg[0] = 0;
		e = v8_layout_read(&l, &f.m, f.sym, &err);
		CHECK(e == -ENOTSUP && strstr(err.msg, bad[i].says), bad[i].name, "%d: %s", e, err.msg);
		f.sym[bad[i].k] = addr;
		put32(&f.im, addr, (uint32_t)node20[bad[i].k]);
	}
	free(f.im.mem);
}

static void check_strings(void)
{
	struct fake f;
	struct errbuf err;
	char buf[256];
	static const uint16_t pi[] = { 0x3c0, 0xd83d, 0xde00, 0xd800, 'x' }; /* π, 😀, a lone surrogate, x */
	uint64_t a, b, s, thin, parent, sl, tree, loop, deep, big;
	int e = fake_ok(&f, &err), e2;

	a = seq1(&f, "ab");
	b = seq2(&f, pi, 5);
	parent = seq1(&f, "wxyz");
	sl = new_of(&f, 32, 43);
	put32(&f.im, sl - 1 + 12, 3);
	put64(&f.im, sl - 1 + 16, parent);
	put64(&f.im, sl - 1 + 24, smi(1));
	thin = new_of(&f, 24, 45);
	put32(&f.im, thin - 1 + 12, 3);
	put64(&f.im, thin - 1 + 16, sl);
	s = cons(&f, b, thin, 8);
	tree = cons(&f, a, s, 10);
	e2 = e ? e : v8_string(&f.l, &f.m, tree, buf, sizeof(buf));
	CHECK(!e2 && !strcmp(buf, "ab\xcf\x80\xf0\x9f\x98\x80\xef\xbf\xbdxxyz"),
	      "cons, two-byte (a pair, a lone surrogate), thin and sliced strings read as UTF-8",
	      "%d: \"%s\"", e2, buf);
	/* a cons whose first part is itself; a chain 40 deep; one whose second is itself */
	loop = cons(&f, 0, a, 4);
	put64(&f.im, loop - 1 + 16, loop);
	deep = a;
	for (int i = 0; i < 40; i++)
		deep = cons(&f, deep, a, (uint32_t)(2 * i + 4));
	e2 = e ? e : v8_string(&f.l, &f.m, loop, buf, sizeof(buf));
	CHECK(e2 == -ELOOP, "a cons string that is its own first part is refused (-ELOOP)", "%d", e2);
	e2 = e ? e : v8_string(&f.l, &f.m, deep, buf, sizeof(buf));
	CHECK(e2 == -ELOOP, "a cons string nested 40 deep is refused (-ELOOP)", "%d", e2);
	loop = cons(&f, a, 0, 200);
	put64(&f.im, loop - 1 + 24, loop);
	e2 = e ? e : v8_string(&f.l, &f.m, loop, buf, sizeof(buf));
	CHECK(e2 == -EINVAL || e2 == -ELOOP, "a cons string that is its own second part is refused",
	      "%d", e2);
	/* lengths: past the cap, absurd, parts that do not add up */
	big = seq1(&f, "0123456789012345678901234567890123456789");
	e2 = e ? e : v8_string(&f.l, &f.m, big, buf, 40);
	CHECK(e2 == -E2BIG && !buf[0], "a string of 40 bytes into 40 (its NUL) is refused (-E2BIG)",
	      "%d", e2);
	put32(&f.im, big - 1 + 12, 0x7fffffff);
	e2 = e ? e : v8_string_walk(&f.l, &f.m, big, V8_SOURCE_MAX, NULL, NULL);
	CHECK(e2 == -E2BIG, "a length of 2^31 - 1 is refused before any read", "%d", e2);
	put32(&f.im, s - 1 + 12, 9);
	e2 = e ? e : v8_string(&f.l, &f.m, s, buf, sizeof(buf));
	CHECK(e2 == -EINVAL, "a cons string longer than its parts is refused", "%d", e2);
	free(f.im.mem);
}

/* Strings that are no strings, or not readable. */
static void check_string_types(void)
{
	struct fake f;
	struct errbuf err;
	char buf[64];
	uint64_t notmap, sfi, nul;
	int e = fake_ok(&f, &err), e1, e2, e3, e4;

	notmap = obj(&f, 24, seq1(&f, "map?"));
	sfi = new_of(&f, 56, 262);
	nul = seq1(&f, "a\001b");
	((uint8_t *)at(&f.im, nul - 1 + 16))[1] = 0;
	e1 = e ? e : v8_string(&f.l, &f.m, notmap, buf, sizeof(buf));
	e2 = e ? e : v8_string(&f.l, &f.m, sfi, buf, sizeof(buf));
	e3 = e ? e : v8_string(&f.l, &f.m, BASE + 2 * IMG_MAX + 1, buf, sizeof(buf));
	e4 = e ? e : v8_string(&f.l, &f.m, nul, buf, sizeof(buf));
	CHECK(e1 == -EINVAL, "an object whose map is no map is refused", "%d", e1);
	CHECK(e2 == -EINVAL, "an SFI read as a string is refused", "%d", e2);
	CHECK(e3 == -EFAULT, "a string at an unmapped address is refused (-EFAULT)", "%d", e3);
	CHECK(e4 == -EILSEQ, "a name with a NUL in it is refused", "%d", e4);
	free(f.im.mem);
}

/* @n bytes at @p kept outside the heap, as an embedder's resource keeps them: their address. */
static uint64_t raw(struct fake *f, const void *p, size_t n)
{
	uint64_t a = img_alloc(&f->im, n);

	memcpy(at(&f->im, a), p, n);
	return a;
}

/*
 * An external string of type @t (42: one-byte, 34: two-byte; | 16:
 * uncached) of @n characters at @data: its resource a C++ object never read.
 */
static uint64_t ext(struct fake *f, uint16_t t, uint64_t data, uint32_t n)
{
	uint64_t o = new_of(f, 32, t);

	put32(&f->im, o - 1 + 12, n);
	put64(&f->im, o - 1 + 16, img_alloc(&f->im, 32));
	put64(&f->im, o - 1 + 24, data);
	return o;
}

/* A walk's callback that counts the characters handed to it into *@ctx. */
static int chars_count(void *ctx, const uint8_t *chars, size_t n, bool two_byte)
{
	(void)chars;
	(void)two_byte;
	*(size_t *)ctx += n;
	return 0;
}

/* A Script whose source is @src, its line ends not computed yet (undefined). */
static uint64_t script_of(struct fake *f, uint64_t src)
{
	uint64_t sc = new_of(f, 104, 167);

	put64(&f->im, sc - 1 + 8, src);
	put64(&f->im, sc - 1 + 56, new_of(f, 48, 131));
	return sc;
}

/* External strings as V8 keeps them, and as a hostile process could: 7 checks. */
static void check_external(void)
{
	struct fake f;
	struct errbuf err;
	char buf[64];
	/* a, π, 😀 (a pair), a lone low surrogate, z */
	static const uint16_t u16[] = { 'a', 0x3c0, 0xd83d, 0xde00, 0xdc00, 'z' };
	uint64_t data, one, sl, nores, cut, big, far = BASE + 2 * IMG_MAX;
	uint32_t *ends = NULL;
	size_t nends = 0, nread = 0;
	int e = fake_ok(&f, &err), e1, e2, e3;

	data = raw(&f, "external", 8);
	one = ext(&f, 42, data, 8);
	e1 = e ? e : v8_string(&f.l, &f.m, one, buf, sizeof(buf));
	CHECK(!e1 && !strcmp(buf, "external"),
	      "an external one-byte string is read where its resource_data points", "%d: \"%s\"",
	      e1, buf);
	e1 = e ? e : v8_string(&f.l, &f.m, ext(&f, 34, raw(&f, u16, sizeof(u16)), 6), buf,
			       sizeof(buf));
	CHECK(!e1 && !strcmp(buf, "a\xcf\x80\xf0\x9f\x98\x80\xef\xbf\xbdz"),
	      "an external two-byte string (a pair, a lone surrogate) reads as UTF-8", "%d: \"%s\"",
	      e1, buf);
	sl = new_of(&f, 32, 43);
	put32(&f.im, sl - 1 + 12, 3);
	put64(&f.im, sl - 1 + 16, one);
	put64(&f.im, sl - 1 + 24, smi(2));
	e1 = e ? e : v8_string(&f.l, &f.m, sl, buf, sizeof(buf));
	CHECK(!e1 && !strcmp(buf, "ter"), "a slice of an external string reads its part",
	      "%d: \"%s\"", e1, buf);
	/* uncached: V8 keeps no resource_data, so the word there (good data here) is not its */
	e1 = e ? e : v8_string(&f.l, &f.m, ext(&f, 42 | 16, data, 8), buf, sizeof(buf));
	CHECK(e1 == -ENOTSUP && !buf[0],
	      "an uncached external string is refused (-ENOTSUP), the word after its resource "
	      "unread",
	      "%d: \"%s\"", e1, buf);
	nores = ext(&f, 42, data, 8);
	put64(&f.im, nores - 1 + 16, 0);
	e1 = e ? e : v8_string(&f.l, &f.m, ext(&f, 42, 0, 8), buf, sizeof(buf));
	e2 = e ? e : v8_string(&f.l, &f.m, nores, buf, sizeof(buf));
	CHECK(e1 == -EINVAL && e2 == -EINVAL,
	      "external strings whose data is NULL, or whose resource is (disposed): refused "
	      "(-EINVAL)",
	      "%d %d", e1, e2);
	/* data unmapped; at 2^64 - 4, its end past 2^64; its second page unmapped */
	e1 = e ? e : v8_string(&f.l, &f.m, ext(&f, 42, far, 8), buf, sizeof(buf));
	e2 = e ? e : v8_string(&f.l, &f.m, ext(&f, 34, UINT64_MAX - 3, 8), buf, sizeof(buf));
	cut = ext(&f, 42, 0, 6000);
	img_alloc(&f.im, 8192);
	put64(&f.im, cut - 1 + 24, BASE + f.im.size - 5000);
	e3 = e ? e : v8_string_walk(&f.l, &f.m, cut, V8_SOURCE_MAX, chars_count, &nread);
	CHECK(e1 == -EFAULT && e2 == -EFAULT && e3 == -EFAULT && nread == 4096,
	      "external data unmapped, past 2^64, or mapped for its first page only (read, then "
	      "-EFAULT): refused",
	      "%d %d %d, %zu read", e1, e2, e3, nread);
	/* over the cap: refused before its (unmapped) data is read */
	big = script_of(&f, ext(&f, 42, far, V8_SOURCE_MAX + 1));
	e1 = e ? e : v8_string(&f.l, &f.m, ext(&f, 42, far, 64), buf, sizeof(buf));
	e2 = e ? e : v8_script_line_ends(&f.l, &f.m, big, &ends, &nends);
	CHECK(e1 == -E2BIG && e2 == -E2BIG,
	      "an external string past the cap, a source past V8_SOURCE_MAX: refused unread "
	      "(-E2BIG)",
	      "%d %d", e1, e2);
	free(ends);
	free(f.im.mem);
}

/* V8's source position table writer, from its description: zigzag VLQ deltas. */
static size_t put_int(uint8_t *p, int64_t v)
{
	uint64_t u = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
	size_t i = 0;

	do {
		p[i] = (uint8_t)(u & 0x7f) | (u > 0x7f ? 0x80 : 0);
		u >>= 7;
	} while (p[i++] & 0x80);
	return i;
}

struct entry {
	int32_t code, pos;
	bool statement, external;
};

static size_t table_encode(const struct entry *t, size_t n, uint8_t *out)
{
	int64_t code = -1, raw = 0;
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		int64_t r = t[i].external ? 1 | (int64_t)t[i].pos << 1 : (int64_t)(t[i].pos + 1) << 1;
		int64_t dc = t[i].code - code;

		k += put_int(out + k, t[i].statement ? dc : -dc - 1);
		k += put_int(out + k, r - raw);
		code = t[i].code;
		raw = r;
	}
	return k;
}

static void check_positions(void)
{
	static struct entry t[400];
	static uint8_t enc[400 * 20 + 1];
	unsigned seed = 7, bad = 0, cut = 0, tables = 0;

	for (int r = 0; r < 300; r++) {
		size_t n = 1 + (size_t)(rand_r(&seed) % 400), len;
		int32_t code = -1 + (int32_t)(rand_r(&seed) % 2), pos = (int32_t)(rand_r(&seed) % 5000);

		for (size_t i = 0; i < n; i++) {
			code += (int32_t)(rand_r(&seed) % (r % 4 ? 9 : 5000));
			pos += (int32_t)(rand_r(&seed) % 300) - 100;
			if (pos < 0)
				pos = 0;
			t[i] = (struct entry){ code, pos, rand_r(&seed) % 2, rand_r(&seed) % 11 == 0 };
		}
		len = table_encode(t, n, enc);
		tables++;
		/* each offset's position: the last JavaScript entry at or before it */
		for (int32_t off = -1; off <= code + 2; off += 1 + off / 64) {
			int32_t want = -1, got = -1;
			int e;

			for (size_t i = 0; i < n && t[i].code <= off; i++)
				if (!t[i].external)
					want = t[i].pos;
			e = v8_positions_find(enc, len, off, &got);
			if (want < 0 ? e != -ENODATA : e || got != want) {
				bad++;
				break;
			}
		}
		/* a number begun and not ended */
		enc[len] = 0x80;
		if (v8_positions_find(enc, len + 1, INT32_MAX, &(int32_t){ 0 }) == -EINVAL)
			cut++;
	}
	CHECK(!bad, "source position tables decode as V8's writer wrote them (300 tables)",
	      "%u of %u differ", bad, tables);
	CHECK(cut == tables, "a table that ends inside a number is refused", "%u of %u", cut, tables);
}

/* A made-up function: its script, ScopeInfo, bytecode and SFI. */
struct fn {
	uint64_t script, scope, bytecode, table, sfi, undef;
	int32_t start, x; /* positions of "(" and "x" in the source */
};

static const char source[] = "l1\nl2\r\nl3\rl4\xe2\x80\xa8l5\nfunction f() {\n  x;\n}\n";

/* The source as UTF-16 into @u (64 units): U+2028 in it, so a two-byte string. */
static size_t source_units(uint16_t *u)
{
	size_t n = 0;

	for (const char *c = source; *c; c++) {
		if ((uint8_t)*c == 0xe2) {
			u[n++] = 0x2028;
			c += 2;
		} else {
			u[n++] = (uint8_t)*c;
		}
	}
	return n;
}

static uint64_t source_string(struct fake *f)
{
	uint16_t u[64];

	return seq2(f, u, source_units(u));
}

/* A function scope's ScopeInfo of @nctx context locals, named @name, from @start. */
static uint64_t scope_info(struct fake *f, int32_t nctx, uint64_t name, uint64_t inferred,
			   int32_t start)
{
	uint32_t names = nctx < 75 ? (uint32_t)nctx : 1, i = 3;
	uint64_t si = new_of(f, 8 + 8 * (3 + names + (uint32_t)nctx + 5), 261);

	put64(&f->im, si - 1 + 8, smi(2 | 3 << 12 | 1 << 14));
	put64(&f->im, si - 1 + 16, smi(0));
	put64(&f->im, si - 1 + 24, smi(nctx));
	for (uint32_t k = 0; k < names; k++)
		put64(&f->im, si - 1 + 8 + 8 * i++, seq1(f, "local"));
	for (int32_t k = 0; k < nctx; k++)
		put64(&f->im, si - 1 + 8 + 8 * i++, smi(0));
	put64(&f->im, si - 1 + 8 + 8 * i++, name);
	put64(&f->im, si - 1 + 8 + 8 * i++, smi(-1));
	put64(&f->im, si - 1 + 8 + 8 * i++, inferred);
	put64(&f->im, si - 1 + 8 + 8 * i++, smi(start));
	put64(&f->im, si - 1 + 8 + 8 * i, smi(start + 16));
	return si;
}

/* The function in the source @src, where the source above is @shift characters in. */
static void fn_build_in(struct fake *f, struct fn *fn, uint64_t src, int32_t shift)
{
	static uint8_t tab[16];
	size_t tl;

	/* in UTF-16 units: "(" of line 6's "function f() {", "x" of line 7 */
	fn->start = 26 + shift;
	fn->x = 33 + shift;
	fn->undef = new_of(f, 48, 131);
	fn->script = new_of(f, 104, 167);
	put64(&f->im, fn->script - 1 + 8, src);
	put64(&f->im, fn->script - 1 + 16, seq1(f, "/srv/app.js"));
	put64(&f->im, fn->script - 1 + 56, fn->undef);
	fn->scope = scope_info(f, 2, seq1(f, "f"), fn->undef, fn->start);
	/* offsets 0-3 at "(", 4 on at "x" */
	tl = table_encode((const struct entry[]){ { 0, fn->start, true, false },
						  { 4, fn->x, true, false } }, 2, tab);
	fn->table = new_of(f, 16 + tl, 190);
	put64(&f->im, fn->table - 1 + 8, smi((int32_t)tl));
	memcpy(at(&f->im, fn->table - 1 + 16), tab, tl);
	fn->bytecode = new_of(f, 54 + 20, 191);
	put64(&f->im, fn->bytecode - 1 + 8, smi(20));
	put64(&f->im, fn->bytecode - 1 + 32, fn->table);
	fn->sfi = new_of(f, 56, 262);
	put64(&f->im, fn->sfi - 1 + 8, fn->bytecode);
	put64(&f->im, fn->sfi - 1 + 16, fn->scope);
	put64(&f->im, fn->sfi - 1 + 32, fn->script);
}

static void fn_build(struct fake *f, struct fn *fn)
{
	fn_build_in(f, fn, source_string(f), 0);
}

/* The frame of @sfi at @offset, resolved in a cache of its own. */
static int name_once(struct fake *f, uint64_t sfi, int32_t offset, struct v8_frame *out,
		     char *function, char *script)
{
	struct v8_names n;
	const struct v8_frame *fr;
	int e;

	v8_names_init(&n);
	e = v8_frame_name(&n, &f->l, &f->m, sfi, offset, &fr);
	if (!e) {
		*out = *fr;
		snprintf(function, 64, "%s", fr->function);
		snprintf(script, 64, "%s", fr->script);
	}
	v8_names_free(&n);
	return e;
}

/* The made-up function with its ScopeInfo (or name) slot set otherwise: 4 + 2 checks. */
static void check_scopes(struct fake *f, struct fn *fn)
{
	struct v8_frame fr = { 0 };
	char func[64] = "", script[64] = "";
	uint64_t ud, si = scope_info(f, 2, smi(5), fn->undef, fn->start);
	int e;

	put64(&f->im, fn->sfi - 1 + 16, si);
	e = name_once(f, fn->sfi, -1, &fr, func, script);
	CHECK(!e && fr.err == -EINVAL, "a ScopeInfo whose name is Smi 5 is refused", "%d/%d", e, fr.err);
	si = scope_info(f, 2, seq1(f, "f"), fn->undef, fn->start);
	put64(&f->im, si - 1 + 8 + 8 * 11, smi(3)); /* end: slot 11 */
	put64(&f->im, fn->sfi - 1 + 16, si);
	e = name_once(f, fn->sfi, -1, &fr, func, script);
	CHECK(!e && fr.err == -EINVAL, "a ScopeInfo that ends before it starts is refused", "%d/%d",
	      e, fr.err);
	put64(&f->im, fn->sfi - 1 + 16, scope_info(f, 80, seq1(f, "g"), fn->undef, fn->start));
	e = name_once(f, fn->sfi, -1, &fr, func, script);
	CHECK(!e && !fr.err && !strcmp(func, "g") && fr.start_line == 6,
	      "80 context locals: their names in one hash table slot, the function's after", "%d/%d %s",
	      e, fr.err, func);
	put64(&f->im, fn->sfi - 1 + 16, scope_info(f, 0, smi(0), seq1(f, "o.p"), fn->start));
	e = name_once(f, fn->sfi, -1, &fr, func, script);
	CHECK(!e && !fr.err && !strcmp(func, "o.p"), "no name (Smi 0): the inferred one", "%d/%d %s",
	      e, fr.err, func);
	put64(&f->im, fn->sfi - 1 + 16, scope_info(f, 0, smi(0), fn->undef, fn->start));
	e = name_once(f, fn->sfi, -1, &fr, func, script);
	CHECK(!e && !fr.err && !strcmp(func, "(anonymous)"), "no name, none inferred: (anonymous)",
	      "%d/%d %s", e, fr.err, func);
	/* not compiled yet: a name, and an UncompiledData with the start */
	ud = new_of(f, 24, 222);
	put64(&f->im, ud - 1 + 8, seq1(f, ""));
	put32(&f->im, ud - 1 + 16, (uint32_t)fn->start);
	put32(&f->im, ud - 1 + 20, (uint32_t)fn->start + 16);
	put64(&f->im, fn->sfi - 1 + 16, seq1(f, "lazy"));
	put64(&f->im, fn->sfi - 1 + 8, ud);
	e = name_once(f, fn->sfi, 3, &fr, func, script);
	CHECK(!e && !fr.err && !strcmp(func, "lazy") && fr.start_line == 6 && fr.line_err == -ENODATA,
	      "a function not compiled: its name, its UncompiledData's start, no bytecode",
	      "%d/%d %s %u (%d)", e, fr.err, func, fr.start_line, fr.line_err);
	put64(&f->im, fn->sfi - 1 + 8, fn->bytecode);
	put64(&f->im, fn->sfi - 1 + 16, fn->scope);
}

/* SFIs that are no SFIs, or hold what V8 never puts there: 3 checks. */
static void check_refusals(void)
{
	struct fake f;
	struct errbuf err;
	struct fn fn;
	struct v8_sfi s;
	int e = fake_ok(&f, &err), e1 = -1, e2 = -1, e3 = -1, e4 = -1;

	fn_build(&f, &fn);
	if (!e) {
		e1 = v8_sfi_read(&f.l, &f.m, fn.script, &s);
		e2 = v8_sfi_read(&f.l, &f.m, BASE + 2 * IMG_MAX + 1, &s);
	}
	CHECK(e1 == -EINVAL && e2 == -EFAULT, "a Script and an unmapped address are no SFI",
	      "%d %d", e1, e2);
	put64(&f.im, fn.sfi - 1 + 16, new_of(&f, 16, 175));
	e3 = e ? e : v8_sfi_read(&f.l, &f.m, fn.sfi, &s);
	put64(&f.im, fn.sfi - 1 + 16, fn.scope);
	put64(&f.im, fn.sfi - 1 + 32, seq1(&f, "not a script"));
	e4 = e ? e : v8_sfi_read(&f.l, &f.m, fn.sfi, &s);
	CHECK(e3 == -EINVAL && e4 == -EINVAL,
	      "a FixedArray for the name or scope info, a String for the script: refused", "%d %d",
	      e3, e4);
	put64(&f.im, fn.table - 1, smi(3));
	put64(&f.im, fn.sfi - 1 + 32, fn.script);
	e3 = e ? e : v8_sfi_read(&f.l, &f.m, fn.sfi, &s);
	if (!e3)
		e3 = v8_bytecode_position(&f.l, &f.m, s.bytecode, 5, &(int32_t){ 0 });
	CHECK(e3 == -ENODATA, "a position table whose map is no map gives no line", "%d", e3);
	free(f.im.mem);
}

/* The cache: kept, resolved anew when the SFI's words change, kept when unreadable, bounded. */
static void check_cache(void)
{
	struct fake f;
	struct errbuf err;
	struct fn fn;
	struct v8_names n;
	const struct v8_frame *a = NULL, *b = NULL;
	int e = fake_ok(&f, &err), e2 = -1, e3 = -1;
	size_t old_size;

	fn_build(&f, &fn);
	v8_names_init(&n);
	if (!e && !(e2 = v8_frame_name(&n, &f.l, &f.m, fn.sfi, 5, &a)))
		e2 = v8_frame_name(&n, &f.l, &f.m, fn.sfi, 5, &b);
	CHECK(!e2 && a == b && n.st.named == 1 && !strcmp(b->function, "f"),
	      "a frame asked twice is read once", "%d: %zu named", e2, n.st.named);
	put64(&f.im, fn.sfi - 1 + 16, scope_info(&f, 0, seq1(&f, "h"), fn.undef, fn.start));
	e2 = e ? e : v8_frame_name(&n, &f.l, &f.m, fn.sfi, 5, &a);
	CHECK(!e2 && !strcmp(a->function, "h") && n.st.named == 2,
	      "an SFI whose words changed (the GC moved another there) is read anew", "%d: %s", e2,
	      a ? a->function : "");
	old_size = f.im.size;
	f.im.size = 0;
	e2 = e ? e : v8_frame_name(&n, &f.l, &f.m, fn.sfi, 5, &a);
	f.im.size = old_size;
	CHECK(!e2 && !strcmp(a->function, "h") && n.st.named == 2,
	      "a process gone keeps the names read while it lived", "%d: %s", e2, a ? a->function : "");
	for (int32_t off = 0; !e && off < V8_NAMES_MAX + 10 && e3 != -ENOSPC; off++)
		e3 = v8_frame_name(&n, &f.l, &f.m, fn.sfi, 100 + off, &a);
	CHECK(e3 == -ENOSPC && n.frames.n + n.scripts.n == V8_NAMES_MAX && n.st.refused == 1,
	      "past 65536 entries a frame is not kept (-ENOSPC, counted)", "%d: %zu + %zu, %zu refused",
	      e3, n.frames.n, n.scripts.n, n.st.refused);
	v8_names_free(&n);
	free(f.im.mem);
}

static void check_function(void)
{
	struct fake f;
	struct errbuf err;
	struct fn fn;
	struct v8_frame fr = { 0 };
	char func[64] = "", script[64] = "";
	uint64_t ends;
	int e = fake_ok(&f, &err), e2;

	fn_build(&f, &fn);
	e2 = e ? e : name_once(&f, fn.sfi, 5, &fr, func, script);
	CHECK(!e2 && !fr.err && !strcmp(func, "f") && !strcmp(script, "/srv/app.js") &&
		      fr.start_line == 6 && fr.line == 7,
	      "a made-up function: name, file, start line and its offset's line (from a two-byte "
	      "source of \\n, \\r\\n, \\r and U+2028)",
	      "%d/%d: \"%s\" \"%s\" %u %u (%d %d)", e2, fr.err, func, script, fr.start_line, fr.line,
	      fr.start_err, fr.line_err);
	/* V8's own line ends, then ones that go back */
	ends = new_of(&f, 16 + 9 * 8, 175);
	put64(&f.im, ends - 1 + 8, smi(9));
	{
		static const int32_t v[] = { 2, 6, 9, 12, 15, 30, 35, 37, 38 };

		for (int i = 0; i < 9; i++)
			put64(&f.im, ends - 1 + 16 + 8 * (uint64_t)i, smi(v[i]));
	}
	put64(&f.im, fn.script - 1 + 56, ends);
	e2 = e ? e : name_once(&f, fn.sfi, 5, &fr, func, script);
	CHECK(!e2 && !fr.err && fr.start_line == 6 && fr.line == 7,
	      "... the same lines from V8's line ends", "%d: %u %u (%d)", e2, fr.start_line, fr.line,
	      fr.start_err);
	put64(&f.im, ends - 1 + 16 + 8 * 4, smi(3));
	e2 = e ? e : name_once(&f, fn.sfi, 5, &fr, func, script);
	CHECK(!e2 && !fr.err && !strcmp(func, "f") && !fr.start_line && !fr.line &&
		      fr.start_err == -EINVAL,
	      "line ends that go back give no lines (-EINVAL), the name still", "%d: %u %u (%d)", e2,
	      fr.start_line, fr.line, fr.start_err);
	put64(&f.im, fn.script - 1 + 56, fn.undef);
	e2 = e ? e : name_once(&f, fn.sfi, 25, &fr, func, script);
	CHECK(!e2 && !fr.err && fr.line_err == -ERANGE && !fr.line && fr.start_line == 6,
	      "an offset past the bytecode gives no line (-ERANGE)", "%d: %u (%d)", e2, fr.line,
	      fr.line_err);
	check_scopes(&f, &fn);
	free(f.im.mem);
}

/*
 * The made-up function in a script whose source is external, two-byte and
 * 5000 lines longer ("//π" each: 20000 characters, 10 reads): its lines
 * past the first pages.  1 check.
 */
static void check_external_source(void)
{
	struct fake f;
	struct errbuf err;
	struct fn fn;
	struct v8_frame fr = { 0 };
	char func[64] = "", script[64] = "";
	uint16_t *u = calloc(20064, 2);
	size_t n = 0;
	uint64_t data;
	int e = fake_ok(&f, &err), e2;

	while (u && n < 20000) {
		memcpy(u + n, (const uint16_t[]){ '/', '/', 0x3c0, '\n' }, 8);
		n += 4;
	}
	n += u ? source_units(u + n) : 0;
	data = u ? raw(&f, u, 2 * n) : 0;
	fn_build_in(&f, &fn, ext(&f, 34, data, (uint32_t)n), 20000);
	e2 = e ? e : name_once(&f, fn.sfi, 5, &fr, func, script);
	CHECK(!e2 && !fr.err && !strcmp(func, "f") && fr.start_line == 5006 && fr.line == 5007,
	      "a made-up function in an external two-byte source of 20000 characters and more: its "
	      "start line and its offset's line",
	      "%d/%d: \"%s\" %u %u (%d %d)", e2, fr.err, func, fr.start_line, fr.line, fr.start_err,
	      fr.line_err);
	free(u);
	free(f.im.mem);
}

int main(void)
{
	T_PLAN(49);
	check_layout();
	check_strings();
	check_string_types();
	check_external();
	check_positions();
	check_function();
	check_external_source();
	check_refusals();
	check_cache();
	return T_EXIT();
}
