// SPDX-License-Identifier: MIT
/*
 * Tests for symbolize over a process made up here: two objects compiled
 * at test time (each with DWARF and inlined calls) mapped at chosen
 * addresses, every address of their functions sampled.  Checked: prepared
 * (symbols read for the sampled addresses, lines from the sandboxed
 * worker), in process, and one address at a time all name every frame
 * alike; the symbol memory bound holds, and when hit leaves frames
 * unnamed and says so; a DWARF reader that crashes or hangs in the middle
 * of a request costs one object its lines (its names stay), and the other
 * object still gets its lines from a fresh child.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf/elfobj.h"
#include "util/stackstore.h"
#include "output/collect.h"
#include "symbols/symbolize.h"
#include "testlib.h"
#include "testutil.h"

static char tmp[PATH_MAX - 256];

#define BASE_A 0x400000ull
#define BASE_B 0x800000ull
#define MAXA 2048

/* What the DWARF child does: set before the symbolizer forks it. */
static int crash_child = -1, hang_child = -1;

static void hook(unsigned long request, unsigned child)
{
	(void)request;
	if ((int)child == crash_child)
		abort();
	if ((int)child == hang_child)
		sleep(60);
}

struct world {
	struct process p;
	struct stackstore stacks;
	struct elfobj *objs[2];
	uint64_t addrs[MAXA];
	size_t naddrs;
	size_t per_obj[2];
};

static bool text_range(const char *bin, const char *fn, uint64_t *start, uint64_t *size)
{
	char line[256];
	unsigned long long a = 0, s = 0;
	FILE *f = popen(fmt("nm -S '%s' | grep ' %s$'", bin, fn), "r");

	if (f && fgets(line, sizeof(line), f))
		sscanf(line, "%llx %llx", &a, &s);
	if (f)
		pclose(f);
	*start = a;
	*size = s;
	return s > 0;
}

/*
 * A process mapping fxa at BASE_A and fxb at BASE_B (file offset 0, so an
 * address is base + file offset = base + vaddr for these PIEs), with one
 * sample per address of outer_*() and main().
 */
static bool make_world(struct world *w)
{
	char maps[2 * PATH_MAX + 256];
	const char *names[2] = { "a", "b" };
	uint64_t bases[2] = { BASE_A, BASE_B };
	struct cprof_sample_key k = { .pid = 4242, .tid = 4242 };

	memset(w, 0, sizeof(*w));
	snprintf(maps, sizeof(maps),
		 "%llx-%llx r-xp 00000000 08:01 11 %s/fxa\n%llx-%llx r-xp 00000000 08:01 12 %s/fxb\n",
		 BASE_A, BASE_A + 0x100000, tmp, BASE_B, BASE_B + 0x100000, tmp);
	if (procmaps_parse(maps, strlen(maps), &w->p.maps, NULL) || w->p.maps.n != 2)
		return false;
	w->p.pid = 4242;
	w->p.objs = calloc(2, sizeof(*w->p.objs));
	aggregate_init(&w->p.samples);
	stackstore_init(&w->stacks);
	for (int i = 0; i < 2; i++) {
		int fd = open(fmt("%s/fx%s", tmp, names[i]), O_RDONLY | O_CLOEXEC);
		const char *fns[2] = { fmt("outer_%s", names[i]), "main" };

		if (fd < 0 || elfobj_open(&w->objs[i], fd, NULL))
			return false;
		w->p.objs[i] = w->objs[i];
		for (int f = 0; f < 2; f++) {
			uint64_t start, size;

			if (!text_range(fmt("%s/fx%s", tmp, names[i]), fns[f], &start, &size))
				return false;
			for (uint64_t a = start; a < start + size && w->naddrs < MAXA; a++) {
				uint64_t ip = bases[i] + a, hash = CPROF_STACK_HASHED | w->naddrs;

				stackstore_add(&w->stacks, hash, &ip, 1, 0);
				k.ustack = hash;
				aggregate_add(&w->p.samples, &w->stacks, &k, 1);
				w->addrs[w->naddrs++] = ip;
				w->per_obj[i]++;
			}
		}
	}
	return true;
}

static void free_world(struct world *w)
{
	for (int i = 0; i < 2; i++)
		elfobj_free(w->objs[i]);
	free(w->p.objs);
	procmaps_free(&w->p.maps);
	aggregate_free(&w->p.samples);
	stackstore_free(&w->stacks);
}

/* Every sampled address's frames as text: "name|system|file:line(s)" per line. */
static char **frames_of(struct symbolizer *s, struct world *w, bool prepare)
{
	struct process *procs[1] = { &w->p };
	struct sym_process view = collect_view(&w->p);
	char **out = calloc(w->naddrs, sizeof(*out));

	if (prepare)
		collect_prepare(s, procs, 1, &w->stacks, NULL);
	for (size_t i = 0; i < w->naddrs; i++) {
		struct sym sym;
		char buf[2048];
		size_t len = 0;

		symbolize_user(s, &view, w->addrs[i], &sym);
		len += (size_t)snprintf(buf, sizeof(buf), "%s:", sym.dwarf ? "D" : "-");
		for (unsigned l = 0; l < sym.nlines && len < sizeof(buf); l++) {
			const struct sym_line *x = &sym.lines[l];

			len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s|%s|%s:%lld(%lld);",
						x->name ? x->name : "-",
						x->system_name ? x->system_name : "-",
						x->file ? x->file : "-", (long long)x->line,
						(long long)x->start_line);
		}
		out[i] = strdup(buf);
	}
	symbolizer_done(s, &view);
	return out;
}

static void free_frames(char **f, size_t n)
{
	for (size_t i = 0; f && i < n; i++)
		free(f[i]);
	free(f);
}

static struct symbolizer base_sym(void)
{
	return (struct symbolizer){
		.debug_root = "/nonexistent-cprof-test",
		.dwarf_child_hook = hook,
	};
}

/* Addresses of object @obj (0, 1) whose frames have lines / have a name. */
static void count(const struct world *w, char **f, int obj, size_t *lines, size_t *named)
{
	size_t from = obj ? w->per_obj[0] : 0, to = obj ? w->naddrs : w->per_obj[0];

	*lines = *named = 0;
	for (size_t i = from; i < to; i++) {
		*lines += f[i][0] == 'D' && strstr(f[i], ".c:") != NULL;
		*named += strstr(f[i], "outer_") || strstr(f[i], "main|");
	}
}

static void test_alike(struct world *w)
{
	struct symbolizer sp = base_sym(), si = base_sym(), so = base_sym();
	char **fp, **fi, **fo;
	size_t same_i = 0, same_o = 0, lines, named;
	struct symbolizer_stats st;

	si.lines_in_process = true;
	fp = frames_of(&sp, w, true);
	symbolizer_stats(&sp, &st);
	fi = frames_of(&si, w, true);
	fo = frames_of(&so, w, false);
	for (size_t i = 0; i < w->naddrs; i++) {
		same_i += !strcmp(fp[i], fi[i]);
		same_o += !strcmp(fp[i], fo[i]);
	}
	count(w, fp, 0, &lines, &named);
	CHECK(lines == w->per_obj[0] && named == w->per_obj[0] && strstr(fp[0], "outer_a"),
	      "prepared: every frame named, with lines (inlines included), from the child",
	      "%zu of %zu with lines, %zu named: %s", lines, w->per_obj[0], named, fp[0]);
	CHECK(same_i == w->naddrs, "prepared via the child = in process, frame by frame",
	      "%zu of %zu alike", same_i, w->naddrs);
	CHECK(same_o == w->naddrs,
	      "prepared (symbols read for the sampled addresses) = one address at a time (whole table)",
	      "%zu of %zu alike", same_o, w->naddrs);
	CHECK(st.symbol_peak > 0 && st.symbol_peak < 256 * 1024 && !st.symbols_over &&
	      !st.names_dropped && !st.dwarf_failed,
	      "symbol memory: a peak of some KB, no bound hit, no failure",
	      "peak %llu, over %zu, dropped %zu, failed %zu", (unsigned long long)st.symbol_peak,
	      st.symbols_over, st.names_dropped, st.dwarf_failed);
	free_frames(fp, w->naddrs);
	free_frames(fi, w->naddrs);
	free_frames(fo, w->naddrs);
	symbolizer_free(&sp);
	symbolizer_free(&si);
	symbolizer_free(&so);
}

static void test_budget(struct world *w)
{
	struct symbolizer s = base_sym();
	struct symbolizer_stats st;
	size_t lines[2], named[2];
	char **f;

	/* Too small for any symbol table or name block: frames unnamed, run goes on. */
	s.symbol_max_bytes = 100;
	f = frames_of(&s, w, true);
	symbolizer_stats(&s, &st);
	count(w, f, 0, &lines[0], &named[0]);
	count(w, f, 1, &lines[1], &named[1]);
	CHECK(st.symbols_over == 2 && st.names_dropped > 0 && st.symbol_peak <= 100 &&
	      named[0] == 0 && named[1] == 0,
	      "symbol memory bound of 100 bytes: both objects over it, counted, frames unnamed, peak within it",
	      "over %zu, dropped %zu, peak %llu, named %zu/%zu", st.symbols_over, st.names_dropped,
	      (unsigned long long)st.symbol_peak, named[0], named[1]);
	free_frames(f, w->naddrs);
	symbolizer_free(&s);

	/* What both objects take, then a bound a block short of it. */
	s = base_sym();
	free_frames(frames_of(&s, w, true), w->naddrs);
	symbolizer_stats(&s, &st);
	symbolizer_free(&s);
	s = base_sym();
	s.symbol_max_bytes = st.symbol_peak - 8192;
	f = frames_of(&s, w, true);
	symbolizer_stats(&s, &st);
	count(w, f, 0, &lines[0], &named[0]);
	count(w, f, 1, &lines[1], &named[1]);
	CHECK(st.symbol_peak <= s.symbol_max_bytes && (named[0] || named[1]) &&
	      (st.symbols_over || st.names_dropped),
	      "a bound 8 KiB short of what both objects take: never exceeded, some frames named, the rest counted",
	      "peak %llu, named %zu/%zu, over %zu, dropped %zu", (unsigned long long)st.symbol_peak,
	      named[0], named[1], st.symbols_over, st.names_dropped);
	free_frames(f, w->naddrs);
	symbolizer_free(&s);
}

/* A reader failing in the middle of a request: one object loses its lines only. */
static void test_reader_fails(struct world *w, bool hang)
{
	struct symbolizer s = base_sym();
	struct symbolizer_stats st;
	size_t lines[2], named[2];
	char **f;
	char name[160];

	if (hang) {
		hang_child = 0;
		s.dwarf_timeout_ms = 300;
	} else {
		crash_child = 0;
	}
	f = frames_of(&s, w, true);
	symbolizer_stats(&s, &st);
	count(w, f, 0, &lines[0], &named[0]);
	count(w, f, 1, &lines[1], &named[1]);
	snprintf(name, sizeof(name),
		 "DWARF child %s mid-request: that object keeps its names without lines, "
		 "the other gets its lines from a fresh child", hang ? "hanging" : "crashing");
	CHECK(st.dwarf_failed == 1 && named[0] == w->per_obj[0] && named[1] == w->per_obj[1] &&
	      ((lines[0] == 0 && lines[1] == w->per_obj[1]) ||
	       (lines[1] == 0 && lines[0] == w->per_obj[0])),
	      name, "failed %zu, lines %zu/%zu, named %zu/%zu", st.dwarf_failed, lines[0], lines[1],
	      named[0], named[1]);
	free_frames(f, w->naddrs);
	symbolizer_free(&s);
	crash_child = hang_child = -1;
}

int main(void)
{
	struct world w;

	setvbuf(stdout, NULL, _IOLBF, 0);
	snprintf(tmp, sizeof(tmp), "/tmp/cprof-symbolize-XXXXXX");
	if (!mkdtemp(tmp) || build_fixture_inlines(tmp, "a", "fxa") ||
	    build_fixture_inlines(tmp, "b", "fxb")) {
		T_SKIP("symbolize", "cannot compile the fixtures");
		return 0;
	}
	T_PLAN(8);
	if (!make_world(&w)) {
		CHECK(false, "symbolize: a process made up of the fixtures", "could not");
		return T_EXIT();
	}
	test_alike(&w);
	test_budget(&w);
	test_reader_fails(&w, false);
	test_reader_fails(&w, true);
	free_world(&w);
	sh(fmt("rm -rf '%s'", tmp));
	return T_EXIT();
}
