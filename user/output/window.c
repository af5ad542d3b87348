// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dwarf/dwarfworker.h"
#include "util/hmap.h"
#include "symbols/kallsyms.h"
#include "symbols/ksymcache.h"
#include "output/collect.h"
#include "output/gzbatch.h"
#include "output/outdir.h"
#include "output/profile.h"
#include "fs/rootfs.h"
#include "symbols/symbolize.h"
#include "output/window.h"

#define NAME_MAX_LEN WINDOW_FILE_LEN

struct name_key {
	char name[NAME_MAX_LEN];
};

void window_stamp(int64_t unix_ns, char *buf, size_t len)
{
	time_t t = (time_t)(unix_ns / 1000000000LL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y%m%dT%H%M%SZ", &tm);
}

static void say(const struct window_opts *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void say(const struct window_opts *o, const char *fmt, ...)
{
	char msg[ERRBUF_LEN + 128];
	va_list ap;

	if (!o->report)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	o->report(o->report_ctx, msg);
}

static FILE *open_kallsyms(void)
{
	return rootfs_fopen_host("/proc/kallsyms");
}

/*
 * Collects every kernel frame of every process and names them: from the
 * functions @kept from windows before (NULL: none), the rest in one pass.
 * Returns 0 with @out filled, 1 when there is nothing to name, or an error.
 */
static int resolve_kernel(struct process **procs, size_t n, const struct stackstore *stacks,
			  struct ksymcache *kept, struct ksym_table *out, struct errbuf *err)
{
	uint64_t *addrs;
	size_t na;
	FILE *f;
	int ret;

	ret = collect_kernel(procs, n, stacks, &addrs, &na);
	if (ret)
		return errf(err, ret, "out of memory");
	if (!na) {
		free(addrs);
		return 1;
	}
	if (kept) {
		f = rootfs_fopen_host("/proc/modules");
		ret = ksymcache_resolve(kept, open_kallsyms, f, addrs, na, out, err);
		if (f)
			fclose(f);
	} else if (!(f = open_kallsyms())) {
		ret = errf(err, -errno, "/proc/kallsyms: %s", strerror(errno));
	} else {
		ret = kallsyms_resolve(f, addrs, na, out, err);
		fclose(f);
	}
	free(addrs);
	return ret;
}

/* Keeps @p among the window's hottest processes if it is one. */
static void keep_top(struct window_result *res, const struct process *p, const char *file,
		     uint64_t samples)
{
	size_t i = res->ntop < WINDOW_TOP ? res->ntop++ : WINDOW_TOP;

	if (i == WINDOW_TOP && (!samples || samples <= res->top[WINDOW_TOP - 1].samples))
		return;
	if (i == WINDOW_TOP)
		i = WINDOW_TOP - 1;
	for (; i > 0 && res->top[i - 1].samples < samples; i--)
		res->top[i] = res->top[i - 1];
	res->top[i] = (struct window_proc){ .pid = p->pid, .samples = samples };
	memcpy(res->top[i].comm, p->comm, sizeof(res->top[i].comm));
	res->top[i].comm[sizeof(res->top[i].comm) - 1] = '\0';
	snprintf(res->top[i].container_id, sizeof(res->top[i].container_id), "%s",
		 p->cgroup.container_id);
	snprintf(res->top[i].file, sizeof(res->top[i].file), "%s", file);
}

/* A name not yet used in this window: "x.pb.gz", then "x-2.pb.gz", ... */
static int unique_name(struct hmap *used, const struct process *p, const char *prefix,
		       char *out, size_t len)
{
	char base[64];
	struct name_key k;
	bool created;

	profile_filename(p, base, sizeof(base));
	base[strlen(base) - strlen(".pb.gz")] = '\0';
	for (int i = 1; i < 1000; i++) {
		memset(&k, 0, sizeof(k));
		if (i == 1)
			snprintf(k.name, sizeof(k.name), "%s%s.pb.gz", prefix, base);
		else
			snprintf(k.name, sizeof(k.name), "%s%s-%d.pb.gz", prefix, base, i);
		if (!hmap_insert(used, &k, &created))
			return -ENOMEM;
		if (created) {
			snprintf(out, len, "%s", k.name);
			return 0;
		}
	}
	return -EEXIST;
}

void window_write(struct proctab *procs, const struct stackstore *stacks,
		  const struct window_opts *o, int64_t start_ns, int64_t duration_ns,
		  struct window_result *res)
{
	struct ksym_table ksyms = { 0 };
	struct symbolizer sym = {
		.debug_root = o->debug_root,
		.addresses_only = o->addresses_only,
		.dwarf_max_bytes = o->dwarf_max_bytes,
		.reader_exec_self = o->reader_exec_self,
		.reader_sched = o->reader_sched,
		.reader = o->reader,
		.symbol_max_bytes = o->symbol_max_bytes,
		.report = o->verbose ? o->report : NULL,
		.report_ctx = o->report_ctx,
	};
	struct profile_meta meta = {
		.time_nanos = start_ns,
		.duration_nanos = duration_ns,
		.period = 1000000000LL / o->frequency,
		.off_cpu = o->off_cpu,
	};
	size_t queued = 0;
	struct errbuf err = { "" };
	char prefix[32] = "";
	struct process **list;
	struct hmap used;
	size_t n;
	int ret;

	memset(res, 0, sizeof(*res));
	/* The run's reader counts its failures anew for this window. */
	if (o->reader && *o->reader)
		dwarfworker_new_window(*o->reader);
	list = proctab_list(procs, &n);
	if (!list) {
		say(o, "out of memory listing processes");
		res->failed++;
		return;
	}
	ret = resolve_kernel(list, n, stacks, o->ksyms, &ksyms, &err);
	if (ret == 0)
		sym.ksyms = &ksyms;
	else if (ret < 0)
		say(o, "kernel frames left unnamed: %s", err.msg);
	if (o->stamped) {
		window_stamp(start_ns, prefix, sizeof(prefix) - 1);
		strcat(prefix, "-");
	}
	hmap_init(&used, sizeof(struct name_key), sizeof(struct name_key));
	outdir_next_window(o->out);
	if (gzbatch_new(&meta.batch, o->out->fd))
		say(o, "out of memory: publishing each file on its own");
	/* Each object's DWARF read once, one at a time, for all processes. */
	if (collect_prepare(&sym, list, n, stacks, &err))
		say(o, "symbolizing: %s", err.msg);

	for (size_t i = 0; i < n; i++) {
		struct process *p = list[i];
		struct profile_stats st;
		char name[NAME_MAX_LEN];

		if (aggregate_empty(&p->samples))
			continue;
		if (unique_name(&used, p, prefix, name, sizeof(name))) {
			say(o, "pid %u: no file name left", p->pid);
			res->failed++;
			continue;
		}
		if (o->verbose && p->maps_error)
			say(o, "%s: no mappings: %s", name, p->maps_errmsg);
		ret = profile_write(o->out, name, p, stacks, &sym, &meta, &st, &err);
		if (ret) {
			say(o, "%s", err.msg);
			res->failed++;
			continue;
		}
		queued++;
		keep_top(res, p, name, st.samples);
		res->samples += st.samples;
		res->lost += aggregate_lost_total(&p->samples);
	}
	if (meta.batch) {
		ret = gzbatch_publish(meta.batch, &err);
		if (ret < 0 || (size_t)ret < queued) {
			say(o, "%s", err.msg);
			res->failed += queued - (ret < 0 ? 0 : (size_t)ret);
			queued = ret < 0 ? 0 : (size_t)ret;
		}
	}
	res->files = queued;
	symbolizer_stats(&sym, &res->sym);
	hmap_free(&used);
	free(list);
	symbolizer_free(&sym);
	kallsyms_free(&ksyms);
}
