// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cprof.h"
#include "java/jvm.h"
#include "java/jvm_names.h"
#include "java/jvm_scopes.h"

void jvm_names_init(struct jvm_names *n)
{
	memset(n, 0, sizeof(*n));
	hmap_init(&n->methods, sizeof(uint64_t), sizeof(struct jvm_named));
	hmap_init(&n->stubs, sizeof(uint64_t), sizeof(struct jvm_named));
}

static void named_free(struct jvm_named *m)
{
	/* one allocation holds the lines, then the strings (kept()) */
	free(m->nlines ? (void *)m->lines : (void *)m->function);
}

void jvm_names_free(struct jvm_names *n)
{
	struct jvm_named *m;
	size_t it = 0;

	while ((m = hmap_next(&n->methods, &it)))
		named_free(m);
	it = 0;
	while ((m = hmap_next(&n->stubs, &it)))
		named_free(m);
	hmap_free(&n->methods);
	hmap_free(&n->stubs);
}

/*
 * @m filled in one allocation: function, system name, file and lines.
 * -ENOSPC past the process's bounds, -ENOMEM.
 */
static int kept(struct jvm_names *n, struct jvm_named *m, const char *function,
		const char *system_name, const char *file, const struct jvm_line *lines,
		size_t nlines)
{
	size_t fl = strlen(function) + 1, sl = system_name ? strlen(system_name) + 1 : 0,
	       il = file ? strlen(file) + 1 : 0, ll = nlines * sizeof(*lines);
	size_t size = ll + fl + sl + il;
	char *p;

	if (n->bytes + size > JVM_NAMES_BYTES ||
	    n->methods.n + n->stubs.n >= JVM_NAMES_MAX)
		return -ENOSPC;
	p = malloc(size ? size : 1);
	if (!p)
		return -ENOMEM;
	/* lines first: aligned as malloc's block is */
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
	return 0;
}

/* Method @method of @jp, read once: NULL when unreadable or over the bounds. */
static const struct jvm_named *method_named(struct jvmproc *jp, uint64_t method)
{
	struct jvm_names *n = &jp->names;
	struct jvm_named *m = hmap_find(&n->methods, &method);
	struct jvm_method *jm;
	char function[JVM_CLASS_MAX + JVM_MNAME_MAX + 1];
	char *system_name;
	bool created;

	if (m)
		return m->function ? m : NULL;
	if (n->methods.n + n->stubs.n >= JVM_NAMES_MAX) {
		n->refused++;
		return NULL;
	}
	jm = malloc(sizeof(*jm));
	system_name = malloc(sizeof(function) + JVM_SIG_MAX);
	m = jm && system_name ? hmap_insert(&n->methods, &method, &created) : NULL;
	if (m) {
		memset(m, 0, sizeof(*m));
		/* a method that cannot be read stays unnamed: it is not read again */
		if (!jvm_method_read(&jp->layout, &jp->mem, method, jm)) {
			snprintf(function, sizeof(function), "%s.%s", jm->klass, jm->name);
			snprintf(system_name, sizeof(function) + JVM_SIG_MAX, "%s%s", function, jm->sig);
			if (kept(n, m, function, system_name, jm->file[0] ? jm->file : NULL, jm->lines,
				 jm->nlines))
				n->refused++;
		}
	}
	free(jm);
	free(system_name);
	return m && m->function ? m : NULL;
}

/* A blob of the JVM's own code (a stub, an adapter), named by it. */
static const struct jvm_named *stub_named(struct jvmproc *jp, const struct jvm_blob *b)
{
	struct jvm_names *n = &jp->names;
	struct jvm_named *m = hmap_find(&n->stubs, &b->addr);
	char name[JVM_BLOB_NAME_MAX + 8];
	bool created;

	if (m)
		return m->function ? m : NULL;
	m = hmap_insert(&n->stubs, &b->addr, &created);
	if (!m)
		return NULL;
	memset(m, 0, sizeof(*m));
	snprintf(name, sizeof(name), "[jvm] %s", b->name[0] ? b->name : "code");
	/* pprof takes "(1)" in "StubRoutines (1)" for a parameter list and drops it */
	for (char *c = name; *c; c++)
		if (*c == '(' || *c == ')')
			*c = ' ';
	if (kept(n, m, name, NULL, NULL, NULL, 0))
		n->refused++;
	return m->function ? m : NULL;
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

	if (jvm_blob_find(&jp->layout, &jp->mem, &jp->code, pc, &b)) {
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

size_t jvm_frame_lines(struct jvmproc *jp, uint64_t tagged, struct jvm_frame_line *out, size_t max,
		       enum jvm_frame_result *res)
{
	*res = JVM_NAMED_UNREADABLE;
	if (!max || !(tagged & CPROF_JAVA_FRAME))
		return 0;
	if (tagged & CPROF_JAVA_INTERP)
		return interpreted(jp, tagged, out, res);
	return compiled(jp, tagged, out, max, res);
}
