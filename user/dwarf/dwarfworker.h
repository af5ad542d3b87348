/* SPDX-License-Identifier: MIT */
/*
 * dwarfworker: source lines and inlined calls looked up in a sandboxed
 * child process, so that libdw faulting, hanging or leaking on a hostile
 * object's DWARF costs that object its lines, never the agent.  Rust v0
 * names are demangled there too (demangle.h says why).
 *
 * The child is a fork of the agent, made on first use, which (with
 * exec_self) becomes a fresh image of the agent's own binary started as
 * the reader, dwarfworker_reader_main(): a fork alone would hold every
 * page the agent had -- its tables, symbols and maps -- besides what
 * libdw reads.  It is confined as sandbox.h says before it reads a byte.  It holds no path: the agent finds and checks an object's files
 * (dwarfinfo_locate()) and passes their descriptors over a socketpair
 * (SCM_RIGHTS); the child reads them into images (dwarfimage.h), opens
 * them with libdw and answers lookups, addresses batched per object.
 *
 * Every request has a bounded wait.  A child that dies (a fault, its
 * memory or CPU limit), does not answer in time (killed), or answers
 * something malformed (its replies are parsed as hostile input) fails the
 * request: the caller names that object without lines.  The next request
 * starts a new child.  After DWARFWORKER_MAX_FAILURES failures the worker
 * gives up for its lifetime (a window), so hostile objects can't each
 * cost a timeout.  libdw's leaks die with the child (about 0.5 KB per
 * lookup in malformed DWARF): a fresh one replaces it after
 * DWARFWORKER_RECYCLE_OBJECTS objects, _REQUESTS requests or _BYTES of
 * DWARF, once no object is open in it.
 */
#ifndef CPROF_DWARFWORKER_H
#define CPROF_DWARFWORKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "dwarf/dwarfinfo.h"
#include "util/errbuf.h"

#define DWARFWORKER_TIMEOUT_MS      5000
#define DWARFWORKER_MAX_FAILURES    3
#define DWARFWORKER_RECYCLE_OBJECTS 256
#define DWARFWORKER_RECYCLE_REQUESTS 4096
#define DWARFWORKER_RECYCLE_BYTES   (1ull << 30)
/* Addresses per lookup request: a reply stays under DWARFWORKER_MAX_REPLY. */
#define DWARFWORKER_BATCH           64
/* Names per demangling request: a request fits a socket buffer whole. */
#define DWARFWORKER_NAMES           16
#define DWARFWORKER_MAX_REPLY       (8u << 20)
/* Objects open in the child at once. */
#define DWARFWORKER_MAX_OPEN        32

/*
 * The child's scheduling, passed in by the caller: the reader knows no
 * policy of its own (the agent's main.c gives agent/priority's).
 * @started runs in the agent right after the fork, @ready once the child
 * serves requests.  Either may be NULL.
 */
struct dwarfworker_sched {
	void (*started)(pid_t child);
	void (*ready)(pid_t child);
};

struct dwarfworker_opts {
	uint64_t max_bytes;   /* DWARF one object may load (0: DWARFINFO_MAX_BYTES) */
	unsigned timeout_ms;  /* per request (0: DWARFWORKER_TIMEOUT_MS) */
	/* No child: libdw in this process (tests and fuzzing), same interface. */
	bool in_process;
	/*
	 * The child execs /proc/self/exe, whose main() must then call
	 * dwarfworker_reader_main() first (the agent's and the tests' do);
	 * when that exec fails the fork serves as it is.  Not with child_hook.
	 */
	bool exec_self;
	const struct dwarfworker_sched *sched; /* may be NULL: the default scheduling */
	/* Requests a child serves before it is replaced (0: DWARFWORKER_RECYCLE_REQUESTS). */
	unsigned recycle_requests;
	/*
	 * Tests: runs in the child before each lookup or demangling request
	 * is served: @request counts them, @child the children started before.
	 */
	void (*child_hook)(unsigned long request, unsigned child);
};

struct dwarfworker;

int dwarfworker_new(struct dwarfworker **out, const struct dwarfworker_opts *o);

/*
 * For main(), before anything else: when @argv is the one a child made
 * with exec_self runs with, serves as the reader until the agent closes
 * its socket and returns the exit status (2: @argv malformed); otherwise
 * returns -1 and main() goes on.
 */
int dwarfworker_reader_main(int argc, char **argv);

/* Stops the child (if any) and frees everything. */
void dwarfworker_free(struct dwarfworker *w);

/*
 * Opens the DWARF of @src (its descriptors are sent, not taken) as
 * *@handle.  -ENOENT/-EFBIG/-ENOEXEC as dwarfinfo_open_fds() says of the
 * files; -ECHILD when the child failed or could not be started (@err
 * says how: signal, timeout, malformed reply); -ECANCELED once the worker
 * has given up.
 */
int dwarfworker_open(struct dwarfworker *w, const struct dwarf_source *src, uint32_t *handle,
		     struct errbuf *err);

/* Called per address answered, in order: @i its index in the request. */
typedef void (*dwarfworker_fn)(void *ctx, size_t i, const struct dwarf_frame *frames,
			       size_t nframes);

/*
 * Looks up @n addresses of @handle, at most @max_frames each
 * (dwarfinfo_lookup()), calling @fn for every address answered; strings
 * last until @fn returns.  Returns the number answered (all of them, or
 * fewer when the child failed part-way: -ECHILD's @err is then set too),
 * or -ESTALE for a handle of a child since replaced (open it again).
 */
long dwarfworker_lookup(struct dwarfworker *w, uint32_t handle, const uint64_t *addrs,
			size_t n, size_t max_frames, dwarfworker_fn fn, void *ctx,
			struct errbuf *err);

/* Called per name answered: @demangled its readable form, or NULL when none. */
typedef void (*dwarfworker_name_fn)(void *ctx, size_t i, const char *demangled);

/*
 * Demangles @n names in the child: Rust v0 names, which libiberty may
 * spend 2^64 iterations on (demangle.h), so a timeout must be able to end
 * it.  Returns the number answered, as dwarfworker_lookup() does; -ECANCELED
 * once the worker has given up.
 */
long dwarfworker_demangle(struct dwarfworker *w, const char *const *names, size_t n,
			  dwarfworker_name_fn fn, void *ctx, struct errbuf *err);

/* Forgets @handle (a stale one too); the child may be recycled now. */
void dwarfworker_close(struct dwarfworker *w, uint32_t handle);

/*
 * A worker kept from one window to the next: its failures are counted
 * anew (one that gave up tries again), its child and what the child keeps
 * stay.
 */
void dwarfworker_new_window(struct dwarfworker *w);

struct dwarfworker_stats {
	unsigned spawned;  /* children started */
	unsigned failures; /* requests failed by a child: died, hung, or malformed */
	unsigned recycled; /* children retired after their share of work */
	bool gave_up;      /* DWARFWORKER_MAX_FAILURES reached */
	pid_t pid;         /* the current child, 0 if none */
};

void dwarfworker_stats(const struct dwarfworker *w, struct dwarfworker_stats *st);

#endif
