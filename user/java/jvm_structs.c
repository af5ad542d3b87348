// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "java/jvm_structs.h"
#include "util/grow.h"

const char *const jvm_sym_names[JVM_SYM_N] = {
	"gHotSpotVMStructs", "gHotSpotVMStructEntryArrayStride",
	"gHotSpotVMStructEntryTypeNameOffset", "gHotSpotVMStructEntryFieldNameOffset",
	"gHotSpotVMStructEntryTypeStringOffset", "gHotSpotVMStructEntryIsStaticOffset", "gHotSpotVMStructEntryOffsetOffset",
	"gHotSpotVMStructEntryAddressOffset",
	"gHotSpotVMTypes", "gHotSpotVMTypeEntryArrayStride", "gHotSpotVMTypeEntryTypeNameOffset",
	"gHotSpotVMTypeEntrySuperclassNameOffset", "gHotSpotVMTypeEntrySizeOffset",
	"gHotSpotVMIntConstants", "gHotSpotVMIntConstantEntryArrayStride",
	"gHotSpotVMIntConstantEntryNameOffset", "gHotSpotVMIntConstantEntryValueOffset",
	"gHotSpotVMLongConstants", "gHotSpotVMLongConstantEntryArrayStride",
	"gHotSpotVMLongConstantEntryNameOffset", "gHotSpotVMLongConstantEntryValueOffset",
};

/* Entries read in one go. */
#define CHUNK 32
#define MEMBERS_MAX 6

enum kind { K_STRUCTS, K_TYPES, K_INTS, K_LONGS };

/*
 * One table: where its pointer and its layout's symbols are, and its
 * members in order, the first the name whose NULL ends the table.  A
 * member is a string (its pointer) or a number of @size bytes.
 */
struct table_desc {
	enum kind kind;
	enum jvm_sym base, stride;
	size_t n;
	enum jvm_sym member[MEMBERS_MAX];
	uint8_t size[MEMBERS_MAX];    /* bytes of the member in the entry */
	bool string[MEMBERS_MAX];     /* a char pointer, read as a string */
	bool may_be_null[MEMBERS_MAX]; /* a string that may be absent */
};

static const struct table_desc tables[] = {
	{ K_STRUCTS, JVM_SYM_STRUCTS, JVM_SYM_STRUCT_STRIDE, 6,
	  { JVM_SYM_STRUCT_TYPE, JVM_SYM_STRUCT_FIELD, JVM_SYM_STRUCT_TYPE_STRING,
	    JVM_SYM_STRUCT_STATIC, JVM_SYM_STRUCT_OFFSET, JVM_SYM_STRUCT_ADDRESS },
	  { 8, 8, 8, 4, 8, 8 }, { true, true, true }, { false, false, true } },
	{ K_TYPES, JVM_SYM_TYPES, JVM_SYM_TYPE_STRIDE, 3,
	  { JVM_SYM_TYPE_NAME, JVM_SYM_TYPE_SUPER, JVM_SYM_TYPE_SIZE },
	  { 8, 8, 8 }, { true, true }, { false, true } },
	{ K_INTS, JVM_SYM_INTS, JVM_SYM_INT_STRIDE, 2,
	  { JVM_SYM_INT_NAME, JVM_SYM_INT_VALUE }, { 8, 4 }, { true }, { false } },
	{ K_LONGS, JVM_SYM_LONGS, JVM_SYM_LONG_STRIDE, 2,
	  { JVM_SYM_LONG_NAME, JVM_SYM_LONG_VALUE }, { 8, 8 }, { true }, { false } },
};

/* What one table's read needs as it goes. */
struct reader {
	const struct memsrc *m;
	struct jvm_structs *vm;
	size_t cap; /* of the table's array */
	/* the last string read per member: entries of a type share their type's */
	uint64_t last_ptr[MEMBERS_MAX];
	const char *last_str[MEMBERS_MAX];
	char buf[JVM_NAME_MAX];
};

static int read_u64(const struct memsrc *m, uint64_t addr, uint64_t *v)
{
	return memsrc_read(m, addr, v, sizeof(*v));
}

/* The string at @ptr, copied into the names arena (or the last one, when the same). */
static int take_string(struct reader *r, size_t k, uint64_t ptr, const char **out)
{
	int e;

	if (ptr && ptr == r->last_ptr[k]) {
		*out = r->last_str[k];
		return 0;
	}
	e = memsrc_read_str(r->m, ptr, r->buf, sizeof(r->buf));
	if (e)
		return e;
	*out = arena_strndup(&r->vm->names, r->buf, strlen(r->buf));
	if (!*out)
		return -ENOMEM;
	r->last_ptr[k] = ptr;
	r->last_str[k] = *out;
	return 0;
}

/* Appends the entry whose members are @v (strings read into @s) to @t's array. */
static int add_entry(struct reader *r, const struct table_desc *t, const uint64_t *v,
		     const char *const *s)
{
	struct jvm_structs *vm = r->vm;
	int e;

	switch (t->kind) {
	case K_STRUCTS:
		e = grow((void **)&vm->fields, &r->cap, vm->nfields, sizeof(*vm->fields), 256,
			 JVM_TABLE_MAX);
		if (!e)
			vm->fields[vm->nfields++] = (struct jvm_field){
				.type = s[0], .name = s[1], .type_string = s[2],
				.is_static = (uint32_t)v[3] != 0, .offset = v[4], .address = v[5] };
		return e;
	case K_TYPES:
		e = grow((void **)&vm->types, &r->cap, vm->ntypes, sizeof(*vm->types), 256,
			 JVM_TABLE_MAX);
		if (!e)
			vm->types[vm->ntypes++] = (struct jvm_type){ s[0], s[1], v[2] };
		return e;
	case K_INTS:
		e = grow((void **)&vm->ints, &r->cap, vm->nints, sizeof(*vm->ints), 256,
			 JVM_TABLE_MAX);
		if (!e)
			vm->ints[vm->nints++] = (struct jvm_const){ s[0], (int32_t)(uint32_t)v[1] };
		return e;
	case K_LONGS:
		e = grow((void **)&vm->longs, &r->cap, vm->nlongs, sizeof(*vm->longs), 64,
			 JVM_TABLE_MAX);
		if (!e)
			vm->longs[vm->nlongs++] = (struct jvm_const){ s[0], (int64_t)v[1] };
		return e;
	}
	return -EINVAL;
}

/* The entry's members, from its bytes @p (of the layout @off), strings read. */
static int take_entry(struct reader *r, const struct table_desc *t, const uint8_t *p,
		      const uint64_t *off, size_t i, struct errbuf *err)
{
	uint64_t v[MEMBERS_MAX] = { 0 };
	const char *s[MEMBERS_MAX] = { NULL };
	int e;

	for (size_t k = 0; k < t->n; k++) {
		uint32_t u32;

		if (t->size[k] == 4) {
			memcpy(&u32, p + off[k], sizeof(u32));
			v[k] = u32;
		} else {
			memcpy(&v[k], p + off[k], sizeof(v[k]));
		}
		if (!t->string[k] || (!v[k] && t->may_be_null[k]))
			continue;
		e = take_string(r, k, v[k], &s[k]);
		if (e)
			return errf(err, e, "%s entry %zu: the string at %#llx (%s) %s", jvm_sym_names[t->base],
				    i, (unsigned long long)v[k], jvm_sym_names[t->member[k]],
				    e == -ENAMETOOLONG ? "has no end within 256 bytes" :
				    e == -ENOMEM ? "finds no memory" : "is unreadable");
	}
	e = add_entry(r, t, v, s);
	if (e)
		return errf(err, e, "%s: %s", jvm_sym_names[t->base],
			    e == -E2BIG ? "no end within 8192 entries" : "no memory");
	return 0;
}

/* The table's stride and its members' offsets, each checked to fit the stride. */
static int read_layout(const struct memsrc *m, const struct table_desc *t,
		       const uint64_t *sym, uint64_t *stride, uint64_t *off, struct errbuf *err)
{
	if (read_u64(m, sym[t->stride], stride))
		return errf(err, -EFAULT, "%s unreadable", jvm_sym_names[t->stride]);
	if (*stride < 8 || *stride > JVM_STRIDE_MAX)
		return errf(err, -EINVAL, "%s is %llu, not 8 to %u", jvm_sym_names[t->stride],
			    (unsigned long long)*stride, JVM_STRIDE_MAX);
	for (size_t k = 0; k < t->n; k++) {
		if (read_u64(m, sym[t->member[k]], &off[k]))
			return errf(err, -EFAULT, "%s unreadable", jvm_sym_names[t->member[k]]);
		if (off[k] > *stride - t->size[k])
			return errf(err, -EINVAL, "%s is %llu, past the %llu-byte entry",
				    jvm_sym_names[t->member[k]], (unsigned long long)off[k],
				    (unsigned long long)*stride);
	}
	return 0;
}

static int read_table(struct jvm_structs *vm, const struct memsrc *m, const struct table_desc *t,
		      const uint64_t *sym, struct errbuf *err)
{
	uint8_t chunk[CHUNK * JVM_STRIDE_MAX];
	struct reader *r;
	uint64_t stride, off[MEMBERS_MAX], base;
	int e;

	e = read_layout(m, t, sym, &stride, off, err);
	if (e)
		return e;
	if (read_u64(m, sym[t->base], &base) || !base)
		return errf(err, -EFAULT, "%s: no table there", jvm_sym_names[t->base]);
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->m = m;
	r->vm = vm;
	for (size_t i = 0, first = 0, have = 0;; i++) {
		const uint8_t *p;
		uint64_t name;

		/* A table may end near the end of its mapping: a chunk that fails is read entry by entry. */
		if (i >= first + have) {
			first = i;
			have = CHUNK;
			if (memsrc_read(m, base + i * stride, chunk, CHUNK * stride)) {
				have = 1;
				if (memsrc_read(m, base + i * stride, chunk, stride)) {
					e = errf(err, -EFAULT, "%s entry %zu unreadable",
						 jvm_sym_names[t->base], i);
					break;
				}
			}
		}
		p = chunk + (i - first) * stride;
		memcpy(&name, p + off[0], sizeof(name));
		if (!name)
			break;
		e = take_entry(r, t, p, off, i, err);
		if (e)
			break;
	}
	free(r);
	return e;
}

int jvm_structs_read(struct jvm_structs *vm, const struct memsrc *m,
		     const uint64_t sym[JVM_SYM_N], struct errbuf *err)
{
	memset(vm, 0, sizeof(*vm));
	arena_init(&vm->names, 16384, NULL);
	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++) {
		int e = read_table(vm, m, &tables[t], sym, err);

		if (e) {
			jvm_structs_free(vm);
			return e;
		}
	}
	return 0;
}

void jvm_structs_free(struct jvm_structs *vm)
{
	free(vm->fields);
	free(vm->types);
	free(vm->ints);
	free(vm->longs);
	arena_free(&vm->names);
	memset(vm, 0, sizeof(*vm));
}

const struct jvm_field *jvm_structs_field(const struct jvm_structs *vm, const char *type,
					  const char *name)
{
	for (size_t i = 0; i < vm->nfields; i++)
		if (!strcmp(vm->fields[i].name, name) && !strcmp(vm->fields[i].type, type))
			return &vm->fields[i];
	return NULL;
}

unsigned jvm_type_string_size(const char *ts)
{
	static const struct {
		const char *name;
		unsigned size;
	} sized[] = {
		{ "int", 4 }, { "jint", 4 }, { "int32_t", 4 }, { "u4", 4 }, { "juint", 4 },
		{ "uint32_t", 4 }, { "unsigned int", 4 }, { "u2", 2 }, { "jushort", 2 },
		{ "int16_t", 2 }, { "uint16_t", 2 }, { "u1", 1 }, { "bool", 1 }, { "address", 8 },
		{ "intptr_t", 8 }, { "uintptr_t", 8 }, { "size_t", 8 }, { "uint64_t", 8 },
	};
	size_t n = ts ? strlen(ts) : 0;

	if (n && ts[n - 1] == '*')
		return 8;
	for (size_t i = 0; n && i < sizeof(sized) / sizeof(sized[0]); i++)
		if (!strcmp(ts, sized[i].name))
			return sized[i].size;
	return 0;
}

const struct jvm_type *jvm_structs_type(const struct jvm_structs *vm, const char *name)
{
	for (size_t i = 0; i < vm->ntypes; i++)
		if (!strcmp(vm->types[i].name, name))
			return &vm->types[i];
	return NULL;
}

bool jvm_structs_const(const struct jvm_structs *vm, const char *name, int64_t *v)
{
	for (size_t i = 0; i < vm->nints; i++)
		if (!strcmp(vm->ints[i].name, name))
			return *v = vm->ints[i].value, true;
	for (size_t i = 0; i < vm->nlongs; i++)
		if (!strcmp(vm->longs[i].name, name))
			return *v = vm->longs[i].value, true;
	return false;
}
