// SPDX-License-Identifier: MIT
/*
 * summary_json: the run's figures as one JSON object (--json-summary), for
 * scripts and bench/: every counter -v prints, and the hottest processes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "agent/summary.h"

/*
 * A JSON string.  comm and file names are a process's bytes: controls and
 * bytes over 0x7f are written as \u00XX, so the file is always valid JSON
 * (a name that was not UTF-8 reads back as Latin-1).
 */
static void jstr(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; s && *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20 || *p >= 0x7f)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

static void ju(FILE *f, const char *key, uint64_t v, bool last)
{
	fprintf(f, "\"%s\": %llu%s", key, (unsigned long long)v, last ? "" : ", ");
}

static void jd(FILE *f, const char *key, double v, bool last)
{
	fprintf(f, "\"%s\": %.6g%s", key, v, last ? "" : ", ");
}

static void write_top(FILE *f, const struct window_result *r)
{
	fprintf(f, "  \"top\": [");
	for (size_t i = 0; i < r->ntop; i++) {
		const struct window_proc *w = &r->top[i];

		fprintf(f, "%s\n    { ", i ? "," : "");
		ju(f, "pid", w->pid, false);
		ju(f, "samples", w->samples, false);
		jd(f, "share", summary_pct(w->samples, r->samples) / 100, false);
		fprintf(f, "\"comm\": ");
		jstr(f, w->comm);
		fprintf(f, ", \"container_id\": ");
		jstr(f, w->container_id);
		fprintf(f, ", \"file\": ");
		jstr(f, w->file);
		fprintf(f, " }");
	}
	fprintf(f, "%s]\n", r->ntop ? "\n  " : "");
}

/* A string or null. */
static void jstr_or_null(FILE *f, const char *s)
{
	if (s)
		jstr(f, s);
	else
		fprintf(f, "null");
}

static void jbool(FILE *f, const char *key, bool v)
{
	fprintf(f, "\"%s\": %s, ", key, v ? "true" : "false");
}

/* Each object of the top level begins on a line of its own; jclose() ends it. */
static void jopen(FILE *f, const char *key)
{
	fprintf(f, ",\n  \"%s\": { ", key);
}

static void jclose(FILE *f)
{
	fprintf(f, " }");
}

/* The first line: what ran, where, how long, on which CPUs. */
static void write_run(FILE *f, const struct summary *s, const struct options *o)
{
	char list[1024]; /* a longer list of CPUs ends in "..." */

	fprintf(f, "  \"version\": \"%s\", \"output_dir\": ", CPROF_VERSION);
	jstr(f, o->output_dir);
	fprintf(f, ",\n  ");
	jd(f, "sampled_s", s->sampled_s, false);
	fprintf(f, "\"start_ms\": %lld, ", (long long)s->start_ms);
	ju(f, "frequency_hz", o->frequency, false);
	ju(f, "cpus", (uint64_t)(s->ncpus > 0 ? s->ncpus : 0), false);
	cpulist_format(&s->cpus, list, sizeof(list));
	fprintf(f, "\"cpu_list\": ");
	jstr(f, list);
	fprintf(f, ", ");
	ju(f, "processes", s->processes, true);
}

static void write_java(FILE *f, const struct java_stats *j)
{
	const size_t *n = j->names.frames;

	jopen(f, "java");
	ju(f, "jvms", j->jvms, false);
	ju(f, "jvms_refused", j->refused, false);
	fprintf(f, "\"frames\": { ");
	ju(f, "named", n[JVM_NAMED_OK], false);
	ju(f, "stubs", n[JVM_NAMED_STUB], false);
	ju(f, "gone", n[JVM_NAMED_GONE], false);
	ju(f, "unreadable", n[JVM_NAMED_UNREADABLE], true);
	fprintf(f, " }, ");
	ju(f, "names_refused", j->names.refused, true);
	jclose(f);
}

static void write_node(FILE *f, const struct node_stats *n)
{
	jopen(f, "node");
	ju(f, "v8s", n->v8s, false);
	ju(f, "v8s_refused", n->refused, false);
	fprintf(f, "\"frames\": { ");
	ju(f, "named", n->names.named, false);
	ju(f, "unreadable", n->names.failed, true);
	fprintf(f, " }, ");
	ju(f, "names_refused", n->names.refused, true);
	jclose(f);
}

static void write_clock(FILE *f, const struct summary *s, const struct options *o)
{
	jopen(f, "clock");
	jbool(f, "varied", o->jitter);
	ju(f, "periods_set", s->jitter.changes, false);
	ju(f, "refused", s->jitter.failed, false);
	jd(f, "rate_min_hz", s->jitter.rate_min, false);
	jd(f, "rate_max_hz", s->jitter.rate_max, true);
	jclose(f);
}

static void write_samples(FILE *f, const struct summary *s)
{
	const struct cprof_stats *st = &s->bpf;

	jopen(f, "samples");
	ju(f, "sampled", st->samples, false);
	ju(f, "written", s->samples, false);
	ju(f, "idle", st->idle, false);
	ju(f, "filtered", st->filtered, false);
	ju(f, "lost", s->lost + st->lost_no_pidmap, false);
	ju(f, "lost_counts_map_full", s->lost, false);
	ju(f, "lost_no_room_to_count", st->lost_no_pidmap, true);
	jclose(f);
	fprintf(f, ",\n  ");
	ju(f, "process_events_dropped", st->events_dropped, true);
}

/* What exiting processes left for their profiles to be named. */
static void write_exits(FILE *f, const struct summary *s)
{
	const struct cprof_stats *st = &s->bpf;

	jopen(f, "exit_records");
	ju(f, "sent", st->exit_maps, false);
	ju(f, "not_sent", st->exit_maps_capped, false);
	ju(f, "processes_named", s->procs.exit_named, false);
	ju(f, "files_unknown", s->procs.exit_unknown, false);
	ju(f, "paths_sent", st->exit_files, false);
	ju(f, "paths_not_sent", st->exit_files_unsent, false);
	ju(f, "files_opened", s->procs.exit_opened, false);
	ju(f, "files_other_root", s->procs.exit_other_root, false);
	ju(f, "files_refused", s->procs.exit_refused, true);
	jclose(f);
	jopen(f, "perf_maps");
	ju(f, "stale", s->procs.perfmap_stale, true);
	jclose(f);
}

static void write_output(FILE *f, const struct summary *s)
{
	jopen(f, "output");
	ju(f, "windows", s->windows, false);
	ju(f, "profiles", s->files, false);
	ju(f, "failed", s->failed, false);
	jd(f, "last_write_s", s->write_s, true);
	jclose(f);
}

static void write_phases(FILE *f, const struct summary_phases *p)
{
	jopen(f, "phases");
	fprintf(f, "\"main_ms\": %lld, \"raised_ms\": %lld, ", (long long)p->main_ms,
		(long long)p->raised_ms);
	jd(f, "raise_cpu_ms", p->raise_cpu_ms, false);
	jd(f, "raise_wait_ms", p->raise_wait_ms, false);
	jd(f, "load_ms", p->load_ms, false);
	ju(f, "drains", p->drains, false);
	jd(f, "drain_max_ms", p->drain_max_ms, false);
	jd(f, "teardown_ms", p->teardown_ms, true);
	jclose(f);
}

/* How the stacks were walked: by BPF, and again later for deferred samples. */
static void write_unwind(FILE *f, const struct summary *s)
{
	const struct cprof_stats *st = &s->bpf;
	uint64_t stopped = 0;

	for (int i = 1; i < CPROF_UNWIND_STATUS_MAX; i++)
		stopped += st->unwind_status[i];
	jopen(f, "unwind");
	ju(f, "cfi", st->unwind_dwarf, false);
	ju(f, "fp_only", st->unwind_fp_only, false);
	ju(f, "stopped", stopped, false);
	ju(f, "truncated", st->unwind_status[CPROF_UNWIND_TRUNCATED], false);
	ju(f, "read_failed", st->unwind_status[CPROF_UNWIND_READ], false);
	ju(f, "no_cfi", st->unwind_status[CPROF_UNWIND_NO_ROW], false);
	ju(f, "bad_cfa", st->unwind_status[CPROF_UNWIND_BAD_CFA], false);
	ju(f, "unknown_file", st->unwind_unknown_file, false);
	ju(f, "deferred_sent", st->defer_sent, false);
	ju(f, "deferred_refused", st->defer_refused, false);
	ju(f, "deferred_walked", s->deferred.walked, false);
	ju(f, "deferred_complete", s->deferred.complete, false);
	ju(f, "deferred_kept_bpf", s->deferred.kept_bpf, false);
	ju(f, "deferred_timed_out", s->deferred.timed_out, false);
	ju(f, "deferred_no_table", s->deferred.no_table, false);
	ju(f, "deferred_malformed", s->deferred.bad, false);
	ju(f, "deferred_dropped", s->deferred.dropped, false);
	ju(f, "deferred_peak_bytes", s->deferred.bytes_peak, true);
	jclose(f);
}

static void write_off_cpu(FILE *f, const struct cprof_stats *st, const struct options *o)
{
	jopen(f, "off_cpu");
	jbool(f, "enabled", o->off_cpu);
	ju(f, "min_ns", o->off_cpu ? o->off_cpu_min_ns : 0, false);
	ju(f, "walks_per_s_per_cpu", CPROF_OFFCPU_UNWINDS, false);
	ju(f, "waits", st->offcpu_waits, false);
	ju(f, "waits_without_stacks", st->offcpu_unwalked, false);
	ju(f, "charged_ns", st->offcpu_ns, false);
	ju(f, "short_waits", st->offcpu_short, false);
	ju(f, "short_ns", st->offcpu_short_ns, false);
	ju(f, "walks_over_budget", st->offcpu_capped, false);
	ju(f, "lost", st->offcpu_lost, true);
	jclose(f);
}

static void write_tables(FILE *f, const struct bpftables_stats *ts)
{
	jopen(f, "unwind_tables");
	ju(f, "built", ts->built, false);
	jd(f, "build_s", ts->build_seconds, false);
	ju(f, "failed", ts->failed, false);
	ju(f, "no_room", ts->no_room, false);
	ju(f, "evicted", ts->evicted, false);
	ju(f, "snapshots_cut", ts->truncated, false);
	ju(f, "asked", ts->asked, false);
	ju(f, "asked_with_program", ts->asked_with, false);
	ju(f, "with_program_dropped", ts->along_dropped, false);
	ju(f, "loaded", ts->objects, false);
	ju(f, "rows", ts->rows, false);
	ju(f, "slots_used", ts->rows_used, false);
	ju(f, "rows_peak", ts->rows_peak, false);
	jd(f, "peak_mb", ts->rows_peak * sizeof(union cprof_table_slot) / 1048576.0, false);
	jd(f, "capacity_mb", ts->rows_capacity * sizeof(union cprof_table_slot) / 1048576.0,
	   true);
	jclose(f);
}

/* User frames' names (the last window's) and the kernel's. */
static void write_symbols(FILE *f, const struct summary *s)
{
	jopen(f, "symbols");
	ju(f, "dwarf_too_big", s->sym.dwarf_too_big, false);
	fprintf(f, "\"dwarf_too_big_objects\": [");
	for (size_t i = 0; i < s->sym.dwarf_too_big && i < SYMBOLIZE_NAMED_MAX; i++) {
		fputs(i ? ", " : "", f);
		jstr(f, s->sym.too_big[i]);
	}
	fprintf(f, "], ");
	ju(f, "dwarf_failed", s->sym.dwarf_failed, false);
	ju(f, "objects_over_memory", s->sym.symbols_over, false);
	ju(f, "names_dropped", s->sym.names_dropped, false);
	ju(f, "kallsyms_reads", s->ksyms.reads, false);
	ju(f, "kallsyms_catalog_functions", s->ksyms.catalog_functions, false);
	ju(f, "kallsyms_catalog_kb", s->ksyms.catalog_bytes / 1024, false);
	ju(f, "kallsyms_catalog_answers", s->ksyms.catalog_answers, false);
	fprintf(f, "\"kallsyms_catalog_none\": ");
	jstr_or_null(f, s->ksyms.catalog_none);
	fprintf(f, ", ");
	ju(f, "kernel_functions_kept", s->ksyms.kept, false);
	ju(f, "peak_kb", s->sym.symbol_peak / 1024, true);
	jclose(f);
}

/* What the bounds on files, roots and refreshes held back. */
static void write_bounds(FILE *f, const struct summary *s)
{
	static const char *const refused[REFUSED_MAX] = {
		[REFUSED_NOT_REGULAR] = "not_regular", [REFUSED_NOT_MAPPED] = "not_mapped",
		[REFUSED_DELETED] = "deleted",         [REFUSED_NO_OPENAT2] = "no_openat2",
		[REFUSED_NO_ROOT] = "no_root",         [REFUSED_OTHER] = "gone",
	};

	jopen(f, "bounds");
	ju(f, "max_files", s->files_max, false);
	ju(f, "files_closed", s->files_evicted, false);
	ju(f, "reopened", s->objs.reopened, false);
	ju(f, "reopen_failed", s->objs.reopen_failed, false);
	ju(f, "max_roots", s->roots.max, false);
	ju(f, "roots_refused", s->roots.refused, false);
	ju(f, "refreshes", s->procs.refreshes, false);
	ju(f, "refreshes_deferred", s->procs.deferred, false);
	ju(f, "refreshes_at_start", s->procs.startup, false);
	ju(f, "refreshes_raced", s->procs.raced, false);
	fprintf(f, "\"not_opened\": { ");
	for (int i = 0; i < REFUSED_MAX; i++)
		ju(f, refused[i], s->procs.refused[i], i == REFUSED_MAX - 1);
	jclose(f);
	jclose(f);
}

static void write_all(FILE *f, const struct summary *s, const struct options *o)
{
	fprintf(f, "{\n");
	write_run(f, s, o);
	write_clock(f, s, o);
	write_java(f, &s->java);
	write_node(f, &s->node);
	write_samples(f, s);
	write_exits(f, s);
	write_output(f, s);
	write_phases(f, &s->phases);
	write_unwind(f, s);
	write_off_cpu(f, &s->bpf, o);
	write_tables(f, &s->tables);
	write_symbols(f, s);
	write_bounds(f, s);
	fprintf(f, ",\n  \"drain_error\": ");
	jstr_or_null(f, s->drain_error);
	fprintf(f, ",\n");
	write_top(f, &s->last);
	fprintf(f, "}\n");
}

int summary_json(const char *path, const struct summary *s, const struct options *o,
		 struct errbuf *err)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, o->file_mode);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	int ret;

	if (!f) {
		ret = -errno;
		if (fd >= 0)
			close(fd);
		return errf(err, ret, "--json-summary: %s: %s", path, strerror(-ret));
	}
	write_all(f, s, o);
	ret = ferror(f) ? -EIO : 0;
	if (fclose(f) && !ret)
		ret = -errno;
	return ret ? errf(err, ret, "--json-summary: %s: %s", path, strerror(-ret)) : 0;
}
