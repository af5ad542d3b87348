// SPDX-License-Identifier: MIT
/*
 * rtfirst: the least a program can do before it raises itself into the
 * real-time class -- the floor under cprof-bpf's start on an overloaded
 * host, for bench/overload.sh.  Linked statically (no dynamic loader);
 * its first act is sched_setscheduler(SCHED_FIFO, 1); then it sleeps
 * 50 ms, so that a watcher looking every ms sees it raised, and exits.
 */
#include <sched.h>
#include <time.h>

int main(void)
{
	struct sched_param sp = { .sched_priority = 1 };
	struct timespec ts = { 0, 50 * 1000 * 1000 };

	if (sched_setscheduler(0, SCHED_FIFO, &sp))
		return 1;
	nanosleep(&ts, NULL);
	return 0;
}
