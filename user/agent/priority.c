// SPDX-License-Identifier: MIT
/*
 * priority.c: the agent's nice value, its bounded real-time steps, and the
 * age of the process for the report of a late start.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "agent/priority.h"
#include "fs/procstat.h"

/* The lowest real-time priority: above every normal task, below the kernel's own. */
#define RT_PRIORITY 1

/* Children start in the normal class, at nice 0 if ours is negative. */
static int set_class(int policy, int prio)
{
	struct sched_param sp = { .sched_priority = prio };

	return sched_setscheduler(0, policy | SCHED_RESET_ON_FORK, &sp) ? -errno : 0;
}

/*
 * The budget timer's signal: the step has used its CPU time, back to the
 * normal class (sched_setscheduler keeps the nice value).  A system call
 * only, so safe in a handler; the agent's work goes on where it was.
 */
static void on_budget_spent(int sig)
{
	int saved = errno;

	(void)sig;
	set_class(SCHED_OTHER, 0);
	errno = saved;
}

static int make_timer(struct priority *p, struct errbuf *err)
{
	struct sigaction sa = { .sa_handler = on_budget_spent, .sa_flags = SA_RESTART };
	struct sigevent sev = {
		.sigev_notify = SIGEV_THREAD_ID,
		.sigev_signo = SIGRTMIN,
	};

	sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGRTMIN, &sa, NULL) ||
	    timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &p->budget))
		return errf(err, -errno, "no CPU-time timer to bound real-time steps: %s",
			    strerror(errno));
	return 0;
}

/* The real-time class works here: tried once, so that a failure is told now, not at each step. */
static int try_class(void)
{
	int ret = set_class(SCHED_FIFO, RT_PRIORITY);

	return ret ? ret : set_class(SCHED_OTHER, 0);
}

/* A real-time step of @budget_ms: 0, or why the class could not be had (the timer then off). */
static int begin_step(struct priority *p, unsigned int budget_ms)
{
	struct itimerspec its = {
		.it_value = { budget_ms / 1000, (long)(budget_ms % 1000) * 1000000L },
	}, off = { 0 };
	int ret;

	/* The timer first: the agent is never in the real-time class unbounded. */
	if (!budget_ms)
		return 0;
	if (timer_settime(p->budget, 0, &its, NULL))
		return -errno;
	ret = set_class(SCHED_FIFO, RT_PRIORITY);
	if (ret)
		timer_settime(p->budget, 0, &off, NULL);
	return ret;
}

int priority_raise(struct priority *p, unsigned int first_ms, struct errbuf *err)
{
	int timer, class = 0;

	*p = (struct priority){ 0 };
	/*
	 * The real-time class first, its first step begun at once: at nice -20
	 * alone, among a load of busy threads, a preemption between the two
	 * calls cost up to a second of waiting.  The timer before the class,
	 * so that the agent is never real-time unbounded.
	 */
	timer = make_timer(p, err);
	if (!timer) {
		/* (no first step: the class only tried, so that a failure is told now) */
		class = first_ms ? begin_step(p, first_ms) : try_class();
		if (class)
			timer_delete(p->budget);
		p->rt = !class;
	}
	if (setpriority(PRIO_PROCESS, 0, PRIORITY_NICE))
		return errf(err, -errno, "cannot raise its priority to nice %d (%s): it may start"
			    " late and sample less on a busy host; needs CAP_SYS_NICE",
			    PRIORITY_NICE, strerror(errno));
	if (class)
		return errf(err, class, "cannot use the real-time class (%s): runs at nice %d only",
			    strerror(-class), PRIORITY_NICE);
	return timer;
}

int priority_thread(struct priority *t, const struct priority *agent)
{
	struct errbuf err;
	sigset_t budget;
	int ret;

	*t = (struct priority){ 0 };
	if (!agent->rt)
		return 0;
	ret = try_class();
	if (ret)
		return ret;
	/* The handler is the process's (priority_raise()); the signal comes to this thread. */
	sigemptyset(&budget);
	sigaddset(&budget, SIGRTMIN);
	ret = -pthread_sigmask(SIG_UNBLOCK, &budget, NULL);
	if (ret)
		return ret;
	ret = make_timer(t, &err);
	if (ret)
		return ret;
	t->rt = true;
	return 0;
}

void priority_step(struct priority *p, unsigned int budget_ms)
{
	if (p->rt)
		begin_step(p, budget_ms);
}

void priority_normal(struct priority *p)
{
	struct itimerspec off = { 0 };

	if (!p->rt)
		return;
	set_class(SCHED_OTHER, 0);
	timer_settime(p->budget, 0, &off, NULL);
}

void priority_release(struct priority *p)
{
	if (!p->rt)
		return;
	timer_delete(p->budget);
	p->rt = false;
}

void priority_free(struct priority *p)
{
	priority_normal(p);
	priority_release(p);
}

/* Our nice value, or 0 if it cannot be read. */
static int own_nice(void)
{
	int nice;

	errno = 0;
	nice = getpriority(PRIO_PROCESS, 0);
	return nice == -1 && errno ? 0 : nice;
}

void priority_child_started(pid_t child)
{
	struct sched_param sp = { 0 };
	int policy = sched_getscheduler(0);

	setpriority(PRIO_PROCESS, (id_t)child, own_nice());
	if (policy >= 0 && (policy & ~SCHED_RESET_ON_FORK) == SCHED_FIFO && !sched_getparam(0, &sp))
		sched_setscheduler(child, SCHED_FIFO | SCHED_RESET_ON_FORK, &sp);
}

void priority_child_ready(pid_t child)
{
	struct sched_param sp = { 0 };
	char path[64], val[16];
	int nice = own_nice(), fd, len;

	sched_setscheduler(child, SCHED_OTHER | SCHED_RESET_ON_FORK, &sp);
	setpriority(PRIO_PROCESS, (id_t)child, nice);
	if (getsid(child) == getsid(0) || getsid(child) < 0)
		return;
	/* Absent without CONFIG_SCHED_AUTOGROUP; harmless when autogroup is off. */
	snprintf(path, sizeof(path), "/proc/%d/autogroup", (int)child);
	len = snprintf(val, sizeof(val), "%d", nice);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (write(fd, val, (size_t)len) < 0) {
		/* nothing to do: the reader keeps its autogroup's default weight */
	}
	close(fd);
}

uint64_t priority_now_ns(void)
{
	struct timespec now;

	if (clock_gettime(CLOCK_BOOTTIME, &now))
		return 0;
	return (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
}

uint64_t priority_launch_ns(void)
{
	uint64_t start;

	return procstat_start_ns(AT_FDCWD, "/proc/self/stat", &start) ? 0 : start;
}

int64_t priority_since_launch_ms(uint64_t launch_ns, uint64_t ns)
{
	if (!launch_ns || !ns)
		return -1;
	return ((int64_t)ns - (int64_t)launch_ns) / 1000000;
}

bool priority_wanted(int argc, char *const *argv)
{
	static const char flag[] = "--no-priority-boost";
	/* The shortest prefix getopt_long takes for it: "--no-p" is also --no-python's. */
	const size_t shortest = sizeof("--no-pr") - 1;

	for (int i = 1; i < argc && argv[i]; i++) {
		size_t n = strlen(argv[i]);

		if (!strcmp(argv[i], "--"))
			break;
		if (n >= shortest && n < sizeof(flag) && !strncmp(argv[i], flag, n))
			return false;
	}
	return true;
}
