/* SPDX-License-Identifier: MIT */
/*
 * sched_attr.h: a thread made in its maker's scheduling class.
 *
 * A thread made by a real-time caller would otherwise start as a new task
 * in the normal class (SCHED_RESET_ON_FORK), queued behind the load for
 * seconds before it first ran (bench/RESULTS.md, "overload").
 */
#ifndef CPROF_SCHED_ATTR_H
#define CPROF_SCHED_ATTR_H

#include <pthread.h>
#include <sched.h>

/* Sets @attr to the calling thread's policy and priority; left to inherit when it cannot. */
static inline void sched_attr_like_caller(pthread_attr_t *attr)
{
	struct sched_param sp;
	int policy = sched_getscheduler(0);

	if (policy < 0 || sched_getparam(0, &sp))
		return;
	if (pthread_attr_setinheritsched(attr, PTHREAD_EXPLICIT_SCHED) ||
	    pthread_attr_setschedpolicy(attr, policy & ~SCHED_RESET_ON_FORK) ||
	    pthread_attr_setschedparam(attr, &sp))
		pthread_attr_setinheritsched(attr, PTHREAD_INHERIT_SCHED);
}

#endif
