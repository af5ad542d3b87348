// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cprof.h"
#include "java/jvm.h"
#include "java/jvm_names.h"
#include "java/jvm_scopes.h"

/* An hmap entry: its key first. */
struct named_slot {
	uint64_t addr;        /* the Method* or CodeBlob* */
	struct jvm_named *m;  /* NULL: unreadable */
};

void jvm_names_init(struct jvm_names *n)
{
	memset(n, 0, sizeof(*n));
	hmap_init(&n->methods, sizeof(uint64_t), sizeof(struct named_slot));
	hmap_init(&n->stubs, sizeof(uint64_t), sizeof(struct named_slot));
	hmap_init(&n->frames, sizeof(uint64_t), sizeof(struct jvm_frame_rec));
}

static void free_all(struct hmap *h)
{
	struct named_slot *e;
	size_t it = 0;

	while ((e = hmap_next(h, &it)))
		free(e->m);
	hmap_free(h);
}

void jvm_names_free(struct jvm_names *n)
{
	free_all(&n->methods);
	free_all(&n->stubs);
	hmap_free(&n->frames);
}

/*
 * A method or stub, in one allocation with its lines and strings: NULL
 * past the process's bounds (counted) or with no memory.
 */
static struct jvm_named *named_new(struct jvm_names *n, const char *function,
				   const char *system_name, const char *file,
				   const struct jvm_line *lines, size_t nlines)
{
	size_t fl = strlen(function) + 1, sl = system_name ? strlen(system_name) + 1 : 0,
	       il = file ? strlen(file) + 1 : 0, ll = nlines * sizeof(*lines);
	size_t size = sizeof(struct jvm_named) + ll + fl + sl + il;
	struct jvm_named *m;
	char *p;

	if (n->bytes + size > JVM_NAMES_BYTES || (m = malloc(size)) == NULL) {
		if (n->st)
			n->st->refused++;
		return NULL;
	}
	/* the lines right after the struct: aligned as it is */
	p = (char *)(m + 1);
	m->lines = nlines ? memcpy(p, lines, ll) : NULL;
	m->nlines = (uint32_t)nlines;
	m->function = memcpy(p + ll, function, fl);
	m->system_name = sl ? memcpy(p + ll + fl, system_name, sl) : NULL;
	m->file = il ? memcpy(p + ll + fl + sl, file, il) : NULL;
	m->start_line = 0;
	for (size_t i = 0; i < nlines; i++)
		if (!m->start_line || lines[i].line < m->start_line)
			m->start_line = lines[i].line;
	n->bytes += size;
	return m;
}

/* Whether @n may keep another entry; counts a refusal. */
static bool room(struct jvm_names *n)
{
	if (n->methods.n + n->stubs.n + n->frames.n < JVM_NAMES_MAX)
		return true;
	if (n->st)
		n->st->refused++;
	return false;
}

/* Method @method of @jp, read once: NULL when unreadable or over the bounds. */
static const struct jvm_named *method_named(struct jvmproc *jp, uint64_t method)
{
	struct jvm_names *n = &jp->names;
	struct named_slot *slot = hmap_find(&n->methods, &method);
	struct jvm_named *m = NULL;
	struct jvm_method *jm;
	char function[JVM_CLASS_MAX + JVM_MNAME_MAX + 1];
	char *system_name;
	bool created;

	if (slot)
		return slot->m;
	if (!room(n))
		return NULL;
	jm = malloc(sizeof(*jm));
	system_name = malloc(sizeof(function) + JVM_SIG_MAX);
	/* a method that cannot be read stays unnamed: it is not read again */
	if (jm && system_name && !jvm_method_read(&jp->layout, &jp->mem, method, jm)) {
		snprintf(function, sizeof(function), "%s.%s", jm->klass, jm->name);
		snprintf(system_name, sizeof(function) + JVM_SIG_MAX, "%s%s", function, jm->sig);
		m = named_new(n, function, system_name, jm->file[0] ? jm->file : NULL, jm->lines,
			      jm->nlines);
	}
	free(jm);
	free(system_name);
	slot = hmap_insert(&n->methods, &method, &created);
	if (!slot) {
		free(m);
		return NULL;
	}
	slot->m = m;
	return m;
}

/* A blob of the JVM's own code (a stub, an adapter), named by it. */
static const struct jvm_named *stub_named(struct jvmproc *jp, const struct jvm_blob *b)
{
	struct jvm_names *n = &jp->names;
	struct named_slot *slot = hmap_find(&n->stubs, &b->addr);
	struct jvm_named *m;
	char name[JVM_BLOB_NAME_MAX + 8], *o;
	bool created;

	if (slot)
		return slot->m;
	if (!room(n))
		return NULL;
	o = name + snprintf(name, sizeof(name), "[jvm] ");

	/* pprof takes "(1)" in "StubRoutines (1)" for a parameter list and drops it */
	for (const char *c = b->name[0] ? b->name : "code"; *c && o < name + sizeof(name) - 1; c++)
		if (*c != '(' && *c != ')')
			*o++ = *c;
	*o = 0;
	m = named_new(n, name, NULL, NULL, NULL, 0);
	slot = hmap_insert(&n->stubs, &b->addr, &created);
	if (!slot) {
		free(m);
		return NULL;
	}
	slot->m = m;
	return m;
}

/* The blob holding @pc, the heaps read again when the pc is past what was. */
static int blob_at(struct jvmproc *jp, uint64_t pc, struct jvm_blob *b)
{
	if (!jvm_blob_find(&jp->layout, &jp->mem, &jp->code, pc, b))
		return 0;
	/* the heaps commit more as code is compiled: a pc past what was read asks again */
	if (jvm_codecache_has(&jp->code, pc) || pc < jp->reserved_lo || pc >= jp->reserved_hi ||
	    jvmproc_refresh(jp, NULL))
		return -ENOENT;
	return jvm_blob_find(&jp->layout, &jp->mem, &jp->code, pc, b);
}

const struct jvm_named *jvm_stub_at(struct jvmproc *jp, uint64_t pc)
{
	struct jvm_names *n = &jp->names;
	struct jvm_frame_rec *r, tmp = { .tagged = pc };
	struct jvm_blob b;
	bool created;

	/* kept by its pc, as a frame BPF recorded is by its record (bit 63 tells them apart) */
	if (pc & CPROF_JAVA_FRAME || pc < jp->reserved_lo || pc >= jp->reserved_hi)
		return NULL;
	r = hmap_find(&n->frames, &pc);
	if (r)
		return r->n ? r->lines[0].method : NULL;
	if (!blob_at(jp, pc, &b) && !b.is_nmethod && (tmp.lines[0].method = stub_named(jp, &b)))
		tmp.n = 1;
	tmp.res = tmp.n ? JVM_NAMED_STUB : JVM_NAMED_GONE;
	if (!room(n) || !(r = hmap_insert(&n->frames, &pc, &created)))
		return tmp.n ? tmp.lines[0].method : NULL;
	*r = tmp;
	return r->n ? r->lines[0].method : NULL;
}

static size_t interpreted(struct jvmproc *jp, uint64_t tagged, struct jvm_frame_line *out,
			  enum jvm_frame_result *res)
{
	const struct jvm_named *m = method_named(jp, CPROF_JAVA_METHOD(tagged));
	uint32_t bci = (uint32_t)CPROF_JAVA_BCI(tagged);

	if (!m) {
		*res = JVM_NAMED_UNREADABLE;
		return 0;
	}
	out[0] = (struct jvm_frame_line){
		.method = m,
		.line = bci == CPROF_JAVA_NO_BCI ? 0 : jvm_lines_find(m->lines, m->nlines, bci),
	};
	*res = JVM_NAMED_OK;
	return 1;
}

static size_t compiled(struct jvmproc *jp, uint64_t tagged, struct jvm_frame_line *out, size_t max,
		       enum jvm_frame_result *res)
{
	uint64_t pc = CPROF_JAVA_PC(tagged);
	struct jvm_scope sc[JVM_SCOPES_MAX];
	struct jvm_blob b;
	size_t k = 0;
	int ns;

	if (blob_at(jp, pc, &b)) {
		*res = JVM_NAMED_GONE;
		return 0;
	}
	if (!b.is_nmethod) {
		out[0] = (struct jvm_frame_line){ .method = stub_named(jp, &b) };
		*res = JVM_NAMED_STUB;
		return out[0].method ? 1 : 0;
	}
	/* another method compiled where the sampled one was */
	if (((uint32_t)b.compile_id & 0x7fff) != CPROF_JAVA_CID(tagged)) {
		*res = JVM_NAMED_GONE;
		return 0;
	}
	ns = jvm_scopes_at(&jp->layout, &jp->mem, &b, pc, sc, JVM_SCOPES_MAX);
	if (ns <= 0) {
		/* no debug info to be had: the compiled method itself */
		sc[0] = (struct jvm_scope){ .method = b.method, .bci = JVM_BCI_ENTRY };
		ns = 1;
	}
	/* innermost first; past @max, the outermost (the compiled method) is kept */
	for (int i = 0; i < ns && k < max; i++) {
		int idx = (k + 1 == max) ? ns - 1 : i;
		const struct jvm_named *m = method_named(jp, sc[idx].method);

		out[k++] = (struct jvm_frame_line){
			.method = m,
			.line = m && sc[idx].bci >= 0 ?
					jvm_lines_find(m->lines, m->nlines, (uint32_t)sc[idx].bci) : 0,
		};
		if (idx == ns - 1)
			break;
	}
	*res = out[0].method ? JVM_NAMED_OK : JVM_NAMED_UNREADABLE;
	return out[0].method ? k : 0;
}

/* Resolves @tagged into @r (at most JVM_FRAME_LINES lines). */
static void resolve(struct jvmproc *jp, uint64_t tagged, struct jvm_frame_rec *r)
{
	enum jvm_frame_result res = JVM_NAMED_UNREADABLE;
	size_t n;

	if (tagged & CPROF_JAVA_INTERP)
		n = interpreted(jp, tagged, r->lines, &res);
	else
		n = compiled(jp, tagged, r->lines, JVM_FRAME_LINES, &res);
	r->n = (uint8_t)n;
	r->res = (uint8_t)res;
}

const struct jvm_frame_rec *jvm_frame_lines(struct jvmproc *jp, uint64_t tagged)
{
	struct jvm_names *n = &jp->names;
	struct jvm_frame_rec *r, tmp;
	bool created;

	if (!(tagged & CPROF_JAVA_FRAME))
		return NULL;
	r = hmap_find(&n->frames, &tagged);
	if (r)
		return r;
	tmp.tagged = tagged;
	resolve(jp, tagged, &tmp);
	if (!room(n) || !(r = hmap_insert(&n->frames, &tagged, &created)))
		return NULL;
	*r = tmp;
	if (n->st)
		n->st->frames[tmp.res]++;
	return r;
}
