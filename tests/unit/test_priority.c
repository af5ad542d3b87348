// SPDX-License-Identifier: MIT
/*
 * priority: real-time steps end at their CPU budget however the agent
 * loops, children never inherit the class, helpers get the agent's nice,
 * and the launch age is read.  Needs CAP_SYS_NICE (root); skipped without.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "priority.h"
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

int main(void)
{
	struct priority p;
	struct errbuf err = { "" };
	int64_t age = priority_launch_age_ms();

	CHECK(age >= 0 && age < 60000, "launch age read from /proc/self/stat",
	      "age %lld ms", (long long)age);
	if (priority_raise(&p, &err)) {
		T_SKIP("real-time steps", "%s", err.msg);
		return T_EXIT();
	}
	CHECK(getpriority(PRIO_PROCESS, 0) == PRIORITY_NICE && policy(0) == SCHED_OTHER,
	      "raised: nice -20, normal class between steps", "nice %d, policy %d",
	      getpriority(PRIO_PROCESS, 0), policy(0));

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
	priority_free(&p);
	CHECK(policy(0) == SCHED_OTHER, "priority_free: normal class", "policy %d", policy(0));
	return T_EXIT();
}
