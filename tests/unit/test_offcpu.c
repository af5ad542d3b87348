// SPDX-License-Identifier: MIT
/*
 * Tests for the loader's side of --off-cpu: the values each sample gets
 * per sample type, waits aggregated beside CPU samples, --off-cpu-min's
 * times, the off-CPU stacks kept from one window to the next, and the
 * check of the kernel's BTF for the tracepoint before anything is loaded.
 */
#include <errno.h>
#include <stdarg.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "process/aggregate.h"
#include "sampling/kernel_btf.h"
#include "agent/options.h"
#include "output/profile.h"
#include "util/stackstore.h"
#include "testlib.h"
#include "testutil.h"

static void test_values(void)
{
	const struct aggregate_entry both = { .count = 3, .off_cpu_ns = 5000000 };
	const struct aggregate_entry waits = { .off_cpu_ns = 7 };
	int64_t v[PROFILE_MAX_VALUES] = { -1, -1, -1 };
	size_t n;

	n = profile_values(&both, 10000000, false, v);
	CHECK(n == 2 && v[0] == 3 && v[1] == 30000000 && v[2] == -1,
	      "values: without --off-cpu, samples and cpu only", "%zu %lld %lld %lld", n,
	      (long long)v[0], (long long)v[1], (long long)v[2]);
	n = profile_values(&both, 10000000, true, v);
	CHECK(n == 3 && v[0] == 3 && v[1] == 30000000 && v[2] == 5000000,
	      "values: with --off-cpu, a third: off_cpu ns", "%zu %lld %lld %lld", n,
	      (long long)v[0], (long long)v[1], (long long)v[2]);
	n = profile_values(&waits, 10000000, true, v);
	CHECK(n == 3 && v[0] == 0 && v[1] == 0 && v[2] == 7,
	      "values: a wait sets only off_cpu", "%zu %lld %lld %lld", n, (long long)v[0],
	      (long long)v[1], (long long)v[2]);
}

static void test_aggregate(void)
{
	struct cprof_sample_key k = { .pid = 1, .tid = 2, .ustack = CPROF_STACK_HASHED | 5 };
	struct cprof_sample_key other = k;
	struct aggregate a;
	struct aggregate_entry *e;
	size_t it = 0, n = 0;

	other.kstack = CPROF_STACK_HASHED | 9;
	aggregate_init(&a);
	CHECK(aggregate_empty(&a), "aggregate: empty at first", "not empty");
	aggregate_add_off_cpu(&a, NULL, &k, 1500);
	CHECK(!aggregate_empty(&a) && a.samples == 0 && a.off_cpu_ns == 1500,
	      "aggregate: waits alone make a process worth a file", "%llu %llu",
	      (unsigned long long)a.samples, (unsigned long long)a.off_cpu_ns);
	aggregate_add(&a, NULL, &k, 4);
	aggregate_add_off_cpu(&a, NULL, &k, 500);
	aggregate_add_off_cpu(&a, NULL, &other, 10);
	while ((e = hmap_next(&a.map, &it))) {
		n++;
		if (e->key.kstack == k.kstack)
			CHECK(e->count == 4 && e->off_cpu_ns == 2000,
			      "aggregate: samples and waits of the same stacks share an entry",
			      "%llu %llu", (unsigned long long)e->count,
			      (unsigned long long)e->off_cpu_ns);
	}
	CHECK(n == 2 && a.off_cpu_ns == 2010 && a.samples == 4,
	      "aggregate: totals of both kinds", "%zu %llu %llu", n,
	      (unsigned long long)a.off_cpu_ns, (unsigned long long)a.samples);
	aggregate_reset(&a);
	CHECK(aggregate_empty(&a) && a.off_cpu_ns == 0, "aggregate: reset forgets waits", "%llu",
	      (unsigned long long)a.off_cpu_ns);
	aggregate_free(&a);
}

static void test_times(void)
{
	static const struct {
		const char *s;
		uint64_t ns; /* 0: refused */
	} cases[] = {
		{ "5", 5000000 },     { "250us", 250000 }, { "2ms", 2000000 },
		{ "1s", 1000000000 }, { "1500ns", 1500 },  { "60s", 60000000000ULL },
		{ "61s", 0 },         { "", 0 },           { "ms", 0 },
		{ "1.5ms", 0 },       { "-1", 0 },         { "1h", 0 },
		{ "2 ms", 0 },        { "99999999999999999999", 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t ns = 0;
		int ret = options_parse_time_ns(cases[i].s, &ns);
		char name[80];

		snprintf(name, sizeof(name), "time: '%s' -> %llu", cases[i].s,
			 (unsigned long long)cases[i].ns);
		if (cases[i].ns)
			CHECK(ret == 0 && ns == cases[i].ns, name, "%d %llu", ret,
			      (unsigned long long)ns);
		else
			CHECK(ret < 0, name, "accepted as %llu", (unsigned long long)ns);
	}
}

static void test_carry(void)
{
	const uint64_t a[] = { 1, 2, 3 }, b[] = { 4, 5 }, c[] = { 6, 7, 8, 9 };
	struct stackstore s;
	const uint64_t *ip;
	uint32_t nr = 0, status = 0;

	stackstore_init(&s);
	stackstore_add(&s, 100, a, 3, CPROF_STACK_F_OFFCPU);
	stackstore_add(&s, 200, b, 2, CPROF_STACK_F_DWARF);
	stackstore_add(&s, 300, c, 4, CPROF_STACK_F_OFFCPU | CPROF_STACK_F_DWARF);
	CHECK(stackstore_carry(&s, CPROF_STACK_F_OFFCPU, 100) == 0, "carry: succeeds", "failed");
	ip = stackstore_get(&s, 100, &nr, &status);
	CHECK(ip && nr == 3 && ip[2] == 3 && status == CPROF_STACK_F_OFFCPU,
	      "carry: an off-CPU stack stays, frames and status", "%p %u", (const void *)ip, nr);
	CHECK(!stackstore_get(&s, 200, &nr, NULL), "carry: other stacks go", "kept");
	ip = stackstore_get(&s, 300, &nr, NULL);
	CHECK(ip && nr == 4 && ip[0] == 6 && ip[3] == 9, "carry: the other off-CPU stack stays",
	      "%p", (const void *)ip);
	/* Room for 5 frames: the newest (300, 4 frames) fits, 100 then does not. */
	CHECK(stackstore_carry(&s, CPROF_STACK_F_OFFCPU, 5) == 0 &&
		      stackstore_get(&s, 300, &nr, NULL) && !stackstore_get(&s, 100, &nr, NULL),
	      "carry: within its bound, the newest kept", "wrong stacks kept");
	CHECK(stackstore_carry(&s, CPROF_STACK_F_OFFCPU, 0) == 0 &&
		      !stackstore_get(&s, 300, &nr, NULL),
	      "carry: a bound of 0 keeps none", "kept");
	stackstore_free(&s);
}

/*
 * A raw BTF file at @path with what a kernel's has around a tracepoint
 * (an int; btf_trace_sched_wakeup, a typedef of it, for another
 * tracepoint; a struct named btf_trace_sched_switch, which is not how a
 * tracepoint is declared) and, if @with_switch, the typedef
 * btf_trace_sched_switch.
 */
static bool write_btf(const char *path, bool with_switch)
{
	struct btf *btf = btf__new_empty();
	const void *raw;
	__u32 size;
	bool ok;
	int i;

	if (!btf)
		return false;
	i = btf__add_int(btf, "int", 4, BTF_INT_SIGNED);
	ok = i > 0 && btf__add_typedef(btf, "btf_trace_sched_wakeup", i) > 0 &&
	     btf__add_struct(btf, "btf_trace_sched_switch", 0) > 0 &&
	     (!with_switch || btf__add_typedef(btf, "btf_trace_sched_switch", i) > 0);
	raw = ok ? btf__raw_data(btf, &size) : NULL;
	ok = raw && spit(path, raw, size);
	btf__free(btf);
	return ok;
}

/* libbpf's own warnings (a file that is not BTF): the checks say what matters */
static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

static void test_kernel_btf(void)
{
	const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
	char dir[PATH_MAX], has[PATH_MAX + 16], lacks[PATH_MAX + 16], junk[PATH_MAX + 16];
	char obj[PATH_MAX];
	struct errbuf err = { "" };
	int ret;

	libbpf_set_print(quiet);
	if (!temp_dir(dir, sizeof(dir), "offcpu-btf")) {
		CHECK(0, "btf: a temporary directory", "none");
		return;
	}
	snprintf(has, sizeof(has), "%s/has.btf", dir);
	snprintf(lacks, sizeof(lacks), "%s/lacks.btf", dir);
	snprintf(junk, sizeof(junk), "%s/junk.btf", dir);
	CHECK(write_btf(has, true) && write_btf(lacks, false) && spit(junk, "not BTF at all\n", 15),
	      "btf: fixtures written", "cannot write them in %s", dir);

	ret = kernel_btf_has_tracepoint(has, "sched_switch", &err);
	CHECK(ret == 0, "btf: a BTF with the typedef btf_trace_sched_switch has the tracepoint",
	      "%d: %s", ret, err.msg);
	ret = kernel_btf_has_tracepoint(has, "sched_wakeup", &err);
	CHECK(ret == 0, "btf: and another tracepoint it declares", "%d: %s", ret, err.msg);
	ret = kernel_btf_has_tracepoint(lacks, "sched_switch", &err);
	CHECK(ret == -ENOTSUP && strstr(err.msg, lacks) && strstr(err.msg, "sched_switch") &&
		      !strchr(err.msg, '\n'),
	      "btf: one without it (a struct of that name is not it): -ENOTSUP, one line naming"
	      " the file and the tracepoint", "%d: %s", ret, err.msg);
	ret = kernel_btf_has_tracepoint(junk, "sched_switch", &err);
	CHECK(ret < 0 && ret != -ENOTSUP && strstr(err.msg, junk),
	      "btf: a file that is not BTF: an error naming it, not a missing tracepoint",
	      "%d: %s", ret, err.msg);
	unlink(junk);
	snprintf(junk, sizeof(junk), "%s/none", dir);
	ret = kernel_btf_has_tracepoint(junk, "sched_switch", &err);
	CHECK(ret == -ENOENT && strstr(err.msg, junk), "btf: no file: -ENOENT naming it",
	      "%d: %s", ret, err.msg);
	unlink(has);
	unlink(lacks);
	rmdir(dir);

	/* The BPF object's own BTF: an ELF file's .BTF, of a program, not a kernel. */
	snprintf(obj, sizeof(obj), "%s/cprof.bpf.o", build);
	if (access(obj, R_OK)) {
		T_SKIP("btf: cprof.bpf.o's BTF lacks the tracepoint's typedef", "no %s", obj);
	} else {
		ret = kernel_btf_has_tracepoint(obj, "sched_switch", &err);
		CHECK(ret == -ENOTSUP, "btf: cprof.bpf.o's BTF lacks the tracepoint's typedef",
		      "%d: %s", ret, err.msg);
	}

	if (access(KERNEL_BTF_PATH, R_OK)) {
		T_SKIP("btf: the running kernel has sched_switch", "no %s", KERNEL_BTF_PATH);
		return;
	}
	ret = kernel_btf_has_tracepoint(KERNEL_BTF_PATH, "sched_switch", &err);
	CHECK(ret == 0, "btf: the running kernel has sched_switch", "%d: %s", ret, err.msg);
	ret = kernel_btf_has_tracepoint(KERNEL_BTF_PATH, "cprof_no_such_event", &err);
	CHECK(ret == -ENOTSUP, "btf: and not a made-up tracepoint", "%d: %s", ret, err.msg);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	T_PLAN(37);
	test_values();
	test_aggregate();
	test_times();
	test_carry();
	test_kernel_btf();
	return T_EXIT();
}
