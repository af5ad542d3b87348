// SPDX-License-Identifier: MIT
/*
 * deferred.c's parking and counting, over fake maps: a record is counted
 * once, and only once its pair is drained; as sampled where its table does
 * not come (none to be had, a timeout, a window's end); a malformed record
 * (lengths past its size or cprof.h's bounds) is dropped and counted so;
 * the parked bytes stay within DEFERRED_BYTES.  The walk itself is
 * test_unwind_walk's (bpfunwind's bpfu_resume over real stacks).
 */
#include <stdlib.h>
#include <string.h>

#include "unwind/deferred.h"
#include "testlib.h"

struct fake {
	struct cprof_file file;      /* every file's entry */
	bool grown;                  /* the entry holds a second mapping (file 4) */
	unsigned asked;              /* bit N: file N's entry was asked for */
	int counts;                  /* samples counted */
	struct cprof_sample_key last; /* ... the last one */
	int wants;
	uint64_t stored;             /* the last stack stored, by its hash */
};

static int f_entry(void *ctx, uint32_t pid, uint64_t gen, struct cprof_proc_maps *out)
{
	out->n = 1;
	out->flags = 0;
	out->m[0] = (struct cprof_proc_map){ .start = 0x1000, .end = 0x2000, .file = 3 };
	if (((struct fake *)ctx)->grown) {
		/* a library mapped after the snapshot, and one over the first mapping's end */
		out->m[1] = (struct cprof_proc_map){ .start = 0x1800, .end = 0x2800, .file = 5 };
		out->m[2] = (struct cprof_proc_map){ .start = 0x5000, .end = 0x6000, .file = 4 };
		out->m[0].end = 0x1800;
		out->n = 3;
	}
	return 0;
}

static int f_file(void *ctx, uint32_t file, struct cprof_file *out)
{
	*out = ((struct fake *)ctx)->file;
	if (file < 32)
		((struct fake *)ctx)->asked |= 1u << file;
	return 0;
}

static void f_want(void *ctx, uint32_t file)
{
	((struct fake *)ctx)->wants++;
}

static int f_slot(void *ctx, uint32_t idx, union cprof_table_slot *out)
{
	return -1; /* no rows array */
}

static int f_stack_status(void *ctx, uint64_t hash)
{
	return -1;
}

static int f_stack(void *ctx, uint64_t hash, const struct cprof_stack *st)
{
	((struct fake *)ctx)->stored = hash;
	return 0;
}

static int f_count(void *ctx, const struct cprof_sample_key *k)
{
	struct fake *f = ctx;

	f->counts++;
	f->last = *k;
	return 0;
}

/* A record of @stack_len stack bytes, in room for the most a record holds. */
static struct cprof_deferred *record(uint64_t epoch, uint32_t stack_len, uint64_t ustack)
{
	struct cprof_deferred *r = calloc(1, sizeof(*r) + CPROF_DEFER_STACK + 8);

	r->type = CPROF_EV_DEFERRED;
	r->file = 3;
	r->nr = 1;
	r->key.pid = 42;
	r->pc = 0x1800; /* in the fake entry's one mapping, of file 3 */
	r->exact = 1;
	r->key.ustack = ustack;
	r->epoch = epoch;
	r->stack_len = stack_len;
	return r;
}

int main(void)
{
	struct fake f = { .file = { .state = CPROF_FILE_QUEUED } };
	struct deferred_ops ops = { .ctx = &f, .entry = f_entry, .file = f_file, .want = f_want,
				    .slot = f_slot,
				    .stack_status = f_stack_status, .stack = f_stack,
				    .count = f_count };
	struct deferred d;
	struct cprof_deferred *r = record(5, 256, 0x8000000000000123ULL);
	size_t hdr = offsetof(struct cprof_deferred, stack);
	int n;

	T_PLAN(11);
	deferred_init(&d);
	CHECK(deferred_park(&d, r, hdr + 256, &ops) == 0 && d.n == 1 && f.wants == 1,
	      "a record is parked and its table asked for", "n %zu, wants %d", d.n, f.wants);
	deferred_run(&d, &ops, 5, 0, false);
	CHECK(f.counts == 0 && d.n == 1, "not counted before its pair is drained", "%d counted",
	      f.counts);
	deferred_run(&d, &ops, 6, 0, false);
	CHECK(f.counts == 0 && d.n == 1, "drained, its table queued: it waits", "%d counted",
	      f.counts);
	deferred_run(&d, &ops, 6, 1e9, false);
	CHECK(f.counts == 1 && d.n == 0 && f.last.ustack == r->key.ustack && d.st.timed_out == 1,
	      "past the timeout: counted once, as sampled", "%d counted, ustack %#llx", f.counts,
	      (unsigned long long)f.last.ustack);
	CHECK(d.bytes == 0, "its bytes given back", "%zu", d.bytes);

	f.counts = 0;
	deferred_park(&d, r, hdr + 256, &ops);
	deferred_run(&d, &ops, 6, 0, true);
	CHECK(f.counts == 1 && d.n == 0, "a window's end: counted as sampled", "%d", f.counts);

	f.counts = 0;
	f.file.state = CPROF_FILE_NONE;
	deferred_park(&d, r, hdr + 256, &ops);
	deferred_run(&d, &ops, 6, 0, false);
	CHECK(f.counts == 1 && d.st.no_table == 1, "no table to be had: counted as sampled", "%d",
	      f.counts);

	/* malformed: what BPF never sends, a process may not forge, but a record is checked */
	f.counts = 0;
	n = (int)d.st.bad;
	deferred_park(&d, r, hdr + 255, &ops); /* shorter than its stack */
	r->stack_len = CPROF_DEFER_STACK + 8;
	deferred_park(&d, r, hdr + CPROF_DEFER_STACK + 8, &ops);
	r->stack_len = 0;
	r->nr = CPROF_DEFER_FRAMES + 1;
	deferred_park(&d, r, hdr, &ops);
	deferred_park(&d, r, 8, &ops);
	deferred_run(&d, &ops, 6, 1e9, true);
	CHECK(d.st.bad == (uint64_t)n + 4 && d.n == 0 && f.counts == 0,
	      "malformed records dropped and counted", "%llu bad, %zu parked, %d counted",
	      (unsigned long long)d.st.bad, d.n, f.counts);

	/* the parked bytes are bounded: past them, records are kept without their stacks */
	r->nr = 1;
	r->stack_len = CPROF_DEFER_STACK;
	f.file.state = CPROF_FILE_QUEUED;
	f.counts = 0;
	for (int i = 0; i < 200; i++)
		deferred_park(&d, r, hdr + CPROF_DEFER_STACK, &ops);
	CHECK(d.n == 200 && d.bytes <= DEFERRED_BYTES && d.st.unstacked > 0 &&
		      d.st.bytes_peak <= DEFERRED_BYTES,
	      "parked bytes bounded", "%zu parked, %zu bytes, %llu without stacks", d.n, d.bytes,
	      (unsigned long long)d.st.unstacked);
	deferred_run(&d, &ops, 6, 0, true);
	CHECK(f.counts == 200 && d.n == 0 && d.bytes == 0, "every one counted at the window's end",
	      "%d", f.counts);

	/*
	 * An entry read at exec, before ld.so mapped the libraries: the walk
	 * goes by it as parked, and by the mappings the process has now where
	 * it had none (a frame's return into libc), never by one over its own.
	 */
	f.counts = 0;
	f.grown = false;
	f.file.state = CPROF_FILE_QUEUED;
	deferred_park(&d, r, hdr + CPROF_DEFER_STACK, &ops);
	f.grown = true;
	f.asked = 0;
	f.file.state = CPROF_FILE_LOADED;
	deferred_run(&d, &ops, 6, 0, false);
	CHECK(f.counts == 1 && d.st.walked >= 1 && (f.asked & (1u << 4)) && !(f.asked & (1u << 5)) &&
		      f.stored && f.last.ustack == f.stored,
	      "a parked entry completed by the process's mappings now; counted with the stack walked",
	      "%d counted, files asked 0x%x, ustack %#llx, stored %#llx", f.counts, f.asked,
	      (unsigned long long)f.last.ustack, (unsigned long long)f.stored);
	deferred_free(&d);
	free(r);
	return T_EXIT();
}
