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

/* Entries a process keeps (methods, stubs, frames), and the bytes methods may take. */
#define JVM_NAMES_MAX 65536
#define JVM_NAMES_BYTES (32u << 20)

/* One method, read. */
struct jvm_named {
	const char *function;    /* "java.util.HashMap.get" */
	const char *system_name; /* with its signature: "java.util.HashMap.get(Ljava/lang/Object;)..."; NULL: none */
	const char *file;        /* "HashMap.java"; NULL when the class has none */
	struct jvm_line *lines;
	uint32_t nlines;
	uint32_t start_line;     /* the lowest line of its table; 0: none */
};

/* What a frame was found to be (jvm_names.counts, for -v and the summary). */
enum jvm_frame_result {
	JVM_NAMED_OK,         /* its method(s) read */
	JVM_NAMED_STUB,       /* code of the JVM's own: named by its blob */
	JVM_NAMED_GONE,       /* compiled code freed or replaced before it was read */
	JVM_NAMED_UNREADABLE, /* what it pointed at is not a method */
	JVM_NAMED_RESULTS,
};

/* One line of a Java frame: the method (or stub) and where in it. */
struct jvm_frame_line {
	const struct jvm_named *method; /* NULL: none readable */
	uint32_t line;      /* 0: unknown */
};

/* Lines a frame keeps: the innermost inlined ones and the compiled method. */
#define JVM_FRAME_LINES 8

/* A frame as BPF recorded it, resolved: its lines, innermost first. */
struct jvm_frame_rec {
	uint64_t tagged; /* the key: what BPF recorded */
	uint8_t n;   /* 0: none (res says why) */
	uint8_t res; /* enum jvm_frame_result */
	struct jvm_frame_line lines[JVM_FRAME_LINES];
};

/*
 * What a process keeps: methods and stubs (each allocated once, so the
 * pointers frames hold stay good) and frames resolved, bounded together.
 */
/* What the frames of every JVM of a run came out as, and entries refused. */
struct jvm_names_stats {
	size_t frames[JVM_NAMED_RESULTS];
	size_t refused;
};

struct jvm_names {
	struct hmap methods; /* Method* -> its struct jvm_named (NULL: unreadable) */
	struct hmap stubs;   /* CodeBlob* -> its struct jvm_named */
	struct hmap frames;  /* the value BPF recorded -> struct jvm_frame_rec */
	size_t bytes;        /* of the methods and stubs */
	struct jvm_names_stats *st; /* the run's, where its counts go; NULL: none kept */
};

/* A run's JVMs. */
struct java_stats {
	size_t jvms;                 /* found and told to BPF */
	size_t refused;              /* not: a layout this reader does not know */
	bool told;                   /* the first refusal was said */
	struct jvm_names_stats names;
};

void jvm_names_init(struct jvm_names *n);
void jvm_names_free(struct jvm_names *n);

/*
 * Java frame @tagged (as BPF recorded it, cprof.h) of @jp, resolved once
 * and kept: read while the process lives (a drain), it names the frame
 * after the process is gone.  NULL for no Java frame, or over the bounds.
 * Its strings live as long as @jp.
 */
const struct jvm_frame_rec *jvm_frame_lines(struct jvmproc *jp, uint64_t tagged);

/*
 * The JVM's own code (a stub, an adapter, the interpreter) at @pc, which
 * BPF did not record as a Java frame (sampled before the JVM was found):
 * named by its blob, looked up once and kept (a drain's look, while the
 * process lives, names it after); NULL for compiled Java code (no compile
 * id to check it by), no blob, or a pc outside the code cache.
 */
const struct jvm_named *jvm_stub_at(struct jvmproc *jp, uint64_t pc);

#endif
