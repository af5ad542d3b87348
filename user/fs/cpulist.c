// SPDX-License-Identifier: MIT
/*
 * cpulist.c: CPU sets and their "0-3,5" lists (cpulist.h).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs/cpulist.h"
#include "fs/rootfs.h"

#define ONLINE_PATH "/sys/devices/system/cpu/online"

void cpulist_set(struct cpulist *l, int cpu)
{
	if (cpu >= 0 && cpu < CPULIST_MAX)
		l->bits[cpu / 64] |= 1ULL << (cpu % 64);
}

bool cpulist_has(const struct cpulist *l, int cpu)
{
	return cpu >= 0 && cpu < CPULIST_MAX && (l->bits[cpu / 64] >> (cpu % 64) & 1);
}

int cpulist_count(const struct cpulist *l)
{
	int n = 0;

	for (size_t i = 0; i < sizeof(l->bits) / sizeof(l->bits[0]); i++)
		n += __builtin_popcountll(l->bits[i]);
	return n;
}

/* A number at *@p, digits only: 0 and *@p moved past it, or -EINVAL (none, or too big). */
static int parse_cpu(const char **p, unsigned long *v)
{
	char *end;

	if (!isdigit((unsigned char)**p))
		return -EINVAL;
	errno = 0;
	*v = strtoul(*p, &end, 10);
	if (errno)
		return -EINVAL;
	*p = end;
	return 0;
}

/* One item, @len bytes at @item: a CPU or a range. */
static int parse_item(const char *item, size_t len, const struct cpulist *online,
		      struct cpulist *out, struct errbuf *err)
{
	char buf[64];
	const char *p = buf;
	unsigned long lo, hi;

	if (!len)
		return -EINVAL; /* the caller names the whole list */
	if (len >= sizeof(buf))
		return errf(err, -EINVAL, "'%.*s...' is not a CPU number or range", 16, item);
	memcpy(buf, item, len);
	buf[len] = '\0';
	if (parse_cpu(&p, &lo))
		goto junk;
	hi = lo;
	if (*p == '-') {
		p++;
		if (parse_cpu(&p, &hi))
			goto junk;
	}
	if (*p)
		goto junk;
	if (hi < lo)
		return errf(err, -EINVAL, "'%s' is not a range: %lu is below %lu", buf, hi, lo);
	for (unsigned long cpu = lo; cpu <= hi; cpu++) {
		if (cpu >= CPULIST_MAX || (online && !cpulist_has(online, (int)cpu))) {
			char ol[64];

			if (!online)
				return errf(err, -EINVAL, "'%s': CPU %lu is beyond %d", buf, cpu,
					    CPULIST_MAX - 1);
			cpulist_format(online, ol, sizeof(ol));
			return errf(err, -EINVAL, "'%s': CPU %lu is not online (online: %s)", buf,
				    cpu, ol);
		}
		cpulist_set(out, (int)cpu);
	}
	return 0;
junk:
	return errf(err, -EINVAL, "'%s' is not a CPU number or range (like 0, 0,2 or 1-3,5)",
		    buf);
}

int cpulist_parse(const char *s, const struct cpulist *online, struct cpulist *out,
		  struct errbuf *err)
{
	const char *item = s;

	memset(out, 0, sizeof(*out));
	for (;;) {
		size_t len = strcspn(item, ",");
		int ret = parse_item(item, len, online, out, err);

		if (ret == -EINVAL && !len)
			return errf(err, ret, "empty item in '%s'", s);
		if (ret)
			return ret;
		if (!item[len])
			return 0;
		item += len + 1;
	}
}

int cpulist_online(struct cpulist *out, struct errbuf *err)
{
	char line[4096];
	FILE *f = rootfs_fopen_host(ONLINE_PATH);
	int ret;

	if (!f)
		return errf(err, -errno, "%s: %s", ONLINE_PATH, strerror(errno));
	if (!fgets(line, sizeof(line), f)) {
		fclose(f);
		return errf(err, -EIO, "%s: empty", ONLINE_PATH);
	}
	fclose(f);
	line[strcspn(line, "\n")] = '\0';
	ret = cpulist_parse(line, NULL, out, err);
	return ret ? errf_prefix(err, ret, ONLINE_PATH) : 0;
}

size_t cpulist_format(const struct cpulist *l, char *buf, size_t len)
{
	size_t n = 0, used = 0; /* the whole list's length; what is in @buf */
	bool cut = false;

	if (len)
		buf[0] = '\0';
	for (int cpu = 0; cpu < CPULIST_MAX; cpu++) {
		int hi = cpu, k;
		char item[32];

		if (!cpulist_has(l, cpu))
			continue;
		while (cpulist_has(l, hi + 1))
			hi++;
		if (hi == cpu)
			k = snprintf(item, sizeof(item), "%s%d", n ? "," : "", cpu);
		else
			k = snprintf(item, sizeof(item), "%s%d-%d", n ? "," : "", cpu, hi);
		/* Each item leaves room for the "..." of one that does not fit. */
		if (!cut && used + (size_t)k + 4 <= len) {
			memcpy(buf + used, item, (size_t)k + 1);
			used += (size_t)k;
		} else if (!cut) {
			cut = true;
			if (used + 4 <= len)
				memcpy(buf + used, "...", 4);
		}
		n += (size_t)k;
		cpu = hi;
	}
	return n;
}
