// SPDX-License-Identifier: MIT
/*
 * The BPF unwinder compiled as plain C: bpfshim.h for the helpers, then
 * the BPF program's own headers in the order cprof.bpf.c includes them.
 * The shim's maps get storage here, once, on first use.
 */
#include "bpfshim.h"

#include "cprof.h"
#include "state.bpf.h"

#include "maps.bpf.h"
#include "stacks.bpf.h"
#include "pytramp.bpf.h"
#include "unwind.bpf.h"

#include "bpfunwind.h"

#define PIDS_MAX 16   /* processes a test walks at once */
#define EVENTS_MAX 64 /* events a test may send before it reads them */
#define TRAMP_PAGES_MAX 64 /* pages of perf trampolines a test sets */

static struct cprof_stack scratch_st;
static struct stack_window window;
static struct row_cache cache;
static union cprof_table_slot no_rows[1];

static void setup(void)
{
	static bool done;

	if (done)
		return;
	done = true;
	shim_array(&scratch, &scratch_st, sizeof(scratch_st), 1);
	shim_array(&stack_window, &window, sizeof(window), 1);
	shim_array(&row_cache, &cache, sizeof(cache), 1);
	shim_array(&unwind_rows, no_rows, sizeof(no_rows[0]), 0);
	shim_hash(&unwind_procs, sizeof(__u32), sizeof(struct cprof_proc_maps), PIDS_MAX);
	shim_hash(&new_code_seen, sizeof(__u32), sizeof(__u64), PIDS_MAX);
	shim_ringbuf(&events, sizeof(struct cprof_event), EVENTS_MAX);
	shim_hash(&py_tramps, sizeof(struct cprof_py_tramp_key), sizeof(struct cprof_py_tramp),
		  TRAMP_PAGES_MAX);
}

int bpfu_set_tramp(uint32_t pid, const struct cprof_py_tramp *t)
{
	struct cprof_py_tramp_key k = { .pid = pid };

	setup();
	for (k.page = t->start >> 12; k.page <= (t->end - 1) >> 12; k.page++)
		if (bpf_map_update_elem(&py_tramps, &k, t, BPF_ANY))
			return -1;
	return 0;
}

void bpfu_set_rows(const union cprof_table_slot *slots, uint32_t n)
{
	setup();
	/* the BPF side only reads them */
	shim_array(&unwind_rows, (void *)(uintptr_t)slots, sizeof(*slots), n);
	rows_gen++;
}

int bpfu_search_row(const struct cprof_proc_map *m, uint64_t rel, struct cprof_unwind_row *out)
{
	setup();
	return search_row(m, rel, out);
}

int bpfu_find_row(const struct cprof_proc_map *m, uint64_t rel, struct cprof_unwind_row *out)
{
	struct row_memo memo = { 0 };
	int rc;

	setup();
	rc = find_row(m, rel, &memo);
	if (rc == 0)
		*out = memo.row;
	return rc;
}

int bpfu_find_mapping(const struct cprof_proc_maps *pm, uint64_t pc)
{
	struct unwind_ctx c = { .pm = (struct cprof_proc_maps *)(uintptr_t)pm };
	const struct cprof_proc_map *m;

	setup();
	m = find_mapping(&c, pc);
	return m ? (int)(m - pm->m) : -1;
}

int bpfu_walk(uint32_t pid, const struct cprof_proc_maps *pm, const struct bpfu_regs *regs,
	      const struct bpfu_memory *mem, struct bpfu_walk *out)
{
	struct unwind_ctx c = UNWIND_CTX(pid);
	struct shim_map *ev;
	struct window_span *span;
	size_t events0;

	setup();
	ev = shim_find(&events, false);
	events0 = ev->submitted;
	if (pm)
		bpf_map_update_elem(&unwind_procs, &pid, pm, BPF_ANY);
	else
		bpf_map_delete_elem(&unwind_procs, &pid);
	/* a walk of its own: not rate-limited by the walks before it */
	bpf_map_delete_elem(&new_code_seen, &pid);
	shim_mem = (struct shim_memory){ mem->lo, mem->bytes, mem->len };
	shim_reads = 0;

	span = unwind_begin(&c, pid);
	if (!span)
		return -1;
	c.pc = regs->pc;
	c.sp = regs->sp;
	c.bp = regs->bp;
	unwind_walk(&c, span);

	memset(out, 0, sizeof(*out));
	out->st = *c.st;
	out->status = c.status;
	out->hash = c.hash;
	out->sp = c.sp;
	out->reads = shim_reads;
	out->new_code = ev->submitted - events0;
	if (out->new_code)
		out->new_code_pid =
			((struct cprof_event *)(ev->data + (ev->submitted - 1) * ev->value_size))->pid;
	if (ev->submitted > EVENTS_MAX / 2)
		ev->submitted = 0; /* read: room for the next walks */
	return 0;
}
