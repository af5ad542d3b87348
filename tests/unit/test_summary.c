// SPDX-License-Identifier: MIT
/* summary.c: what the end of a run prints, from a struct summary. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/summary.h"
#include "testlib.h"

/* What summary_window writes for @s with @o after the windows @told saw. */
static char *window_told(const struct summary *s, const struct options *o,
			 struct summary_told *told)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		abort();
	summary_window(f, "20261123T231500Z", s, o, told);
	fclose(f);
	return buf;
}

/* A standing problem is told once, again when it changes or comes back. */
static void told_once(const struct options *o)
{
	static struct summary_told told;
	struct summary w = { .files = 1, .samples = 10, .sym = { .dwarf_too_big = 1 } };
	const char *dw = "1 object without source lines";
	char *out;

	out = window_told(&w, o, &told);
	CHECK(strstr(out, dw) != NULL, "told once: the first window tells it", "%s", out);
	free(out);
	out = window_told(&w, o, &told);
	CHECK(!strstr(out, dw) && strstr(out, "1 process, 10 samples\n"),
	      "told once: the next window does not", "%s", out);
	free(out);
	w.lost = 3;
	out = window_told(&w, o, &told);
	CHECK(!strstr(out, dw) && strstr(out, "3 samples"),
	      "told once: a new problem is told, the standing one still not", "%s", out);
	free(out);
	w.sym.dwarf_too_big = 2;
	out = window_told(&w, o, &told);
	CHECK(strstr(out, "2 objects without source lines") && strstr(out, "3 samples"),
	      "told once: a changed line is told again (and a repeated count too)", "%s", out);
	free(out);
	w.sym.dwarf_too_big = 0;
	out = window_told(&w, o, &told);
	free(out);
	w.sym.dwarf_too_big = 2;
	out = window_told(&w, o, &told);
	CHECK(strstr(out, "2 objects without source lines") != NULL,
	      "told once: back after a window without it, told again", "%s", out);
	free(out);
}

/* What summary_print (or summary_window) writes for @s with @o. */
static char *printed(const struct summary *s, const struct options *o, const char *stamp)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		abort();
	if (stamp)
		summary_window(f, stamp, s, o, NULL);
	else
		summary_print(f, s, o);
	fclose(f);
	return buf;
}

static int lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static void add_top(struct summary *s, uint32_t pid, const char *comm, uint64_t n)
{
	struct window_proc *w = &s->last.top[s->last.ntop++];

	*w = (struct window_proc){ .pid = pid, .samples = n };
	snprintf(w->comm, sizeof(w->comm), "%s", comm);
	snprintf(w->file, sizeof(w->file), "%s-%u.pb.gz", comm, pid);
}

int main(void)
{
	struct options o = { .frequency = 99, .duration = 30, .output_dir = "out",
			     .dwarf_kb = 16 * 1024, .symbol_kb = 32 * 1024 };
	struct summary s = { .unwind_tables = true };
	char *out;

	T_PLAN(18);
	out = printed(&s, &o, NULL);
	CHECK(!strcmp(out, "cprof-bpf: wrote 0 profiles (0 samples) to out\n"),
	      "nothing sampled: one line, no counter of zeros", "%s", out);
	free(out);

	s.files = 2;
	s.samples = s.last.samples = 300;
	s.bpf.samples = 300;
	s.bpf.unwind_dwarf = 1000;
	s.bpf.unwind_status[CPROF_UNWIND_NO_ROW] = 5; /* 0.5%: noise */
	add_top(&s, 42, "hot", 200);
	add_top(&s, 7, "warm", 100);
	snprintf(s.last.top[1].container_id, sizeof(s.last.top[1].container_id), "%s",
		 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
	out = printed(&s, &o, NULL);
	CHECK(lines(out) == 5 && strstr(out, "wrote 2 profiles (300 samples) to out\n") &&
		      strstr(out, " 66.7%      200       42  hot ") &&
		      strstr(out, " 33.3%      100        7  warm             0123456789ab  warm-7.pb.gz\n") &&
		      strstr(out, "to open the hottest: go tool pprof -http=: out/hot-42.pb.gz\n"),
	      "files, top processes with shares and container ids, the command", "%s", out);
	CHECK(!strstr(out, "incomplete"), "0.5% of stacks incomplete: not a problem", "%s", out);
	free(out);

	s.bpf.unwind_status[CPROF_UNWIND_BAD_CFA] = 25; /* 3% with the 5 above */
	s.lost = 4;
	s.bpf.lost_no_pidmap = 2;
	s.sym.dwarf_too_big = 1;
	out = printed(&s, &o, NULL);
	CHECK(strstr(out, "cprof-bpf: 3% of stacks incomplete (unwinding stopped early): -v for details\n") &&
		      strstr(out, "cprof-bpf: 6 samples (2.0%) lost: ") &&
		      strstr(out, "cprof-bpf: 1 object without source lines: DWARF over --dwarf-memory (16M): -v names them\n"),
	      "problems: one line each, what it cost, where to read more", "%s", out);
	CHECK(!strstr(out, "unwind: ") && !strstr(out, "events"),
	      "counters stay under -v; zero ones never show", "%s", out);
	free(out);

	o.verbose = true;
	out = printed(&s, &o, NULL);
	CHECK(strstr(out, "unwind: 1000 stacks by CFI (30 stopped early") &&
		      strstr(out, "lost 6 samples (counts map full: 4, no room to count: 2)") &&
		      !strstr(out, "unwind tables:") && !strstr(out, "re-snapshots") &&
		      !strstr(out, "perf maps"),
	      "-v: every counter line that is not all zeros", "%s", out);
	free(out);
	s.procs.perfmap_stale = 3;
	out = printed(&s, &o, NULL);
	CHECK(strstr(out, "cprof-bpf: perf maps: 3 refused, last written before their process"
			  " started (an earlier process's of its pid)\n"),
	      "-v: stale perf maps refused", "%s", out);
	free(out);
	o.verbose = false;
	out = printed(&s, &o, NULL);
	CHECK(!strstr(out, "perf maps"), "stale perf maps refused: no problem, -v only", "%s", out);
	free(out);
	s.procs.perfmap_stale = 0;

	o.quiet = true;
	out = printed(&s, &o, NULL);
	CHECK(!*out, "--quiet: nothing", "'%s'", out);
	free(out);
	s.drain_error = "draining: bad things";
	out = printed(&s, &o, NULL);
	CHECK(!strcmp(out, "cprof-bpf: draining: bad things\n"), "--quiet: errors still", "%s", out);
	free(out);
	o.quiet = false;
	s.drain_error = NULL;

	o.output_dir = "my dir's";
	out = printed(&s, &o, NULL);
	CHECK(strstr(out, "-http=: 'my dir'\\''s/hot-42.pb.gz'\n"),
	      "the command quotes a path the shell would split", "%s", out);
	free(out);
	o.output_dir = "out";

	snprintf(s.last.top[0].file, sizeof(s.last.top[0].file), "%s", "a\033[2Jb-42.pb.gz");
	out = printed(&s, &o, NULL);
	CHECK(!strchr(out, '\033'), "a file name's terminal escapes are not printed", "%s", out);
	free(out);

	out = printed(&s, &o, "20261123T231500Z");
	CHECK(lines(out) == 1 &&
		      !strncmp(out, "cprof-bpf: window 20261123T231500Z: 2 processes, 300 samples; ",
			       62) && strstr(out, "; 3% of stacks") && strstr(out, "; 6 samples (2.0%) lost"),
	      "a window: one line, its problems joined", "%s", out);
	free(out);
	told_once(&o);
	return T_EXIT();
}
