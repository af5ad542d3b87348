/* SPDX-License-Identifier: MIT */
/*
 * jvm_names: a JVM's Java frames as profiles name them.  A frame BPF
 * recorded (cprof.h, "HotSpot JVMs") is one method and bci when it ran in
 * the interpreter, a pc in compiled code otherwise, which stands for the
 * methods inlined there too; each becomes lines as native frames' are:
 * function "pkg.Class.method", file "Class.java" (the class's source file
 * attribute), line.  Each method is read once and kept, its line table
 * with it, up to a bound on the methods and bytes a process keeps.
 */
#ifndef CPROF_JVM_NAMES_H
#define CPROF_JVM_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "java/jvm_method.h"
#include "util/hmap.h"

struct jvmproc;

/* Methods a process keeps named, and the bytes they may take. */
#define JVM_NAMES_MAX 65536
#define JVM_NAMES_BYTES (32u << 20)

/* One method, read. */
struct jvm_named {
	const char *function;    /* "java.util.HashMap.get"; NULL: not readable */
	const char *system_name; /* with its signature: "java.util.HashMap.get(Ljava/lang/Object;)..." */
	const char *file;        /* "HashMap.java"; NULL when the class has none */
	struct jvm_line *lines;
	uint32_t nlines;
	uint32_t start_line;     /* the lowest line of its table; 0: none */
};

struct jvm_names {
	struct hmap methods; /* Method* -> struct jvm_named */
	struct hmap stubs;   /* CodeBlob* -> struct jvm_named: the JVM's own code, by its name */
	size_t bytes;
	size_t refused;      /* methods not kept: over the bounds */
};

void jvm_names_init(struct jvm_names *n);
void jvm_names_free(struct jvm_names *n);

/* One line of a Java frame: the method (or stub) and where in it. */
struct jvm_frame_line {
	const struct jvm_named *method; /* NULL: none readable */
	uint32_t line;      /* 0: unknown */
};

/* What a frame was found to be, for the counts -v shows. */
enum jvm_frame_result {
	JVM_NAMED_OK,      /* its method(s) read */
	JVM_NAMED_STUB,       /* code of the JVM's own: named by its blob */
	JVM_NAMED_GONE,       /* compiled code freed or replaced since the sample */
	JVM_NAMED_UNREADABLE, /* what it pointed at is not a method */
};

/*
 * The lines of Java frame @tagged (as BPF recorded it) of @jp, innermost
 * first, into @out (at most @max, at least 1): how many (0 for none
 * readable, with @res saying why).  Strings are @jp's, kept as long as it.
 */
size_t jvm_frame_lines(struct jvmproc *jp, uint64_t tagged, struct jvm_frame_line *out, size_t max,
		       enum jvm_frame_result *res);

#endif
