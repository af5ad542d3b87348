// SPDX-License-Identifier: MIT
/*
 * procstat: starttime read after the command name's last ')', whatever
 * the name holds; a malformed or truncated line is refused.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fs/procstat.h"
#include "testlib.h"

/* procstat_start_ticks() over @line, through a pipe. */
static int parse(const char *line, unsigned long long *ticks)
{
	int fds[2], ret;

	if (pipe(fds))
		return -2;
	ret = write(fds[1], line, strlen(line)) < 0 ? -2 : 0;
	close(fds[1]);
	if (!ret)
		ret = procstat_start_ticks(fds[0], ticks);
	close(fds[0]);
	return ret;
}

int main(void)
{
	unsigned long long t = 0;
	uint64_t t_ns = 0;
	const char *fields = "S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 4242 99 100\n";
	char line[256];
	int ret;

	T_PLAN(11);
	snprintf(line, sizeof(line), "123 (a) 1 2 3 4 5 6) %s", fields);
	ret = parse(line, &t);
	CHECK(ret == 0 && t == 4242, "procstat: starttime after a name holding ') 1 2 ...'",
	      "ret %d ticks %llu", ret, t);
	snprintf(line, sizeof(line), "123 (plain) %s", fields);
	ret = parse(line, &t);
	CHECK(ret == 0 && t == 4242, "procstat: starttime of a plain name", "ret %d ticks %llu", ret,
	      t);
	ret = parse("123 (cut) S 1 2 3\n", &t);
	CHECK(ret == -1, "procstat: a truncated line refused", "ret %d", ret);
	ret = parse("123 no name at all 1 2 3\n", &t);
	CHECK(ret == -1, "procstat: a line without ')' refused", "ret %d", ret);

	/* In ns, from a stat file in a directory, as proctab reads /proc/PID/stat. */
	{
		char dir[] = "/tmp/procstat.XXXXXX", path[64];
		uint64_t ns = 0;
		long hz = sysconf(_SC_CLK_TCK);
		FILE *f;
		int d;

		if (!mkdtemp(dir))
			return 1;
		snprintf(path, sizeof(path), "%s/stat", dir);
		f = fopen(path, "w");
		if (!f)
			return 1;
		fprintf(f, "123 (x) %s", fields);
		fclose(f);
		d = open(dir, O_RDONLY | O_DIRECTORY);
		ret = procstat_start_ns(d, "stat", &ns);
		CHECK(ret == 0 && ns == 4242ULL * 1000000000ULL / (unsigned long)hz,
		      "procstat: the start in ns, the ticks scaled by the clock's rate",
		      "ret %d ns %llu hz %ld", ret, (unsigned long long)ns, hz);
		ret = procstat_start_ns(d, "nostat", &ns);
		CHECK(ret == -1, "procstat: no stat file: -1", "ret %d", ret);
		close(d);
		unlink(path);
		rmdir(dir);
	}
	/* Independently of the parser: our own start, against the clock it counts in. */
	{
		struct timespec now;
		uint64_t now_ns;

		ret = procstat_start_ns(AT_FDCWD, "/proc/self/stat", &t_ns);
		clock_gettime(CLOCK_BOOTTIME, &now);
		now_ns = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
		/* The test started moments ago: within 60 s, and never in the future. */
		CHECK(ret == 0 && t_ns <= now_ns && now_ns - t_ns < 60000000000ull,
		      "procstat: the test's own start, moments before now", "ret %d start %llu now %llu",
		      ret, (unsigned long long)t_ns, (unsigned long long)now_ns);
	}
	/* schedstat: a file of the kernel's format, then our own (CPU grows as we spin). */
	{
		char dir[] = "/tmp/cprof-schedstat-XXXXXX", path[64];
		uint64_t cpu = 0, wait = 0, cpu2 = 0, wait2 = 0;
		volatile unsigned long sink = 0;
		FILE *f;
		int d;

		if (!mkdtemp(dir))
			return 1;
		snprintf(path, sizeof(path), "%s/schedstat", dir);
		f = fopen(path, "w");
		if (!f)
			return 1;
		fprintf(f, "123456789 987654321 42\n");
		fclose(f);
		d = open(dir, O_RDONLY | O_DIRECTORY);
		ret = procstat_sched_ns(d, "schedstat", &cpu, &wait);
		CHECK(ret == 0 && cpu == 123456789 && wait == 987654321,
		      "procstat: schedstat's CPU and run-queue wait", "ret %d cpu %llu wait %llu", ret,
		      (unsigned long long)cpu, (unsigned long long)wait);
		f = fopen(path, "w");
		fprintf(f, "garbage\n");
		fclose(f);
		CHECK(procstat_sched_ns(d, "schedstat", &cpu, &wait) == -1,
		      "procstat: a malformed schedstat: -1", "not -1");
		CHECK(procstat_sched_ns(d, "none", &cpu, &wait) == -1, "procstat: no schedstat: -1",
		      "not -1");
		close(d);
		unlink(path);
		rmdir(dir);
		ret = procstat_sched_ns(AT_FDCWD, "/proc/self/schedstat", &cpu, &wait);
		for (unsigned long i = 0; i < 20000000; i++)
			sink += i;
		ret |= procstat_sched_ns(AT_FDCWD, "/proc/self/schedstat", &cpu2, &wait2);
		CHECK(ret == 0 && cpu2 > cpu && wait2 >= wait,
		      "procstat: our own schedstat, its CPU time grown by a loop",
		      "ret %d cpu %llu -> %llu", ret, (unsigned long long)cpu, (unsigned long long)cpu2);
	}
	return T_EXIT();
}
