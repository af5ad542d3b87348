/* SPDX-License-Identifier: MIT */
/*
 * bpfshim.h: what the BPF program's headers (bpf/) need from libbpf and the kernel,
 * in plain C, so that the unwinder (bpf/unwind.bpf.h) runs in a unit test:
 * the OTel profiler's TESTING_COREDUMP build, for this project.
 *
 * The maps are the BPF code's own definitions (in bpf/, each beside the
 * code that uses it), compiled as plain structs; a test binds storage to
 * each one it uses (shim_array, shim_hash, shim_ringbuf), and a helper
 * called on a map with nothing bound aborts the test.  One CPU: a per-CPU
 * array is an array.  A hash map is its own table, not hmap: a fixed
 * number of entries that never move and can be deleted, as BPF's are.
 * Memory the BPF side would read from the process (bpf_probe_read_user)
 * is a recorded image, never this process's own memory.
 *
 * Included by one file, user/unwind/bpfunwind.c: its state is static.
 */
#ifndef CPROF_BPFSHIM_H
#define CPROF_BPFSHIM_H

#include <errno.h>
#include <linux/bpf.h> /* BPF_MAP_TYPE_*, BPF_F_*, BPF_ANY, BPF_NOEXIST */
#include <linux/types.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* libbpf's map-definition and section macros (bpf_helpers.h). */
#define SEC(name)
#define __uint(name, val) int(*name)[val]
#define __type(name, val) typeof(val) *name
#define __array(name, val) typeof(val) *name[]
#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif
#define __noinline __attribute__((noinline))

/*
 * A setting the loader fixes before load (bpf/base.bpf.h): a plain variable
 * here, which a test sets as it goes.
 */
#define CPROF_SETTING

enum shim_kind { SHIM_ARRAY = 1, SHIM_HASH, SHIM_RINGBUF, SHIM_ARRAY_FN };

/* An array whose values a function gives, one at a time (NULL: none). */
typedef const void *(*shim_value_fn)(void *ctx, uint32_t key);

/* Storage bound to one map definition. */
struct shim_map {
	const void *map;       /* the map's definition, as the BPF code names it */
	enum shim_kind kind;
	uint32_t key_size, value_size, max;
	uint8_t *data;         /* array: max values; hash: max keys then max values */
	bool *used;            /* hash: per entry */
	size_t submitted;      /* ringbuf: records submitted */
	shim_value_fn fn;      /* array_fn: the values */
	void *fn_ctx;
};

/* A process's memory, as bpf_probe_read_user sees it: [lo, lo + len). */
struct shim_memory {
	uint64_t lo;
	const uint8_t *bytes;
	size_t len;
};

#define SHIM_MAPS 24
static struct shim_map shim_maps[SHIM_MAPS];
static struct shim_memory shim_mem;
static size_t shim_reads; /* bpf_probe_read_user calls */

static inline void shim_die(const char *what, const void *map)
{
	fprintf(stderr, "bpfshim: %s (map %p): the test set up no storage for it\n", what, map);
	abort();
}

static inline struct shim_map *shim_find(const void *map, bool add)
{
	for (int i = 0; i < SHIM_MAPS; i++)
		if (shim_maps[i].map == map || (add && !shim_maps[i].map))
			return &shim_maps[i];
	if (add)
		shim_die("too many maps bound", map);
	return NULL;
}

static inline struct shim_map *shim_bind(const void *map, enum shim_kind kind, uint32_t key_size,
					 uint32_t value_size, uint32_t max, void *data)
{
	struct shim_map *m = shim_find(map, true);

	free(m->used);
	if (m->kind == SHIM_HASH || m->kind == SHIM_RINGBUF)
		free(m->data);
	*m = (struct shim_map){ .map = map, .kind = kind, .key_size = key_size,
				.value_size = value_size, .max = max, .data = data };
	return m;
}

/* An array map over @n values of @size bytes at @data (the caller's). */
static inline void shim_array(const void *map, void *data, uint32_t size, uint32_t n)
{
	shim_bind(map, SHIM_ARRAY, sizeof(uint32_t), size, n, data);
}

/*
 * An array map of @n values of @size bytes that @fn gives (into storage
 * of its own, valid until its next call): a map too big to hold.
 */
static inline void shim_array_fn(const void *map, uint32_t size, uint32_t n, shim_value_fn fn,
				 void *ctx)
{
	struct shim_map *m = shim_bind(map, SHIM_ARRAY_FN, sizeof(uint32_t), size, n, NULL);

	m->fn = fn;
	m->fn_ctx = ctx;
}

/* An empty hash map of @max entries. */
static inline void shim_hash(const void *map, uint32_t key_size, uint32_t value_size,
			     uint32_t max)
{
	struct shim_map *m = shim_bind(map, SHIM_HASH, key_size, value_size, max,
				       calloc(max, (size_t)key_size + value_size));

	m->used = calloc(max, sizeof(*m->used));
	if (!m->data || !m->used)
		shim_die("out of memory", map);
}

/* A ring buffer that takes up to @max records of at most @size bytes. */
static inline void shim_ringbuf(const void *map, uint32_t size, uint32_t max)
{
	shim_bind(map, SHIM_RINGBUF, 0, size, max, calloc(max, size));
}

static inline void *shim_hash_value(struct shim_map *m, uint32_t i)
{
	return m->data + (size_t)m->max * m->key_size + (size_t)i * m->value_size;
}

static inline int shim_hash_find(struct shim_map *m, const void *key)
{
	for (uint32_t i = 0; i < m->max; i++)
		if (m->used[i] && !memcmp(m->data + (size_t)i * m->key_size, key, m->key_size))
			return (int)i;
	return -1;
}

static inline void *bpf_map_lookup_elem(const void *map, const void *key)
{
	struct shim_map *m = shim_find(map, false);
	int i;

	if (!m)
		shim_die("lookup", map);
	if (m->kind == SHIM_ARRAY) {
		uint32_t k;

		memcpy(&k, key, sizeof(k));
		return k < m->max ? m->data + (size_t)k * m->value_size : NULL;
	}
	if (m->kind == SHIM_ARRAY_FN) {
		uint32_t k;

		memcpy(&k, key, sizeof(k));
		/* the BPF code never writes through a lookup of these */
		return k < m->max ? (void *)(uintptr_t)m->fn(m->fn_ctx, k) : NULL;
	}
	i = m->kind == SHIM_HASH ? shim_hash_find(m, key) : -1;
	return i < 0 ? NULL : shim_hash_value(m, (uint32_t)i);
}

static inline long bpf_map_update_elem(const void *map, const void *key, const void *value,
				       __u64 flags)
{
	struct shim_map *m = shim_find(map, false);
	int i, free_slot = -1;

	if (!m || m->kind != SHIM_HASH)
		shim_die("update", map);
	i = shim_hash_find(m, key);
	if (i >= 0 && flags == BPF_NOEXIST)
		return -EEXIST;
	if (i < 0 && flags == BPF_EXIST)
		return -ENOENT;
	for (uint32_t k = 0; i < 0 && free_slot < 0 && k < m->max; k++)
		if (!m->used[k])
			free_slot = (int)k;
	if (i < 0 && free_slot < 0)
		return -E2BIG;
	if (i < 0) {
		i = free_slot;
		m->used[i] = true;
		memcpy(m->data + (size_t)i * m->key_size, key, m->key_size);
	}
	memcpy(shim_hash_value(m, (uint32_t)i), value, m->value_size);
	return 0;
}

static inline long bpf_map_delete_elem(const void *map, const void *key)
{
	struct shim_map *m = shim_find(map, false);
	int i;

	if (!m || m->kind != SHIM_HASH)
		shim_die("delete", map);
	i = shim_hash_find(m, key);
	if (i < 0)
		return -ENOENT;
	m->used[i] = false;
	return 0;
}

/* Reads the recorded image; like the helper, zeroes @dst when it fails. */
static inline long bpf_probe_read_user(void *dst, __u32 size, const void *unsafe_ptr)
{
	uint64_t a = (uint64_t)(uintptr_t)unsafe_ptr;

	shim_reads++;
	if (a < shim_mem.lo || a - shim_mem.lo > shim_mem.len ||
	    size > shim_mem.len - (a - shim_mem.lo)) {
		memset(dst, 0, size);
		return -EFAULT;
	}
	memcpy(dst, shim_mem.bytes + (a - shim_mem.lo), size);
	return 0;
}

static inline long bpf_loop(__u32 nr_loops, long (*fn)(__u32 index, void *ctx), void *ctx,
			    __u64 flags)
{
	__u32 i = 0;

	while (i < nr_loops && !fn(i++, ctx))
		;
	return i;
}

/* The walks of a test are one thread's: its stack window is its own. */
static inline __u64 bpf_get_current_pid_tgid(void)
{
	return 1;
}

/*
 * The CPU a program runs on, as a test sets it: per-CPU arrays stay one
 * value (a test of per-CPU data binds each CPU's itself).
 */
static __u32 shim_cpu;

static inline __u32 bpf_get_smp_processor_id(void)
{
	return shim_cpu;
}

static inline __u64 bpf_ktime_get_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

static inline void *bpf_ringbuf_reserve(const void *ringbuf, __u64 size, __u64 flags)
{
	struct shim_map *m = shim_find(ringbuf, false);

	if (!m || m->kind != SHIM_RINGBUF)
		shim_die("ringbuf reserve", ringbuf);
	if (size > m->value_size || m->submitted >= m->max)
		return NULL;
	return m->data + m->submitted * m->value_size;
}

static inline void bpf_ringbuf_submit(void *data, __u64 flags)
{
	for (int i = 0; i < SHIM_MAPS; i++) {
		struct shim_map *m = &shim_maps[i];

		if (m->kind == SHIM_RINGBUF &&
		    (uint8_t *)data == m->data + m->submitted * m->value_size) {
			m->submitted++;
			return;
		}
	}
	shim_die("ringbuf submit of a record never reserved", data);
}

#endif
