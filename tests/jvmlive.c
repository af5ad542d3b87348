// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
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
#include "java/jvm_scopes.h"
#include "jvmlive.h"
#include "testlib.h"

const struct jvmlive_jdk jvmlive_jdks[] = {
	{ 17, "/usr/lib/jvm/java-17-openjdk-amd64" },
	{ 25, "/usr/lib/jvm/temurin-25-jdk-amd64" },
};
const size_t jvmlive_njdks = sizeof(jvmlive_jdks) / sizeof(jvmlive_jdks[0]);

void jvmlive_run(void (*check)(unsigned major, const char *home, const char *classes), int per_jdk,
		 int extra)
{
	const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
	char classes[512];

	snprintf(classes, sizeof(classes), "%s/workloads/java", build);
	T_PLAN(extra + per_jdk * (int)jvmlive_njdks);
	for (size_t i = 0; i < jvmlive_njdks; i++)
		check(jvmlive_jdks[i].major, jvmlive_jdks[i].home, classes);
}

bool jvmlive_usable(unsigned major, const char *home, const char *classes, bool sa, int checks)
{
	char java[512], jhsdb[512], hot[512], name[32];
	const char *missing = NULL;

	snprintf(java, sizeof(java), "%s/bin/java", home);
	snprintf(jhsdb, sizeof(jhsdb), "%s/bin/jhsdb", home);
	snprintf(hot, sizeof(hot), "%s/Hot.class", classes);
	if (access(java, X_OK))
		missing = java;
	else if (sa && access(jhsdb, X_OK))
		missing = jhsdb;
	else if (access(hot, R_OK))
		missing = hot;
	if (!missing)
		return true;
	snprintf(name, sizeof(name), "JDK %u", major);
	for (int i = 0; i < checks; i++)
		T_SKIP(name, "%s is not there", missing);
	return false;
}

void jvmlive_stop(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

pid_t jvmlive_start_hot(const char *java, const char *classes, int secs)
{
	int fd[2];
	pid_t pid;
	char buf[4096], arg[16];
	size_t got = 0;
	time_t until = time(NULL) + 60;

	if (pipe(fd))
		return -1;
	snprintf(arg, sizeof(arg), "%d", secs);
	pid = fork();
	if (pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		execl(java, java, "-cp", classes, "Hot", arg, (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	while (pid > 0 && time(NULL) < until && got < sizeof(buf) - 1) {
		struct pollfd p = { fd[0], POLLIN, 0 };
		ssize_t n;

		if (poll(&p, 1, 1000) <= 0)
			continue;
		n = read(fd[0], buf + got, sizeof(buf) - 1 - got);
		if (n <= 0)
			break;
		got += (size_t)n;
		buf[got] = 0;
		if (strstr(buf, "ready\n")) {
			close(fd[0]);
			return pid;
		}
	}
	close(fd[0]);
	jvmlive_stop(pid);
	return -1;
}

int jvmlive_find(pid_t pid, struct jvmproc **jp, struct errbuf *err)
{
	struct vma_list maps = { 0 };
	struct elfobj **objs;
	int e;

	if (procmaps_read("/proc", pid, &maps, err))
		return -ENOENT;
	objs = calloc(maps.n + 1, sizeof(*objs));
	for (size_t i = 0; objs && i < maps.n; i++) {
		const char *p = maps.v[i].path;
		int fd = p && strstr(p, "libjvm.so") ? open(p, O_RDONLY | O_CLOEXEC) : -1;

		/* the object keeps the descriptor */
		if (fd >= 0 && elfobj_open(&objs[i], fd, NULL))
			objs[i] = NULL;
	}
	e = objs ? jvmproc_find(jp, (uint32_t)pid, &maps, objs, err) : -ENOMEM;
	for (size_t i = 0; objs && i < maps.n; i++)
		elfobj_free(objs[i]);
	free(objs);
	procmaps_free(&maps);
	return e;
}

size_t jvmlive_codelist(const char *home, pid_t pid, struct jvmlive_code *out, size_t max)
{
	char cmd[600], line[1024];
	FILE *f;
	size_t n = 0;

	snprintf(cmd, sizeof(cmd), "%s/bin/jcmd %d Compiler.codelist 2>/dev/null", home, (int)pid);
	f = popen(cmd, "r");
	while (f && n < max && fgets(line, sizeof(line), f)) {
		struct jvmlive_code *c = &out[n];

		if (sscanf(line, "%d %d %d %511s [%lx, %lx - %lx]", &c->id, &c->level, &c->state,
			   c->name, &c->blob, &c->begin, &c->end) == 7)
			n++;
	}
	if (f)
		pclose(f);
	return n;
}

bool jvmlive_wait_c2(const char *home, pid_t pid, const char *name, int secs)
{
	struct jvmlive_code *list = calloc(4096, sizeof(*list));
	time_t until = time(NULL) + secs;
	bool found = false;

	while (list && !found && time(NULL) < until) {
		size_t n = jvmlive_codelist(home, pid, list, 4096);

		for (size_t i = 0; i < n && !found; i++)
			found = list[i].level == 4 && list[i].state == 0 && !strcmp(list[i].name, name);
		if (!found)
			sleep(1);
	}
	free(list);
	return found;
}

/* One line of "jstack -v": " - Hot.work(long) @bci=78, line=30, pc=0x..., Method*=0x... (...)". */
static bool sa_line(const char *line, struct jvmlive_saframe *f)
{
	const char *p;

	memset(f, 0, sizeof(*f));
	if (sscanf(line, " - %255s @bci=%d", f->name, &f->bci) != 2)
		return false;
	f->line = (p = strstr(line, ", line=")) ? atoi(p + 7) : -1;
	if (!(p = strstr(line, "pc=0x")) || sscanf(p + 3, "%lx", &f->pc) != 1)
		return false;
	if (!(p = strstr(line, "Method*=0x")) || sscanf(p + 8, "%lx", &f->method) != 1)
		return false;
	f->compiled = strstr(line, "(Compiled frame") != NULL;
	return true;
}

size_t jvmlive_sa_frames(const char *home, pid_t pid, struct jvmlive_saframe *out, size_t max)
{
	char cmd[600], line[1024];
	bool in = false;
	size_t n = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "echo 'jstack -v' | timeout 60 %s/bin/jhsdb clhsdb --pid %d 2>/dev/null",
		 home, (int)pid);
	f = popen(cmd, "r");
	while (f && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "\"main\"", 6))
			in = true;
		else if (in && (line[0] == '\n' || line[0] == '"'))
			in = false;
		else if (in && n < max && sa_line(line, &out[n]))
			n++;
	}
	if (f)
		pclose(f);
	return n;
}


uint64_t jvmlive_sa_pc(const struct jvmproc *jp, const struct jvm_blob *b, uint64_t pc)
{
	const size_t max = 65536;
	int32_t *offs = calloc(max, sizeof(*offs));
	int n = offs ? jvm_scopes_pc_offsets(&jp->layout, &jp->mem, b, offs, max) : -ENOMEM;
	int64_t off = (int64_t)(pc - b->code_begin), best = -1;

	for (int i = 0; i < n && (size_t)i < max; i++)
		if (offs[i] >= 0 && offs[i] <= off && offs[i] > best)
			best = offs[i];
	free(offs);
	return best < 0 ? 0 : b->code_begin + (uint64_t)best;
}
