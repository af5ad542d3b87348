// SPDX-License-Identifier: MIT
/*
 * Tests for the pprof encoder (proto/): a full profile and its edge cases
 * (test_pprof_limits.c has strings, many samples and errors), written through the gzip
 * file writer (user/output/gzfile.c) and read back by two independent readers:
 * `protoc --decode` with proto/profile.proto, and `go tool pprof`.  A small
 * wire-format walker here also checks what neither reader can: that every
 * string_table entry comes before the first message that refers to it.
 *
 * Runs with cwd = the repository root.  VERBOSE=1 prints the readers'
 * output.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pprofcheck.h"
#include "testlib.h"

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
		bool ok = pb_walk(ms.p, ms.p + ms.len, check_top, &oc);

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

int main(void)
{
	T_PLAN(51);
	if (pprofcheck_setup("test_pprof"))
		return 1;
	test_full_profile();
	test_empty_profile();
	test_varint_edges();
	pprofcheck_teardown();
	return T_EXIT();
}
