// SPDX-License-Identifier: MIT
/*
 * kallsyms: names for kernel addresses, driven by the queries.
 *
 * The queries are sorted and de-duplicated into slots q[0] < q[1] < ...
 * Slot i collects only the symbols s with q[i-1] < s.addr <= q[i] and keeps
 * the highest of them.  After the pass, the answer for q[j] is the candidate
 * of the highest non-empty slot k <= j: every symbol in slot k exceeds every
 * symbol of slots below it, and no symbol of a slot above j is <= q[j].
 *
 * So each symbol costs one binary search and O(1) work, whatever order the
 * file lists symbols in (module symbols follow the core kernel and are not
 * sorted among themselves).  Eagerly updating every query >= s.addr instead
 * would be correct too (the best candidate is monotone in the query, so the
 * queries to update form a contiguous run), but with ascending input every
 * symbol would update every query above it: O(symbols x queries).
 *
 * Each slot also keeps its lowest symbol: the end of slot i's answer (the
 * next symbol above it, so that a caller may keep [start, end) for later
 * queries) is the lowest of the first non-empty slot above i, or of those
 * above the last query.
 *
 * Memory: one slot per distinct query, each owning one buffer for the
 * candidate's "name\0module\0", reused when a better candidate replaces it
 * and grown at most to KALLSYMS_NAME_MAX + MODULE_MAX_LEN + 2; nothing is wasted
 * by replacements.  At the end the winners are copied into one exactly sized
 * arena.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/addrsearch.h"
#include "util/hexnum.h"
#include "symbols/kallsyms.h"

/* MODULE_NAME_LEN is 56; "[__builtin__ftrace]" and friends are shorter. */
#define MODULE_MAX_LEN 63
/* A real line is below 600 bytes; longer ones are not kallsyms and skipped. */
#define LINE_MAX_LEN 4096

struct slot {
	uint64_t addr;  /* the query */
	uint64_t best;  /* candidate's address, 0 when none */
	uint64_t low;   /* the lowest text symbol of the slot, 0 when none */
	char *buf;      /* "name\0module\0" of the candidate */
	size_t cap;
	uint16_t name_len, mod_len; /* mod_len 0: core kernel */
	char type;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

bool kallsyms_is_text(char type)
{
	return type == 't' || type == 'T' || type == 'w' || type == 'W';
}

static bool is_weak(char t)
{
	return t == 'w' || t == 'W';
}

static size_t leading_underscores(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n && s[i] == '_')
		i++;
	return i;
}

/*
 * Among aliases at one address, prefer what perf's choose_best_symbol()
 * prefers, so that names match what people see in perf: non-weak, then
 * global, then fewer leading underscores, then the longer name; otherwise
 * the first one listed.
 */
bool kallsyms_better_alias(const struct kallsyms_sym *cur, const struct kallsyms_sym *s)
{
	size_t cu, su;

	if (is_weak(cur->type) != is_weak(s->type))
		return is_weak(cur->type);
	if (!!isupper((unsigned char)cur->type) != !!isupper((unsigned char)s->type))
		return isupper((unsigned char)s->type);
	cu = leading_underscores(cur->name, cur->name_len);
	su = leading_underscores(s->name, s->name_len);
	if (cu != su)
		return su < cu;
	return s->name_len > cur->name_len;
}

static bool better_alias(const struct slot *sl, const struct kallsyms_sym *s)
{
	const struct kallsyms_sym cur = { .addr = sl->best, .type = sl->type, .name = sl->buf,
					  .name_len = sl->name_len };

	return kallsyms_better_alias(&cur, s);
}

static int slot_take(struct slot *sl, const struct kallsyms_sym *s)
{
	size_t need = s->name_len + 1 + s->module_len + 1;

	if (need > sl->cap) {
		/* Round up so that a run of replacements rarely reallocates. */
		size_t cap = (need + 31) & ~(size_t)31;
		char *b = realloc(sl->buf, cap);

		if (!b)
			return -ENOMEM;
		sl->buf = b;
		sl->cap = cap;
	}
	memcpy(sl->buf, s->name, s->name_len);
	sl->buf[s->name_len] = '\0';
	memcpy(sl->buf + s->name_len + 1, s->module, s->module_len);
	sl->buf[s->name_len + 1 + s->module_len] = '\0';
	sl->best = s->addr;
	sl->type = s->type;
	sl->name_len = (uint16_t)s->name_len;
	sl->mod_len = (uint16_t)s->module_len;
	return 0;
}

/*
 * "ffffffff81000000 T _text" optionally followed by "\t[module]".  False
 * for anything else.  The name and module point into @line.
 */
static bool parse_line(const char *line, struct kallsyms_sym *s)
{
	const char *p = line;
	uint64_t v;

	if (!parse_hex(&p, p + strlen(p), UINT64_MAX, &v) || *p != ' ')
		return false;
	s->addr = v;
	s->type = p[1];
	if (!s->type || p[2] != ' ')
		return false;
	p += 3;
	s->name = p;
	p += strcspn(p, " \t\r\n");
	s->name_len = (size_t)(p - s->name);
	if (!s->name_len)
		return false;
	if (s->name_len > KALLSYMS_NAME_MAX)
		s->name_len = KALLSYMS_NAME_MAX;

	s->module = "";
	s->module_len = 0;
	p += strspn(p, " \t");
	if (*p == '[') {
		const char *close = strchr(p + 1, ']');

		if (!close || close == p + 1)
			return false;
		s->module = p + 1;
		s->module_len = (size_t)(close - s->module);
		if (s->module_len > MODULE_MAX_LEN)
			s->module_len = MODULE_MAX_LEN;
		p = close + 1;
	}
	/* Anything else after the name means this is not a kallsyms line. */
	return p[strspn(p, " \t\r\n")] == '\0';
}

/* Sorted, unique slots for @addrs. */
static int make_slots(const uint64_t *addrs, size_t n, struct slot **out,
		      size_t *nout)
{
	uint64_t *a;
	struct slot *q;
	size_t i, m = 0;

	if (n > SIZE_MAX / sizeof(*a))
		return -ENOMEM;
	a = malloc(n * sizeof(*a));
	if (!a)
		return -ENOMEM;
	memcpy(a, addrs, n * sizeof(*a));
	qsort(a, n, sizeof(*a), cmp_u64);
	for (i = 0; i < n; i++)
		if (i == 0 || a[i] != a[m - 1])
			a[m++] = a[i];
	q = calloc(m, sizeof(*q));
	if (!q) {
		free(a);
		return -ENOMEM;
	}
	for (i = 0; i < m; i++)
		q[i].addr = a[i];
	free(a);
	*out = q;
	*nout = m;
	return 0;
}

static void free_slots(struct slot *q, size_t m)
{
	for (size_t i = 0; i < m; i++)
		free(q[i].buf);
	free(q);
}

/*
 * The next kallsyms line of @f parsed into @s (pointing into @line): true,
 * or false at the end.  Lines that are not kallsyms are passed over.
 */
static bool next_sym(FILE *f, char (*line)[LINE_MAX_LEN], struct kallsyms_sym *s)
{
	while (fgets(*line, sizeof(*line), f)) {
		if (!strchr(*line, '\n') && !feof(f)) {
			/* Too long to be kallsyms: drop the rest of the line. */
			int c;

			while ((c = getc(f)) != EOF && c != '\n')
				;
			continue;
		}
		if (parse_line(*line, s))
			return true;
	}
	return false;
}

/*
 * Streams @f into the slots; @above: the lowest text symbol above them all.
 * @seen (if any) is shown every symbol on the way.
 */
static int scan(FILE *f, struct slot *q, size_t m, uint64_t *above,
		const struct kallsyms_seen *seen, struct errbuf *err)
{
	char line[LINE_MAX_LEN];
	size_t parsed = 0;
	bool nonzero = false;
	struct kallsyms_sym s;

	while (next_sym(f, &line, &s)) {
		struct slot *sl;
		size_t i;

		parsed++;
		if (seen)
			seen->fn(seen->arg, &s);
		/* kptr_restrict shows every address as 0. */
		if (!s.addr)
			continue;
		nonzero = true;
		if (!kallsyms_is_text(s.type))
			continue;
		i = addrsearch_below(q, m, ADDRSEARCH_KEY(struct slot, addr), s.addr);
		if (i == m) {
			if (!*above || s.addr < *above)
				*above = s.addr;
			continue;
		}
		sl = &q[i];
		if (!sl->low || s.addr < sl->low)
			sl->low = s.addr;
		if (s.addr > sl->best || (s.addr == sl->best && better_alias(sl, &s))) {
			if (slot_take(sl, &s) < 0)
				return errf(err, -ENOMEM,
					    "kallsyms: out of memory");
		}
	}
	if (ferror(f))
		return errf(err, -EIO, "kallsyms: read error");
	if (!parsed)
		return errf(err, -ENODATA, "kallsyms: no symbols found");
	if (!nonzero)
		return errf(err, -EPERM,
			    "kallsyms: all addresses are 0, hidden by "
			    "kernel.kptr_restrict (need root or CAP_SYSLOG)");
	return 0;
}

/* Builds the table: winners copied once into an exactly sized arena. */
static int build_table(const struct slot *q, size_t m, uint64_t above, struct ksym_table *out,
		       struct errbuf *err)
{
	size_t i, total = 0, off = 0;
	const struct ksym *carry = NULL;
	uint64_t end = above;

	for (i = 0; i < m; i++)
		if (q[i].best)
			total += q[i].name_len + 1 +
				 (q[i].mod_len ? q[i].mod_len + 1u : 0);
	out->syms = calloc(m ? m : 1, sizeof(*out->syms));
	out->strings = malloc(total ? total : 1);
	if (!out->syms || !out->strings) {
		kallsyms_free(out);
		return errf(err, -ENOMEM, "kallsyms: out of memory");
	}
	out->n = m;
	out->strings_len = out->strings_cap = total;

	for (i = 0; i < m; i++) {
		struct ksym *k = &out->syms[i];

		k->addr = q[i].addr;
		if (q[i].best) {
			char *name = out->strings + off;

			memcpy(name, q[i].buf, q[i].name_len + 1u);
			off += q[i].name_len + 1u;
			k->name = name;
			k->sym_addr = q[i].best;
			if (q[i].mod_len) {
				char *mod = out->strings + off;

				memcpy(mod, q[i].buf + q[i].name_len + 1,
				       q[i].mod_len + 1u);
				off += q[i].mod_len + 1u;
				k->module = mod;
			}
			carry = k;
		} else if (carry) {
			k->sym_addr = carry->sym_addr;
			k->name = carry->name;
			k->module = carry->module;
		}
	}
	/* From the top down: each answer ends where the next symbol above its query is. */
	for (i = m; i-- > 0;) {
		if (out->syms[i].name)
			out->syms[i].sym_end = end;
		if (q[i].low)
			end = q[i].low;
	}
	return 0;
}

int kallsyms_resolve(FILE *f, const uint64_t *addrs, size_t n,
		     struct ksym_table *out, struct errbuf *err)
{
	return kallsyms_resolve_seen(f, addrs, n, NULL, out, err);
}

int kallsyms_resolve_seen(FILE *f, const uint64_t *addrs, size_t n,
			  const struct kallsyms_seen *seen, struct ksym_table *out,
			  struct errbuf *err)
{
	uint64_t above = 0;
	struct slot *q;
	size_t m;
	int ret;

	memset(out, 0, sizeof(*out));
	/* Nothing to resolve: do not pay for reading ~120k lines. */
	if (n == 0)
		return 0;
	if (make_slots(addrs, n, &q, &m) < 0)
		return errf(err, -ENOMEM, "kallsyms: out of memory for %zu addresses", n);
	ret = scan(f, q, m, &above, seen, err);
	if (ret == 0)
		ret = build_table(q, m, above, out, err);
	free_slots(q, m);
	return ret;
}

const struct ksym *kallsyms_find(const struct ksym_table *t, uint64_t addr)
{
	return addrsearch_find(t->syms, t->n, ADDRSEARCH_KEY(struct ksym, addr), addr);
}

int kallsyms_text_range(FILE *f, const char *name, uint64_t *start, uint64_t *end,
			struct errbuf *err)
{
	char line[LINE_MAX_LEN];
	size_t len = strlen(name);
	uint64_t lo = 0, hi = UINT64_MAX;
	struct kallsyms_sym s;

	while (next_sym(f, &line, &s))
		if (s.addr && kallsyms_is_text(s.type) && !s.module_len && s.name_len == len &&
		    !memcmp(s.name, name, len)) {
			lo = s.addr;
			break;
		}
	if (ferror(f))
		return errf(err, -EIO, "kallsyms: read error");
	if (!lo)
		return errf(err, -ENOENT, "kallsyms: no text symbol %s", name);
	/* Its end: the lowest text symbol above it, wherever listed. */
	rewind(f);
	while (next_sym(f, &line, &s))
		if (kallsyms_is_text(s.type) && s.addr > lo && s.addr < hi)
			hi = s.addr;
	if (ferror(f))
		return errf(err, -EIO, "kallsyms: read error");
	if (hi == UINT64_MAX)
		return errf(err, -ENOENT, "kallsyms: nothing after %s to end it", name);
	*start = lo;
	*end = hi;
	return 0;
}

void kallsyms_free(struct ksym_table *t)
{
	if (!t)
		return;
	free(t->syms);
	free(t->strings);
	memset(t, 0, sizeof(*t));
}
