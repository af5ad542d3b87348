// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <string.h>

#include "summary.h"

/* The bounds on what processes can make the agent hold, where they were hit. */
static void print_bounds(FILE *f, const struct summary *s)
{
	static const char *const why[REFUSED_MAX] = {
		[REFUSED_NOT_REGULAR] = "not a regular file",
		[REFUSED_NOT_MAPPED] = "not the mapped file",
		[REFUSED_DELETED] = "deleted (map_files unusable)",
		[REFUSED_NO_OPENAT2] = "no openat2 in this kernel",
		[REFUSED_NO_ROOT] = "no root held (map_files unusable)",
		[REFUSED_OTHER] = "gone or unreadable",
	};
	const struct proctab_stats *ps = &s->procs;
	char line[512];
	size_t len = 0, refused = 0;

	if (s->files_evicted)
		fprintf(f,
			PROG ": open files: the bound of %zu (--max-files) was hit: %zu closed,"
			" %zu reopened, %zu could not be\n",
			s->files_max, s->files_evicted, s->objs.reopened, s->objs.reopen_failed);
	if (s->roots.refused)
		fprintf(f, PROG ": process roots: the bound of %zu was hit: %zu processes"
			" without one (reached through map_files only)\n", s->roots.max,
			s->roots.refused);
	for (int i = 0; i < REFUSED_MAX; i++) {
		if (!ps->refused[i])
			continue;
		refused += ps->refused[i];
		len += (size_t)snprintf(line + len, sizeof(line) - len, "%s%zu %s",
					len ? ", " : "", ps->refused[i], why[i]);
		if (len >= sizeof(line))
			len = sizeof(line) - 1;
	}
	if (refused)
		fprintf(f, PROG ": mapped files not opened: %s\n", line);
	if (ps->deferred)
		fprintf(f,
			PROG ": re-snapshots: %zu taken, %zu deferred (at most one per %.0f-%.0f s"
			" per process after the first %d)\n", ps->refreshes, ps->deferred,
			PROCTAB_REFRESH_GAP_MIN, PROCTAB_REFRESH_GAP_MAX, PROCTAB_REFRESH_FREE);
	if (s->unwind_tables && s->tables.truncated)
		fprintf(f,
			PROG ": executable mappings: %zu process snapshots had more than %d;"
			" unwind tables for the first %d only\n",
			s->tables.truncated, CPROF_MAX_PROC_MAPS, CPROF_MAX_PROC_MAPS);
}

void summary_print(FILE *f, const struct summary *s, const struct options *o)
{
	const struct cprof_stats *st = &s->bpf;

	fprintf(f,
		PROG ": sampled %.1f s at %u Hz on %d CPUs: %llu samples of %zu processes\n",
		s->sampled_s, o->frequency, s->ncpus, (unsigned long long)st->samples,
		s->processes);
	fprintf(f,
		PROG ": lost %llu samples (counts map full: %llu, no room to count: %llu);"
		" process events dropped: %llu\n",
		(unsigned long long)(s->lost + st->lost_no_pidmap), (unsigned long long)s->lost,
		(unsigned long long)st->lost_no_pidmap, (unsigned long long)st->events_dropped);
	if (o->interval)
		fprintf(f, PROG ": wrote %zu windows, %zu profiles (%llu samples) to %s;"
			" the last in %.3f s%s\n",
			s->windows, s->files, (unsigned long long)s->samples, o->output_dir,
			s->write_s, s->failed ? ", some failed (see above)" : "");
	else
		fprintf(f, PROG ": wrote %zu profiles (%llu samples) to %s in %.3f s%s\n",
			s->files, (unsigned long long)s->samples, o->output_dir, s->write_s,
			s->failed ? ", some failed (see above)" : "");
	if (s->sym.dwarf_too_big)
		fprintf(f,
			PROG ": %zu object%s named without source lines: DWARF over"
			" --dwarf-memory (%lu%s)%s\n",
			s->sym.dwarf_too_big, s->sym.dwarf_too_big == 1 ? "" : "s",
			o->dwarf_kb % 1024 ? o->dwarf_kb : o->dwarf_kb / 1024,
			o->dwarf_kb % 1024 ? "K" : "M", o->verbose ? "" : "; -v names them");
	if (s->sym.dwarf_failed)
		fprintf(f,
			PROG ": %zu object%s named without source lines: the sandboxed DWARF reader"
			" crashed, hung or hit its limits on them%s\n",
			s->sym.dwarf_failed, s->sym.dwarf_failed == 1 ? "" : "s",
			o->verbose ? "" : "; -v names them");
	if (s->sym.symbols_over || s->sym.names_dropped)
		fprintf(f,
			PROG ": symbol memory over --symbol-memory (%lu%s): %zu object%s without"
			" function names, %zu names dropped; peak %llu KB\n",
			o->symbol_kb % 1024 ? o->symbol_kb : o->symbol_kb / 1024,
			o->symbol_kb % 1024 ? "K" : "M", s->sym.symbols_over,
			s->sym.symbols_over == 1 ? "" : "s", s->sym.names_dropped,
			(unsigned long long)(s->sym.symbol_peak / 1024));
	if (s->unwind_tables) {
		const struct tables_stats *ts = &s->tables;
		uint64_t stopped = 0;

		for (int i = 1; i < CPROF_UNWIND_STATUS_MAX; i++)
			stopped += st->unwind_status[i];
		fprintf(f,
			PROG ": unwind: %llu stacks by CFI (%llu stopped early: truncated %llu,"
			" read failed %llu, no CFI %llu, bad CFA %llu), %llu by frame pointers only\n",
			(unsigned long long)st->unwind_dwarf, (unsigned long long)stopped,
			(unsigned long long)st->unwind_status[CPROF_UNWIND_TRUNCATED],
			(unsigned long long)st->unwind_status[CPROF_UNWIND_READ],
			(unsigned long long)st->unwind_status[CPROF_UNWIND_NO_ROW],
			(unsigned long long)st->unwind_status[CPROF_UNWIND_BAD_CFA],
			(unsigned long long)st->unwind_fp_only);
		fprintf(f,
			PROG ": unwind tables: %zu built in %.3f s, %zu failed, %zu without room,"
			" %zu evicted; peak %.1f of %.1f MB (%llu rows)\n",
			ts->built, ts->build_seconds, ts->failed, ts->no_room, ts->evicted,
			ts->rows_peak * sizeof(struct cprof_unwind_row) / 1048576.0,
			ts->rows_capacity * sizeof(struct cprof_unwind_row) / 1048576.0,
			(unsigned long long)ts->rows_peak);
	}
	print_bounds(f, s);
	if (s->drain_error)
		fprintf(f, PROG ": %s\n", s->drain_error);
}
