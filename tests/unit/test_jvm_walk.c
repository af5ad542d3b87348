// SPDX-License-Identifier: MIT
/*
 * A Java thread's stack walked from outside through HotSpot's frames
 * (jvm_step, then jvm_scopes for a compiled frame's inlined methods),
 * against the JDK's own serviceability agent at the same instant: each
 * JDK found here runs tests/workloads/java/Hot (main -> stage -> work,
 * interpreted callers of C2's Hot.work with spinA and spinB inlined), is
 * stopped whole (SIGSTOP), its busiest thread's registers read (ptrace),
 * its Java frames walked from them, and then, still stopped, `jhsdb
 * clhsdb`'s "jstack -v" lists main's frames (Method* and bci each): the
 * two must agree frame for frame (the leaf compiled frame decoded at the
 * agent's PcDesc, the one before its pc, where the VM's rule and
 * jvm_scopes_at's take the one after).  A look whose thread is stopped outside
 * Java code (in System.nanoTime's clock read) walks nothing and is not
 * counted; a JDK not installed is a skip.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "java/jvm_method.h"
#include "java/jvm_scopes.h"
#include "java/jvm_walk.h"
#include "jvmlive.h"
#include "testlib.h"
#include "testutil.h"

#define CHECKS_PER_JDK 4
#define LOOKS 6
#define FRAMES_MAX 64

/* One Java frame: its Method* and bci. */
struct jframe {
	uint64_t method;
	int32_t bci;
	bool interpreted;
};

/* Thread @tid's stat line after its name (into @buf), or NULL. */
static const char *task_stat(pid_t pid, const char *tid, char *buf, size_t len)
{
	char path[300];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", (int)pid, tid);
	f = fopen(path, "r");
	n = f ? fread(buf, 1, len - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = 0;
	return strrchr(buf, ')') ? strrchr(buf, ')') + 1 : NULL;
}

/* The thread of @pid that has run most: Hot's main, spinning. */
static pid_t busiest_thread(pid_t pid)
{
	char path[64], buf[1024];
	DIR *d;
	struct dirent *e;
	pid_t best = 0;
	unsigned long long most = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	while (d && (e = readdir(d))) {
		const char *p = e->d_name[0] == '.' ? NULL : task_stat(pid, e->d_name, buf, sizeof(buf));
		unsigned long long ut, st;

		/* utime and stime: fields 14 and 15 */
		if (p && sscanf(p, "%*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %llu %llu", &ut, &st) == 2 &&
		    ut + st > most) {
			most = ut + st;
			best = atoi(e->d_name);
		}
	}
	if (d)
		closedir(d);
	return best;
}

/* Whether thread @tid of @pid is stopped ("T" in its stat), waiting up to a second. */
static bool stopped(pid_t pid, pid_t tid)
{
	char id[16], buf[1024];

	snprintf(id, sizeof(id), "%d", (int)tid);
	for (int i = 0; i < 1000; i++) {
		const char *p = task_stat(pid, id, buf, sizeof(buf));

		if (p && (p[1] == 'T' || p[1] == 't'))
			return true;
		usleep(1000);
	}
	return false;
}

/* The registers of stopped thread @tid (left stopped). */
static bool regs_of(pid_t tid, struct jvm_regs *r)
{
	struct user_regs_struct u;
	int st;
	bool ok;

	if (ptrace(PTRACE_SEIZE, tid, 0, 0) || ptrace(PTRACE_INTERRUPT, tid, 0, 0) ||
	    waitpid(tid, &st, __WALL) != tid)
		return false;
	ok = !ptrace(PTRACE_GETREGS, tid, 0, &u);
	ptrace(PTRACE_DETACH, tid, 0, 0);
	*r = (struct jvm_regs){ u.rip, u.rsp, u.rbp };
	return ok;
}

/* The bci of an interpreted frame's bcp: its offset in its method's bytecodes. */
static int32_t bci_of(const struct jvmproc *jp, uint64_t method, uint64_t bcp)
{
	uint64_t cm;

	if (memsrc_read(&jp->mem, method + jp->layout.method_const, &cm, sizeof(cm)) ||
	    bcp < cm + jp->layout.const_size)
		return -100;
	return (int32_t)(bcp - cm - jp->layout.const_size);
}

/*
 * Walks from @r: the Java frames into @out (@max), innermost first; how
 * many.  *@end: the step that ended it (-ENOENT: native code reached).
 */
static size_t walk(const struct jvmproc *jp, struct jvm_regs r, struct jframe *out, size_t max,
		   int *end)
{
	size_t n = 0;

	*end = 0;
	for (int steps = 0; steps < FRAMES_MAX && !*end; steps++) {
		struct jvm_frame f;
		struct jvm_scope sc[JVM_SCOPES_MAX];
		int k;

		*end = jvm_step(jp, &r, &f);
		if (*end)
			break;
		if (f.kind == JVM_FRAME_INTERPRETED && n < max) {
			out[n++] = (struct jframe){ f.method, bci_of(jp, f.method, f.bcp), true };
		} else if (f.kind == JVM_FRAME_COMPILED) {
			/* the leaf's pc is no return address: decoded as the agent decodes it */
			uint64_t q = steps ? 0 : jvmlive_sa_pc(jp, &f.blob, f.pc);

			k = jvm_scopes_at(&jp->layout, &jp->mem, &f.blob, q ? q : f.pc, sc,
					  JVM_SCOPES_MAX);
			for (int i = 0; i < k && n < max; i++)
				out[n++] = (struct jframe){ sc[i].method, sc[i].bci, false };
			if (k <= 0 && n < max)
				out[n++] = (struct jframe){ f.method, -100, false };
		}
	}
	return n;
}

/* Whether the walk @w (@n) is the agent's @sa (@m): methods and bcis, in order. */
static bool agree(const struct jframe *w, size_t n, const struct jvmlive_saframe *sa, size_t m,
		  char *why, size_t cap)
{
	if (n != m) {
		snprintf(why, cap, "%zu frames walked, the agent %zu", n, m);
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		if (w[i].method != sa[i].method || w[i].bci != sa[i].bci) {
			snprintf(why, cap, "frame %zu: %#lx@%d, the agent %s %#lx@%d", i,
				 (unsigned long)w[i].method, w[i].bci, sa[i].name,
				 (unsigned long)sa[i].method, sa[i].bci);
			return false;
		}
	}
	return true;
}

static void check_jdk(unsigned major, const char *home, const char *classes)
{
	char java[PATH_MAX], why[512] = "";
	struct jvmlive_saframe *sa = calloc(FRAMES_MAX, sizeof(*sa));
	struct jframe *w = calloc(FRAMES_MAX, sizeof(*w));
	struct jvm_method *jm = calloc(1, sizeof(*jm));
	struct errbuf err = { "" };
	struct jvmproc *jp = NULL;
	int looks = 0, agreed = 0, interp = 0, to_main = 0, native_end = 0;
	pid_t pid, tid = 0;
	int e;

	snprintf(java, sizeof(java), "%s/bin/java", home);
	if (!jvmlive_usable(major, home, classes, true, CHECKS_PER_JDK))
		goto out;
	pid = jvmlive_start_hot(java, classes, 90);
	e = pid > 0 ? jvmlive_find(pid, &jp, &err) : -ECHILD;
	if (!e) {
		jvmlive_wait_c2(home, pid, "Hot.work(J)V", 30);
		tid = busiest_thread(pid);
	}
	for (int s = 0; !e && tid && s < LOOKS; s++) {
		struct jvm_regs r;
		size_t n, m;
		int end;

		usleep(200000);
		kill(pid, SIGSTOP);
		if (!stopped(pid, tid) || !regs_of(tid, &r)) {
			kill(pid, SIGCONT);
			continue;
		}
		n = walk(jp, r, w, FRAMES_MAX, &end);
		m = n ? jvmlive_sa_frames(home, pid, sa, FRAMES_MAX) : 0;
		kill(pid, SIGCONT);
		if (!n)
			continue; /* stopped outside Java code */
		looks++;
		if (agree(w, n, sa, m, why, sizeof(why)))
			agreed++;
		native_end += end == -ENOENT;
		for (size_t i = 0; i < n; i++)
			interp += w[i].interpreted;
		if (!jvm_method_read(&jp->layout, &jp->mem, w[n - 1].method, jm) &&
		    !strcmp(jm->klass, "Hot") && !strcmp(jm->name, "main"))
			to_main++;
	}
	CHECK(!e && tid > 0, fmt("JDK %u: Hot's JVM read, its busiest thread found", major),
	      "%d: %s", e, err.msg);
	CHECK(looks >= 2 && agreed == looks,
	      fmt("JDK %u: its Java frames walked from its registers are the agent's, method and bci",
		  major),
	      "%d of %d looks in Java code agree: %s", agreed, looks, why);
	CHECK(looks >= 2 && to_main == looks && interp >= 2 * looks,
	      fmt("JDK %u: ... through the interpreted Hot.stage and Hot.main, to main", major),
	      "%d of %d reached main, %d interpreted frames", to_main, looks, interp);
	CHECK(looks >= 2 && native_end == looks,
	      fmt("JDK %u: ... and end at native code (the call stub's caller)", major),
	      "%d of %d", native_end, looks);
	jvmproc_free(jp);
	jvmlive_stop(pid);
out:
	free(jm);
	free(w);
	free(sa);
}

int main(void)
{
	jvmlive_run(check_jdk, CHECKS_PER_JDK, 0);
	return T_EXIT();
}
