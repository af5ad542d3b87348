// SPDX-License-Identifier: MIT
/*
 * The BPF unwinder compiled as plain C: bpfshim.h for the helpers, and
 * the BPF program's own headers (each includes what it uses, the shim in
 * place of libbpf's).  The shim's maps get storage here, once, on first
 * use.  The unit tests walk recorded stacks with it; the agent walks
 * deferred samples on (deferred.c): one copy of the walk, the kernel's.
 */
#include "unwind/bpfshim.h"

#include "counts.bpf.h"
#include "cprof.h"
#include "entry.bpf.h"
#include "framestep.bpf.h"
#include "python.bpf.h"
#include "pytramp.bpf.h"
#include "jvm.bpf.h"
#include "stacks.bpf.h"
#include "state.bpf.h"
#include "unwind.bpf.h"
#include "v8.bpf.h"
#include "vma.bpf.h"
#include "window.bpf.h"

#include "unwind/bpfunwind.h"

#define PIDS_MAX 16   /* processes a test walks at once */
#define EVENTS_MAX 64 /* events a test may send before it reads them */
#define FILE_KEYS_MAX 64 /* files a test names by identity */
#define TRAMP_PAGES_MAX 64 /* pages of perf trampolines a test sets */

static struct cprof_stack scratch_st;
static struct unwind_ctx walk_state;
static struct entry_edit edits[ENTRY_EDIT_SLOTS];
static struct stack_window window;
static struct row_cache cache;
static union cprof_table_slot no_rows[1];
static struct cprof_file files[CPROF_MAX_FILES];
static struct defer_note note;

/* The mappings the kernel would find, as a test made them up. */
static struct bpfu_vma vmas[BPFU_VMAS_MAX];
static size_t nvmas;
/*
 * The kernel's VMAs were looked at this walk: as in a sample, where the
 * mmap lock's irq_work is busy after the first look, the next fails.
 */
static bool vmas_looked;

/* vma.bpf.h's, from the test's mappings. */
static int vma_file_of(__u64 pc, struct vma_file *out)
{
	if (vmas_looked)
		return -1;
	vmas_looked = true;
	for (size_t i = 0; i < nvmas; i++) {
		if (pc >= vmas[i].start && pc < vmas[i].end) {
			/* a pc's mapping: executable */
			*out = (struct vma_file){ .start = vmas[i].start, .end = vmas[i].end,
						  .pgoff = vmas[i].pgoff, .key = vmas[i].key,
						  .exec = 1 };
			return 0;
		}
	}
	return -1;
}

/* vma.bpf.h's: a walk here asks the loader for nothing, so no page matters. */
int in_xol(__u64 pc)
{
	return 0;
}

/* vma.bpf.h's: the binary's code is not told apart in a test's mappings. */
static int exe_code_of(struct vma_file *out)
{
	return -1;
}

static void setup(void)
{
	static bool done;

	if (done)
		return;
	done = true;
	shim_array(&scratch, &scratch_st, sizeof(scratch_st), 1);
	shim_array(&unwind_walks, &walk_state, sizeof(walk_state), 1);
	shim_array(&entry_edits, edits, sizeof(edits[0]), ENTRY_EDIT_SLOTS);
	shim_array(&stack_window, &window, sizeof(window), 1);
	shim_array(&row_cache, &cache, sizeof(cache), 1);
	shim_array(&defer_notes, &note, sizeof(note), 1);
	shim_array(&unwind_rows, no_rows, sizeof(no_rows[0]), 0);
	shim_array(&unwind_files, files, sizeof(files[0]), CPROF_MAX_FILES);
	shim_hash(&unwind_procs, sizeof(__u32), sizeof(struct cprof_proc_maps), PIDS_MAX);
	shim_hash(&unwind_file_keys, sizeof(struct cprof_file_key), sizeof(struct cprof_file_ref),
		  FILE_KEYS_MAX);
	shim_hash(&new_code_seen, sizeof(__u32), sizeof(__u64), PIDS_MAX);
	/* room for the biggest record the unwinder sends */
	_Static_assert(sizeof(struct cprof_event) >= sizeof(struct cprof_file_event),
		       "the ring's records are sized by the process event");
	shim_ringbuf(&events, sizeof(struct cprof_event), EVENTS_MAX);
	shim_hash(&py_tramps, sizeof(struct cprof_py_tramp_key), sizeof(struct cprof_py_tramp),
		  TRAMP_PAGES_MAX);
	/* empty: a record's stack copy holds no JVM's code cache to read */
	shim_hash(&jvm_procs, sizeof(__u32), sizeof(struct cprof_jvm_proc), 1);
	shim_hash(&v8_procs, sizeof(__u32), sizeof(struct cprof_v8_proc), 1);
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

static const union cprof_table_slot *(*rows_fn)(void *ctx, uint32_t idx);

static const void *rows_value(void *ctx, uint32_t idx)
{
	return rows_fn(ctx, idx);
}

void bpfu_set_rows_fn(const union cprof_table_slot *(*fn)(void *ctx, uint32_t idx), void *ctx,
		      uint32_t n)
{
	setup();
	rows_fn = fn;
	shim_array_fn(&unwind_rows, sizeof(union cprof_table_slot), n, rows_value, ctx);
	rows_gen++;
}

void bpfu_set_file(uint32_t file, const struct cprof_file *f)
{
	if (file < CPROF_MAX_FILES)
		files[file] = *f;
}

void bpfu_get_file(uint32_t file, struct cprof_file *out)
{
	memset(out, 0, sizeof(*out));
	if (file < CPROF_MAX_FILES)
		*out = files[file];
}

void bpfu_set_file_key(const struct cprof_file_key *k, const struct cprof_file_ref *ref)
{
	setup();
	if (ref)
		bpf_map_update_elem(&unwind_file_keys, k, ref, BPF_ANY);
	else
		bpf_map_delete_elem(&unwind_file_keys, k);
}

void bpfu_set_vmas(const struct bpfu_vma *v, size_t n, bool file_tables_on)
{
	nvmas = n < BPFU_VMAS_MAX ? n : BPFU_VMAS_MAX;
	if (nvmas)
		memcpy(vmas, v, nvmas * sizeof(*v));
	file_tables = file_tables_on;
}

int bpfu_search_row(const struct cprof_table *t, uint64_t rel, struct cprof_unwind_rule *out)
{
	__u32 first, last;

	setup();
	return search_row(t, rel, out, &first, &last);
}

int bpfu_find_row(const struct cprof_table *t, uint64_t rel, struct cprof_unwind_rule *out)
{
	struct row_memo memo = { 0 };
	int rc;

	setup();
	rc = find_row(t, rel, 0, &memo); /* as a return address's */
	if (rc == 0)
		*out = memo.rule;
	return rc;
}

int bpfu_find_mapping(const struct cprof_proc_maps *pm, uint64_t pc)
{
	static struct cprof_file saved[CPROF_MAX_FILES];
	struct cur_map m = { 0 };
	struct shim_map *ev;
	size_t events0;
	int rc;

	setup();
	/* A lookup, not a sample: the requests for tables it makes are undone. */
	ev = shim_find(&events, false);
	events0 = ev->submitted;
	memcpy(saved, files, sizeof(files));
	rc = find_mapping(pm, pc, 0, &m);
	memcpy(files, saved, sizeof(files));
	ev->submitted = events0;
	if (rc)
		return -1;
	for (uint32_t i = 0; i < pm->n; i++)
		if (pm->m[i].start == m.start && pm->m[i].end == m.end)
			return (int)i;
	return -2; /* a mapping that is not in @pm */
}

int bpfu_remember(uint32_t pid, uint64_t start, uint64_t end, uint64_t bias, uint32_t file)
{
	setup();
	return remember_vma(pid, start, end, bias, file);
}

int bpfu_mmap_add(uint32_t pid, const struct cprof_proc_map *m, bool create)
{
	setup();
	return entry_add(pid, m, ENTRY_LOADER_TOO | (create ? ENTRY_CREATE : 0));
}

uint32_t bpfu_edit_slot(unsigned slot, bool busy)
{
	setup();
	if (slot >= ENTRY_EDIT_SLOTS)
		return 0;
	edits[slot].busy = busy;
	return edits[slot].pm.n;
}

void bpfu_forget(uint32_t pid, bool any)
{
	setup();
	forget_entry(pid, any);
}

int bpfu_entry(uint32_t pid, struct cprof_proc_maps *out)
{
	const struct cprof_proc_maps *pm;

	setup();
	pm = bpf_map_lookup_elem(&unwind_procs, &pid);
	if (!pm)
		return -1;
	*out = *pm;
	return 0;
}

void bpfu_set_proc(uint32_t pid, const struct cprof_proc_maps *pm)
{
	setup();
	if (pm)
		bpf_map_update_elem(&unwind_procs, &pid, pm, BPF_ANY);
	else
		bpf_map_delete_elem(&unwind_procs, &pid);
}

int bpfu_walk(uint32_t pid, const struct cprof_proc_maps *pm, const struct bpfu_regs *regs,
	      const struct bpfu_memory *mem, struct bpfu_walk *out)
{
	struct unwind_loop l;
	struct shim_map *ev;
	struct window_span *span;
	size_t events0;

	setup();
	ev = shim_find(&events, false);
	events0 = ev->submitted;
	if (pm == BPFU_KEPT)
		;
	else if (pm)
		bpf_map_update_elem(&unwind_procs, &pid, pm, BPF_ANY);
	else
		bpf_map_delete_elem(&unwind_procs, &pid);
	/* a walk of its own: not rate-limited by the walks before it */
	bpf_map_delete_elem(&new_code_seen, &pid);
	shim_mem = (struct shim_memory){ mem->lo, mem->bytes, mem->len };
	shim_reads = 0;

	vmas_looked = false; /* a sample of its own */
	span = unwind_begin(&l, pid);
	if (!span)
		return -1;
	l.c->pc = regs->pc;
	l.c->sp = regs->sp;
	l.c->bp = regs->bp;
	unwind_walk(&l, span);

	memset(out, 0, sizeof(*out));
	out->st = *l.st;
	out->status = l.c->status;
	out->hash = l.c->hash;
	out->sp = l.c->sp;
	out->reads = shim_reads;
	out->unknown_file = l.c->unknown_file;
	out->deferred = l.c->defer;
	for (size_t i = events0; i < ev->submitted; i++) {
		const struct cprof_file_event *fe = (const void *)(ev->data + i * ev->value_size);

		if (fe->type == CPROF_EV_NEW_CODE) {
			out->new_code++;
			out->new_code_pid = fe->pid;
		} else if (fe->type == CPROF_EV_WANT_TABLE) {
			if (out->asked < sizeof(out->asked_file) / sizeof(out->asked_file[0]))
				out->asked_file[out->asked] = fe->file;
			out->asked++;
		}
	}
	if (ev->submitted > EVENTS_MAX / 2)
		ev->submitted = 0; /* read: room for the next walks */
	return 0;
}

void bpfu_set_window(uint64_t lo, const void *bytes, uint32_t len)
{
	setup();
	len = len < STACK_WINDOW ? len : STACK_WINDOW;
	window.lo = lo;
	window.len = len;
	memcpy(window.b, bytes, len);
}

int bpfu_py_stack_word(const struct bpfu_memory *mem, uint64_t addr, uint64_t *out,
		       size_t *reads)
{
	__u64 v = 0;
	int rc;

	setup();
	shim_mem = (struct shim_memory){ mem->lo, mem->bytes, mem->len };
	shim_reads = 0;
	rc = py_stack_word(addr, &v);
	*out = v;
	*reads = shim_reads;
	return rc;
}

int bpfu_py_frame_from_window(uint64_t addr, uint32_t size, uint8_t out[CPROF_PY_FRAME_READ])
{
	static struct py_walk w;

	setup();
	memset(&w, 0, sizeof(w));
	if (py_frame_from_window(&w, addr, size))
		return -1;
	if (w.frames_lo != addr || w.frames_len != size)
		return -2; /* the walk would look for it elsewhere */
	memcpy(out, w.frames, CPROF_PY_FRAME_READ);
	return 0;
}

#define COUNT_CPUS 8 /* CPUs a test's count logs have, at most */
static struct count_memo count_memo_of[COUNT_CPUS];

void bpfu_set_count_logs(struct cprof_count_slot *log0, struct cprof_count_slot *log1,
			 uint32_t ncpus, uint32_t slots)
{
	setup();
	memset(count_memo_of, 0, sizeof(count_memo_of));
	shim_array(&count_log0, log0, sizeof(*log0), ncpus * slots);
	shim_array(&count_log1, log1, sizeof(*log1), ncpus * slots);
	count_log_slots = slots;
}

bool bpfu_count_log_add(unsigned int pair, unsigned int cpu, const struct cprof_sample_key *key)
{
	if (cpu >= COUNT_CPUS)
		return false;
	/* the per-CPU memo: this CPU's */
	shim_array(&count_memos, &count_memo_of[cpu], sizeof(count_memo_of[cpu]), 1);
	shim_cpu = cpu;
	return count_log_add(pair ? (void *)&count_log1 : (void *)&count_log0, key);
}

void bpfu_set_defer(bool on)
{
	defer_walks = on;
}

int bpfu_defer_note(struct cprof_deferred *out)
{
	setup();
	memset(out, 0, offsetof(struct cprof_deferred, stack));
	out->type = CPROF_EV_DEFERRED;
	out->file = note.file;
	out->nr = note.nr < CPROF_DEFER_FRAMES ? note.nr : CPROF_DEFER_FRAMES;
	out->exact = note.exact;
	out->pc = note.pc;
	out->sp = note.sp;
	out->bp = note.bp;
	out->chain_end = note.chain_end;
	out->status = note.status;
	memcpy(out->ip, note.ip, sizeof(out->ip));
	return 0;
}

int bpfu_resume(uint32_t pid, const struct cprof_proc_maps *pm, const struct cprof_deferred *rec,
		const uint8_t *stack, struct bpfu_walk *out)
{
	struct unwind_loop l;
	struct unwind_ctx *c;
	struct shim_map *ev;
	size_t events0;
	uint32_t n = rec->nr < CPROF_DEFER_FRAMES ? rec->nr : CPROF_DEFER_FRAMES;

	setup();
	ev = shim_find(&events, false);
	events0 = ev->submitted;
	if (pm)
		bpf_map_update_elem(&unwind_procs, &pid, pm, BPF_ANY);
	else
		bpf_map_delete_elem(&unwind_procs, &pid);
	bpf_map_delete_elem(&new_code_seen, &pid);
	shim_mem = (struct shim_memory){ rec->stack_lo, stack, rec->stack_len };
	shim_reads = 0;
	/* after the sample: no kernel VMAs to look at, and no walk to defer */
	vmas_looked = true;
	if (!unwind_begin(&l, pid))
		return -1;
	c = l.c;
	l.win->top = 0; /* no earlier walk of this thread read this copy */
	/* the frames before, hashed as unwind_step() did: all but the leaf */
	l.st->nr = n;
	l.st->status = rec->status & ~0xffu;
	for (uint32_t i = 0; i < n; i++) {
		l.st->ip[i] = rec->ip[i];
		if (i)
			c->hash = hash_mix(c->hash, rec->ip[i]);
	}
	c->pc = rec->pc;
	c->sp = rec->sp;
	c->bp = rec->bp;
	c->chain_end = rec->chain_end;
	c->exact = rec->exact ? 1 : 0;
	c->defer = 1; /* walked again: not deferred again */
	c->status = CPROF_UNWIND_TRUNCATED;
	bpf_loop(CPROF_MAX_FRAMES + 1, unwind_step, &l, 0);

	memset(out, 0, sizeof(*out));
	out->st = *l.st;
	out->status = c->status;
	out->hash = c->hash;
	out->sp = c->sp;
	out->reads = shim_reads;
	out->unknown_file = c->unknown_file;
	ev->submitted = events0; /* what it asked for is the loader's own business */
	return 0;
}

uint64_t bpfu_stack_hash(const struct cprof_stack *st, uint64_t walk_hash)
{
	if (!st->nr)
		return 0;
	return hash_finish(hash_mix(walk_hash, st->ip[0]), st, BPF_F_USER_STACK);
}
