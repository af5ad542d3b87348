// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>

#include "util/grow.h"
#include "output/collect.h"

struct sym_process collect_view(const struct process *p)
{
	return (struct sym_process){
		.maps = &p->maps,
		.objs = p->objs,
		.root = p->root,
	};
}

typedef int (*addr_fn)(void *ctx, uint64_t addr);

/*
 * Calls @fn with each frame address of the @kernel (else user) stacks of
 * @p's samples, in the order of its table; stops at the first error.
 */
static int walk(const struct process *p, const struct stackstore *stacks, bool kernel,
		addr_fn fn, void *ctx)
{
	struct aggregate_entry *e;
	size_t it = 0;
	int ret = 0;

	while (!ret && (e = hmap_next(&p->samples.map, &it))) {
		uint64_t stack = kernel ? e->key.kstack : e->key.ustack;
		const uint64_t *ip;
		uint32_t nr = 0;

		if (!(stack & CPROF_STACK_HASHED) ||
		    !(ip = stackstore_get(stacks, stack, &nr, NULL)))
			continue;
		for (uint32_t j = 0; j < nr && !ret; j++)
			/* a Java frame's record names itself (profile.c), no address */
			if (kernel || !(ip[j] & CPROF_JAVA_FRAME))
				ret = fn(ctx, symbolize_frame_addr(ip[j], j));
	}
	return ret;
}

struct addr_list {
	uint64_t *v;
	size_t n, cap;
};

static int push_addr(void *ctx, uint64_t addr)
{
	struct addr_list *l = ctx;

	if (grow((void **)&l->v, &l->cap, l->n, sizeof(*l->v), 1024, GROW_NO_MAX))
		return -ENOMEM;
	l->v[l->n++] = addr;
	return 0;
}

int collect_kernel(struct process *const *procs, size_t n, const struct stackstore *stacks,
		   uint64_t **addrs, size_t *naddrs)
{
	struct addr_list l = { 0 };
	int ret = 0;

	for (size_t i = 0; i < n && !ret; i++)
		ret = walk(procs[i], stacks, true, push_addr, &l);
	if (ret) {
		free(l.v);
		l = (struct addr_list){ 0 };
	}
	*addrs = l.v;
	*naddrs = l.n;
	return ret;
}

/* One process's user addresses on their way to the symbolizer. */
struct adding {
	struct symbolizer *s;
	struct sym_process view;
};

static int add_user(void *ctx, uint64_t addr)
{
	struct adding *a = ctx;

	return symbolizer_add(a->s, &a->view, addr);
}

int collect_prepare(struct symbolizer *s, struct process *const *procs, size_t n,
		    const struct stackstore *stacks, struct errbuf *err)
{
	int ret = 0;

	/* Nothing is named ahead: the samples need no walk. */
	if (s->addresses_only)
		return 0;
	/* Every address before any process is counted: counting needs them all. */
	for (size_t i = 0; i < n && !ret; i++) {
		struct adding a = { s, collect_view(procs[i]) };

		if (!aggregate_empty(&procs[i]->samples))
			ret = walk(procs[i], stacks, false, add_user, &a);
	}
	if (ret)
		return errf(err, ret, "symbolizer: out of memory");
	for (size_t i = 0; i < n; i++) {
		struct sym_process view = collect_view(procs[i]);

		if (!aggregate_empty(&procs[i]->samples))
			symbolizer_expect(s, &view);
	}
	return symbolizer_prepare(s, err);
}
