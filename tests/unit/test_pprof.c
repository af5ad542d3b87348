// SPDX-License-Identifier: MIT
/*
 * Tests for the pprof encoder (proto/pprof.c), written through the gzip
 * file writer (user/output.c) and read back by two independent readers:
 * `protoc --decode` with proto/profile.proto, and `go tool pprof`.  A small
 * wire-format walker here also checks what neither reader can: that every
 * string_table entry comes before the first message that refers to it.
 *
 * Runs with cwd = the repository root.  VERBOSE=1 prints the readers'
 * output.
 */
#include <errno.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "output.h"
#include "pprof.h"
#include "testlib.h"

static char tmpdir[1024];
static int dirfd_out = -1;
static int have_protoc, have_go;

/* ---- helpers ---- */

/* A growable in-memory sink; fails with @fail_err after @fail_after calls. */
struct memsink {
	unsigned char *p;
	size_t len, cap;
	int calls, fail_after, fail_err;
};

static int mem_write(void *ctx, const void *buf, size_t len)
{
	struct memsink *m = ctx;

	if (m->fail_err && m->calls++ >= m->fail_after)
		return m->fail_err;
	if (m->len + len > m->cap) {
		size_t cap = m->cap ? m->cap : 4096;
		unsigned char *p;

		while (cap < m->len + len)
			cap *= 2;
		p = realloc(m->p, cap);
		if (!p)
			return -ENOMEM;
		m->p = p;
		m->cap = cap;
	}
	memcpy(m->p + m->len, buf, len);
	m->len += len;
	return 0;
}

static const struct pprof_value_type types2[] = {
	{ "samples", "count" },
	{ "cpu", "nanoseconds" },
};

static struct pprof_meta meta2(void)
{
	static const char *const comments[] = { "cprof-bpf unit test",
						"second comment" };
	struct pprof_meta m = {
		.sample_types = types2,
		.n_sample_types = 2,
		.period_type = { "cpu", "nanoseconds" },
		.period = 10101010,
		.time_nanos = 1700000000123456789LL,
		.duration_nanos = 30000000000LL,
		.comments = comments,
		.n_comments = 2,
	};
	return m;
}

/* Runs @cmd through the shell; returns its exit status and output. */
static int run(const char *cmd, char **out)
{
	FILE *p = popen(cmd, "r");
	size_t len = 0, cap = 65536;
	char *buf = malloc(cap);
	int st;

	if (!p || !buf) {
		if (p)
			pclose(p);
		free(buf);
		*out = strdup("");
		return -1;
	}
	for (;;) {
		size_t n;

		if (cap - len < 65536) {
			cap *= 2;
			buf = realloc(buf, cap);
			if (!buf)
				abort();
		}
		n = fread(buf + len, 1, cap - len - 1, p);
		if (!n)
			break;
		len += n;
	}
	buf[len] = '\0';
	st = pclose(p);
	*out = buf;
	if (getenv("VERBOSE"))
		fprintf(stderr, "$ %s\n%s\n", cmd, buf);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int count_substr(const char *hay, const char *needle)
{
	int n = 0;
	size_t len = strlen(needle);

	for (const char *p = hay; (p = strstr(p, needle)); p += len)
		n++;
	return n;
}

/* Writes the profile in @m to @name in the temp dir, gzipped. */
static int write_gz(const char *name, const void *data, size_t len)
{
	struct errbuf err = { "" };
	struct gzfile *f;
	int r = gzfile_create(&f, dirfd_out, name, &err);

	if (r < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return r;
	}
	r = gzfile_write(f, data, len);
	if (r < 0) {
		gzfile_abort(f);
		return r;
	}
	r = gzfile_commit(f, &err);
	if (r < 0)
		fprintf(stderr, "%s\n", err.msg);
	return r;
}

static char *protoc_decode(const char *name, int *rc)
{
	char cmd[8192];
	char *out;

	snprintf(cmd, sizeof(cmd),
		 "gzip -dc '%s/%s' | protoc --decode=perftools.profiles.Profile "
		 "proto/profile.proto 2>&1",
		 tmpdir, name);
	*rc = run(cmd, &out);
	return out;
}

static char *go_pprof(const char *args, const char *name, int *rc)
{
	char cmd[8192];
	char *out;

	/* HOME: pprof keeps state there; keep it out of the real one. */
	snprintf(cmd, sizeof(cmd),
		 "HOME='%s' go tool pprof -symbolize=none %s '%s/%s' 2>&1",
		 tmpdir, args, tmpdir, name);
	*rc = run(cmd, &out);
	return out;
}

/*
 * A minimal independent protobuf reader, only what the order check needs.
 * Returns false on malformed input.
 */
static bool get_varint(const unsigned char **p, const unsigned char *end,
		       uint64_t *v)
{
	*v = 0;
	for (int shift = 0; shift < 64 && *p < end; shift += 7) {
		unsigned char c = *(*p)++;

		*v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return true;
	}
	return false;
}

/* Calls @fn for each field of the message in [p, end). */
static bool walk(const unsigned char *p, const unsigned char *end,
		 bool (*fn)(void *ctx, unsigned field, uint64_t v,
			    const unsigned char *body, size_t len),
		 void *ctx)
{
	while (p < end) {
		uint64_t tag, v = 0;
		const unsigned char *body = NULL;

		if (!get_varint(&p, end, &tag))
			return false;
		switch (tag & 7) {
		case 0:
			if (!get_varint(&p, end, &v))
				return false;
			break;
		case 2:
			if (!get_varint(&p, end, &v) || v > (uint64_t)(end - p))
				return false;
			body = p;
			p += v;
			break;
		default:
			return false; /* we never write other wire types */
		}
		if (!fn(ctx, (unsigned)(tag >> 3), v, body, body ? v : 0))
			return false;
	}
	return true;
}

struct order_ctx {
	uint64_t n_strings;
	const unsigned *idx_fields; /* string-index fields of this message */
	int bad;
	int first_string_empty;
};

/* Checks that the string-index fields of one message are already known. */
static bool check_idx(void *vctx, unsigned field, uint64_t v,
		      const unsigned char *body, size_t len)
{
	struct order_ctx *c = vctx;

	for (const unsigned *f = c->idx_fields; *f; f++)
		if (*f == field && !body && v >= c->n_strings)
			c->bad++;
	return true;
}

static const unsigned vt_idx[] = { 1, 2, 0 };
static const unsigned fn_idx[] = { 2, 3, 4, 0 };
static const unsigned map_idx[] = { 5, 6, 0 };
static const unsigned label_idx[] = { 1, 2, 4, 0 };

static bool check_sample(void *vctx, unsigned field, uint64_t v,
			 const unsigned char *body, size_t len)
{
	struct order_ctx *c = vctx;

	if (field == 3 && body) {
		c->idx_fields = label_idx;
		return walk(body, body + len, check_idx, c);
	}
	return true;
}

static bool check_top(void *vctx, unsigned field, uint64_t v,
		      const unsigned char *body, size_t len)
{
	struct order_ctx *c = vctx;

	switch (field) {
	case 6:
		if (c->n_strings == 0)
			c->first_string_empty = body && len == 0;
		c->n_strings++;
		return true;
	case 1:
	case 11:
		c->idx_fields = vt_idx;
		return walk(body, body + len, check_idx, c);
	case 5:
		c->idx_fields = fn_idx;
		return walk(body, body + len, check_idx, c);
	case 3:
		c->idx_fields = map_idx;
		return walk(body, body + len, check_idx, c);
	case 2:
		return walk(body, body + len, check_sample, c);
	case 13:
		if (v >= c->n_strings)
			c->bad++;
		return true;
	}
	return true;
}

static int64_t add_fn(struct pprof_enc *e, const char *name,
		      const char *system_name, const char *filename,
		      int64_t start_line)
{
	struct pprof_function f = { .name = name,
				    .system_name = system_name,
				    .filename = filename,
				    .start_line = start_line };

	return pprof_add_function(e, &f);
}

/* ---- the main profile ---- */

#define BUILD_ID "0123456789abcdef0123456789abcdef01234567"
#define UTF8_NAME "w\xc3\xb6rker-\xe2\x82\xac-\xf0\x9f\x94\xa5"

static void test_full_profile(void)
{
	struct pprof_meta meta = meta2();
	struct memsink ms = { 0 };
	struct pprof_enc *e;
	int64_t m1, m2, f_main, f_main2, f_work, f_inl, f_kern, f_c, f_c2,
		f_other;
	int64_t l1, l2, l3;
	int r;

	r = pprof_enc_new(&e, &meta, (struct pprof_sink){ mem_write, &ms });
	CHECK(r == 0 && e, "pprof: encoder created", "r=%d", r);
	if (r)
		return;

	m1 = pprof_add_mapping(e, &(struct pprof_mapping){
					  .start = 0x400000,
					  .limit = 0x500000,
					  .offset = 0x1000,
					  .filename = "/usr/bin/testprog",
					  .build_id = BUILD_ID,
					  .has_functions = true,
					  .has_filenames = true,
					  .has_line_numbers = true,
					  .has_inline_frames = true,
				  });
	m2 = pprof_add_mapping(e, &(struct pprof_mapping){
					  .start = 0xffffffff81000000ULL,
					  .limit = 0xffffffff83000000ULL,
					  .filename = "[kernel.kallsyms]",
					  .has_functions = true,
				  });
	CHECK(m1 == 1 && m2 == 2, "pprof: mapping ids sequential",
	      "m1=%lld m2=%lld", (long long)m1, (long long)m2);

	f_main = add_fn(e, "main", NULL, "main.c", 10);
	f_work = add_fn(e, "work()", "_Z4workv", "work.cc", 20);
	f_inl = add_fn(e, "inlined_helper", NULL, "work.cc", 40);
	f_kern = add_fn(e, "do_syscall_64", NULL, NULL, 0);
	f_main2 = add_fn(e, "main", NULL, "main.c", 10);
	f_c = add_fn(e, "main", "main", "main.c", 10);
	f_c2 = add_fn(e, "main", NULL, "main.c", 11);
	f_other = add_fn(e, "main", NULL, "other.c", 10);
	CHECK(f_main == 1 && f_work == 2 && f_inl == 3 && f_kern == 4,
	      "pprof: function ids sequential", "%lld %lld %lld %lld",
	      (long long)f_main, (long long)f_work, (long long)f_inl,
	      (long long)f_kern);
	CHECK(f_main2 == f_main, "pprof: same function twice, same id",
	      "first %lld, second %lld", (long long)f_main, (long long)f_main2);
	CHECK(f_c == f_main, "pprof: system_name NULL equals system_name = name",
	      "%lld vs %lld", (long long)f_c, (long long)f_main);
	CHECK(f_c2 == 5 && f_other == 6,
	      "pprof: different start_line or filename, new function",
	      "%lld %lld", (long long)f_c2, (long long)f_other);

	/* Leaf location: an inlined helper inside work(), innermost first. */
	l1 = pprof_add_location(e, (uint64_t)m1, 0x401234,
				(struct pprof_line[]){ { (uint64_t)f_inl, 42 },
						       { (uint64_t)f_work, 17 } },
				2);
	l2 = pprof_add_location(e, (uint64_t)m1, 0x401100,
				(struct pprof_line[]){ { (uint64_t)f_main, 12 } },
				1);
	l3 = pprof_add_location(e, (uint64_t)m2, 0xffffffff81001000ULL,
				(struct pprof_line[]){ { (uint64_t)f_kern, 0 } },
				1);
	CHECK(l1 == 1 && l2 == 2 && l3 == 3, "pprof: location ids sequential",
	      "%lld %lld %lld", (long long)l1, (long long)l2, (long long)l3);

	{
		uint64_t st1[] = { (uint64_t)l1, (uint64_t)l2 };
		uint64_t st2[] = { (uint64_t)l3, (uint64_t)l1, (uint64_t)l2 };
		int64_t v1[] = { 3, 30303030 }, v2[] = { 1, 10101010 };
		struct pprof_label lb1[] = {
			{ .key = "pid", .num = 4242 },
			{ .key = "comm", .str = "testprog" },
			{ .key = "thread_name", .str = UTF8_NAME },
			{ .key = "rss", .num = 4096, .num_unit = "bytes" },
		};
		struct pprof_label lb2[] = {
			{ .key = "pid", .num = 4242 },
			{ .key = "tid", .num = 4243 },
			{ .key = "comm", .str = "testprog" },
		};

		r = pprof_add_sample(e, st1, 2, v1, 2, lb1, 4);
		CHECK(r == 0, "pprof: sample with str and num labels", "r=%d", r);
		r = pprof_add_sample(e, st2, 3, v2, 2, lb2, 3);
		CHECK(r == 0, "pprof: sample with kernel frame", "r=%d", r);
	}
	r = pprof_finish(e);
	CHECK(r == 0, "pprof: finish", "r=%d", r);
	pprof_enc_free(e);

	/* Our own walk of the bytes: order and string_table[0]. */
	{
		struct order_ctx oc = { 0 };
		bool ok = walk(ms.p, ms.p + ms.len, check_top, &oc);

		CHECK(ok, "pprof: wire format walks cleanly", "malformed");
		CHECK(oc.first_string_empty, "pprof: string_table[0] is \"\"",
		      "first entry not empty");
		CHECK(ok && oc.bad == 0,
		      "pprof: every string emitted before its first use",
		      "%d forward references", oc.bad);
	}

	r = write_gz("full.pb.gz", ms.p, ms.len);
	CHECK(r == 0, "pprof: written with gzfile", "r=%d", r);
	free(ms.p);
	if (r)
		return;

	if (!have_protoc) {
		T_SKIP("pprof: protoc decodes the profile", "protoc not found");
	} else {
		int rc;
		char *out = protoc_decode("full.pb.gz", &rc);
		const char *first = strstr(out, "string_table:");

		CHECK(rc == 0 && !strstr(out, "rror"),
		      "pprof: protoc decodes the profile", "rc=%d: %.300s", rc,
		      out);
		CHECK(first && !strncmp(first, "string_table: \"\"\n", 17),
		      "protoc: first string_table entry is empty", "%.60s",
		      first ? first : "(none)");
		CHECK(count_substr(out, "\nsample_type {") +
				      (strncmp(out, "sample_type {", 13) == 0) ==
			      2,
		      "protoc: two sample types", "%d",
		      count_substr(out, "sample_type {"));
		CHECK(count_substr(out, "\nsample {") == 2, "protoc: two samples",
		      "%d", count_substr(out, "\nsample {"));
		CHECK(count_substr(out, "\nmapping {") == 2,
		      "protoc: two mappings", "%d",
		      count_substr(out, "\nmapping {"));
		CHECK(count_substr(out, "\nlocation {") == 3,
		      "protoc: three locations", "%d",
		      count_substr(out, "\nlocation {"));
		CHECK(count_substr(out, "\nfunction {") == 6,
		      "protoc: six functions (duplicates folded)", "%d",
		      count_substr(out, "\nfunction {"));
		CHECK(count_substr(out, "  line {") == 4,
		      "protoc: four lines (one location inlined)", "%d",
		      count_substr(out, "  line {"));
		CHECK(strstr(out, "string_table: \"" BUILD_ID "\"") &&
			      strstr(out, "  build_id: "),
		      "protoc: mapping build id", "missing");
		CHECK(strstr(out, "memory_start: 4194304") &&
			      strstr(out, "memory_limit: 5242880") &&
			      strstr(out, "file_offset: 4096") &&
			      strstr(out, "has_inline_frames: true"),
		      "protoc: mapping fields", "missing");
		CHECK(strstr(out, "memory_start: 18446744071578845184"),
		      "protoc: kernel mapping start", "missing");
		CHECK(strstr(out, "period: 10101010") &&
			      strstr(out, "time_nanos: 1700000000123456789") &&
			      strstr(out, "duration_nanos: 30000000000") &&
			      strstr(out, "period_type {"),
		      "protoc: period, time, duration", "missing");
		CHECK(count_substr(out, "\ncomment: ") == 2 &&
			      strstr(out, "\"cprof-bpf unit test\""),
		      "protoc: comments", "missing");
		CHECK(strstr(out, "  value: 3\n  value: 30303030\n") &&
			      strstr(out, "  value: 1\n  value: 10101010\n"),
		      "protoc: sample values", "missing");
		CHECK(strstr(out, "  location_id: 3\n  location_id: 1\n"
				  "  location_id: 2\n"),
		      "protoc: sample stack, leaf first", "missing");
		CHECK(strstr(out, "    num: 4242\n") &&
			      strstr(out, "    num: 4096\n    num_unit: "),
		      "protoc: numeric labels", "missing");
		CHECK(strstr(out, "string_table: \"_Z4workv\"") &&
			      strstr(out, "string_table: \"work()\"") &&
			      strstr(out, "  system_name: "),
		      "protoc: function names", "missing");
		CHECK(strstr(out, "address: 4198964") &&
			      strstr(out, "start_line: 40"),
		      "protoc: location address and start line", "missing");
		free(out);
	}

	if (!have_go) {
		T_SKIP("pprof: go tool pprof reads the profile", "go not found");
	} else {
		int rc;
		char *out = go_pprof("-raw", "full.pb.gz", &rc);

		CHECK(rc == 0, "pprof: go tool pprof reads the profile",
		      "rc=%d: %.300s", rc, out);
		CHECK(strstr(out, "samples/count cpu/nanoseconds"),
		      "go pprof: sample types", "missing");
		CHECK(strstr(out, "PeriodType: cpu nanoseconds") &&
			      strstr(out, "Period: 10101010"),
		      "go pprof: period", "missing");
		CHECK(strstr(out, "          3   30303030: 1 2 ") &&
			      strstr(out, "          1   10101010: 3 1 2 "),
		      "go pprof: sample values and stacks", "missing");
		CHECK(strstr(out, "comm:[testprog]") &&
			      strstr(out, "thread_name:[" UTF8_NAME "]"),
		      "go pprof: string labels (UTF-8 intact)", "missing");
		CHECK(strstr(out, "pid:[4242]") && strstr(out, "tid:[4243]"),
		      "go pprof: numeric labels", "missing");
		CHECK(strstr(out, "rss:[4096 bytes]"),
		      "go pprof: numeric label unit", "missing");
		CHECK(strstr(out, "inlined_helper") && strstr(out, "work()") &&
			      strstr(out, "_Z4workv") && strstr(out, "main") &&
			      strstr(out, "do_syscall_64"),
		      "go pprof: function names", "missing");
		CHECK(strstr(out, "0x401234 M=1 inlined_helper work.cc:42 s=40\n"
					  "             work() work.cc:17 s=20(_Z4workv)\n"),
		      "go pprof: inlined lines", "missing");
		CHECK(strstr(out, "0x400000/0x500000/0x1000 /usr/bin/testprog " BUILD_ID),
		      "go pprof: mapping with build id", "missing");
		CHECK(strstr(out, "[kernel.kallsyms]"), "go pprof: kernel mapping",
		      "missing");
		free(out);

		out = go_pprof("-comments", "full.pb.gz", &rc);
		CHECK(rc == 0 && strstr(out, "cprof-bpf unit test") &&
			      strstr(out, "second comment"),
		      "go pprof: comments", "rc=%d: %.200s", rc, out);
		free(out);
	}
}

/* ---- edge cases ---- */

static void test_empty_profile(void)
{
	struct pprof_meta meta = meta2();
	struct memsink ms = { 0 };
	struct pprof_enc *e;
	int r = pprof_enc_new(&e, &meta, (struct pprof_sink){ mem_write, &ms });

	if (!r)
		r = pprof_finish(e);
	pprof_enc_free(e);
	CHECK(r == 0 && ms.len > 2 && ms.p[0] == 0x32 && ms.p[1] == 0,
	      "pprof: empty profile starts with string_table[0] = \"\"",
	      "r=%d len=%zu", r, ms.len);
	if (r == 0)
		r = write_gz("empty.pb.gz", ms.p, ms.len);
	free(ms.p);
	if (r) {
		CHECK(0, "pprof: empty profile written", "r=%d", r);
		return;
	}
	if (have_protoc) {
		int rc;
		char *out = protoc_decode("empty.pb.gz", &rc);

		CHECK(rc == 0 && !strstr(out, "\nsample {"),
		      "protoc: empty profile decodes", "rc=%d %.200s", rc, out);
		free(out);
	} else {
		T_SKIP("protoc: empty profile decodes", "protoc not found");
	}
	if (have_go) {
		int rc;
		char *out = go_pprof("-raw", "empty.pb.gz", &rc);

		CHECK(rc == 0 && strstr(out, "samples/count cpu/nanoseconds"),
		      "go pprof: empty profile is valid", "rc=%d %.300s", rc,
		      out);
		free(out);
	} else {
		T_SKIP("go pprof: empty profile is valid", "go not found");
	}
}

/* Varints at every length boundary, negative int64, the largest values. */
static void test_varint_edges(void)
{
	struct pprof_meta meta = meta2();
	struct memsink ms = { 0 };
	struct pprof_enc *e;
	int64_t f, l, m;
	int r;

	meta.period = INT64_MAX;
	meta.time_nanos = -1;
	meta.duration_nanos = INT64_MIN;
	r = pprof_enc_new(&e, &meta, (struct pprof_sink){ mem_write, &ms });
	CHECK(r == 0, "varint: encoder created", "r=%d", r);
	if (r)
		return;
	pprof_add_mapping(e, &(struct pprof_mapping){ .start = 0x7f,
						      .limit = 0x80,
						      .offset = 0x3fff });
	pprof_add_mapping(e, &(struct pprof_mapping){ .start = 0x4000,
						      .limit = UINT64_MAX,
						      .offset = 1ULL << 63 });
	m = pprof_add_mapping(e, &(struct pprof_mapping){ .start = 0x1fffff,
							  .limit = 0x200000 });
	f = add_fn(e, "f", NULL, NULL, INT64_MIN);
	l = pprof_add_location(e, (uint64_t)m, UINT64_MAX,
			       (struct pprof_line[]){ { (uint64_t)f, -1 } }, 1);
	{
		uint64_t loc[] = { (uint64_t)l };
		int64_t v[] = { -5, INT64_MAX };

		r = pprof_add_sample(e, loc, 1, v, 2,
				     (struct pprof_label[]){
					     { .key = "neg", .num = INT64_MIN } },
				     1);
	}
	if (!r)
		r = pprof_finish(e);
	pprof_enc_free(e);
	CHECK(r == 0, "varint: profile encoded", "r=%d", r);
	if (r == 0)
		r = write_gz("varint.pb.gz", ms.p, ms.len);
	free(ms.p);
	if (r)
		return;
	if (!have_protoc) {
		T_SKIP("varint: protoc decodes boundary values", "protoc not found");
		return;
	}
	{
		static const char *const want[] = {
			"memory_start: 127\n",
			"memory_limit: 128\n",
			"file_offset: 16383\n",
			"memory_start: 16384\n",
			"memory_limit: 18446744073709551615\n",
			"file_offset: 9223372036854775808\n",
			"memory_start: 2097151\n",
			"memory_limit: 2097152\n",
			"period: 9223372036854775807\n",
			"time_nanos: -1\n",
			"duration_nanos: -9223372036854775808\n",
			"start_line: -9223372036854775808\n",
			"address: 18446744073709551615\n",
			"line: -1\n",
			"value: -5\n",
			"value: 9223372036854775807\n",
			"num: -9223372036854775808\n",
		};
		int rc;
		char *out = protoc_decode("varint.pb.gz", &rc);
		const char *missing = NULL;

		for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
			if (!strstr(out, want[i]))
				missing = want[i];
		CHECK(rc == 0 && !missing, "varint: protoc decodes boundary values",
		      "rc=%d, missing %s", rc, missing ? missing : "-");
		free(out);
	}
	if (have_go) {
		int rc;
		char *out = go_pprof("-raw", "varint.pb.gz", &rc);

		CHECK(rc == 0 && strstr(out, "-5 9223372036854775807: 1 "),
		      "varint: go pprof reads negative and huge values",
		      "rc=%d %.300s", rc, out);
		free(out);
	}
}

/* Long strings, multi-byte UTF-8, invalid UTF-8, over-long strings. */
static void test_strings(void)
{
	const size_t long_len = 200000, huge_len = 3u << 20;
	struct pprof_meta meta = meta2();
	struct memsink ms = { 0 };
	char *longname = malloc(long_len + 1), *huge = malloc(huge_len + 1);
	struct pprof_enc *e;
	int64_t f1, f2, f3, f4, f5, l;
	int r;

	if (!longname || !huge)
		abort();
	for (size_t i = 0; i < long_len; i++)
		longname[i] = (char)('a' + i % 26);
	longname[long_len] = '\0';
	/* 3 MiB of 4-byte characters: truncation must cut between them. */
	for (size_t i = 0; i < huge_len; i += 4)
		memcpy(huge + i, "\xf0\x9f\x98\x80", 4);
	huge[huge_len] = '\0';

	r = pprof_enc_new(&e, &meta, (struct pprof_sink){ mem_write, &ms });
	if (r) {
		CHECK(0, "strings: encoder created", "r=%d", r);
		goto out;
	}
	f1 = add_fn(e, longname, NULL, NULL, 0);
	f2 = add_fn(e, "\xe4\xb8\xad\xe6\x96\x87::\xd0\xb6\xd1\x83\xd0\xba", NULL, NULL, 0);
	f3 = add_fn(e, "bad\xff\xfe-\xc0\xaf-\xed\xa0\x80", NULL, NULL, 0);
	f4 = add_fn(e, huge, NULL, NULL, 0);
	/* Sanitized to the same bytes as f3's: the same function. */
	f5 = add_fn(e, "bad\xff\xfe-\xc0\xaf-\xed\xa0\x80", NULL, NULL, 0);
	CHECK(f1 > 0 && f2 > 0 && f3 > 0 && f4 > 0 && f5 == f3,
	      "strings: long, UTF-8, invalid UTF-8 and huge names accepted",
	      "%lld %lld %lld %lld %lld", (long long)f1, (long long)f2,
	      (long long)f3, (long long)f4, (long long)f5);
	l = pprof_add_location(e, 0, 0x1000,
			       (struct pprof_line[]){ { (uint64_t)f1, 1 },
						      { (uint64_t)f2, 2 },
						      { (uint64_t)f3, 3 },
						      { (uint64_t)f4, 4 } },
			       4);
	{
		uint64_t loc[] = { (uint64_t)l };
		int64_t v[] = { 7, 70 };

		r = pprof_add_sample(e, loc, 1, v, 2, NULL, 0);
	}
	if (!r)
		r = pprof_finish(e);
	pprof_enc_free(e);
	CHECK(r == 0, "strings: profile encoded", "r=%d", r);
	if (!r)
		r = write_gz("strings.pb.gz", ms.p, ms.len);
	if (r)
		goto out;

	if (have_protoc) {
		int rc;
		char *out = protoc_decode("strings.pb.gz", &rc);

		/* protoc refuses invalid UTF-8 in proto3 strings. */
		CHECK(rc == 0 && !strstr(out, "UTF-8") && !strstr(out, "rror"),
		      "strings: protoc accepts them (all valid UTF-8)",
		      "rc=%d %.300s", rc, out);
		free(out);
	} else {
		T_SKIP("strings: protoc accepts them (all valid UTF-8)",
		       "protoc not found");
	}
	if (have_go) {
		int rc;
		char *out = go_pprof("-raw", "strings.pb.gz", &rc);
		char *cut;
		size_t n = 0;

		CHECK(rc == 0 && strstr(out, longname),
		      "strings: 200 kB name round-trips", "rc=%d", rc);
		CHECK(strstr(out, "\xe4\xb8\xad\xe6\x96\x87::\xd0\xb6\xd1\x83\xd0\xba"),
		      "strings: UTF-8 name round-trips", "missing");
		CHECK(strstr(out, "bad\xef\xbf\xbd\xef\xbf\xbd-\xef\xbf\xbd\xef\xbf\xbd-"
				  "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"),
		      "strings: invalid UTF-8 bytes become U+FFFD", "missing");
		/* The huge name: cut to at most 1 MiB, on a character boundary. */
		cut = strstr(out, "\xf0\x9f\x98\x80");
		while (cut && !memcmp(cut + n, "\xf0\x9f\x98\x80", 4))
			n += 4;
		CHECK(cut && n > 0 && n <= (1u << 20) && n >= (1u << 20) - 4 &&
			      cut[n] == ' ',
		      "strings: huge name truncated at a character boundary",
		      "run of %zu bytes, next byte %#x", n,
		      cut ? (unsigned char)cut[n] : 0);
		free(out);
	}
out:
	free(ms.p);
	free(longname);
	free(huge);
}

/* 10k samples through gzfile, many flushes; totals must match. */
static void test_many_samples(void)
{
	struct pprof_meta meta = meta2();
	struct errbuf err = { "" };
	struct gzfile *gz;
	struct pprof_enc *e;
	uint64_t seed = 12345, locs[64];
	int64_t fns[40], total = 0, total_ns = 0;
	int r;

	r = gzfile_create(&gz, dirfd_out, "many.pb.gz", &err);
	CHECK(r == 0, "many: gzfile created", "%s", err.msg);
	if (r)
		return;
	r = pprof_enc_new(&e, &meta, (struct pprof_sink){ gzfile_sink_write, gz });
	if (r) {
		CHECK(0, "many: encoder created", "r=%d", r);
		gzfile_abort(gz);
		return;
	}
	int64_t m = pprof_add_mapping(e, &(struct pprof_mapping){
						 .start = 0x10000,
						 .limit = 0x90000,
						 .filename = "/bin/many",
						 .build_id = "feedface" });
	for (int i = 0; i < 40; i++) {
		char name[32];

		snprintf(name, sizeof(name), "fn_%d", i);
		fns[i] = add_fn(e, name, NULL, "many.c", i);
	}
	for (int i = 0; i < 2000; i++)
		pprof_add_location(e, (uint64_t)m, 0x10000 + (uint64_t)i * 16,
				   (struct pprof_line[]){
					   { (uint64_t)fns[i % 40], i } },
				   1);
	for (int i = 0; i < 10000; i++) {
		char comm[16];
		size_t depth;
		int64_t v[2];

		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		depth = 1 + (seed >> 33) % 64;
		for (size_t d = 0; d < depth; d++)
			locs[d] = 1 + (seed >> (d % 30)) % 2000;
		v[0] = 1 + (int64_t)((seed >> 40) % 9);
		v[1] = v[0] * 10101010;
		total += v[0];
		total_ns += v[1];
		snprintf(comm, sizeof(comm), "t%d", i % 7);
		r = pprof_add_sample(e, locs, depth, v, 2,
				     (struct pprof_label[]){
					     { .key = "pid", .num = 100 + i % 3 },
					     { .key = "comm", .str = comm } },
				     2);
		if (r)
			break;
	}
	if (!r)
		r = pprof_finish(e);
	pprof_enc_free(e);
	CHECK(r == 0, "many: 10k samples encoded", "r=%d", r);
	if (r) {
		gzfile_abort(gz);
		return;
	}
	r = gzfile_commit(gz, &err);
	CHECK(r == 0, "many: committed", "%s", err.msg);
	if (r)
		return;
	if (!have_go) {
		T_SKIP("many: go pprof totals match", "go not found");
		return;
	}
	{
		char want[128], want_ns[128], *out;
		int rc;

		snprintf(want, sizeof(want), "of %lld total", (long long)total);
		out = go_pprof("-top -nodecount=1 -sample_index=samples",
			       "many.pb.gz", &rc);
		CHECK(rc == 0 && strstr(out, want), "many: go pprof sample total",
		      "want \"%s\": rc=%d %.300s", want, rc, out);
		free(out);
		/* -raw lists each sample; the cpu values must sum too. */
		out = go_pprof("-raw", "many.pb.gz", &rc);
		{
			long long sum = 0, a, b;
			int n = 0;

			for (char *p = strstr(out, "Samples:"); p && (p = strchr(p, '\n'));) {
				p++;
				if (sscanf(p, " %lld %lld:", &a, &b) == 2 &&
				    strchr(p, ':') < strchr(p, '\n')) {
					sum += b;
					n++;
				}
				if (!strncmp(p, "Locations", 9))
					break;
			}
			snprintf(want_ns, sizeof(want_ns), "%lld", (long long)total_ns);
			CHECK(rc == 0 && n == 10000 && sum == total_ns,
			      "many: go pprof -raw has 10000 samples, cpu total matches",
			      "n=%d sum=%lld want %s", n, sum, want_ns);
		}
		free(out);
	}
}

/* Each makes one invalid call on an encoder holding location @loc. */
static int bad_value_count(struct pprof_enc *e, int64_t loc)
{
	uint64_t id[] = { (uint64_t)loc };

	return pprof_add_sample(e, id, 1, (int64_t[]){ 1 }, 1, NULL, 0);
}

static int bad_location_id(struct pprof_enc *e, int64_t loc)
{
	uint64_t id[] = { (uint64_t)loc + 1 };

	return pprof_add_sample(e, id, 1, (int64_t[]){ 1, 2 }, 2, NULL, 0);
}

static int zero_location_id(struct pprof_enc *e, int64_t loc)
{
	uint64_t id[] = { 0 };

	return pprof_add_sample(e, id, 1, (int64_t[]){ 1, 2 }, 2, NULL, 0);
}

static int label_without_key(struct pprof_enc *e, int64_t loc)
{
	uint64_t id[] = { (uint64_t)loc };

	return pprof_add_sample(e, id, 1, (int64_t[]){ 1, 2 }, 2,
				(struct pprof_label[]){ { .str = "v" } }, 1);
}

static int bad_mapping_id(struct pprof_enc *e, int64_t loc)
{
	return (int)pprof_add_location(e, 5, 1, NULL, 0);
}

/* Errors: argument checks, stickiness, sink failures. */
static void test_errors(void)
{
	struct pprof_meta meta = meta2();
	struct memsink ms = { 0 };
	struct pprof_enc *e = (void *)1;
	int64_t f, l;
	int r;

	meta.n_sample_types = 0;
	r = pprof_enc_new(&e, &meta, (struct pprof_sink){ mem_write, &ms });
	CHECK(r == -EINVAL && !e, "errors: no sample types rejected", "r=%d", r);

	meta = meta2();
	r = pprof_enc_new(&e, &meta, (struct pprof_sink){ mem_write, &ms });
	if (r) {
		CHECK(0, "errors: encoder created", "r=%d", r);
		return;
	}
	f = add_fn(e, "f", NULL, NULL, 0);
	l = pprof_add_location(e, 0, 1, (struct pprof_line[]){ { 99, 0 } }, 1);
	CHECK(l == -EINVAL, "errors: unknown function id rejected", "%lld",
	      (long long)l);
	l = pprof_add_location(e, 0, 1, (struct pprof_line[]){ { (uint64_t)f, 0 } }, 1);
	CHECK(l == -EINVAL, "errors: sticky after the first error", "%lld",
	      (long long)l);
	CHECK(pprof_finish(e) == -EINVAL, "errors: finish reports it", "no");
	pprof_enc_free(e);

	static const struct {
		const char *name;
		int (*step)(struct pprof_enc *e, int64_t l);
	} cases[] = {
		{ "errors: value count must match sample types", bad_value_count },
		{ "errors: unknown location id rejected", bad_location_id },
		{ "errors: location id 0 rejected", zero_location_id },
		{ "errors: label without key rejected", label_without_key },
		{ "errors: unknown mapping id rejected", bad_mapping_id },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ms.len = 0;
		r = pprof_enc_new(&e, &meta, (struct pprof_sink){ mem_write, &ms });
		if (r)
			break;
		f = add_fn(e, "f", NULL, NULL, 0);
		l = pprof_add_location(e, 0, 1,
				       (struct pprof_line[]){ { (uint64_t)f, 0 } }, 1);
		r = cases[i].step(e, l);
		CHECK(r == -EINVAL && pprof_finish(e) == -EINVAL, cases[i].name,
		      "r=%d", r);
		pprof_enc_free(e);
	}

	/* A sink that fails: the error comes back, and stays. */
	{
		struct memsink bad = { .fail_after = 0, .fail_err = -ENOSPC };
		int64_t last = 0;
		int n = 0;

		r = pprof_enc_new(&e, &meta, (struct pprof_sink){ mem_write, &bad });
		if (!r) {
			/* Enough data to overflow the output buffer. */
			for (n = 0; n < 100000 && last >= 0; n++) {
				char name[32];

				snprintf(name, sizeof(name), "function_%d", n);
				last = add_fn(e, name, NULL, NULL, 0);
			}
			CHECK(last == -ENOSPC && pprof_finish(e) == -ENOSPC &&
				      add_fn(e, "x", NULL, NULL, 0) == -ENOSPC,
			      "errors: sink failure is returned and sticky",
			      "last=%lld after %d", (long long)last, n);
			pprof_enc_free(e);
		}
	}

	/* Finish with nothing pending, then a use after finish. */
	ms.len = 0;
	r = pprof_enc_new(&e, &meta, (struct pprof_sink){ mem_write, &ms });
	if (!r) {
		r = pprof_finish(e);
		f = add_fn(e, "late", NULL, NULL, 0);
		CHECK(r == 0 && f == -EINVAL, "errors: no adds after finish",
		      "r=%d f=%lld", r, (long long)f);
		pprof_enc_free(e);
	}
	pprof_enc_free(NULL);
	free(ms.p);
}

static int rm_entry(const char *path, const struct stat *sb, int flag,
		    struct FTW *ftw)
{
	return remove(path);
}

int main(void)
{
	const char *t = getenv("TMPDIR");
	struct errbuf err = { "" };
	char *out;

	setvbuf(stdout, NULL, _IOLBF, 0);
	snprintf(tmpdir, sizeof(tmpdir), "%s/test_pprof.XXXXXX",
		 t && *t ? t : "/tmp");
	if (!mkdtemp(tmpdir)) {
		printf("not ok - pprof: mkdtemp %s: %s\n", tmpdir, strerror(errno));
		return 1;
	}
	dirfd_out = output_open_dir(tmpdir, &err);
	if (dirfd_out < 0) {
		printf("not ok - pprof: output_open_dir: %s\n", err.msg);
		return 1;
	}
	have_protoc = run("command -v protoc >/dev/null 2>&1", &out) == 0;
	free(out);
	have_go = run("command -v go >/dev/null 2>&1 && go tool -n pprof "
		      ">/dev/null 2>&1",
		      &out) == 0;
	free(out);
	if (access("proto/profile.proto", R_OK) != 0) {
		printf("not ok - pprof: proto/profile.proto not found (cwd must be the repo root)\n");
		have_protoc = 0;
		t_failed++;
	}

	test_full_profile();
	test_empty_profile();
	test_varint_edges();
	test_strings();
	test_many_samples();
	test_errors();

	close(dirfd_out);
	nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	return T_EXIT();
}
