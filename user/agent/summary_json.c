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

static void write_all(FILE *f, const struct summary *s, const struct options *o)
{
	static const char *const refused[REFUSED_MAX] = {
		[REFUSED_NOT_REGULAR] = "not_regular", [REFUSED_NOT_MAPPED] = "not_mapped",
		[REFUSED_DELETED] = "deleted",         [REFUSED_NO_OPENAT2] = "no_openat2",
		[REFUSED_NO_ROOT] = "no_root",         [REFUSED_OTHER] = "gone",
	};
	const struct cprof_stats *st = &s->bpf;
	const struct bpftables_stats *ts = &s->tables;
	uint64_t stopped = 0;
	char list[1024]; /* a longer list of CPUs ends in "..." */

	for (int i = 1; i < CPROF_UNWIND_STATUS_MAX; i++)
		stopped += st->unwind_status[i];
	fprintf(f, "{\n  \"version\": \"%s\", \"output_dir\": ", CPROF_VERSION);
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
	fprintf(f, ",\n  \"clock\": { \"varied\": %s, ", o->jitter ? "true" : "false");
	ju(f, "periods_set", s->jitter.changes, false);
	ju(f, "refused", s->jitter.failed, false);
	jd(f, "rate_min_hz", s->jitter.rate_min, false);
	jd(f, "rate_max_hz", s->jitter.rate_max, true);
	fprintf(f, " }");
	fprintf(f, ",\n  \"samples\": { ");
	ju(f, "sampled", st->samples, false);
	ju(f, "written", s->samples, false);
	ju(f, "idle", st->idle, false);
	ju(f, "filtered", st->filtered, false);
	ju(f, "lost", s->lost + st->lost_no_pidmap, false);
	ju(f, "lost_counts_map_full", s->lost, false);
	ju(f, "lost_no_room_to_count", st->lost_no_pidmap, true);
	fprintf(f, " },\n  ");
	ju(f, "process_events_dropped", st->events_dropped, true);
	fprintf(f, ",\n  \"exit_records\": { ");
	ju(f, "sent", st->exit_maps, false);
	ju(f, "not_sent", st->exit_maps_capped, false);
	ju(f, "processes_named", s->procs.exit_named, false);
	ju(f, "files_unknown", s->procs.exit_unknown, false);
	ju(f, "paths_sent", st->exit_files, false);
	ju(f, "paths_not_sent", st->exit_files_unsent, false);
	ju(f, "files_opened", s->procs.exit_opened, false);
	ju(f, "files_other_root", s->procs.exit_other_root, false);
	ju(f, "files_refused", s->procs.exit_refused, true);
	fprintf(f, " }");
	fprintf(f, ",\n  \"perf_maps\": { ");
	ju(f, "stale", s->procs.perfmap_stale, true);
	fprintf(f, " }");
	fprintf(f, ",\n  \"output\": { ");
	ju(f, "windows", s->windows, false);
	ju(f, "profiles", s->files, false);
	ju(f, "failed", s->failed, false);
	jd(f, "last_write_s", s->write_s, true);
	fprintf(f, " },\n  \"phases\": { ");
	fprintf(f, "\"main_ms\": %lld, \"raised_ms\": %lld, ", (long long)s->phases.main_ms,
		(long long)s->phases.raised_ms);
	jd(f, "raise_cpu_ms", s->phases.raise_cpu_ms, false);
	jd(f, "raise_wait_ms", s->phases.raise_wait_ms, false);
	jd(f, "load_ms", s->phases.load_ms, false);
	ju(f, "drains", s->phases.drains, false);
	jd(f, "drain_max_ms", s->phases.drain_max_ms, false);
	jd(f, "teardown_ms", s->phases.teardown_ms, true);
	fprintf(f, " },\n  \"unwind\": { ");
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
	fprintf(f, " },\n  \"off_cpu\": { ");
	fprintf(f, "\"enabled\": %s, ", o->off_cpu ? "true" : "false");
	ju(f, "min_ns", o->off_cpu ? o->off_cpu_min_ns : 0, false);
	ju(f, "walks_per_s_per_cpu", CPROF_OFFCPU_UNWINDS, false);
	ju(f, "waits", st->offcpu_waits, false);
	ju(f, "waits_without_stacks", st->offcpu_unwalked, false);
	ju(f, "charged_ns", st->offcpu_ns, false);
	ju(f, "short_waits", st->offcpu_short, false);
	ju(f, "short_ns", st->offcpu_short_ns, false);
	ju(f, "walks_over_budget", st->offcpu_capped, false);
	ju(f, "lost", st->offcpu_lost, true);
	fprintf(f, " },\n  \"unwind_tables\": { ");
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
	fprintf(f, " },\n  \"symbols\": { ");
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
	if (s->ksyms.catalog_none)
		jstr(f, s->ksyms.catalog_none);
	else
		fprintf(f, "null");
	fprintf(f, ", ");
	ju(f, "kernel_functions_kept", s->ksyms.kept, false);
	ju(f, "peak_kb", s->sym.symbol_peak / 1024, true);
	fprintf(f, " },\n  \"bounds\": { ");
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
	fprintf(f, " } },\n  \"drain_error\": ");
	if (s->drain_error)
		jstr(f, s->drain_error);
	else
		fprintf(f, "null");
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
