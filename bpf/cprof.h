/* SPDX-License-Identifier: MIT */
/*
 * cprof.h: the contract between the BPF program and the loader.
 *
 * Record layouts, map value types and error codes; included by both sides,
 * so it uses only fixed-width kernel-style types and no libc or kernel
 * headers (the includer provides __u32/__u64).
 */
#ifndef CPROF_H
#define CPROF_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define CPROF_COMM_LEN 16
/*
 * Frames kept per stack.  Kernel stacks come from bpf_get_stack, bounded by
 * perf_event_max_stack (127 by default); user stacks unwound by cprof go
 * deeper, so that deep recursion is seen whole.
 */
#define CPROF_MAX_KFRAMES 127
#define CPROF_MAX_FRAMES 512

/* Map sizes.  Counts and stacks are drained and cleared every second. */
#define CPROF_COUNTS_MAX 16384
#define CPROF_STACKS_MAX 8192
#define CPROF_LOST_MAX_PIDS 4096
#define CPROF_KNOWN_PIDS 32768
#define CPROF_FILTER_PIDS 1024
#define CPROF_FILTER_COMMS 64
#define CPROF_FILTER_CGROUPS 64
#define CPROF_CGROUP_MAX_DEPTH 32
#define CPROF_EVENTS_BYTES (256 * 1024)

/*
 * A stack is named by a 64-bit hash of its frames, computed in BPF.  Small
 * values are not hashes but say why there is no stack: the sample is still
 * counted, and the loader shows the reason as a pseudo-frame, so totals add
 * up and every loss is visible.  Real hashes always have CPROF_STACK_HASHED
 * set.
 */
#define CPROF_STACK_HASHED (1ULL << 63)
enum cprof_stack_status {
	CPROF_STACK_NONE = 0,      /* no such stack: kernel thread's user side,
				      user-mode sample's kernel side */
	CPROF_STACK_ERR_READ = 1,  /* the stack walk failed (bpf_get_stack < 0) */
	CPROF_STACK_ERR_EMPTY = 2, /* a user task whose walk gave no frame */
	CPROF_STACK_ERR_FULL = 3,  /* the stacks map was full */
	CPROF_STACK_STATUS_MAX,
	/*
	 * An off-CPU wait whose stacks were not walked (over the per-CPU
	 * budget, or where the thread's last wait was short): its time is
	 * charged all the same.  Above the Python statuses, which share
	 * these small values.
	 */
	CPROF_STACK_UNWALKED = 8,
};

/*
 * Sample key: one count per distinct (thread, thread name, stacks).
 *
 * A sample's user stack is stored without its leaf pc, which goes in the
 * key (uleaf; ustack's frame 0 is stored as 0): in an interpreter's loop,
 * or any large function, the leaf pc is seldom the same twice while its
 * callers are, and a stack stored anew cost a hash map insert and a copy
 * of its size class (CPython 3.12: a new stack on over half the samples,
 * a new stack without its leaf on 5%).  0: the stack is stored whole (an
 * off-CPU wait's, or a leaf pc of 0).  So is a Python stack's innermost
 * instruction position (pyleaf; pystack's frame 1 stored as 0), for the
 * same reason: it moves with every bytecode its loop runs.
 */
struct cprof_sample_key {
	__u32 pid; /* tgid */
	__u32 tid;
	__u64 gen;    /* which program image of the pid (see cprof_event.gen) */
	__u64 ustack; /* stack hash or enum cprof_stack_status */
	__u64 uleaf;  /* the user stack's leaf pc, or 0 */
	__u64 kstack;
	__u64 pystack; /* Python stack hash or enum cprof_py_status */
	__u64 pyleaf;  /* its innermost frame's instruction position, or 0 */
	char comm[CPROF_COMM_LEN]; /* thread name at sample time */
};

/*
 * Count logs: where a sample is counted first, so that a key new in the
 * epoch costs no hash-map insert.  Each CPU has its own part of the live
 * pair's log, a power of two of slots (the loader's choice by the rate
 * and the CPUs, told to BPF before load): the first slot's n is how many
 * follow it in use, each a key and its samples.  A key the CPU
 * logged lately is counted in place, a new one appended; a key may be in
 * several slots and in the counts map as well (the loader sums them), and
 * only a sample that finds its CPU's part full goes to the counts map.
 * The loader reads the idle pair's logs through mmap after the grace
 * period of its flip, and empties them by setting each first slot's n to
 * 0: no program writes them until they are live again.
 */
struct cprof_count_slot {
	struct cprof_sample_key key;
	__u64 n;
};
#define CPROF_COUNT_LOG_MIN 64    /* slots a CPU, at least */
#define CPROF_COUNT_LOG_MAX 2048  /* ... at most (a u16 in BPF's memo) */
#define CPROF_COUNT_LOG_BYTES (8u << 20) /* both pairs, all CPUs, at most */

/*
 * How a user stack walk ended.  OK: it reached the outermost frame.  The
 * others stopped early; the frames found so far are kept and the profile
 * shows the reason as a pseudo-frame at the root.
 */
enum cprof_unwind_status {
	CPROF_UNWIND_OK = 0,
	CPROF_UNWIND_TRUNCATED = 1,  /* more than CPROF_MAX_FRAMES frames */
	CPROF_UNWIND_READ = 2,       /* reading the stack memory failed */
	CPROF_UNWIND_NO_ROW = 3,     /* pc in a table's object but no CFI there,
					and frame pointers did not help */
	CPROF_UNWIND_BAD_CFA = 4,    /* the CFA went backwards: a broken walk */
	CPROF_UNWIND_STATUS_MAX,
};

/* Stack flags: how frames were found. */
#define CPROF_STACK_F_FP 0x100    /* some frames by frame pointers (no table) */
#define CPROF_STACK_F_DWARF 0x200 /* some frames by DWARF CFI */
#define CPROF_STACK_F_OFFCPU 0x400 /* walked for an off-CPU wait, which may end
				      windows later: the loader keeps it */
#define CPROF_STACK_STATUS(s) ((s)->status & 0xff)

struct cprof_stack {
	__u32 nr;     /* frames used in ip[] */
	__u32 status; /* enum cprof_unwind_status | CPROF_STACK_F_* */
	__u64 ip[CPROF_MAX_FRAMES]; /* leaf first */
};

/*
 * Stacks are stored in three maps by length (per pair): a hash map
 * allocates and copies its whole value on every insert, and most stacks
 * are short, so a 20-frame stack costs 264 bytes instead of 4 KiB.  The
 * value of a class is a struct cprof_stack cut after its last frame.
 */
#define CPROF_SHORT_FRAMES 32
#define CPROF_MID_FRAMES 128
#define CPROF_STACK_BYTES(frames) (8 + 8 * (frames))

/* Samples not counted at all, per process and reason. */
enum cprof_lost_reason {
	CPROF_LOST_COUNTS_FULL = 0, /* the counts map was full */
	CPROF_LOST_REASON_MAX,
};

struct cprof_lost {
	__u64 n[CPROF_LOST_REASON_MAX];
};

/*
 * Off-CPU time (--off-cpu).  A thread that blocks is stamped, and its
 * stacks walked, when it leaves the CPU; when it next leaves it again
 * after it came back, a wait of at least the minimum (to its return) is
 * charged, in ns, to those stacks, in maps keyed
 * like the counts (struct cprof_sample_key).  Each CPU walks at most so
 * many stacks a second.
 */
#define CPROF_OFFCPU_MIN_NS 1000000ULL /* default --off-cpu-min: 1 ms */
#define CPROF_OFFCPU_UNWINDS 1000      /* stack walks a second per CPU */
#define CPROF_CPUS_MAX 4096            /* CPUs --cpu can name (user/fs/cpulist.h) */

/* Host-wide counters (a per-CPU array of one element). */
struct cprof_stats {
	__u64 samples;        /* programs run on a profiled task */
	__u64 idle;           /* samples of the idle task, not profiled */
	__u64 filtered;       /* samples of tasks excluded by a filter */
	__u64 lost_no_pidmap; /* lost samples whose pid had no room in lost map */
	__u64 events_dropped; /* process events that did not fit the ring */
	__u64 unwind_dwarf;   /* user stacks walked with CFI tables */
	__u64 unwind_fp_only; /* user stacks of processes with no tables */
	__u64 unwind_status[CPROF_UNWIND_STATUS_MAX]; /* of CFI walks */
	__u64 unwind_unknown_file; /* user stacks with a frame in a file not numbered
				      yet (no table to be had: the loader has read no
				      process that maps it) */
	__u64 offcpu_waits;    /* waits charged */
	__u64 offcpu_unwalked; /* ... of them without stacks (CPROF_STACK_UNWALKED) */
	__u64 offcpu_capped;   /* blocks not walked: over the per-CPU budget */
	__u64 offcpu_ns;       /* time charged */
	__u64 offcpu_short;    /* waits shorter than the minimum: not charged */
	__u64 offcpu_short_ns;
	__u64 offcpu_lost;     /* waits not charged: the off-CPU map was full */
	__u64 exit_maps;       /* exit records sent (struct cprof_exit_maps) */
	__u64 exit_maps_capped; /* ... not sent: over the per-CPU budget or no room */
	__u64 exit_files;      /* paths of unknown files sent (struct cprof_exit_file) */
	__u64 exit_files_unsent; /* ... not: outside the process's root, too deep or
				    long, over CPROF_EXIT_FILES, or no room */
	__u64 defer_sent;      /* samples sent to be walked again (struct cprof_deferred) */
	__u64 defer_refused;   /* ... counted as walked: over the per-CPU budget, no room */
};

/*
 * known_pids value: the image generation of a process announced to the
 * loader.  An exited image stays (so that samples of its last moments in
 * do_exit keep its generation) until the loader has written it and forgets
 * it; a sample of a task not exiting then makes a new image of that pid.
 */
struct cprof_known_image {
	__u64 gen;
	/*
	 * First sampled inside execve, after the new comm was set but before
	 * the exec tracepoint: the exec adopts this generation, so those
	 * samples join the new image's profile instead of making one of
	 * their own.
	 */
	__u32 in_exec;
	__u32 exited; /* the whole thread group has exited */
};

enum cprof_event_type {
	CPROF_EV_NEW_PROC = 1, /* first sample of a process we did not know */
	CPROF_EV_EXEC = 2,     /* sched_process_exec */
	CPROF_EV_EXIT = 3,     /* the thread group leader exited */
	CPROF_EV_NEW_CODE = 4, /* a pc outside the known mappings (dlopen, JIT) */
	CPROF_EV_PY_CODE = 5,  /* a Python code object first seen in a stack: addr */
	CPROF_EV_WANT_TABLE = 6, /* a sample landed in a file without its table */
	CPROF_EV_EXIT_MAPS = 7,  /* an unread process's mappings at its exit */
	CPROF_EV_EXIT_FILE = 8,  /* ... the path of one of its files with no number */
	CPROF_EV_DEFERRED = 9,   /* a sample whose walk waits for a table (struct cprof_deferred) */
};

struct cprof_event {
	__u32 type;
	__u32 pid;
	/*
	 * Names one program image of a pid: set when the process is first seen
	 * and anew at each exec (a pid reused after an exit is first seen
	 * again), so that samples before and after an exec go to different
	 * profiles.  The ktime of that moment: unique and increasing.
	 */
	__u64 gen;
	__u64 ktime_ns;    /* bpf_ktime_get_ns() at the event */
	__u64 start_time;  /* task start_time (ns since boot): tells pid reuse */
	char comm[CPROF_COMM_LEN]; /* process (group leader) name */
	/*
	 * CPROF_EV_PY_CODE: the code object's address; CPROF_EV_NEW_PROC: the
	 * user pc of the sample or block that found the process, whose
	 * file's table its first walk could not ask for (the loader had not
	 * numbered its files yet); CPROF_EV_NEW_CODE: CPROF_NEW_CODE_STARTUP
	 * when a walk of the process's VMAs at its start (or at a dlopen, with
	 * --ld-probe) sends it (bpf/ldstate.bpf.h), else 0.
	 */
	__u64 addr;
};

#define CPROF_NEW_CODE_STARTUP 1

/*
 * A file as the kernel knows it (the inode of a mapping's file): what the
 * loader's object cache identifies objects by (objcache.h), so that BPF can
 * find a file's table from the VMA of a process the loader has not read.
 */
struct cprof_file_key {
	__u64 ino;
	__u64 size;
	__s64 mtime_sec;
	__u32 mtime_nsec;
	__u32 dev;        /* the kernel's encoding: major << 20 | minor */
};

/*
 * What a file key names: its number, how its offsets become addresses,
 * and where its code starts (as the kernel's mm->start_code of a process
 * running it, before the load bias).
 */
struct cprof_file_ref {
	__u32 file;       /* in unwind_files */
	__u32 flags;      /* CPROF_FILE_REF_* */
	__s64 vaddr_off;  /* ELF virtual address - file offset, in its code */
	__u64 code_vaddr; /* lowest p_vaddr of its executable PT_LOADs */
};
#define CPROF_FILE_REF_CODE 1u /* code_vaddr is known */
#define CPROF_MAX_FILE_KEYS (2 * CPROF_MAX_FILES) /* a file may have copies */

/* CPROF_EV_WANT_TABLE. */
struct cprof_file_event {
	__u32 type;
	__u32 pid;
	__u32 file;       /* the file's number */
	__u32 pad;
};

/*
 * Deferred walks.  A walk that meets a frame in a file whose table is
 * still to be built (asked for, or queued) goes on by frame pointers,
 * which code built without them does not keep: a new program's first
 * samples.  Such a sample, instead of being counted, is sent in its own
 * ring (bpf/defer.bpf.h) with what a walk from that frame needs: the
 * registers there, the frames before it and the stack above its sp.
 * The loader parks it until the table is built, finishes the walk over
 * the same tables (user/deferwalk.c, the same code) and counts it; past
 * a timeout it counts the key as sampled (user/unwind/deferred.c).  At most
 * CPROF_DEFER_RATE a second a CPU.
 */
#define CPROF_DEFER_FRAMES 32         /* frames before the one waiting */
#define CPROF_DEFER_STACK (64 * 1024) /* stack bytes from its sp, at most: the main
					 thread's, up to its mm->start_stack (clang's
					 first samples: 35 KB) */
#define CPROF_DEFER_THREAD_STACK (16 * 1024) /* another thread's, whose top is not known */
#define CPROF_DEFER_RATE 64           /* records a second a CPU */
#define CPROF_DEFER_BYTES (256 * 1024) /* the ring */

struct cprof_deferred {
	__u32 type;      /* CPROF_EV_DEFERRED */
	__u32 file;      /* the file under pc, whose table is to come */
	__u32 nr;        /* frames before pc's, in ip[] (leaf first) */
	__u32 exact;     /* pc is not a return address (the leaf, a signal's) */
	struct cprof_sample_key key; /* as it would have been counted */
	__u64 epoch;     /* the live epoch of the sample: its stacks are in that pair */
	__u64 pc, sp, bp; /* the registers of frame nr */
	__u64 chain_end; /* the walk's (struct unwind_ctx) */
	__u64 stack_lo;  /* stack[] holds the stack at [stack_lo, stack_lo + stack_len) */
	__u32 stack_len;
	__u32 status;    /* CPROF_STACK_F_* of the frames before */
	__u32 pid;       /* key.pid, where the event types put it */
	__u32 pad;
	__u64 ip[CPROF_DEFER_FRAMES];
	__u8 stack[]; /* stack_len bytes; the record is as long as its room for them */
};

/*
 * CPROF_EV_EXIT_MAPS: a sampled process that exits before the loader read
 * its mappings (no entry of the loader's in unwind_procs) tells them at
 * its exit, while its mm is still there: a process that lives milliseconds
 * is gone from /proc by the time the loader looks.  The loader names the
 * files by their identity only, among the objects it already holds, and
 * opens nothing.  Executable file mappings and the vDSO only, the first
 * CPROF_EXIT_MAPS; at most CPROF_EXIT_RECORDS a second per CPU.
 */
#define CPROF_EXIT_MAPS 24
#define CPROF_EXIT_NAME 40
#define CPROF_EXIT_RECORDS 128
struct cprof_exit_map {
	__u64 start, end;          /* [start, end) */
	__u64 pgoff;               /* file offset of start, in 4 KiB pages */
	struct cprof_file_key key; /* ino 0: no identity to match by */
	char name[CPROF_EXIT_NAME]; /* its dentry's name (no directory), for show */
};
#define CPROF_EXIT_MAPS_TRUNCATED 1u /* it had more executable mappings */
/*
 * The vDSO's entry and the uprobe page's: no file (key all zeros), these
 * names; a file always has an inode.
 */
#define CPROF_EXIT_VDSO "[vdso]"
#define CPROF_EXIT_UPROBES "[uprobes]"
struct cprof_exit_maps {
	__u32 type;    /* CPROF_EV_EXIT_MAPS */
	__u32 pid;
	__u64 gen;     /* its image (cprof_event.gen) */
	__u64 cgroup;  /* its cgroup v2 id: /proc/PID/cgroup is gone too */
	__u32 n;       /* entries of m[] used */
	__u32 flags;   /* CPROF_EXIT_MAPS_* */
	struct cprof_exit_map m[CPROF_EXIT_MAPS];
};

/*
 * CPROF_EV_EXIT_FILE: after an exit record, for each of its files that has
 * no number (unwind_file_keys), at most CPROF_EXIT_FILES, where the file is
 * below the process's root, so that the loader can open it and build its
 * table for the next process that maps it: the process is gone, and with it
 * /proc/PID/map_files and /proc/PID/root.  Sent only when the walk from the
 * file's dentry, across mounts, reached the process's root.  The path is
 * its components leaf first, each NUL-terminated, in path[0, len); the
 * root is told by identity (its dentry's inode, mount and mount namespace)
 * so that the loader resolves the path only where the process would have:
 * in its own root, when that is the same.  Identity is the key's, never
 * the path's: the loader opens it confined, checks that it is a regular
 * file with that device and inode, and refuses anything else.
 */
#define CPROF_EXIT_FILES 8
#define CPROF_EXIT_PATH 256  /* the longest path sent, NULs included */
#define CPROF_EXIT_DEPTH 24  /* components and mounts crossed, at most */
struct cprof_exit_file {
	__u32 type;     /* CPROF_EV_EXIT_FILE */
	__u32 pid;
	__u64 gen;      /* the process image of the exit record before it */
	struct cprof_file_key key;
	__u64 root_ino; /* the process's root directory: its inode, */
	__u32 root_dev; /*   its device (the kernel's encoding), */
	__u32 root_mnt; /*   its mount's id (statx's STATX_MNT_ID), */
	__u32 mnt_ns;   /*   its mount namespace's inode */
	__u32 len;      /* bytes of path[] used */
	/* twice CPROF_EXIT_PATH: a component is read at an offset below it */
	char path[2 * CPROF_EXIT_PATH];
};

/*
 * DWARF CFI unwinding.  Userspace turns each object's .eh_frame into rows
 * sorted by pc; a row says how to find the caller's frame from this pc on,
 * until the next row.  What it says is a rule; an object has a few hundred
 * distinct ones (libLLVM: 574 for 950k rows), so a row is a 16-bit pc
 * within its page of code and an 8-bit number of its rule: about 3.2
 * bytes a row with the page index, where a plain row took 8.
 */
enum cprof_cfa_rule {
	CPROF_CFA_INVALID = 0, /* no CFI covers this pc, or a rule we cannot run */
	CPROF_CFA_RSP = 1,     /* CFA = rsp + cfa_off */
	CPROF_CFA_RBP = 2,     /* CFA = rbp + cfa_off */
	CPROF_CFA_PLT = 3,     /* PLT stub: CFA = rsp + 8, +8 more when
				  (rip & 15) >= cfa_off */
	CPROF_CFA_SIGNAL = 4,  /* signal trampoline (__restore_rt): the
				  interrupted registers are in the ucontext at rsp */
	CPROF_CFA_STOP = 5,    /* return address undefined: outermost frame */
};

enum cprof_rbp_rule {
	CPROF_RBP_SAME = 0,    /* rbp is unchanged in the caller */
	CPROF_RBP_OFFSET = 1,  /* caller's rbp saved at CFA + rbp_off * 8 */
	CPROF_RBP_INVALID = 2, /* recovered some other way: unknown */
};

/* 32-bit offsets: a C++ frame may hold 32 KiB of locals (LLVM's do). */
struct cprof_unwind_rule {
	__s32 cfa_off;
	__u8 rules;    /* cfa rule in bits 0-3, rbp rule in bits 4-7 */
	__s8 rbp_off;  /* in units of 8 bytes */
	__u16 pad;
};

#define CPROF_ROW_CFA(r) ((r)->rules & 0xf)
#define CPROF_ROW_RBP(r) ((r)->rules >> 4)
#define CPROF_ROW_RULES(cfa, rbp) ((__u8)((cfa) | ((rbp) << 4)))

/*
 * A table is five runs of 8-byte slots in the rows array, in this order:
 *
 *  rules   its distinct rules, one to a slot, the most used first;
 *  index   entry k = how many rows have pc < k << index_shift, for
 *          k = 0..npages, two to a slot: a lookup searches only the rows of
 *          one page of code (1 KiB unless the table is sparse), a cache
 *          line of pcs, where a search of the whole table missed the cache
 *          at every halving;
 *  pcs     each row's pc within its page (pc & page mask), four to a slot;
 *  ids     each row's rule number, eight to a slot; CPROF_ID_ESCAPE means
 *          one of the rarer rules past the first 255, found in
 *  exc     (row, rule) pairs for those rows, sorted by row.
 *
 * Every run starts on a slot, so each is an array of its own type.
 */
#define CPROF_INDEX_SHIFT 10
#define CPROF_INDEX_SHIFT_MAX 16 /* pcs within a page are 16 bits */
#define CPROF_ID_ESCAPE 255
#define CPROF_MAX_RULES 65535
#define CPROF_RULE_SLOTS(nrules) (nrules)
#define CPROF_INDEX_SLOTS(npages) (((npages) + 2) / 2)
#define CPROF_PC_SLOTS(nrows) (((nrows) + 3) / 4)
#define CPROF_ID_SLOTS(nrows) (((nrows) + 7) / 8)

struct cprof_id_exception {
	__u32 row;
	__u16 id;
	__u16 pad;
};

union cprof_table_slot {
	struct cprof_unwind_rule rule;
	__u32 index[2];
	__u16 pc[4];
	__u8 id[8];
	struct cprof_id_exception exc;
};

/* Where one object's table lies in the rows array (nrows == 0: none). */
struct cprof_table {
	__u64 base;        /* ELF virtual address of page 0's start */
	__u32 first;       /* slot of its first rule: the table's first slot */
	__u32 nrows;
	__u32 npages;      /* index entries - 1: pages the rows span */
	__u32 nexc;        /* rows whose rule is in exc */
	__u16 nrules;
	__u8 index_shift;  /* log2 of the page size, CPROF_INDEX_SHIFT..._MAX */
	__u8 pad;
	__u32 pad2;
};

/* The slots of a table's runs: where each starts, from its first slot. */
#define CPROF_TABLE_INDEX_AT(t) ((t)->first + CPROF_RULE_SLOTS((t)->nrules))
#define CPROF_TABLE_PCS_AT(t) (CPROF_TABLE_INDEX_AT(t) + CPROF_INDEX_SLOTS((t)->npages))
#define CPROF_TABLE_IDS_AT(t) (CPROF_TABLE_PCS_AT(t) + CPROF_PC_SLOTS((t)->nrows))
#define CPROF_TABLE_EXC_AT(t) (CPROF_TABLE_IDS_AT(t) + CPROF_ID_SLOTS((t)->nrows))
#define CPROF_TABLE_SLOTS(t) (CPROF_TABLE_EXC_AT(t) + (t)->nexc - (t)->first)

/*
 * Tables belong to files: the loader gives each object it knows a number,
 * and its table (once built) is in the unwind_files array at that number,
 * shared by every process that maps the file.
 */
#define CPROF_MAX_FILES 4096
#define CPROF_NO_FILE 0xffffffffu

enum cprof_file_state {
	CPROF_FILE_UNBUILT = 0, /* no table yet: a sample landing here asks for it */
	CPROF_FILE_QUEUED = 1,  /* asked for, being built */
	CPROF_FILE_LOADED = 2,  /* t says where */
	CPROF_FILE_NONE = 3,    /* none to be had (no CFI, no room): frame pointers */
};

struct cprof_file {
	struct cprof_table t;
	__u32 state;      /* enum cprof_file_state, the loader's */
	__u32 asked;      /* BPF's: it sent CPROF_EV_WANT_TABLE for this table */
};

/*
 * Where each executable mapping of a process finds its table: the loader
 * writes one of these per process (a hash map keyed by pid), sorted by
 * start.
 */
#define CPROF_MAX_PROC_MAPS 256
#define CPROF_UNWIND_PROCS 8192
struct cprof_proc_map {
	__u64 start, end; /* [start, end) runtime addresses */
	__u64 bias;       /* runtime pc - bias = ELF virtual address */
	__u32 file;       /* its number in unwind_files; CPROF_NO_FILE: none */
	__u32 flags;      /* CPROF_MAP_*; 0 as the loader writes it */
};
/* Added by BPF to the loader's entry (an mmap since the loader read it). */
#define CPROF_MAP_ADDED 1u
/*
 * ... and kept by the loader over a snapshot that lacked it (read while
 * it was mapped); one a later snapshot lacks as well was unmapped.
 */
#define CPROF_MAP_KEPT 2u
/*
 * The process maps more executable mappings than fit: the table has the
 * first CPROF_MAX_PROC_MAPS, and a pc outside them is no news (no
 * CPROF_EV_NEW_CODE: a new snapshot would be truncated the same way).
 */
#define CPROF_PROC_MAPS_TRUNCATED 1u
/*
 * Written by BPF for a process the loader has no entry for yet: the
 * mappings of known files its samples found (unwind.bpf.h).  A pc outside
 * them is no news either: the loader reads the process anyway.
 */
#define CPROF_PROC_MAPS_KERNEL 2u
/*
 * The loader's entry, with mappings BPF added since (CPROF_MAP_ADDED): its
 * snapshot lacks them, so the process's exit sends its mappings.
 */
#define CPROF_PROC_MAPS_GROWN 4u
struct cprof_proc_maps {
	__u32 n;
	__u32 flags; /* CPROF_PROC_MAPS_* */
	struct cprof_proc_map m[CPROF_MAX_PROC_MAPS];
};

/*
 * Python.  For each process running a CPython it knows, the loader writes
 * where the interpreter's state is and how it is laid out (struct
 * cprof_py_proc); the program then reads the sampled thread's Python
 * frames beside its native ones: the thread state whose thread_id is the
 * thread's pthread_t (its fs base), and from it the chain of frames.
 *
 * A Python stack is stored as the native ones are (a struct cprof_stack
 * under its hash), two words a frame, leaf first: the code object's
 * address with its tag in the top bits (pycode_tag.h), then the frame's
 * instruction position as read (an int offset
 * before 3.11, a pointer into the bytecode from 3.11), with
 * CPROF_PY_ENTRY set on the last frame each native call of the
 * interpreter loop runs.  The loader reads the code objects themselves
 * when told of them (CPROF_EV_PY_CODE), while the process lives.
 */
#define CPROF_PY_MAX_FRAMES (CPROF_MAX_FRAMES / 2)
#define CPROF_PY_ENTRY (1ULL << 63)
#define CPROF_PY_PROCS 4096
#define CPROF_PY_THREADS 16384 /* thread states remembered, by tid */
#define CPROF_PY_CODES 16384   /* code objects announced, by process */
#define CPROF_PY_SEARCH 256    /* thread states looked at to find one */
#define CPROF_PY_TSTATE_READ 256 /* most bytes of a thread state read */
#define CPROF_PY_FRAME_READ 128  /* ... and of a frame */
#define CPROF_PY_CODE_READ 128   /* ... and of a code object's tag fields */

enum cprof_py_flags {
	CPROF_PY_F_CFRAME = 1,      /* tstate_frame leads to a _PyCFrame (3.11, 3.12) */
	CPROF_PY_F_LASTI_PTR = 2,   /* frame_lasti is a pointer (3.11+), else an int */
	CPROF_PY_F_IS_ENTRY = 4,    /* frame_entry is is_entry (3.11) */
	CPROF_PY_F_SHIMS = 8,       /* frames whose owner is the C stack are shims
				       marking a native call's first frame (3.12+) */
	CPROF_PY_F_EVERY_ENTRY = 16 /* one native call a frame (3.8-3.10) */
};
#define CPROF_PY_OWNED_BY_CSTACK 3

/* Byte offsets of the fields the program reads; see python_layout.c. */
struct cprof_py_layout {
	__u16 runtime_interps;   /* _PyRuntime.interpreters.head */
	__u16 interp_next;
	__u16 interp_threads;    /* the interpreter's first thread state */
	__u16 tstate_next;
	__u16 tstate_interp;
	__u16 tstate_thread_id;  /* pthread_t */
	__u16 tstate_frame;      /* frame, cframe or current_frame */
	__u16 cframe_frame;      /* _PyCFrame.current_frame (CPROF_PY_F_CFRAME) */
	__u16 frame_back;        /* f_back or previous */
	__u16 frame_code;        /* f_code or f_executable */
	__u16 frame_lasti;       /* f_lasti, prev_instr or instr_ptr */
	__u16 frame_entry;       /* is_entry (CPROF_PY_F_IS_ENTRY) */
	__u16 frame_owner;       /* owner (CPROF_PY_F_SHIMS) */
	__u16 tstate_read;       /* bytes of a thread state read: all of the above */
	__u16 frame_read;        /* ... of a frame */
	__u16 flags;             /* enum cprof_py_flags */
	/*
	 * A code object's tag fields (pycode_tag.h), read as one span of
	 * code_read bytes from code_lo; the others count from code_lo.
	 */
	__u16 code_lo;
	__u16 code_read;
	__u16 code_firstlineno;
	__u16 code_filename;
	__u16 code_name;
	__u16 code_linetable;
	__u16 code_pad[2];
};

struct cprof_py_proc {
	__u64 gen;     /* the image this is for (cprof_event.gen) */
	__u64 runtime; /* address of _PyRuntime */
	struct cprof_py_layout l;
};

/*
 * CPython's perf trampolines (3.12+ run with -X perf or PYTHONPERFSUPPORT=1):
 * every Python function's call of the interpreter loop goes through a copy
 * of a few instructions with no CFI, in anonymous executable arenas filled
 * with copies end to end (perf names them py::... in /tmp/perf-PID.map).
 * The loader reads each arena of a CPython process, and when every byte of
 * it is copies of code it knows, gives BPF the one rule that walks them:
 * one entry per page of the arena, keyed by pid and page.  A copy's pcs
 * [lo, hi) run with its own return address at sp + 8 (CFA = sp + 16), the
 * rest at sp (CFA = sp + 8); the return address of its call is at offset
 * ret, and with CPROF_PY_TRAMP_RBP rbp is saved at CFA - 16 in [lo, hi).
 */
#define CPROF_PY_TRAMP_PAGES 16384 /* pages of arenas, over all processes */
#define CPROF_PY_TRAMP_RBP 1
struct cprof_py_tramp_key {
	__u32 pid;
	__u32 pad;
	__u64 page; /* address >> 12 */
};

struct cprof_py_tramp {
	__u64 start, end; /* the arena: [start, end) */
	__u32 period;     /* bytes from one copy to the next */
	__u8 len;         /* bytes of code in a copy; the rest is padding */
	__u8 lo, hi, ret;
	__u32 flags;      /* CPROF_PY_TRAMP_* */
	__u32 pad;
};

#include "runtimes.h"

/*
 * Why a sample has no Python stack (cprof_sample_key.pystack when it is
 * no hash).  1-3 are enum cprof_stack_status.
 */
enum cprof_py_status {
	CPROF_PY_NONE = 0,      /* not a Python process the loader knows, or Python off */
	CPROF_PY_NO_THREAD = 4, /* no thread state is this thread's (yet) */
	CPROF_PY_IDLE = 5,      /* the thread state has no frame: no Python code running */
	CPROF_PY_READ = 6,      /* reading the interpreter's state failed */
	CPROF_PY_MISMATCH = 7,  /* what was read does not fit the layout */
	CPROF_PY_STATUS_MAX,
};

/* Key of the code objects announced: one event per process image and code. */
struct cprof_py_code_key {
	__u32 pid;
	__u32 pad;
	__u64 gen;
	__u64 code;
};

/*
 * Both sides compile these layouts from this file; the asserts keep the
 * assumptions each side makes about them where a change would break them.
 */
#define CPROF_FIELD_SIZE(type, field) sizeof(((type *)0)->field)
/* Hashed as bytes by the counts map: no padding may go uninitialized. */
_Static_assert(sizeof(struct cprof_sample_key) ==
		       4 + 4 + 8 + 8 + 8 + 8 + 8 + 8 + CPROF_COMM_LEN, "sample key has padding");
_Static_assert(sizeof(struct cprof_count_slot) == sizeof(struct cprof_sample_key) + 8,
	       "count slot has padding");
_Static_assert(CPROF_COUNT_LOG_MAX <= 65536 &&
		       (CPROF_COUNT_LOG_MIN & (CPROF_COUNT_LOG_MIN - 1)) == 0 &&
		       (CPROF_COUNT_LOG_MAX & (CPROF_COUNT_LOG_MAX - 1)) == 0,
	       "count log slots are powers of two a u16 numbers");
/* A stack class's value is struct cprof_stack cut after its last frame. */
_Static_assert(__builtin_offsetof(struct cprof_stack, ip) == CPROF_STACK_BYTES(0),
	       "CPROF_STACK_BYTES does not match struct cprof_stack");
_Static_assert(sizeof(struct cprof_stack) == CPROF_STACK_BYTES(CPROF_MAX_FRAMES),
	       "CPROF_STACK_BYTES does not match struct cprof_stack");
_Static_assert(CPROF_SHORT_FRAMES < CPROF_MID_FRAMES && CPROF_MID_FRAMES < CPROF_MAX_FRAMES,
	       "stack size classes out of order");
/* The BPF side indexes frames and mappings with a mask. */
_Static_assert((CPROF_MAX_FRAMES & (CPROF_MAX_FRAMES - 1)) == 0,
	       "CPROF_MAX_FRAMES is not a power of two");
_Static_assert((CPROF_MAX_PROC_MAPS & (CPROF_MAX_PROC_MAPS - 1)) == 0,
	       "CPROF_MAX_PROC_MAPS is not a power of two");
/* Rows array: 8-byte slots, each filled by one run of a table. */
_Static_assert(sizeof(struct cprof_unwind_rule) == 8, "a rule is not 8 bytes");
_Static_assert(sizeof(union cprof_table_slot) == 8 &&
		       CPROF_FIELD_SIZE(union cprof_table_slot, rule) == 8 &&
		       CPROF_FIELD_SIZE(union cprof_table_slot, index) == 8 &&
		       CPROF_FIELD_SIZE(union cprof_table_slot, pc) == 8 &&
		       CPROF_FIELD_SIZE(union cprof_table_slot, id) == 8 &&
		       sizeof(struct cprof_id_exception) == 8,
	       "a slot is not one run's 8 bytes");
_Static_assert(CPROF_INDEX_SHIFT_MAX <= 16 && CPROF_MAX_RULES <= 0xffff,
	       "pcs within a page or rule numbers do not fit 16 bits");
/* Written by the loader, compared by BPF: no padding. */
_Static_assert(sizeof(struct cprof_table) == 8 + 4 * 4 + 2 + 1 + 1 + 4, "table has padding");
_Static_assert(sizeof(struct cprof_proc_map) == 3 * 8 + 2 * 4, "proc map has padding");
_Static_assert(sizeof(struct cprof_proc_maps) ==
		       2 * 4 + CPROF_MAX_PROC_MAPS * sizeof(struct cprof_proc_map),
	       "proc maps have padding");
_Static_assert(sizeof(struct cprof_event) == 4 + 4 + 8 + 8 + 8 + CPROF_COMM_LEN + 8,
	       "event has padding");
/* Written by the loader: no padding. */
_Static_assert(sizeof(struct cprof_py_layout) == 24 * 2, "py layout has padding");
_Static_assert(sizeof(struct cprof_py_proc) == 8 + 8 + sizeof(struct cprof_py_layout),
	       "py proc has padding");
_Static_assert(sizeof(struct cprof_py_code_key) == 4 + 4 + 8 + 8, "py code key has padding");
_Static_assert(sizeof(struct cprof_py_tramp_key) == 4 + 4 + 8, "py tramp key has padding");
_Static_assert(sizeof(struct cprof_py_tramp) == 8 + 8 + 4 + 4 + 4 + 4, "py tramp has padding");
/* A Python stack takes two words a frame in a struct cprof_stack. */
_Static_assert(2 * CPROF_PY_MAX_FRAMES == CPROF_MAX_FRAMES, "Python frames do not fill a stack");
/* The program indexes its read buffers with masks. */
_Static_assert((CPROF_PY_TSTATE_READ & (CPROF_PY_TSTATE_READ - 1)) == 0 &&
		       (CPROF_PY_FRAME_READ & (CPROF_PY_FRAME_READ - 1)) == 0 &&
		       (CPROF_PY_CODE_READ & (CPROF_PY_CODE_READ - 1)) == 0,
	       "Python read sizes are not powers of two");
_Static_assert(CPROF_PY_STATUS_MAX < 64, "Python statuses must stay small stack values");
_Static_assert((int)CPROF_PY_STATUS_MAX <= (int)CPROF_STACK_UNWALKED && CPROF_STACK_UNWALKED < 64,
	       "CPROF_STACK_UNWALKED must be a small value no Python status takes");
_Static_assert(sizeof(struct cprof_v8_proc) == 8 + 2 * 2 + 5 * 2 + 3 + 7 + 2 * 8,
	       "v8 proc has padding");
_Static_assert(sizeof(struct cprof_known_image) == 8 + 4 + 4, "known image has padding");
_Static_assert(sizeof(struct cprof_file_key) == 8 * 3 + 4 * 2, "file key has padding");
_Static_assert(sizeof(struct cprof_file_ref) == 4 + 4 + 8 + 8, "file ref has padding");
_Static_assert(sizeof(struct cprof_file_event) == 4 * 4, "file event has padding");
_Static_assert(sizeof(struct cprof_exit_file) == 16 + sizeof(struct cprof_file_key) + 8 + 4 * 4 +
		       2 * CPROF_EXIT_PATH, "cprof_exit_file: no padding");
_Static_assert(sizeof(struct cprof_exit_map) == 3 * 8 + sizeof(struct cprof_file_key) +
		       CPROF_EXIT_NAME && sizeof(struct cprof_exit_maps) ==
		       4 * 8 + CPROF_EXIT_MAPS * sizeof(struct cprof_exit_map),
	       "exit maps have padding");
_Static_assert(sizeof(struct cprof_file) == sizeof(struct cprof_table) + 2 * 4,
	       "file has padding");
_Static_assert(sizeof(struct cprof_deferred) == 4 * 4 + sizeof(struct cprof_sample_key) +
		       6 * 8 + 4 * 4 + 8 * CPROF_DEFER_FRAMES,
	       "deferred record has padding");
_Static_assert(sizeof(struct cprof_stats) == 8 * (8 + CPROF_UNWIND_STATUS_MAX + 13),
	       "stats are not all u64 counters");

#endif
