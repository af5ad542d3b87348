// SPDX-License-Identifier: MIT
/*
 * exitwatch: a process's start, the moment it entered the real-time class
 * and its exit, as the kernel tells them, for tests/e2e/test_overload.sh
 * and bench/overload.sh: an account of the agent's phases that does not
 * come from the agent.
 *
 * exitwatch PARENT [EXCEPT [TIMEOUT_S [CPU_PID...]]]: waits for PARENT (a shell) to
 * fork a child other than EXCEPT (looking every millisecond, so that a
 * shell held back by the load never has to say which: the test's pid
 * files would be written late), then until that child exits (a pidfd is
 * readable once it has, whether or not its parent has reaped it) looks
 * every millisecond at its scheduling policy (field 41 of its stat file)
 * and its command name, and prints
 *   pid N fork_ms N exec_ms N exec_wait_ms N raised_ms N raise_wait_ms N exit_ms N
 *   exec_cpu_ms N raise_cpu_ms N
 * fork_ms: its start (from /proc/PID/stat, to the clock tick); exec_ms:
 * when its command name was first seen changed (its exec), and
 * exec_wait_ms the time it had spent runnable but waiting for a CPU
 * before (its schedstat at the look before: at most a ms short); raised_ms
 * and raise_wait_ms the same for its policy first seen real-time; -1:
 * never seen; exit_ms: its exit; exec_cpu_ms and raise_cpu_ms the CPU
 * time it had run by its exec and by its raise (schedstat, to the us).  Times are Unix ms (CLOCK_REALTIME), to
 * compare with a profile's start.  Meant to run outside the load being
 * measured and in the real-time class (chrt), so that its readings are on
 * time: a user's shell among the load sees the exit seconds later.
 *
 * Meanwhile, every 50 ms, it prints the CPU time each CPU_PID has had
 * (utime + stime of the whole process, in clock ticks) as
 *   cpu MS PID TICKS
 * so that the CPU a process had over any span (a profile's) can be told,
 * not only over the whole run, whose other load may come and go.  With
 * PARENT 0 it only logs, until TIMEOUT_S or a signal (tests/e2e/test_cpus.sh).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double ms_of(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* CLOCK_REALTIME less CLOCK_BOOTTIME, to turn /proc's boot-time stamps into Unix ms. */
static double boot_to_unix(void)
{
	return ms_of(CLOCK_REALTIME) - ms_of(CLOCK_BOOTTIME);
}

/* The first child of @parent that is not @except, from its children file; 0 if none. */
static int new_child(int parent, int except)
{
	char path[80];
	FILE *f;
	int pid = 0, c;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", parent, parent);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (!pid && fscanf(f, "%d", &c) == 1)
		if (c != except && c != getpid())
			pid = c;
	fclose(f);
	return pid;
}

/* @pid's /proc/PID/stat after its command name (into @buf), or NULL. */
static const char *stat_fields(int pid, char *buf, size_t len)
{
	char path[64];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return NULL;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* the name, which the process chose, ends at the last ')' */
	return strrchr(buf, ')') ? strrchr(buf, ')') + 1 : NULL;
}

/* Fields 22 (starttime, ticks since boot) and 41 (policy) of /proc/PID/stat; 0 or -1. */
static int read_stat(int pid, unsigned long long *start, unsigned *policy)
{
	char buf[1024];
	const char *p = stat_fields(pid, buf, sizeof(buf));

	/* After the name: state is field 3, starttime 22, policy 41. */
	if (!p || sscanf(p, "%*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s"
			 " %*s %*s %*s %*s %llu %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s"
			 " %*s %*s %*s %*s %*s %*s %*s %u", start, policy) != 2)
		return -1;
	return 0;
}

/* The CPU time process @pid has had (utime + stime), clock ticks; -1 if gone. */
static long long cpu_ticks(int pid)
{
	char buf[1024];
	const char *p = stat_fields(pid, buf, sizeof(buf));
	unsigned long long ut, st;

	/* After the name: utime is field 14, stime 15. */
	if (!p || sscanf(p, "%*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %llu %llu", &ut, &st) != 2)
		return -1;
	return (long long)(ut + st);
}

/* One line for each of the @n processes @pids: "cpu MS PID TICKS". */
static void log_cpu(const int *pids, int n)
{
	double now = ms_of(CLOCK_REALTIME);

	for (int i = 0; i < n; i++)
		printf("cpu %.0f %d %lld\n", now, pids[i], cpu_ticks(pids[i]));
}

/* Its command name into @buf (NUL-terminated); "" if unreadable. */
static void read_comm(int pid, char *buf, size_t len)
{
	char path[64];
	FILE *f;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	f = fopen(path, "r");
	if (!f)
		return;
	if (!fgets(buf, (int)len, f))
		buf[0] = '\0';
	fclose(f);
}

/*
 * Its time on a CPU and its time spent runnable but waiting for one, ms
 * (fields 1 and 2 of schedstat); -1 if unknown.
 */
static void sched_ms(int pid, double *run_ms, double *wait_ms)
{
	char path[64];
	unsigned long long run, wait;
	FILE *f;
	int n = 0;

	*run_ms = *wait_ms = -1;
	snprintf(path, sizeof(path), "/proc/%d/schedstat", pid);
	f = fopen(path, "r");
	if (!f)
		return;
	n = fscanf(f, "%llu %llu", &run, &wait);
	fclose(f);
	if (n == 2) {
		*run_ms = run / 1e6;
		*wait_ms = wait / 1e6;
	}
}

int main(int argc, char **argv)
{
	double deadline = ms_of(CLOCK_MONOTONIC) + (argc > 3 ? atof(argv[3]) : 120) * 1e3;
	double raised = -1, raise_wait = -1, fork_ms = -1, exec_ms = -1, exec_wait = -1, wait_before;
	double exec_cpu = -1, raise_cpu = -1, run_before, next_log = 0;
	char comm0[32], comm[32];
	struct pollfd pfd = { .events = POLLIN };
	unsigned long long start;
	unsigned policy;
	int parent, except, pid, ncpu = argc > 4 ? argc - 4 : 0, cpu_pids[16];

	if (argc < 2 || ncpu > 16) {
		fprintf(stderr, "usage: exitwatch PARENT [EXCEPT [TIMEOUT_S [CPU_PID...]]] (16 at most)\n");
		return 2;
	}
	parent = atoi(argv[1]);
	except = argc > 2 ? atoi(argv[2]) : 0;
	for (int i = 0; i < ncpu; i++)
		cpu_pids[i] = atoi(argv[4 + i]);
	if (!parent) {
		/* a log only: each line whole when it is killed */
		setvbuf(stdout, NULL, _IOLBF, 0);
		while (ms_of(CLOCK_MONOTONIC) < deadline) {
			log_cpu(cpu_pids, ncpu);
			usleep(50000);
		}
		return 0;
	}
	while (!(pid = new_child(parent, except))) {
		if (ms_of(CLOCK_MONOTONIC) > deadline) {
			fprintf(stderr, "exitwatch: no new child of %d\n", parent);
			return 1;
		}
		usleep(1000);
	}
	pfd.fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pfd.fd < 0) {
		fprintf(stderr, "exitwatch: pidfd_open(%d): %s\n", pid, strerror(errno));
		return 1;
	}
	if (!read_stat(pid, &start, &policy))
		fork_ms = start * 1e3 / sysconf(_SC_CLK_TCK) + boot_to_unix();
	read_comm(pid, comm0, sizeof(comm0));
	sched_ms(pid, &run_before, &wait_before);
	for (;;) {
		int r = poll(&pfd, 1, 1);
		double run, w;

		sched_ms(pid, &run, &w);
		if (ncpu && ms_of(CLOCK_MONOTONIC) >= next_log) {
			log_cpu(cpu_pids, ncpu);
			next_log = ms_of(CLOCK_MONOTONIC) + 50;
		}
		if (r == 1)
			break;
		if (ms_of(CLOCK_MONOTONIC) > deadline) {
			fprintf(stderr, "exitwatch: %d did not exit in time\n", pid);
			return 1;
		}
		read_comm(pid, comm, sizeof(comm));
		if (exec_ms < 0 && comm[0] && strcmp(comm, comm0)) {
			exec_ms = ms_of(CLOCK_REALTIME);
			exec_wait = wait_before;
			exec_cpu = run_before;
		}
		wait_before = w;
		run_before = run;
		/* SCHED_FIFO (1) or SCHED_RR (2): the raise, seen within a ms. */
		if (raised < 0 && !read_stat(pid, &start, &policy) && (policy == 1 || policy == 2)) {
			raised = ms_of(CLOCK_REALTIME);
			raise_wait = w;
			raise_cpu = run;
		}
	}
	log_cpu(cpu_pids, ncpu);
	printf("pid %d fork_ms %.0f exec_ms %.0f exec_wait_ms %.0f raised_ms %.0f raise_wait_ms %.0f"
	       " exit_ms %.0f exec_cpu_ms %.3f raise_cpu_ms %.3f\n", pid, fork_ms, exec_ms,
	       exec_wait, raised, raise_wait, ms_of(CLOCK_REALTIME), exec_cpu, raise_cpu);
	return 0;
}
