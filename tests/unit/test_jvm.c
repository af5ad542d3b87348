// SPDX-License-Identifier: MIT
/*
 * The JVM read from outside, against the JVM's own word: each JDK found
 * here (Debian's 17, Temurin's 25) runs tests/workloads/java/Hot, and
 * what cprof-bpf reads from its memory is checked against what the JVM
 * says through jcmd (Compiler.codelist: every compiled method, its
 * address, compile id and name) and javap (the methods' line tables).
 * A JDK not installed is a skip naming it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "elf/elfobj.h"
#include "fs/procmaps.h"
#include "java/jvm.h"
#include "java/jvm_method.h"
#include "jvmlive.h"
#include "testlib.h"
#include "testutil.h"

#define CHECKS_PER_JDK 6
#define CODES_MAX 8192

static bool listed(const struct jvmlive_code *list, size_t n, const struct jvmlive_code *c)
{
	for (size_t i = 0; i < n; i++)
		if (list[i].id == c->id && list[i].blob == c->blob)
			return true;
	return false;
}

/* javap's LineNumberTable of Hot's method @name: pairs into @out, how many. */
static size_t javap_lines(const char *home, const char *classes, const char *name,
			  struct jvm_line *out, size_t max)
{
	char *cmd = fmt("%s/bin/javap -c -l -p -cp %s Hot 2>/dev/null", home, classes), line[512];
	FILE *f = popen(cmd, "r");
	bool in = false;
	size_t n = 0;

	while (f && fgets(line, sizeof(line), f)) {
		unsigned l, b;

		if (line[0] == ' ' && line[1] == ' ' && line[2] != ' ')
			in = strstr(line, name) != NULL;
		else if (in && n < max && sscanf(line, " line %u: %u", &l, &b) == 2)
			out[n++] = (struct jvm_line){ b, l };
	}
	if (f)
		pclose(f);
	return n;
}

/* The method's lines as javap gives them, pair for pair. */
static bool lines_match(const struct jvm_method *m, const struct jvm_line *want, size_t n)
{
	if (m->nlines != n || !n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (m->lines[i].bci != want[i].bci || m->lines[i].line != want[i].line)
			return false;
	return true;
}

static const struct jvmlive_code *by_name(const struct jvmlive_code *list, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(list[i].name, name))
			return &list[i];
	return NULL;
}

/* Checks 2-6 of a JVM read (@jp), its compiled methods @list (@n, and @n2 of @list2 after). */
static void check_reads(const struct jvmproc *jp, const char *home, const char *classes,
			const struct jvmlive_code *list, size_t n, const struct jvmlive_code *list2, size_t n2,
			unsigned major)
{
	const struct jvm_layout *l = &jp->layout;
	const struct jvm_field *f = jvm_structs_field(&jp->vm, "StubRoutines",
						      "_call_stub_return_address");
	struct jvm_method *m = calloc(1, sizeof(*m));
	struct jvm_blob b;
	uint64_t ret = 0;
	size_t stable = 0, found = 0, named = 0, lines_ok = 0;
	char miss[2048] = "", *name;
	int e = -1;

	if (f && !memsrc_read(&jp->mem, f->address, &ret, sizeof(ret)))
		e = jvm_blob_find(l, &jp->mem, &jp->code, ret, &b);
	name = fmt("JDK %u: the call stub's return address is in the blob StubRoutines", major);
	CHECK(!e && !strncmp(b.name, "StubRoutines", 12) && !b.is_nmethod, name,
	      "pc %#llx: %d, blob \"%s\"", (unsigned long long)ret, e, e ? "" : b.name);

	for (size_t i = 0; m && i < n; i++) {
		const struct jvmlive_code *c = &list[i];
		char full[1400];

		/* a method freed between the two lists may be anything now */
		if (!listed(list2, n2, c))
			continue;
		stable++;
		e = jvm_blob_find(l, &jp->mem, &jp->code, c->begin + (c->end - c->begin) / 2, &b);
		if (e || b.addr != c->blob || !b.is_nmethod || b.compile_id != c->id) {
			if (!miss[0])
				snprintf(miss, sizeof(miss), "%d %s at %#llx: %d, blob %#llx id %d \"%s\"",
					 c->id, c->name, (unsigned long long)c->blob, e,
					 (unsigned long long)b.addr, b.compile_id, b.name);
			continue;
		}
		found++;
		e = jvm_method_read(l, &jp->mem, b.method, m);
		snprintf(full, sizeof(full), "%s.%s%s", m->klass, m->name, m->sig);
		if (!e && !strcmp(full, c->name))
			named++;
		else if (getenv("JVM_DEBUG") || !strstr(miss, "named"))
			snprintf(miss + strlen(miss), sizeof(miss) - strlen(miss),
				 "; named \"%s\" (%d) for %s", e ? "" : full, e, c->name);
	}
	name = fmt("JDK %u: each compiled method jcmd lists is found at its address with its compile id",
		   major);
	CHECK(stable >= 20 && found == stable, name, "%zu of %zu (%zu listed): %s", found, stable, n,
	      miss);
	name = fmt("JDK %u: ... and named as jcmd names it", major);
	CHECK(stable >= 20 && named == stable, name, "%zu of %zu: %s", named, stable, miss);

	/* spinA's and spinB's lines against javap's LineNumberTable */
	miss[0] = 0;
	for (int k = 0; m && k < 2; k++) {
		const char *meth = k ? "spinB" : "spinA";
		char full[64], decl[64];
		struct jvm_line want[64];
		const struct jvmlive_code *c;
		size_t nw;

		snprintf(full, sizeof(full), "Hot.%s(J)J", meth);
		snprintf(decl, sizeof(decl), " %s(", meth);
		nw = javap_lines(home, classes, decl, want, 64);
		c = by_name(list, n, full);
		e = c ? jvm_blob_find(l, &jp->mem, &jp->code, c->begin, &b) : -ENOENT;
		if (!e)
			e = jvm_method_read(l, &jp->mem, b.method, m);
		if (!e && !strcmp(m->file, "Hot.java") && lines_match(m, want, nw))
			lines_ok++;
		else
			snprintf(miss + strlen(miss), sizeof(miss) - strlen(miss),
				 "%s: %d, file \"%s\", %zu pairs (javap %zu) ", meth, e, e ? "" : m->file,
				 m->nlines, nw);
	}
	name = fmt("JDK %u: Hot.spinA's and spinB's file and lines are javap's", major);
	CHECK(lines_ok == 2, name, "%s", miss);

	/* addresses that are no Method*: the blob itself, and the method's second word */
	{
		const struct jvmlive_code *c = by_name(list, n, "Hot.spinA(J)J");
		uint64_t meth = 0;

		if (c && !jvm_blob_find(l, &jp->mem, &jp->code, c->begin, &b))
			meth = b.method;
		name = fmt("JDK %u: an nmethod or a pointer into a Method is not read as a method", major);
		CHECK(meth && m && jvm_method_read(l, &jp->mem, c->blob, m) &&
			      jvm_method_read(l, &jp->mem, meth + 8, m) &&
			      !jvm_method_read(l, &jp->mem, meth, m),
		      name, "method %#llx", (unsigned long long)meth);
	}
	free(m);
}

static void check_jdk(unsigned major, const char *home, const char *classes)
{
	char java[PATH_MAX], err_name[96];
	struct jvmlive_code *list = calloc(CODES_MAX, sizeof(*list)), *list2 = calloc(CODES_MAX, sizeof(*list2));
	struct errbuf err = { "" };
	struct jvmproc *jp = NULL;
	size_t n = 0, n2 = 0;
	pid_t pid;
	int e;

	snprintf(java, sizeof(java), "%s/bin/java", home);
	if (!jvmlive_usable(major, home, classes, false, CHECKS_PER_JDK))
		goto out;
	pid = jvmlive_start_hot(java, classes, 120);
	e = pid > 0 ? jvmlive_find(pid, &jp, &err) : -ECHILD;
	if (!e) {
		n = jvmlive_codelist(home, pid, list, CODES_MAX);
		n2 = jvmlive_codelist(home, pid, list2, CODES_MAX);
	}
	snprintf(err_name, sizeof(err_name), "JDK %u: its JVM found, its tables and layout read", major);
	CHECK(!e && jp->layout.major == major, err_name, "%d: %s (major %u)", e, err.msg,
	      jp ? jp->layout.major : 0);
	if (!e)
		check_reads(jp, home, classes, list, n, list2, n2, major);
	else
		for (int i = 1; i < CHECKS_PER_JDK; i++)
			CHECK(0, fmt("JDK %u: check %d", major, i + 1), "no JVM read");
	jvmproc_free(jp);
	jvmlive_stop(pid);
out:
	free(list);
	free(list2);
}

int main(void)
{
	jvmlive_run(check_jdk, CHECKS_PER_JDK, 0);
	return T_EXIT();
}
