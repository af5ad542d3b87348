/* SPDX-License-Identifier: MIT */
/*
 * jvm_structs: HotSpot's own description of itself, read from a JVM's
 * memory.
 *
 * libjvm.so exports, for its serviceability agent, four tables: every
 * field a debugger may read (type, name, offset or, for a static, its
 * address), every type with its size and superclass, and integer and
 * long constants.  The entries' layout is exported too (a stride and the
 * offset of each member), and the tables are filled in as the JVM starts,
 * so everything is read from the process, not from the file.  With them
 * the JVM's structures are found by name in any version that has the
 * name, instead of by offsets written down per build.
 *
 * The tables are the process's word: each has a bound on its entries
 * and on the length of its strings, a stride and member offsets that
 * must fit, and an end that must come; a table that breaks one is
 * refused whole, with a message that says where.
 */
#ifndef CPROF_JVM_STRUCTS_H
#define CPROF_JVM_STRUCTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fs/procmem.h"
#include "util/arena.h"
#include "util/errbuf.h"

/* Bounds: JDK 17 has 788 fields, 768 types, 401 int and 94 long constants. */
#define JVM_TABLE_MAX 8192  /* entries of one table */
#define JVM_NAME_MAX 256    /* bytes of one name, its NUL included */
#define JVM_STRIDE_MAX 256  /* bytes of one entry */

/* libjvm.so's exported symbols the tables are found by, in this order. */
enum jvm_sym {
	JVM_SYM_STRUCTS, JVM_SYM_STRUCT_STRIDE, JVM_SYM_STRUCT_TYPE, JVM_SYM_STRUCT_FIELD,
	JVM_SYM_STRUCT_TYPE_STRING, JVM_SYM_STRUCT_STATIC, JVM_SYM_STRUCT_OFFSET, JVM_SYM_STRUCT_ADDRESS,
	JVM_SYM_TYPES, JVM_SYM_TYPE_STRIDE, JVM_SYM_TYPE_NAME, JVM_SYM_TYPE_SUPER,
	JVM_SYM_TYPE_SIZE,
	JVM_SYM_INTS, JVM_SYM_INT_STRIDE, JVM_SYM_INT_NAME, JVM_SYM_INT_VALUE,
	JVM_SYM_LONGS, JVM_SYM_LONG_STRIDE, JVM_SYM_LONG_NAME, JVM_SYM_LONG_VALUE,
	JVM_SYM_N
};

/* The name of each symbol of enum jvm_sym. */
extern const char *const jvm_sym_names[JVM_SYM_N];

struct jvm_field {
	const char *type, *name;
	const char *type_string; /* the member's C++ type ("int", "Method*"); NULL if not said */
	bool is_static;
	uint64_t offset;  /* in an instance of @type */
	uint64_t address; /* a static's, in the process */
};

struct jvm_type {
	const char *name, *super; /* super: NULL for none */
	uint64_t size;
};

struct jvm_const {
	const char *name;
	int64_t value;
};

struct jvm_structs {
	struct jvm_field *fields;
	struct jvm_type *types;
	struct jvm_const *ints, *longs;
	size_t nfields, ntypes, nints, nlongs;
	struct arena names; /* the strings of all four */
};

/*
 * Reads the four tables of the JVM whose memory is @m, its symbols'
 * addresses in the process being @sym.  0, or a negative errno with @err
 * naming the table and entry that is wrong; @vm is then empty.
 */
int jvm_structs_read(struct jvm_structs *vm, const struct memsrc *m,
		     const uint64_t sym[JVM_SYM_N], struct errbuf *err);

void jvm_structs_free(struct jvm_structs *vm);

/* The field @name of type @type (exactly as the JVM names them); NULL if none. */
const struct jvm_field *jvm_structs_field(const struct jvm_structs *vm, const char *type,
					  const char *name);

/*
 * The bytes a field of C++ type @type_string takes, for the types a
 * reader takes numbers from (pointers, int, u2...); 0 for others.
 */
unsigned jvm_type_string_size(const char *type_string);

/* The type @name; NULL if none. */
const struct jvm_type *jvm_structs_type(const struct jvm_structs *vm, const char *name);

/* The int (then long) constant @name into *@v: false if there is none. */
bool jvm_structs_const(const struct jvm_structs *vm, const char *name, int64_t *v);

#endif
