// SPDX-License-Identifier: MIT
/*
 * priority: real-time steps end at their CPU budget however the agent
 * loops, children never inherit the class, helpers get the agent's nice,
 * a waiting thread gets steps of its own, --no-priority-boost is seen
 * before parsing, and the launch is read.  The steps need CAP_SYS_NICE
 * (root): skipped on a machine without it, failed when it is there.
 */
#include <errno.h>
#include <linux/capability.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent/priority.h"
#include "testlib.h"

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int policy(pid_t pid)
{
	int p = sched_getscheduler(pid);

	return p < 0 ? p : p & ~SCHED_RESET_ON_FORK;
}

/* Spins for @ms of CPU, as a looping agent would; the class it ends in. */
static int spin_cpu(double ms)
{
	double end = cpu_ms() + ms;
	volatile unsigned long sink = 0;

	while (cpu_ms() < end)
		for (int i = 0; i < 1000; i++)
			sink += (unsigned long)i;
	return policy(0);
}

/* In a child: its class and nice, as "policy nice" in one int (policy * 100 + 50 + nice). */
static int child_sched(void)
{
	pid_t pid = fork();
	int status;

	if (pid == 0)
		_exit(policy(0) * 100 + 50 + getpriority(PRIO_PROCESS, 0));
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* Whether this process may raise priorities at all (CAP_SYS_NICE). */
static bool may_nice(void)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2] = { 0 };

	return !syscall(SYS_capget, &hdr, d) && (d[0].effective & (1u << CAP_SYS_NICE));
}

/* A thread of the agent that waits: its own steps, put back when it loops. */
struct waiter {
	const struct priority *agent;
	int ret;
	int in_step, after_loop, after_next; /* its class at each point */
};

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;
	struct priority t;

	w->ret = priority_thread(&t, w->agent);
	priority_step(&t, PRIORITY_WAIT_MS);
	w->in_step = policy(0);
	w->after_loop = spin_cpu(PRIORITY_WAIT_MS + 60);
	priority_step(&t, PRIORITY_WAIT_MS);
	w->after_next = policy(0);
	priority_release(&t);
	return NULL;
}

static void check_wanted(void)
{
	char *plain[] = { "cprof-bpf", "-d", "5", NULL };
	char *no[] = { "cprof-bpf", "-d", "5", "--no-priority-boost", NULL };
	char *prefix[] = { "cprof-bpf", "--no-pri", NULL };
	char *python[] = { "cprof-bpf", "--no-python", "--no-p", NULL };
	char *after[] = { "cprof-bpf", "--", "--no-priority-boost", NULL };

	CHECK(priority_wanted(3, plain), "priority_wanted: by default", "false");
	CHECK(!priority_wanted(4, no), "priority_wanted: not with --no-priority-boost", "true");
	CHECK(!priority_wanted(2, prefix), "priority_wanted: not with a prefix getopt takes for it",
	      "true");
	CHECK(priority_wanted(3, python), "priority_wanted: --no-python and --no-p are not it",
	      "false");
	CHECK(priority_wanted(3, after), "priority_wanted: an argument after -- is not an option",
	      "false");
}

int main(void)
{
	struct priority p;
	struct errbuf err = { "" };
	uint64_t launch = priority_launch_ns(), now = priority_now_ns();
	int64_t age = priority_since_launch_ms(launch, now);

	T_PLAN(24);
	CHECK(launch && age >= 0 && age < 60000, "launch read from /proc/self/stat",
	      "launch %llu ns, age %lld ms", (unsigned long long)launch, (long long)age);
	CHECK(priority_since_launch_ms(0, now) == -1, "an unknown launch: -1", "not -1");
	check_wanted();
	if (!may_nice()) {
		T_SKIP("real-time steps", "no CAP_SYS_NICE on this machine");
		return T_EXIT();
	}
	CHECK(priority_raise(&p, 200, &err) == 0, "priority_raise with CAP_SYS_NICE", "%s", err.msg);
	/* Raised into its first step: no moment at nice -20 alone before it. */
	CHECK(getpriority(PRIO_PROCESS, 0) == PRIORITY_NICE && policy(0) == SCHED_FIFO,
	      "raised: nice -20, in the real-time class from the raise on", "nice %d, policy %d",
	      getpriority(PRIO_PROCESS, 0), policy(0));
	priority_normal(&p);
	CHECK(policy(0) == SCHED_OTHER, "raised: normal class between steps", "policy %d",
	      policy(0));

	priority_step(&p, 200);
	CHECK(policy(0) == SCHED_FIFO, "a step runs in the real-time class", "policy %d",
	      policy(0));
	CHECK(child_sched() == SCHED_OTHER * 100 + 50, "a child forked in a step: normal class, nice 0",
	      "policy*100+50+nice = %d", child_sched());
	CHECK(spin_cpu(20) == SCHED_FIFO, "within its budget, still real-time", "policy %d",
	      policy(0));
	priority_normal(&p);
	CHECK(policy(0) == SCHED_OTHER && getpriority(PRIO_PROCESS, 0) == PRIORITY_NICE,
	      "priority_normal ends the step, keeps nice -20", "policy %d nice %d", policy(0),
	      getpriority(PRIO_PROCESS, 0));

	/* A looping agent: the timer puts it back, though it never blocks. */
	priority_step(&p, 50);
	CHECK(spin_cpu(120) == SCHED_OTHER && getpriority(PRIO_PROCESS, 0) == PRIORITY_NICE,
	      "a step that loops past its budget is put back at nice -20", "policy %d nice %d",
	      policy(0), getpriority(PRIO_PROCESS, 0));
	priority_step(&p, 50);
	CHECK(policy(0) == SCHED_FIFO, "the next step is real-time again", "policy %d", policy(0));

	/* A helper: real-time while it starts, then our nice only. */
	{
		int fds[2];
		pid_t pid;
		char c = 0;

		if (pipe(fds))
			return 1;
		pid = fork();
		if (pid == 0) {
			close(fds[1]);
			if (read(fds[0], &c, 1) < 0)
				_exit(1);
			_exit(0);
		}
		close(fds[0]);
		priority_child_started(pid);
		CHECK(policy(pid) == SCHED_FIFO && getpriority(PRIO_PROCESS, pid) == PRIORITY_NICE,
		      "a helper starts at our priority", "policy %d nice %d", policy(pid),
		      getpriority(PRIO_PROCESS, pid));
		priority_child_ready(pid);
		CHECK(policy(pid) == SCHED_OTHER && getpriority(PRIO_PROCESS, pid) == PRIORITY_NICE,
		      "a ready helper: nice -20, never real-time", "policy %d nice %d",
		      policy(pid), getpriority(PRIO_PROCESS, pid));
		if (write(fds[1], &c, 1) < 0)
			return 1;
		close(fds[1]);
		waitpid(pid, NULL, 0);
	}
	/* A waiting thread: steps of its own, bounded by its own CPU clock. */
	{
		struct waiter w = { .agent = &p, .ret = -1 };
		pthread_t th;

		priority_normal(&p);
		if (pthread_create(&th, NULL, waiter_main, &w) || pthread_join(th, NULL))
			return 1;
		CHECK(w.ret == 0 && w.in_step == SCHED_FIFO, "a waiting thread's step is real-time",
		      "ret %d policy %d", w.ret, w.in_step);
		CHECK(w.after_loop == SCHED_OTHER, "... put back when it loops past its own budget",
		      "policy %d", w.after_loop);
		CHECK(w.after_next == SCHED_FIFO, "... and real-time again at its next step",
		      "policy %d", w.after_next);
		CHECK(policy(0) == SCHED_OTHER, "the agent's class is its own", "policy %d",
		      policy(0));
	}
	priority_free(&p);
	CHECK(policy(0) == SCHED_OTHER, "priority_free: normal class", "policy %d", policy(0));
	/* No first step: the class tried and left, steps possible. */
	CHECK(priority_raise(&p, 0, &err) == 0 && policy(0) == SCHED_OTHER && p.rt,
	      "priority_raise without a first step: normal class, steps possible", "policy %d, rt %d",
	      policy(0), p.rt);
	priority_free(&p);
	return T_EXIT();
}
