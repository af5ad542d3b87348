/* SPDX-License-Identifier: MIT */
/*
 * jvm_method: a Java method's names and lines, read from its Method*.
 *
 * Method -> ConstMethod (name and signature indexes, bytecodes, then the
 * compressed line number table) -> ConstantPool (the symbols the indexes
 * name, the source file's) -> its class (InstanceKlass, whose name is a
 * Symbol: "java/util/HashMap").  Each pointer is checked for alignment,
 * each index against the pool's length, and the pool's class must have
 * it as its pool (MethodHandle's intrinsics, made by the VM with a pool
 * of their own, apart): a Method* that is not one (freed, reused, made
 * up) fails rather than naming a frame wrongly.
 */
#ifndef CPROF_JVM_METHOD_H
#define CPROF_JVM_METHOD_H

#include <stddef.h>
#include <stdint.h>

#include "fs/procmem.h"
#include "java/jvm_layout.h"

#define JVM_CLASS_MAX 512   /* bytes kept of a class name, NUL included */
#define JVM_MNAME_MAX 256   /* of a method name */
#define JVM_SIG_MAX 512     /* of a signature */
#define JVM_FILE_MAX 256    /* of a source file name */
#define JVM_LINES_MAX 4096  /* (bci, line) pairs kept of a method */

struct jvm_line {
	uint32_t bci, line;
};

struct jvm_method {
	char klass[JVM_CLASS_MAX];  /* "java.util.HashMap" */
	char name[JVM_MNAME_MAX];   /* "get" */
	char sig[JVM_SIG_MAX];      /* "(Ljava/lang/Object;)Ljava/lang/Object;" */
	char file[JVM_FILE_MAX];    /* "HashMap.java"; "" when the class has none */
	uint32_t code_size;         /* bytecodes: a bci is below it */
	size_t nlines;
	struct jvm_line lines[JVM_LINES_MAX]; /* by bci, as the class file gives them */
};

/*
 * Reads the method at @method.  0; -EFAULT when a read failed, -EINVAL
 * when what was read is not a method.  Names longer than their buffers
 * are cut (with "..." at the end); a line table past JVM_LINES_MAX keeps
 * its first entries.
 */
int jvm_method_read(const struct jvm_layout *l, const struct memsrc *m, uint64_t method,
		    struct jvm_method *out);

/* The source line of bytecode @bci of @jm; 0 when unknown. */
uint32_t jvm_method_line(const struct jvm_method *jm, uint32_t bci);

/* ... of a method whose line table is @lines (@n pairs). */
uint32_t jvm_lines_find(const struct jvm_line *lines, size_t n, uint32_t bci);

/*
 * Decodes a compressed line number table (@p, @n bytes) of a JVM of major
 * version @major into @out (at most @max pairs): the number of pairs, or
 * -EINVAL when it runs past @n before its end.
 */
int jvm_lines_decode(const uint8_t *p, size_t n, unsigned major, struct jvm_line *out, size_t max);

#endif
