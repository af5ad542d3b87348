// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "util/escape.h"
#include "agent/summary.h"

/* Incomplete stacks under this share are noise of a busy host, told by -v only. */
#define INCOMPLETE_PCT_MIN 1.0

double summary_pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

/* A size option's value as the user would write it: "16M", "512K". */
static const char *size_text(unsigned long kb, char *buf, size_t len)
{
	if (kb % 1024)
		snprintf(buf, len, "%luK", kb);
	else
		snprintf(buf, len, "%luM", kb / 1024);
	return buf;
}

/* A string a process controls, made safe to print on a terminal. */
static const char *safe(const char *s, char *buf, size_t len)
{
	escape_controls(s, buf, len);
	return buf;
}

/* @path as one shell word: as it is when it needs no quoting, else in '...'. */
static void shell_word(FILE *f, const char *path)
{
	if (!path[strspn(path, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			       "0123456789._-/+:=@,%")]) {
		fputs(path, f);
		return;
	}
	fputc('\'', f);
	for (const char *p = path; *p; p++)
		if (*p == '\'')
			fputs("'\\''", f);
		else
			fputc(*p, f);
	fputc('\'', f);
}

static uint64_t unwind_stopped(const struct cprof_stats *st)
{
	uint64_t n = 0;

	for (int i = 1; i < CPROF_UNWIND_STATUS_MAX; i++)
		n += st->unwind_status[i];
	return n;
}

/* ---- problems: one line each, saying what it cost ---------------------- */

struct problems {
	FILE *f;
	const char *sep; /* NULL: one line each; else joined after a window's line */
	size_t n;
	struct summary_told *told; /* NULL, or what the window before told */
};

/* Whether @line was told by the window before; notes it as told by this one. */
static bool told_before(struct summary_told *t, const char *line)
{
	bool before = false;

	/* A line longer than an entry is compared by its start. */
	for (size_t i = 0; i < t->nprev && !before; i++)
		before = !strncmp(t->prev[i], line, SUMMARY_TOLD_LEN - 1);
	if (t->ncur < SUMMARY_TOLD_MAX) {
		size_t n = strnlen(line, SUMMARY_TOLD_LEN - 1);

		memcpy(t->cur[t->ncur], line, n);
		t->cur[t->ncur++][n] = '\0';
	}
	return before;
}

static void vproblem(struct problems *p, bool standing, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

static void vproblem(struct problems *p, bool standing, const char *fmt, va_list ap)
{
	char line[1024];

	vsnprintf(line, sizeof(line), fmt, ap);
	if (standing && p->told && told_before(p->told, line))
		return;
	if (p->sep)
		fputs(p->sep, p->f);
	else
		fputs(PROG ": ", p->f);
	fputs(line, p->f);
	if (!p->sep)
		fputc('\n', p->f);
	p->n++;
}

/* A problem of this window alone (samples lost, files not written): always told. */
static void problem(struct problems *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void problem(struct problems *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vproblem(p, false, fmt, ap);
	va_end(ap);
}

/*
 * A condition that stands from window to window (an object over a bound,
 * an unknown CPython): a window's line tells it once.
 */
static void standing(struct problems *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void standing(struct problems *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vproblem(p, true, fmt, ap);
	va_end(ap);
}

/* What a window (or a one-shot run) lost: samples, stacks, lines, names. */
static void data_problems(struct problems *p, const struct summary *s, const struct options *o)
{
	const struct cprof_stats *st = &s->bpf;
	uint64_t lost = s->lost + st->lost_no_pidmap, stacks = st->unwind_dwarf + st->unwind_fp_only;
	const char *more = o->verbose ? "" : ": -v for details";
	char size[32];

	if (s->failed)
		problem(p, "%zu profile%s not written (the errors are above)", s->failed,
			s->failed == 1 ? "" : "s");
	if (lost)
		problem(p, "%llu samples (%.1f%%) lost: more distinct stacks than --counts-max%s",
			(unsigned long long)lost, summary_pct(lost, st->samples + lost), more);
	if (st->events_dropped)
		problem(p, "%llu process events dropped (their ring was full): short-lived processes"
			" may be missing%s", (unsigned long long)st->events_dropped, more);
	if (s->unwind_tables && summary_pct(unwind_stopped(st), stacks) >= INCOMPLETE_PCT_MIN)
		problem(p, "%.0f%% of stacks incomplete (unwinding stopped early)%s",
			summary_pct(unwind_stopped(st), stacks), more);
	if (s->sym.dwarf_too_big)
		standing(p, "%zu object%s without source lines: DWARF over --dwarf-memory (%s)%s",
			s->sym.dwarf_too_big, s->sym.dwarf_too_big == 1 ? "" : "s",
			size_text(o->dwarf_kb, size, sizeof(size)),
			o->verbose ? " (named above)" : ": -v names them");
	if (s->sym.dwarf_failed)
		standing(p, "%zu object%s without source lines: the sandboxed DWARF reader crashed,"
			" hung or hit its limits on them%s", s->sym.dwarf_failed,
			s->sym.dwarf_failed == 1 ? "" : "s",
			o->verbose ? " (named above)" : ": -v names them");
	if (s->py.unknown)
		standing(p, "python: %zu process%s of an unknown CPython (%s first): native frames"
			" only", s->py.unknown, s->py.unknown == 1 ? "" : "es", s->py.unknown_version);
	if (s->sym.symbols_over || s->sym.names_dropped)
		standing(p, "symbol memory over --symbol-memory (%s): %zu object%s without function"
			" names, %zu names dropped; peak %llu KB",
			size_text(o->symbol_kb, size, sizeof(size)), s->sym.symbols_over,
			s->sym.symbols_over == 1 ? "" : "s", s->sym.names_dropped,
			(unsigned long long)(s->sym.symbol_peak / 1024));
}

/* Where the bounds on what processes can make the agent hold were hit. */
static void bound_problems(struct problems *p, const struct summary *s, const struct options *o)
{
	static const char *const why[REFUSED_MAX] = {
		[REFUSED_NOT_REGULAR] = "not a regular file",
		[REFUSED_NOT_MAPPED] = "not the mapped file",
		[REFUSED_DELETED] = "deleted (map_files unusable)",
		[REFUSED_NO_OPENAT2] = "no openat2 in this kernel",
		[REFUSED_NO_ROOT] = "no root held (map_files unusable)",
		[REFUSED_OTHER] = "gone or unreadable",
	};
	char line[512];
	size_t len = 0;

	if (s->files_evicted)
		problem(p, "open files: the bound of %zu (--max-files) was hit: %zu closed,"
			" %zu reopened, %zu could not be", s->files_max, s->files_evicted,
			s->objs.reopened, s->objs.reopen_failed);
	if (s->roots.refused)
		problem(p, "process roots: the bound of %zu was hit: %zu processes without one"
			" (reached through map_files only)", s->roots.max, s->roots.refused);
	line[0] = '\0';
	for (int i = 0; i < REFUSED_MAX; i++) {
		/* Files of processes that exited meanwhile cost nothing. */
		if (!s->procs.refused[i] || (i == REFUSED_OTHER && !o->verbose))
			continue;
		len += (size_t)snprintf(line + len, sizeof(line) - len, "%s%zu %s",
					len ? ", " : "", s->procs.refused[i], why[i]);
		if (len >= sizeof(line))
			len = sizeof(line) - 1;
	}
	if (len)
		problem(p, "mapped files not opened: %s", line);
	if (s->unwind_tables && s->tables.truncated)
		problem(p, "executable mappings: %zu process snapshots had more than %d; unwind"
			" tables for the first %d only", s->tables.truncated, CPROF_MAX_PROC_MAPS,
			CPROF_MAX_PROC_MAPS);
	/* A busy host may have held the agent back before sampling began. */
	if (s->start_ms > SUMMARY_LATE_START_MS)
		problem(p, "late start: sampling began %lld ms after launch (the host was busy:"
			" that time is not in the profiles)", (long long)s->start_ms);
	if (s->drain_error)
		problem(p, "%s", s->drain_error);
}

/* ---- what -v adds: every counter line that is not all zeros ------------ */

/* Where the run's time went: each phase, as a loaded host may stretch it. */
/* Java: the JVMs found and what their frames came out as, when there were any. */
static void java_line(FILE *f, const struct java_stats *j)
{
	const size_t *n = j->names.frames;

	if (!j->jvms && !j->refused)
		return;
	fprintf(f, PROG ": java: %zu JVM%s (%zu of a layout not known: native frames only); frames"
		" %zu named, %zu the JVM's stubs, %zu of compiled code gone, %zu unreadable;"
		" %zu names over the bounds\n", j->jvms, j->jvms == 1 ? "" : "s", j->refused,
		n[JVM_NAMED_OK], n[JVM_NAMED_STUB], n[JVM_NAMED_GONE], n[JVM_NAMED_UNREADABLE],
		j->names.refused);
}

/* Node.js: the V8s found and what their JavaScript frames came out as, when there were any. */
static void node_line(FILE *f, const struct node_stats *n)
{
	if (!n->v8s && !n->refused)
		return;
	fprintf(f, PROG ": node: %zu V8%s (%zu of a layout not known: native frames only); frames"
		" %zu named, %zu unreadable; %zu names over the bounds\n", n->v8s,
		n->v8s == 1 ? "" : "s", n->refused, n->names.named, n->names.failed,
		n->names.refused);
}

static void phases(FILE *f, const struct summary *s)
{
	const struct summary_phases *ph = &s->phases;

	fprintf(f, PROG ": phases: main() %lld ms after launch, priority raised at %lld ms"
		" (until then %.1f ms on a CPU, %.0f ms waiting for one), BPF loaded and attached"
		" in %.0f ms; %zu drains, the longest %.1f ms; written %.3f s after sampling;"
		" teardown %.1f ms\n", (long long)ph->main_ms, (long long)ph->raised_ms,
		ph->raise_cpu_ms, ph->raise_wait_ms, ph->load_ms, ph->drains, ph->drain_max_ms,
		s->write_s, ph->teardown_ms);
}

static void counters(FILE *f, const struct summary *s, const struct options *o)
{
	char line[512];
	const struct cprof_stats *st = &s->bpf;
	const struct bpftables_stats *ts = &s->tables;

	cpulist_format(&s->cpus, line, sizeof(line));
	fprintf(f, PROG ": sampled %.1f s at %u Hz on %d CPU%s (%s): %llu samples of %zu"
		" processes\n", s->sampled_s, o->frequency, s->ncpus, s->ncpus == 1 ? "" : "s",
		line, (unsigned long long)st->samples, s->processes);
	if (s->start_ms >= 0)
		fprintf(f, PROG ": sampling began %lld ms after launch\n", (long long)s->start_ms);
	if (s->jitter.changes || s->jitter.failed)
		fprintf(f, PROG ": sampling clocks: %llu periods set, at rates of %.1f-%.1f Hz"
			" (%llu refused)\n", (unsigned long long)s->jitter.changes,
			s->jitter.rate_min, s->jitter.rate_max, (unsigned long long)s->jitter.failed);
	phases(f, s);
	if (py_stats_line(&s->py, line, sizeof(line)))
		fprintf(f, PROG ": %s\n", line);
	java_line(f, &s->java);
	node_line(f, &s->node);
	if (s->lost || st->lost_no_pidmap || st->events_dropped)
		fprintf(f, PROG ": lost %llu samples (counts map full: %llu, no room to count: %llu);"
			" process events dropped: %llu\n",
			(unsigned long long)(s->lost + st->lost_no_pidmap),
			(unsigned long long)s->lost, (unsigned long long)st->lost_no_pidmap,
			(unsigned long long)st->events_dropped);
	if (s->unwind_tables && (st->unwind_dwarf || st->unwind_fp_only))
		fprintf(f, PROG ": unwind: %llu stacks by CFI (%llu stopped early: truncated %llu,"
			" read failed %llu, no CFI %llu, bad CFA %llu), %llu by frame pointers only\n",
			(unsigned long long)st->unwind_dwarf, (unsigned long long)unwind_stopped(st),
			(unsigned long long)st->unwind_status[CPROF_UNWIND_TRUNCATED],
			(unsigned long long)st->unwind_status[CPROF_UNWIND_READ],
			(unsigned long long)st->unwind_status[CPROF_UNWIND_NO_ROW],
			(unsigned long long)st->unwind_status[CPROF_UNWIND_BAD_CFA],
			(unsigned long long)st->unwind_fp_only);
	if (s->unwind_tables && st->unwind_unknown_file)
		fprintf(f, PROG ": unwind: %llu stacks through a file of no process read yet"
			" (no table: its frames by frame pointers)\n",
			(unsigned long long)st->unwind_unknown_file);
	if (s->unwind_tables && (st->defer_sent || st->defer_refused))
		fprintf(f, PROG ": deferred walks: %llu samples sent to wait for a table (%llu not:"
			" over the budget or no room); %llu walked on (%llu to the end, %llu kept as"
			" BPF walked them), %llu counted as sampled (%llu waited too long, %llu no"
			" table to come), %llu malformed, %llu dropped (too many parked); peak %.1f KB"
			" parked\n",
			(unsigned long long)st->defer_sent, (unsigned long long)st->defer_refused,
			(unsigned long long)s->deferred.walked,
			(unsigned long long)s->deferred.complete,
			(unsigned long long)s->deferred.kept_bpf,
			(unsigned long long)(s->deferred.timed_out + s->deferred.no_table),
			(unsigned long long)s->deferred.timed_out,
			(unsigned long long)s->deferred.no_table, (unsigned long long)s->deferred.bad,
			(unsigned long long)s->deferred.dropped,
			s->deferred.bytes_peak / 1024.0);
	if (s->unwind_tables && (ts->built || ts->failed || ts->no_room || ts->evicted))
		fprintf(f, PROG ": unwind tables: %zu built in %.3f s (of %zu asked for, %zu of"
			" them a new program's other files; %zu such dropped, the program gone),"
			" %zu failed, %zu without room, %zu evicted; peak %.1f of %.1f MB; %zu loaded"
			" at the end, %llu rows, %.1f bytes a row\n",
			ts->built, ts->build_seconds, ts->asked, ts->asked_with, ts->along_dropped,
			ts->failed, ts->no_room, ts->evicted,
			ts->rows_peak * sizeof(union cprof_table_slot) / 1048576.0,
			ts->rows_capacity * sizeof(union cprof_table_slot) / 1048576.0, ts->objects,
			(unsigned long long)ts->rows,
			ts->rows ? (double)ts->rows_used * sizeof(union cprof_table_slot) / ts->rows :
				   0.0);
	if (st->exit_maps || st->exit_maps_capped || s->procs.exit_named)
		fprintf(f, PROG ": exit records: %llu sent (%llu not: over the budget or no room);"
			" %zu processes gone from /proc when read named from them, %zu of their"
			" files known to no object held\n",
			(unsigned long long)st->exit_maps, (unsigned long long)st->exit_maps_capped,
			s->procs.exit_named, s->procs.exit_unknown);
	if (st->exit_files || st->exit_files_unsent)
		fprintf(f, PROG ": exit files: %llu paths sent (%llu not: outside its root, too long"
			" or over %d a record); %zu opened, %zu in another root or mount namespace,"
			" %zu refused (gone, not a regular file, another file)\n",
			(unsigned long long)st->exit_files, (unsigned long long)st->exit_files_unsent,
			CPROF_EXIT_FILES, s->procs.exit_opened, s->procs.exit_other_root,
			s->procs.exit_refused);
	if (s->procs.refreshes || s->procs.deferred)
		fprintf(f, PROG ": re-snapshots: %zu taken (%zu at a program's start, its libraries"
			" new; %zu again, mapped while read), %zu deferred (at most one per %.0f-%.0f s"
			" per process after the first %d)\n", s->procs.refreshes, s->procs.startup,
			s->procs.raced, s->procs.deferred,
			PROCTAB_REFRESH_GAP_MIN, PROCTAB_REFRESH_GAP_MAX, PROCTAB_REFRESH_FREE);
	if (s->procs.perfmap_stale)
		fprintf(f, PROG ": perf maps: %zu refused, last written before their process"
			" started (an earlier process's of its pid)\n", s->procs.perfmap_stale);
	if (s->objs.compared || s->objs.shared)
		fprintf(f, PROG ": objects: %zu compared with another of the same build ID, %zu"
			" shared\n", s->objs.compared, s->objs.shared);
}

/* ---- the lines a user sees ---------------------------------------------- */

void summary_start(FILE *f, const struct options *o)
{
	bool chosen = o->n_pids || o->n_comms || o->n_cgroups;
	char cpus[256] = "";

	if (o->quiet)
		return;
	if (o->cpus_set) {
		memcpy(cpus, " on CPUs ", 10);
		cpulist_format(&o->cpus, cpus + 9, sizeof(cpus) - 9);
	}
	if (o->duration)
		fprintf(f, PROG ": sampling %s%s at %u Hz for %u s (Ctrl-C to stop early)\n",
			chosen ? "the chosen processes" : "all processes", cpus, o->frequency,
			o->duration);
	else
		fprintf(f, PROG ": sampling %s%s at %u Hz until Ctrl-C, a window every %u s\n",
			chosen ? "the chosen processes" : "all processes", cpus, o->frequency,
			o->interval);
}

void summary_window(FILE *f, const char *stamp, const struct summary *w,
		    const struct options *o, struct summary_told *told)
{
	struct problems p = { .f = f, .sep = "; ", .told = told };

	if (told)
		told->ncur = 0;
	if (!o->quiet) {
		fprintf(f, PROG ": window %s: %zu process%s, %llu samples", stamp, w->files,
			w->files == 1 ? "" : "es", (unsigned long long)w->samples);
		data_problems(&p, w, o);
		fputc('\n', f);
	}
	if (told) {
		memcpy(told->prev, told->cur, told->ncur * sizeof(told->cur[0]));
		told->nprev = told->ncur;
	}
}

/* The hottest processes of the last window, and how to open the first. */
static void top(FILE *f, const struct summary *s, const struct options *o)
{
	const struct window_result *r = &s->last;
	char comm[4 * CPROF_COMM_LEN + 1], file[4 * WINDOW_FILE_LEN + 1];

	if (!r->ntop)
		return;
	fprintf(f, PROG ":  share  samples      pid  comm             container     file\n");
	for (size_t i = 0; i < r->ntop; i++) {
		const struct window_proc *w = &r->top[i];

		fprintf(f, PROG ": %5.1f%%  %7llu  %7u  %-15s  %-12.12s  %s\n",
			summary_pct(w->samples, r->samples), (unsigned long long)w->samples, w->pid,
			safe(w->comm, comm, sizeof(comm)),
			w->container_id[0] ? w->container_id : "-", safe(w->file, file, sizeof(file)));
	}
	fprintf(f, PROG ": to open the hottest: go tool pprof -http=: ");
	/* An escaped name would not open: the command names the file as it is. */
	if (strlen(safe(r->top[0].file, file, sizeof(file))) == strlen(r->top[0].file)) {
		char path[4096];

		snprintf(path, sizeof(path), "%s/%s", o->output_dir, r->top[0].file);
		shell_word(f, path);
	} else {
		fprintf(f, "'%s/%s'", o->output_dir, file);
	}
	fputc('\n', f);
}

/* --off-cpu: what was charged, and what its two bounds left out. */
static void off_cpu_line(FILE *f, const struct summary *s, const struct options *o)
{
	const struct cprof_stats *st = &s->bpf;

	fprintf(f, PROG ": off-CPU: %llu waits charged (%.3f s, %llu of them without stacks),"
		" %llu shorter than --off-cpu-min %.3f ms counted only (%.3f s), %llu blocks not"
		" walked over %d a second per CPU, %llu waits lost (map full)\n",
		(unsigned long long)st->offcpu_waits, st->offcpu_ns / 1e9,
		(unsigned long long)st->offcpu_unwalked, (unsigned long long)st->offcpu_short,
		o->off_cpu_min_ns / 1e6, st->offcpu_short_ns / 1e9,
		(unsigned long long)st->offcpu_capped, CPROF_OFFCPU_UNWINDS,
		(unsigned long long)st->offcpu_lost);
}

void summary_print(FILE *f, const struct summary *s, const struct options *o)
{
	struct problems p = { .f = f };

	if (o->quiet) {
		if (s->drain_error)
			fprintf(f, PROG ": %s\n", s->drain_error);
		return;
	}
	if (o->verbose)
		counters(f, s, o);
	if (o->interval) {
		if (o->verbose)
			fprintf(f, PROG ": wrote %zu windows, %zu profiles (%llu samples) to %s;"
				" the last in %.3f s\n", s->windows, s->files,
				(unsigned long long)s->samples, o->output_dir, s->write_s);
	} else {
		fprintf(f, PROG ": wrote %zu profile%s (%llu samples) to %s", s->files,
			s->files == 1 ? "" : "s", (unsigned long long)s->samples, o->output_dir);
		if (o->verbose)
			fprintf(f, " in %.3f s", s->write_s);
		fputc('\n', f);
		top(f, s, o);
		data_problems(&p, s, o);
	}
	if (o->off_cpu)
		off_cpu_line(f, s, o);
	bound_problems(&p, s, o);
}
