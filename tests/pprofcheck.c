// SPDX-License-Identifier: MIT
/* The pprof encoder's test helpers: see pprofcheck.h. */
#include <errno.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/grow.h"
#include "output/gzfile.h"
#include "output/outdir.h"
#include "pprofcheck.h"
#include "testlib.h"

char tmpdir[1024];
int dirfd_out = -1;
int have_protoc, have_go;


int mem_write(void *ctx, const void *buf, size_t len)
{
	struct memsink *m = ctx;

	if (m->fail_err && m->calls++ >= m->fail_after)
		return m->fail_err;
	if (grow_to((void **)&m->p, &m->cap, m->len + len, 1, 4096, GROW_NO_MAX))
		return -ENOMEM;
	memcpy(m->p + m->len, buf, len);
	m->len += len;
	return 0;
}

const struct pprof_value_type types2[] = {
	{ "samples", "count" },
	{ "cpu", "nanoseconds" },
};

struct pprof_meta meta2(void)
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
static int run_cmd(const char *cmd, char **out)
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

int count_substr(const char *hay, const char *needle)
{
	int n = 0;
	size_t len = strlen(needle);

	for (const char *p = hay; (p = strstr(p, needle)); p += len)
		n++;
	return n;
}

/* Writes the profile in @m to @name in the temp dir, gzipped. */
int write_gz(const char *name, const void *data, size_t len)
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

char *protoc_decode(const char *name, int *rc)
{
	char cmd[8192];
	char *out;

	snprintf(cmd, sizeof(cmd),
		 "gzip -dc '%s/%s' | protoc --decode=perftools.profiles.Profile "
		 "proto/profile.proto 2>&1",
		 tmpdir, name);
	*rc = run_cmd(cmd, &out);
	return out;
}

char *go_pprof(const char *args, const char *name, int *rc)
{
	char cmd[8192];
	char *out;

	/* HOME: pprof keeps state there; keep it out of the real one. */
	snprintf(cmd, sizeof(cmd),
		 "HOME='%s' go tool pprof -symbolize=none %s '%s/%s' 2>&1",
		 tmpdir, args, tmpdir, name);
	*rc = run_cmd(cmd, &out);
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
bool pb_walk(const unsigned char *p, const unsigned char *end,
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
		return pb_walk(body, body + len, check_idx, c);
	}
	return true;
}

bool check_top(void *vctx, unsigned field, uint64_t v,
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
		return pb_walk(body, body + len, check_idx, c);
	case 5:
		c->idx_fields = fn_idx;
		return pb_walk(body, body + len, check_idx, c);
	case 3:
		c->idx_fields = map_idx;
		return pb_walk(body, body + len, check_idx, c);
	case 2:
		return pb_walk(body, body + len, check_sample, c);
	case 13:
		if (v >= c->n_strings)
			c->bad++;
		return true;
	}
	return true;
}

int64_t add_fn(struct pprof_enc *e, const char *name,
		      const char *system_name, const char *filename,
		      int64_t start_line)
{
	struct pprof_function f = { .name = name,
				    .system_name = system_name,
				    .filename = filename,
				    .start_line = start_line };

	return pprof_add_function(e, &f);
}

int pprofcheck_setup(const char *name)
{
	const char *t = getenv("TMPDIR");
	struct errbuf err = { "" };
	char *out;

	setvbuf(stdout, NULL, _IOLBF, 0);
	snprintf(tmpdir, sizeof(tmpdir), "%s/%s.XXXXXX", t && *t ? t : "/tmp", name);
	if (!mkdtemp(tmpdir)) {
		printf("not ok - pprof: mkdtemp %s: %s\n", tmpdir, strerror(errno));
		return -1;
	}
	dirfd_out = outdir_open_fd(tmpdir, &err);
	if (dirfd_out < 0) {
		printf("not ok - pprof: outdir_open_fd: %s\n", err.msg);
		return -1;
	}
	have_protoc = run_cmd("command -v protoc >/dev/null 2>&1", &out) == 0;
	free(out);
	have_go = run_cmd("command -v go >/dev/null 2>&1 && go tool -n pprof "
			  ">/dev/null 2>&1",
			  &out) == 0;
	free(out);
	if (access("proto/profile.proto", R_OK) != 0) {
		printf("not ok - pprof: proto/profile.proto not found (cwd must be the repo root)\n");
		have_protoc = 0;
		t_failed++;
	}
	return 0;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	return remove(path);
}

void pprofcheck_teardown(void)
{
	close(dirfd_out);
	nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}
