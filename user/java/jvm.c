// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "elf/elfobj.h"
#include "fs/procmaps.h"
#include "java/jvm.h"

static bool is_libjvm(const char *path)
{
	const char *base = path ? strrchr(path, '/') : NULL;

	return base && !strcmp(base, "/libjvm.so");
}

/* The process addresses of the tables' symbols in @o, loaded at @bias. */
static int table_symbols(struct elfobj *o, uint64_t bias, uint64_t sym[JVM_SYM_N])
{
	struct elfsyms_named s[JVM_SYM_N];

	for (int k = 0; k < JVM_SYM_N; k++)
		s[k] = (struct elfsyms_named){ .name = jvm_sym_names[k] };
	if (elfobj_find_dynamic(o, s, JVM_SYM_N, NULL))
		return -ENOENT;
	for (int k = 0; k < JVM_SYM_N; k++) {
		if (!s[k].found)
			return -ENOENT;
		sym[k] = bias + s[k].value;
	}
	return 0;
}

/* The JVM whose tables' symbols are at @sym, read into @jp. */
static int read_jvm(struct jvmproc *jp, const uint64_t *sym, struct errbuf *err)
{
	uint64_t structs;
	int e;

	/* before the JVM's start has filled it in, the table's pointer is NULL */
	if (memsrc_read(&jp->mem, sym[JVM_SYM_STRUCTS], &structs, sizeof(structs)) || !structs)
		return errf(err, -ENOENT, "libjvm.so's tables not filled in yet");
	e = jvm_structs_read(&jp->vm, &jp->mem, sym, err);
	if (e)
		return e == -ENOMEM ? e : -ENOTSUP;
	e = jvm_layout_from(&jp->vm, &jp->mem, &jp->layout, err);
	if (!e)
		e = jvm_codecache_read(&jp->layout, &jp->mem, &jp->code, err);
	return e == -ENOMEM ? e : e ? -ENOTSUP : 0;
}

int jvmproc_find(struct jvmproc **out, uint32_t pid, const struct vma_list *maps,
		 struct elfobj *const *objs, struct errbuf *err)
{
	for (size_t i = 0; i < maps->n; i++) {
		const struct vma *v = &maps->v[i];
		uint64_t bias, sym[JVM_SYM_N];
		struct jvmproc *jp;
		int e;

		if (!is_libjvm(v->path) || !objs || !objs[i] ||
		    elfobj_load_bias(objs[i], v->start, v->offset, &bias) ||
		    table_symbols(objs[i], bias, sym))
			continue;
		jp = calloc(1, sizeof(*jp));
		if (!jp)
			return -ENOMEM;
		jp->pid = pid;
		jp->mem = procmem_src(pid);
		e = read_jvm(jp, sym, err);
		if (e) {
			jvmproc_free(jp);
			return e;
		}
		*out = jp;
		return 0;
	}
	return -ENOENT;
}

int jvmproc_refresh(struct jvmproc *jp, struct errbuf *err)
{
	return jvm_codecache_read(&jp->layout, &jp->mem, &jp->code, err);
}

void jvmproc_free(struct jvmproc *jp)
{
	if (!jp)
		return;
	jvm_structs_free(&jp->vm);
	free(jp);
}
