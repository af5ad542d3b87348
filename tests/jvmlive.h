/* SPDX-License-Identifier: MIT */
/*
 * Live JVMs for the Java reader's tests: the JDKs looked for, Hot
 * (tests/workloads/java) started on one and warmed up, and its JVM found
 * as the agent finds one (maps, objects, jvmproc_find).
 */
#ifndef CPROF_TESTS_JVMLIVE_H
#define CPROF_TESTS_JVMLIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "java/jvm.h"
#include "util/errbuf.h"

struct jvmlive_jdk {
	unsigned major;
	const char *home;
};

/* Debian's 17 and Temurin's 25, where installed. */
extern const struct jvmlive_jdk jvmlive_jdks[];
extern const size_t jvmlive_njdks;

/*
 * Plans @extra checks and @per_jdk for each JDK, then runs @check for each
 * with this build's folder of Hot's classes ($BUILD/workloads/java).
 */
void jvmlive_run(void (*check)(unsigned major, const char *home, const char *classes), int per_jdk,
		 int extra);

/*
 * Whether the JDK at @home can run Hot from @classes, with a jhsdb when
 * @sa: when it cannot, @checks skips are reported for it (a machine
 * without that JDK), each naming what is missing.
 */
bool jvmlive_usable(unsigned major, const char *home, const char *classes, bool sa, int checks);

/*
 * Starts @java on Hot (its classes in @classes) for @secs s: its pid, once
 * it said "ready" (its methods compiled), or -1 if it did not within 60 s.
 */
pid_t jvmlive_start_hot(const char *java, const char *classes, int secs);

/* Kills and reaps @pid, when > 0. */
void jvmlive_stop(pid_t pid);

/* One compiled method, as jcmd's Compiler.codelist lists it. */
struct jvmlive_code {
	int id, level, state;
	uint64_t blob, begin, end; /* the blob; its code */
	char name[512];            /* "Hot.spinA(J)J" */
};

/* jcmd's list of @pid's compiled methods into @out (@max): how many. */
size_t jvmlive_codelist(const char *home, pid_t pid, struct jvmlive_code *out, size_t max);

/*
 * Waits up to @secs s for jcmd to list @name compiled by C2 (level 4) and
 * in use: whether it did.  Tests that look for inlining need it: C2
 * compiles a loaded machine's Hot.work seconds after its "ready".
 */
bool jvmlive_wait_c2(const char *home, pid_t pid, const char *name, int secs);

/* One Java frame of the agent's "jstack -v". */
struct jvmlive_saframe {
	char name[256]; /* "Hot.work(long)" */
	int bci, line;  /* line: -1 when not printed */
	uint64_t pc, method;
	bool compiled;
};

/*
 * The Java frames of @pid's "main" thread, innermost first, as the JDK's
 * serviceability agent sees them ("jhsdb clhsdb", "jstack -v": each
 * frame's pc, Method* and bci; inlined frames share their pc): how many.
 */
size_t jvmlive_sa_frames(const char *home, pid_t pid, struct jvmlive_saframe *out, size_t max);

/*
 * The pc at which jvm_scopes_at finds the PcDesc the agent takes for @pc
 * in @b: the nearest at or before it (its getPCDescNearDbg), where the
 * VM's own rule (jvm_scopes_at's) takes the first at or after.  0 if
 * none: a pc before the method's first PcDesc (in a loop C2 left without
 * a safepoint), where the agent, passing over PcDescs without a scope
 * (the sentinel), takes the first one, as jvm_scopes_at does at @pc.
 */
uint64_t jvmlive_sa_pc(const struct jvmproc *jp, const struct jvm_blob *b, uint64_t pc);

/* The JVM of @pid, found as the agent finds it. */
int jvmlive_find(pid_t pid, struct jvmproc **jp, struct errbuf *err);

#endif
