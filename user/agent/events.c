// SPDX-License-Identifier: MIT
/*
 * events: turns what BPF sends into the run's records.  A process image's
 * record is made on its first event or sample, with its CPython and its
 * unwind entry; execs and new code read its mappings again; exits retire
 * it from BPF.  Drained stacks and counts go to their images.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/clock.h"
#include "agent/events.h"

/* Finds the CPython of a process not known to run one, and tells BPF of it. */
static void python_attach(struct run *r, struct process *p)
{
	struct cprof_py_proc bpf;
	struct errbuf err = { "" };
	int ret;

	if (!r->python || p->py || !p->have_maps || p->exited)
		return;
	ret = pyproc_find(&p->py, p->pid, &p->maps, p->objs, &r->py, &err);
	if (ret == 0) {
		pyproc_bpf(p->py, p->gen, &bpf);
		sampler_set_python(r->sampler, p->pid, &bpf);
	} else if (ret != -ENOENT && r->opts->verbose) {
		fprintf(stderr, PROG ": pid %u: %s\n", p->pid, err.msg);
	}
}

/*
 * Frame @depth of a JVM's sample, @ip as BPF stored it: a Java frame it
 * recorded, or the JVM's own code it walked before it knew the JVM
 * (looked up at the address the profile names it by).  Named now, while
 * the process lives (a method can be unloaded, compiled code freed).
 */
static void java_frame_read(struct jvmproc *jp, uint64_t ip, uint32_t depth)
{
	if (ip & CPROF_JAVA_FRAME)
		jvm_frame_lines(jp, ip);
	else if (ip)
		jvm_stub_at(jp, symbolize_frame_addr(ip, depth));
}

/* The frames of a JVM's stack @hash, named now. */
static void java_stack_read(struct run *r, struct jvmproc *jp, uint64_t hash)
{
	const uint64_t *ip;
	uint32_t nr = 0;

	if (!(hash & CPROF_STACK_HASHED) || !(ip = stackstore_get(&r->stacks, hash, &nr, NULL)))
		return;
	for (uint32_t i = 0; i < nr; i++)
		java_frame_read(jp, ip[i], i);
}

/* The frames of a JVM's sample @k, named now. */
static void java_frames_read(struct run *r, struct process *p, const struct cprof_sample_key *k)
{
	java_frame_read(p->jvm, k->uleaf, 0);
	java_stack_read(r, p->jvm, k->ustack);
}

/*
 * The samples a JVM's process had before it was found (its first ones,
 * walked by frame pointers through the interpreter): the JVM's own code
 * in them named now.
 */
static void java_frames_before(struct run *r, struct process *p)
{
	struct aggregate_entry *e;
	size_t it = 0;

	while ((e = hmap_next(&p->samples.map, &it)))
		java_stack_read(r, p->jvm, e->key.ustack);
}

/*
 * A JVM still starting is looked for again this often, so many times (a
 * JVM fills in its tables well within a second; a process that keeps
 * them empty is not looked at for ever).
 */
#define JVM_RETRY_S 0.05
#define JVM_RETRIES 100

/*
 * Finds the HotSpot JVM of a process not known to run one, and tells BPF
 * of it.  A JVM whose layout this does not know is said once a run (each
 * with -v), and its frames stay native.
 */
static void java_attach(struct run *r, struct process *p)
{
	struct cprof_jvm_proc bpf;
	struct errbuf err = { "" };
	int ret;

	if (!r->java || p->jvm || !p->have_maps || p->exited)
		return;
	ret = jvmproc_find(&p->jvm, p->pid, &p->maps, p->objs, &err);
	p->jvm_retry = ret == -EAGAIN && ++p->jvm_tries < JVM_RETRIES ?
			       clock_s(CLOCK_MONOTONIC) + JVM_RETRY_S : 0;
	if (ret == 0 && jvmproc_bpf(p->jvm, p->gen, &bpf) == 0 &&
	    sampler_set_jvm(r->sampler, p->pid, &bpf) == 0) {
		p->jvm->names.st = &r->java_st.names;
		r->java_st.jvms++;
		java_frames_before(r, p);
		return;
	}
	if (ret == 0) {
		ret = -ENOTSUP;
		errf(&err, ret, "its code cache (%u heaps) does not fit BPF's entry", p->jvm->code.n);
		jvmproc_free(p->jvm);
		p->jvm = NULL;
	}
	if (ret == -ENOTSUP) {
		r->java_st.refused++;
		if (!r->java_st.told || r->opts->verbose)
			fprintf(stderr, PROG ": pid %u: a JVM this does not know: %s; its Java frames "
					"stay native\n", p->pid, err.msg);
		r->java_st.told = true;
	}
}

/*
 * Whether stack @hash of @p was named this window already (a stack is
 * counted at many drains); noted now if not, while the bound allows.
 */
static bool js_stack_seen(struct run *r, const struct process *p, uint64_t hash)
{
	struct js_stack_key key = { .pid = p->pid, .gen = p->gen, .hash = hash };
	bool created = false;

	if (r->js_read.n >= JS_READ_MAX)
		return hmap_find(&r->js_read, &key) != NULL;
	return hmap_insert(&r->js_read, &key, &created) && !created;
}

/*
 * The JavaScript frames of a V8's sample @k, named now: V8's collector
 * moves and frees what names them.
 */
static void js_frames_read(struct run *r, struct process *p, const struct cprof_sample_key *k)
{
	struct v8_names_stats before = p->v8->names.st, *now = &p->v8->names.st;
	const uint64_t *ip;
	uint32_t nr = 0;

	if (k->uleaf & CPROF_V8_FRAME)
		v8proc_frame(p->v8, k->uleaf);
	if (!js_stack_seen(r, p, k->ustack) && (k->ustack & CPROF_STACK_HASHED) &&
	    (ip = stackstore_get(&r->stacks, k->ustack, &nr, NULL)))
		for (uint32_t i = 0; i < nr; i++)
			if (ip[i] & CPROF_V8_FRAME)
				v8proc_frame(p->v8, ip[i]);
	/* the run's counts: what this read added to the process's */
	r->node_st.names.named += now->named - before.named;
	r->node_st.names.failed += now->failed - before.failed;
	r->node_st.names.refused += now->refused - before.refused;
}

/*
 * Finds the V8 (Node.js) of a process not known to run one, and tells BPF
 * of it.  Not beside a JVM, found or still starting: what BPF records in
 * place of a pc is one runtime's record a process (bpf/runtimes.h).  A V8
 * whose layout this does not know is said once a run (each with -v), and
 * its frames stay native.
 */
static void node_attach(struct run *r, struct process *p)
{
	struct cprof_v8_proc bpf;
	struct errbuf err = { "" };
	int ret;

	if (!r->node || p->v8 || p->jvm || p->jvm_retry || !p->have_maps || p->exited)
		return;
	ret = v8proc_find(&p->v8, p->pid, &p->maps, p->objs, &err);
	if (ret == 0 && v8proc_bpf(p->v8, p->gen, &bpf))
		ret = errf(&err, -ENOTSUP, "its layout's constants do not fit BPF's entry");
	if (ret == 0 && (ret = sampler_set_v8(r->sampler, p->pid, &bpf)) != 0)
		errf(&err, ret, "BPF's entry not written");
	if (ret == 0) {
		r->node_st.v8s++;
		return;
	}
	v8proc_free(p->v8);
	p->v8 = NULL;
	if (ret == -ENOTSUP) {
		r->node_st.refused++;
		if (!r->node_st.told || r->opts->verbose)
			fprintf(stderr, PROG ": pid %u: a V8 this does not know: %s; its JavaScript "
					"frames stay native\n", p->pid, err.msg);
		r->node_st.told = true;
	} else if (ret != -ENOENT && r->opts->verbose) {
		fprintf(stderr, PROG ": pid %u: V8: %s\n", p->pid, err.msg);
	}
}

void events_forget_runtimes(struct run *r, struct process *p)
{
	if (p->py)
		sampler_set_python(r->sampler, p->pid, NULL);
	if (p->jvm)
		sampler_set_jvm(r->sampler, p->pid, NULL);
	if (p->v8)
		sampler_set_v8(r->sampler, p->pid, NULL);
}

/* Tells BPF of the perf trampolines a process mapped since its last look. */
static void python_tramps(struct run *r, struct process *p)
{
	struct errbuf err = { "" };

	if (p->have_maps && !p->exited && py_tramps_update(r->tramps, p->pid, &p->maps, &err) &&
	    r->opts->verbose)
		fprintf(stderr, PROG ": pid %u: perf trampolines: %s\n", p->pid, err.msg);
}

static void refresh_process(struct run *r, struct process *p, enum proctab_refresh_why why);

/*
 * Gives BPF @p's entry.  When it kept mappings BPF added that the snapshot
 * lacks (read while they were being mapped, bpftables.h), the snapshot is
 * read once more, unless @again is that read: the frames in them are to
 * be named.
 */
static void tables_of(struct run *r, struct process *p, bool again)
{
	/* Unwind tables serve sampling only: none once it is over. */
	if (r->tables && !*r->stop &&
	    bpftables_add_process(r->tables, p, NULL) == BPFTABLES_RACED && !again)
		refresh_process(r, p, REFRESH_RACED);
}

/* The record of one process image, made (and given its tables) on first use. */
static struct process *process_of(struct run *r, uint32_t pid, uint64_t gen, const char *comm,
				  bool *created_out)
{
	bool created = false;
	struct process *p = proctab_get(&r->procs, pid, gen, comm, &created);

	/* Python first: its frames need no table, and a short run is short. */
	if (p && created) {
		python_attach(r, p);
		java_attach(r, p);
		node_attach(r, p);
		python_tramps(r, p);
		tables_of(r, p, false);
	} else if (p && p->jvm_retry && clock_s(CLOCK_MONOTONIC) >= p->jvm_retry) {
		java_attach(r, p);
		node_attach(r, p);
	}
	if (created_out)
		*created_out = created;
	return p;
}

/* Reads a live process's mappings again, and its unwind tables with them. */
static void refresh_process(struct run *r, struct process *p, enum proctab_refresh_why why)
{
	if (p && !p->exited &&
	    proctab_refresh(&r->procs, p, clock_s(CLOCK_MONOTONIC), why) == 0) {
		python_attach(r, p);
		java_attach(r, p);
		node_attach(r, p);
		python_tramps(r, p);
		tables_of(r, p, why == REFRESH_RACED);
	}
}

/* The refreshes the backoff deferred, before a window is written. */
void events_refresh_deferred(struct run *r)
{
	size_t n;
	struct process **list = proctab_list(&r->procs, &n);

	for (size_t i = 0; list && i < n; i++)
		if (list[i]->refresh_pending && proctab_find(&r->procs, list[i]->pid) == list[i])
			refresh_process(r, list[i], REFRESH_DEFERRED);
	free(list);
}

/*
 * A file of a process gone before it was read, opened by the path BPF
 * sent: it names the process's frames, and numbered, it gives the next
 * process that runs it its table from its first sample; the table of
 * where the gone one was first sampled is wanted now.
 */
static void exit_file(struct run *r, const struct cprof_exit_file *ev)
{
	struct process *p = proctab_exit_file(&r->procs, ev);

	if (p && r->tables && !*r->stop) {
		bpftables_add_files(r->tables, p);
		bpftables_want_at(r->tables, p, p->first_pc);
	}
}

/*
 * Young: exec'd while we sample, within YOUNG_S.  A sample of such a
 * program asking for one of its tables gets all of them (bpftables.h,
 * bpftables_want_process): its first samples are what it has.
 */
#define YOUNG_S 1.0

static bool young(const struct process *p)
{
	return p->exec_s && clock_s(CLOCK_MONOTONIC) - p->exec_s < YOUNG_S;
}

/* ---- deferred samples: what deferred.c reads and writes of the run ---- */

static int def_entry(void *ctx, uint32_t pid, uint64_t gen, struct cprof_proc_maps *out)
{
	struct run *r = ctx;
	struct process *p = proctab_find(&r->procs, pid);

	/*
	 * unwind_procs is keyed by pid alone: once the pid runs another image
	 * (an exec since), its entry names that image's files at its own
	 * addresses, and a walk by it goes astray (a program that exec'd a
	 * few ms after its first samples: their walk on stopped at main).
	 */
	if (p && p->gen != gen)
		return -ESRCH;
	if (sampler_get_entry(r->sampler, pid, out) == 0 && !(out->flags & CPROF_PROC_MAPS_KERNEL))
		return 0;
	/* gone, or never read: its mappings as its exit record told them */
	if (p && r->tables && bpftables_entry_of(r->tables, p, out) == 0)
		return 0;
	/* BPF's own, the few mappings its samples found, if any */
	return sampler_get_entry(r->sampler, pid, out);
}

static int def_file(void *ctx, uint32_t file, struct cprof_file *out)
{
	return sampler_get_file(((struct run *)ctx)->sampler, file, out);
}

static void def_want(void *ctx, uint32_t file)
{
	struct run *r = ctx;

	if (r->tables)
		bpftables_want(r->tables, file);
}

static int def_slot(void *ctx, uint32_t idx, union cprof_table_slot *out)
{
	return sampler_get_slot(((struct run *)ctx)->sampler, idx, out);
}

static int def_stack_status(void *ctx, uint64_t hash)
{
	uint32_t nr, status;

	if (!stackstore_get(&((struct run *)ctx)->stacks, hash, &nr, &status))
		return -1;
	return (int)(status & 0x7fffffff);
}

static int on_stack(void *ctx, uint64_t hash, const struct cprof_stack *st);
static int on_sample_count(void *ctx, const struct cprof_sample_key *k, uint64_t count);

static int def_count(void *ctx, const struct cprof_sample_key *k)
{
	return on_sample_count(ctx, k, 1);
}

static const struct deferred_ops deferred_ops_of_run = {
	.entry = def_entry,
	.file = def_file,
	.want = def_want,
	.slot = def_slot,
	.stack_status = def_stack_status,
	.stack = on_stack,
	.count = def_count,
};

/* deferred.h's ops over run @r. */
static struct deferred_ops deferred_ops(struct run *r)
{
	struct deferred_ops ops = deferred_ops_of_run;
	uint32_t cap = 0;

	ops.ctx = r;
	if (!sampler_unwind_rows(r->sampler, &cap))
		ops.nrows = cap + 1; /* as BPF has it: one past the tables' room */
	return ops;
}

/*
 * Image @gen of @pid is gone (exit, or exec of another): its parked
 * samples keep its mappings, before the pid's entry is another's or none.
 */
static void image_gone(struct run *r, uint32_t pid, uint64_t gen)
{
	struct deferred_ops ops;

	if (!r->tables || !deferred_waiting(&r->deferred))
		return;
	ops = deferred_ops(r);
	deferred_image_gone(&r->deferred, pid, gen, &ops);
}

void events_deferred(struct run *r, bool flush)
{
	struct deferred_ops ops = deferred_ops(r);
	int ret;

	if (!deferred_waiting(&r->deferred))
		return;
	ret = deferred_run(&r->deferred, &ops, sampler_drained_below(r->sampler),
			   clock_s(CLOCK_MONOTONIC), flush);
	if (ret && !r->drain_error) {
		r->drain_error = ret;
		snprintf(r->drain_errmsg, sizeof(r->drain_errmsg),
			 "counting deferred samples: %s", strerror(-ret));
	}
}

int events_on_event(void *ctx, const void *data, size_t size)
{
	const struct cprof_event *ev = data;
	struct run *r = ctx;
	char comm[CPROF_COMM_LEN + 1];
	struct process *p;
	bool created;

	if (ev->type == CPROF_EV_WANT_TABLE) {
		const struct cprof_file_event *fe = data;

		if (r->tables && size >= sizeof(*fe)) {
			bpftables_want(r->tables, fe->file);
			p = proctab_find(&r->procs, fe->pid);
			if (p && young(p))
				bpftables_want_process(r->tables, p);
		}
		return 0;
	}
	if (ev->type == CPROF_EV_DEFERRED) {
		struct deferred_ops ops = deferred_ops(r);

		if (r->tables && deferred_park(&r->deferred, data, size, &ops) &&
		    !r->drain_error) {
			r->drain_error = -ENOMEM;
			snprintf(r->drain_errmsg, sizeof(r->drain_errmsg),
				 "out of memory parking a deferred sample");
		}
		return 0;
	}
	if (ev->type == CPROF_EV_EXIT_MAPS) {
		if (size >= sizeof(struct cprof_exit_maps))
			proctab_exit_maps(&r->procs, data);
		return 0;
	}
	if (ev->type == CPROF_EV_EXIT_FILE) {
		if (size >= sizeof(struct cprof_exit_file))
			exit_file(r, data);
		return 0;
	}
	if (size < sizeof(*ev))
		return 0;
	memcpy(comm, ev->comm, CPROF_COMM_LEN);
	comm[CPROF_COMM_LEN] = '\0';
	if (ev->type == CPROF_EV_NEW_PROC || ev->type == CPROF_EV_EXEC)
		r->birth_s = clock_s(CLOCK_MONOTONIC);
	switch (ev->type) {
	case CPROF_EV_NEW_PROC:
		p = process_of(r, ev->pid, ev->gen, comm, &created);
		if (p && created)
			p->first_pc = ev->addr;
		if (p && created && r->tables && !*r->stop)
			bpftables_want_at(r->tables, p, ev->addr);
		break;
	case CPROF_EV_EXEC:
		p = proctab_find(&r->procs, ev->pid);
		if (p && p->gen != ev->gen) {
			/* the image it replaces, if a JVM's or a V8's, is no longer BPF's to walk */
			if (p->jvm || p->v8) {
				sampler_set_jvm(r->sampler, ev->pid, NULL);
				sampler_set_v8(r->sampler, ev->pid, NULL);
			}
			image_gone(r, ev->pid, p->gen);
		}
		/*
		 * An image first sampled inside its execve keeps its
		 * generation: the mappings read then may predate the new ones.
		 */
		p = process_of(r, ev->pid, ev->gen, comm, &created);
		if (!created)
			refresh_process(r, p, REFRESH_EXEC);
		if (p)
			p->exec_s = clock_s(CLOCK_MONOTONIC);
		break;
	case CPROF_EV_NEW_CODE:
		p = proctab_find(&r->procs, ev->pid);
		if (ev->addr != CPROF_NEW_CODE_STARTUP) {
			refresh_process(r, p, REFRESH_NEW_CODE);
			break;
		}
		/*
		 * A new program mapping files no process of the run mapped
		 * before: its tables are queued now, not at its first samples
		 * (bpftables_build_pending drops those of a program gone by then).
		 */
		refresh_process(r, p, REFRESH_STARTUP);
		if (p && young(p) && r->tables && !*r->stop)
			bpftables_want_process(r->tables, p);
		break;
	case CPROF_EV_EXIT:
		p = proctab_find(&r->procs, ev->pid);
		if (p && p->gen == ev->gen)
			image_gone(r, ev->pid, ev->gen);
		proctab_exited(&r->procs, ev->pid, ev->gen);
		if (r->tables && p && p->gen == ev->gen)
			bpftables_remove_process(r->tables, ev->pid);
		if (p && p->gen == ev->gen) {
			events_forget_runtimes(r, p);
			py_tramps_remove(r->tramps, ev->pid);
		}
		break;
	case CPROF_EV_PY_CODE:
		p = proctab_find(&r->procs, ev->pid);
		if (p && p->py && p->gen == ev->gen)
			pyproc_read_code(p->py, ev->pid, ev->addr);
		break;
	}
	return 0;
}

static int on_stack(void *ctx, uint64_t hash, const struct cprof_stack *st)
{
	struct run *r = ctx;
	uint32_t nr = st->nr < CPROF_MAX_FRAMES ? st->nr : CPROF_MAX_FRAMES;

	return stackstore_add(&r->stacks, hash, (const uint64_t *)st->ip, nr, st->status);
}

/* The process image a sample or wait is of. */
static struct process *sample_process(struct run *r, const struct cprof_sample_key *k)
{
	struct process *p = process_of(r, k->pid, k->gen, NULL, NULL);

	/* The thread's name stands in for the process's if it is unknown. */
	if (p && !p->comm[0]) {
		memcpy(p->comm, k->comm, sizeof(p->comm));
		p->comm[sizeof(p->comm) - 1] = '\0';
	}
	return p;
}

static int on_sample_count(void *ctx, const struct cprof_sample_key *k, uint64_t count)
{
	struct run *r = ctx;
	struct process *p = sample_process(r, k);

	if (!p)
		return -ENOMEM;
	r->samples_drained += count;
	if (p->py)
		py_stats_sample(&r->py, k->pystack, count);
	if (p->jvm)
		java_frames_read(r, p, k);
	if (p->v8)
		js_frames_read(r, p, k);
	return aggregate_add(&p->samples, &r->stacks, k, count);
}

static int on_off_cpu(void *ctx, const struct cprof_sample_key *k, uint64_t ns)
{
	struct run *r = ctx;
	struct process *p = sample_process(r, k);

	if (!p)
		return -ENOMEM;
	if (p->jvm)
		java_frames_read(r, p, k);
	if (p->v8)
		js_frames_read(r, p, k);
	return aggregate_add_off_cpu(&p->samples, &r->stacks, k, ns);
}

/* Lost counts are per pid: they go to its current image. */
static int on_lost(void *ctx, uint32_t pid, const struct cprof_lost *l)
{
	struct run *r = ctx;
	struct process *p = proctab_find(&r->procs, pid);

	if (!p)
		p = process_of(r, pid, 0, NULL, NULL);
	if (!p)
		return -ENOMEM;
	aggregate_add_lost(&p->samples, l);
	return 0;
}

const struct sampler_drain_ops events_drain_ops = {
	.stack = on_stack,
	.sample = on_sample_count,
	.lost = on_lost,
	.off_cpu = on_off_cpu,
};
