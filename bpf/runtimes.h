/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * runtimes.h: part of the contract with the loader (cprof.h, which
 * includes it): the records of the managed runtimes whose frames BPF's
 * walk recognizes at a pc without CFI and records as what names them
 * later, in place of the pc: HotSpot JVMs and V8 (Node.js).  A frame
 * recorded so has bit 63 set (user pcs lie below 2^47); which runtime
 * recorded it is the process's: the loader attaches at most one of them
 * to a process, so that the bits below mean one thing.
 */
#ifndef CPROF_RUNTIMES_H
#define CPROF_RUNTIMES_H

/*
 * HotSpot JVMs (user/java/, bpf/jvm.bpf.h).  For a process running one,
 * the loader writes jvm_procs[pid]: where its code cache's heaps and their
 * segment maps are, the interpreter's code, and the offsets of the few
 * members a frame's step needs.  A pc without CFI in a heap is a Java
 * frame: stepped by its blob's frame size (compiled code, stubs), by rbp
 * and the saved sender sp (the interpreter), and recorded as what names it
 * later, in place of its pc (user pcs lie below 2^47):
 *   compiled: CPROF_JAVA_FRAME | compile id (15 bits) << 47 | pc
 *   interpreted: CPROF_JAVA_FRAME | CPROF_JAVA_INTERP | bci << 44 | Method* >> 3
 * The compile id tells the loader whether the nmethod it finds at the pc
 * when it names the frame is the one sampled (code is freed and its room
 * given to another); a bci of 0xffff is none read.
 */
#define CPROF_JVM_HEAPS 4
#define CPROF_JAVA_FRAME (1ULL << 63)
#define CPROF_JAVA_INTERP (1ULL << 62)
#define CPROF_JAVA_PC(v) ((v) & ((1ULL << 47) - 1))
#define CPROF_JAVA_CID(v) (((v) >> 47) & 0x7fff)
#define CPROF_JAVA_METHOD(v) (((v) & ((1ULL << 44) - 1)) << 3)
#define CPROF_JAVA_BCI(v) (((v) >> 44) & 0xffff)
#define CPROF_JAVA_NO_BCI 0xffff

struct cprof_jvm_heap {
	__u64 low, high; /* committed code: [low, high) */
	__u64 segmap;    /* its segment map's first byte */
	__u32 log2_segment;
	__u32 pad;
};

/* CPROF_JVM_* flags */
#define CPROF_JVM_CODE_OFFSET 1    /* CodeBlob's code is an int offset from it, not a pointer */
#define CPROF_JVM_COMPLETE_U16 2   /* _frame_complete_offset is 16 bits */

struct cprof_jvm_proc {
	__u64 gen;                 /* the image this is for (cprof_event.gen) */
	__u64 lo, hi;              /* all heaps within [lo, hi) */
	__u64 interp_lo, interp_hi; /* the interpreter's code */
	struct cprof_jvm_heap heap[CPROF_JVM_HEAPS];
	__u32 nheaps;
	__u32 flags;               /* CPROF_JVM_* */
	/* CodeBlob's members, bytes from the blob */
	__u16 blob_frame_size, blob_frame_complete, blob_code, nm_compile_id;
	/* Method::_constMethod; sizeof(ConstMethod), after which its bytecodes lie */
	__u16 method_const, const_size;
	/* interpreter frames: words from rbp */
	__s16 interp_method, interp_bcp, interp_sender_sp;
	__u16 heapblock;           /* sizeof(HeapBlock): a block's header, before its blob */
};

/*
 * V8, Node.js's JavaScript engine (user/node/, bpf/v8.bpf.h).  For a
 * process running a V8 the loader knows, v8_procs[pid] holds the few
 * constants of its layout a frame's check needs, from V8's own
 * post-mortem metadata (the v8dbg_* symbols).  V8 keeps frame pointers:
 * its frames are walked by rbp as they were before, and at a pc without
 * CFI whose frame holds a context (not a typed frame's Smi marker) and a
 * JSFunction whose SharedFunctionInfo's map says it is one, the frame is
 * recorded in place of its pc as
 *   CPROF_V8_FRAME | (bytecode offset slot + 1) << 47 | SharedFunctionInfo
 * The offset slot is an interpreted frame's bytecode offset as the frame
 * holds it (from the BytecodeArray's tagged address: the loader takes the
 * header off), 0 when none was read (compiled code, or over 16 bits).
 * The SharedFunctionInfo (tagged) is what the loader names the frame by,
 * read at the drain: V8's collector may move it by then, so the loader
 * checks its type again before it believes a name.
 */
#define CPROF_V8_FRAME (1ULL << 63)
#define CPROF_V8_SFI(v) ((v) & ((1ULL << 47) - 1))
#define CPROF_V8_SLOT(v) ((int32_t)(((v) >> 47) & 0xffff) - 1)
#define CPROF_V8_NO_SLOT 0xfffe /* the most a slot's value may be */

struct cprof_v8_proc {
	__u64 gen;                     /* the image this is for (cprof_event.gen) */
	/*
	 * Frame slots, bytes from rbp: an interpreted frame's bytecode
	 * offset, then (a word each) its BytecodeArray, the argument count,
	 * the JSFunction and the context (or a typed frame's Smi marker), up
	 * to rbp: read at once.
	 */
	__s16 fp_function, fp_bytecode_offset;
	/* bytes from an object's start (its tagged address less heap_tag) */
	__u16 object_map;              /* HeapObject::map */
	__u16 map_type;                /* Map::instance_type, 16 bits */
	__u16 function_shared;         /* JSFunction::shared */
	__u16 sfi_type, bytecode_array_type; /* their instance types */
	__u8 heap_tag, heap_tag_mask;  /* a heap object's tagged address & mask == tag */
	__u8 smi_shift;                /* a Smi's value: its word >> this (signed) */
	__u8 pad[7];
	/*
	 * The maps of SharedFunctionInfos and BytecodeArrays, as BPF found
	 * them (0: not yet): V8 makes one of each, in its read-only heap,
	 * so that a map equal to it needs no read of its type.  Written by
	 * BPF; the loader writes 0.
	 */
	__u64 sfi_map, bytecode_array_map;
};

#endif
