// SPDX-License-Identifier: MIT
#include <stdio.h>

#include "symbolize.h"

void symbolize_user(const struct symbolizer *s, struct process *p, uint64_t addr,
		    struct sym *out)
{
	const struct vma *v = procmaps_find(&p->maps, addr);
	const struct elfobj_sym *es;
	struct elfobj *o;
	char root[64];
	uint64_t vaddr;

	out->vma = -1;
	out->name = NULL;
	out->module = NULL;
	if (!v)
		return;
	out->vma = (int)(v - p->maps.v);
	o = p->objs ? p->objs[out->vma] : NULL;
	if (!o)
		return;
	snprintf(root, sizeof(root), "%s/%u/root", s->proc_root, p->pid);
	struct elfobj_debug_opts dopts = {
		.debug_root = s->debug_root,
		.path = v->path,
		.root_prefix = root,
	};
	if (elfobj_load_symbols(o, &dopts, NULL))
		return;
	if (elfobj_file_to_vaddr(o, addr - v->start + v->offset, &vaddr))
		return;
	es = elfobj_lookup(o, vaddr);
	if (es)
		out->name = es->name;
}

void symbolize_kernel(const struct symbolizer *s, uint64_t addr, struct sym *out)
{
	const struct ksym *k = s->ksyms ? kallsyms_find(s->ksyms, addr) : NULL;

	out->vma = -1;
	out->name = k ? k->name : NULL;
	out->module = k ? k->module : NULL;
}
