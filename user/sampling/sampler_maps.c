// SPDX-License-Identifier: MIT
/*
 * sampler_maps.c: what the loader writes into BPF's maps -- a process's
 * unwind entry, files and their identities, table rows (through a window
 * of the mmapped array), Python processes and trampolines -- and the
 * retiring of rows BPF may still read.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "sampling/sampler_internal.h"

int sampler_unwind_rows(struct sampler *s, uint32_t *capacity)
{
	if (!s->rows_cap)
		return -ENOENT;
	*capacity = s->rows_cap;
	return 0;
}

int sampler_set_proc(void *sampler, uint32_t pid, const struct cprof_proc_maps *pm)
{
	struct sampler *s = sampler;
	int fd = bpf_map__fd(s->skel->maps.unwind_procs);

	if (!pm)
		return bpf_map_delete_elem(fd, &pid) && errno != ENOENT ? -errno : 0;
	/* The value is fixed-size; unused slots past n are never read. */
	return bpf_map_update_elem(fd, &pid, pm, BPF_ANY) ? -errno : 0;
}

int sampler_get_proc(void *sampler, uint32_t pid, struct cprof_proc_maps *pm)
{
	struct sampler *s = sampler;
	int fd = bpf_map__fd(s->skel->maps.unwind_procs);

	return bpf_map_lookup_elem(fd, &pid, pm) ? -errno : 0;
}

/* Writes @v as @pid's entry of the map at @fd; @v NULL: deletes it. */
static int pid_entry(int fd, uint32_t pid, const void *v)
{
	if (!v)
		return bpf_map_delete_elem(fd, &pid) && errno != ENOENT ? -errno : 0;
	return bpf_map_update_elem(fd, &pid, v, BPF_ANY) ? -errno : 0;
}

int sampler_set_python(struct sampler *s, uint32_t pid, const struct cprof_py_proc *pp)
{
	return pid_entry(bpf_map__fd(s->skel->maps.py_procs), pid, pp);
}

int sampler_set_jvm(struct sampler *s, uint32_t pid, const struct cprof_jvm_proc *jp)
{
	return pid_entry(bpf_map__fd(s->skel->maps.jvm_procs), pid, jp);
}

int sampler_set_v8(struct sampler *s, uint32_t pid, const struct cprof_v8_proc *vp)
{
	return pid_entry(bpf_map__fd(s->skel->maps.v8_procs), pid, vp);
}

int sampler_set_py_tramp(void *sampler, const struct cprof_py_tramp_key *k,
			 const struct cprof_py_tramp *t)
{
	struct sampler *s = sampler;
	int fd = bpf_map__fd(s->skel->maps.py_tramps);

	if (!t)
		return bpf_map_delete_elem(fd, k) && errno != ENOENT ? -errno : 0;
	return bpf_map_update_elem(fd, k, t, BPF_ANY) ? -errno : 0;
}

/*
 * How much of the rows array a table's writes map at once.  An mmap and a
 * munmap for each 4 KiB chunk put the writing of libLLVM-14's 3 MB table
 * at 7-9 ms of its 40 ms; a 256 KiB window makes them a dozen (3-4 ms,
 * the layout's own work included), and is our resident memory only while
 * a table is written.
 */
#define ROWS_WINDOW (256u << 10)

int sampler_write_rows(void *sampler, uint32_t first, const union cprof_table_slot *rows,
		       uint32_t n)
{
	struct sampler *s = sampler;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t from = (size_t)first * sizeof(*rows), len = (size_t)n * sizeof(*rows);
	/* the array's mappable bytes: rows_cap + 1 slots, in whole pages */
	size_t map_bytes = ((size_t)s->rows_cap + 1) * sizeof(*rows);

	map_bytes = (map_bytes + page - 1) / page * page;
	if (!n) {
		/* the writes of a table are over: the window is let go */
		if (s->win)
			munmap(s->win, s->win_len);
		s->win = NULL;
		return 0;
	}
	if ((uint64_t)first + n > s->rows_cap)
		return -ERANGE;
	if (!s->win || from < s->win_off || from + len > s->win_off + s->win_len) {
		size_t off = from - from % page, wlen = ROWS_WINDOW;
		void *m;

		if (wlen < from + len - off)
			wlen = from + len - off; /* a write larger than the window */
		if (off + wlen > map_bytes)
			wlen = map_bytes - off;
		if (s->win)
			munmap(s->win, s->win_len);
		s->win = NULL;
		m = mmap(NULL, wlen, PROT_READ | PROT_WRITE, MAP_SHARED,
			 bpf_map__fd(s->skel->maps.unwind_rows), (off_t)off);
		if (m == MAP_FAILED)
			return -errno;
		s->win = m;
		s->win_off = off;
		s->win_len = wlen;
	}
	memcpy(s->win + (from - s->win_off), rows, len);
	return 0;
}

int sampler_set_file(void *sampler, uint32_t file, const struct cprof_file *f)
{
	struct sampler *s = sampler;

	return bpf_map__update_elem(s->skel->maps.unwind_files, &file, sizeof(file), f,
				    sizeof(*f), BPF_ANY) ? -errno : 0;
}

int sampler_get_file(struct sampler *s, uint32_t file, struct cprof_file *out)
{
	return bpf_map__lookup_elem(s->skel->maps.unwind_files, &file, sizeof(file), out,
				    sizeof(*out), 0) ? -errno : 0;
}

int sampler_get_entry(struct sampler *s, uint32_t pid, struct cprof_proc_maps *out)
{
	return bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.unwind_procs), &pid, out) ? -errno : 0;
}

int sampler_get_slot(struct sampler *s, uint32_t idx, union cprof_table_slot *out)
{
	return bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.unwind_rows), &idx, out) ? -errno : 0;
}

int sampler_set_file_key(void *sampler, const struct cprof_file_key *k,
			 const struct cprof_file_ref *ref)
{
	struct sampler *s = sampler;
	struct bpf_map *m = s->skel->maps.unwind_file_keys;

	if (!ref)
		return bpf_map__delete_elem(m, k, sizeof(*k), 0) && errno != ENOENT ? -errno : 0;
	return bpf_map__update_elem(m, k, sizeof(*k), ref, sizeof(*ref), BPF_ANY) ? -errno : 0;
}

void sampler_forget(struct sampler *s, uint32_t pid, uint64_t gen)
{
	int fd = bpf_map__fd(s->skel->maps.known_pids);
	struct cprof_known_image k;

	/* Unless the pid has been taken by a new process meanwhile. */
	if (!bpf_map_lookup_elem(fd, &pid, &k) && k.exited && k.gen == gen)
		bpf_map_delete_elem(fd, &pid);
}

int sampler_retire_rows(void *sampler)
{
	struct sampler *s = sampler;

	__atomic_fetch_add(&s->skel->bss->rows_gen, 1, __ATOMIC_SEQ_CST);
	/* Blocks: bpftables.c frees the rows as soon as this returns. */
	return grace_wait(&s->grace, grace_ask(&s->grace));
}
