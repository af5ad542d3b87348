/* SPDX-License-Identifier: MIT */
/*
 * cpulist: sets of CPUs written as the kernel writes them ("0-3,5", as in
 * /sys/devices/system/cpu/online and taskset -c): --cpu's argument, the
 * host's online CPUs and the summary's list of the CPUs sampled.
 */
#ifndef CPROF_CPULIST_H
#define CPROF_CPULIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/errbuf.h"

/* CPUs a set can hold: 0 to CPULIST_MAX - 1, 512 bytes a set. */
#define CPULIST_MAX 4096

struct cpulist {
	uint64_t bits[CPULIST_MAX / 64];
};

/*
 * Parses @s, items separated by ',', each a CPU ("2") or a range ("1-3"),
 * into @out (duplicates are fine).  With @online, every CPU named must be
 * in it.  An empty item, junk, a range whose end is below its start or a
 * CPU not online (or beyond CPULIST_MAX) gives -EINVAL and one line in
 * @err naming the item.
 */
int cpulist_parse(const char *s, const struct cpulist *online, struct cpulist *out,
		  struct errbuf *err);

/* The host's online CPUs, from sysfs: 0, or a negative errno and a line in @err. */
int cpulist_online(struct cpulist *out, struct errbuf *err);

void cpulist_set(struct cpulist *l, int cpu);
bool cpulist_has(const struct cpulist *l, int cpu);
int cpulist_count(const struct cpulist *l);

/*
 * Writes @l as "0-3,5" into @buf (NUL-terminated); one that does not fit
 * ends in "..." .  Returns the length the whole list would take, as
 * snprintf does.
 */
size_t cpulist_format(const struct cpulist *l, char *buf, size_t len);

#endif
