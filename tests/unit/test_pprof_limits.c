// SPDX-License-Identifier: MIT
/*
 * Tests for the pprof encoder's bounds (proto/): strings (cut, bad UTF-8,
 * de-duplicated), many samples, and every error being sticky and told.
 * Read back as in test_pprof.c.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/gzfile.h"
#include "pprofcheck.h"
#include "testlib.h"

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

int main(void)
{
	T_PLAN(23);
	if (pprofcheck_setup("test_pprof_limits"))
		return 1;
	test_strings();
	test_many_samples();
	test_errors();
	pprofcheck_teardown();
	return T_EXIT();
}
