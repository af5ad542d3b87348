// SPDX-License-Identifier: MIT
/*
 * dwarfworker: see dwarfworker.h.  The agent's side: starting, watching,
 * replacing and killing the child, and its requests (dwarfproto.h has
 * the protocol, dwarfchild.c the child).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dwarf/dwarfproto.h"
#include "util/grow.h"
#include "fs/procstat.h"
#include "dwarf/sandbox.h"

#define REAP_MS        2000

struct dwarfworker {
	struct dwarfworker_opts o;
	int sock;
	pid_t pid;
	uint32_t gen;          /* children started: part of every handle */
	struct slot slots[DWARFWORKER_MAX_OPEN]; /* the agent's view of what is open */
	unsigned objects;      /* opened by the current child */
	unsigned requests;     /* ... and lookup or demangling requests it served */
	uint64_t bytes;
	struct dwarfworker_stats st;
	uint8_t *rbuf;         /* a reply */
	size_t rbuf_cap;
	char *sbuf;            /* the strings of one address's frames, NUL-terminated */
};

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* --- the agent ------------------------------------------------------------------ */

/* Waits up to @ms for @pid; true when reaped, with its status. */
static bool reap(pid_t pid, int ms, int *status)
{
	for (int waited = 0;; waited += 10) {
		pid_t r = waitpid(pid, status, WNOHANG);

		if (r == pid || (r < 0 && errno != EINTR))
			return r == pid;
		if (waited >= ms)
			return false;
		usleep(10000);
	}
}

/*
 * A message the child sent, as printable text in @buf: it ends up on the
 * agent's stderr, and a child is not trusted with terminal escapes.
 */
static const char *child_text(const uint8_t *p, size_t n, char *buf, size_t len)
{
	size_t k = n < len - 1 ? n : len - 1;

	for (size_t i = 0; i < k; i++)
		buf[i] = p[i] >= 0x20 && p[i] < 0x7f ? (char)p[i] : '?';
	buf[k] = '\0';
	return buf;
}

/* Forgets the child and everything open in it. */
static void drop_child(struct dwarfworker *w)
{
	if (w->sock >= 0)
		close(w->sock);
	w->sock = -1;
	w->pid = 0;
	w->objects = 0;
	w->requests = 0;
	w->bytes = 0;
	memset(w->slots, 0, sizeof(w->slots));
	w->gen++;
}

/* A child that failed a request: killed, reaped, described, counted. */
static int fail(struct dwarfworker *w, struct errbuf *err, const char *why)
{
	char how[96];
	int status = 0;
	pid_t pid = w->pid;

	bool reaped;

	kill(pid, SIGKILL);
	reaped = reap(pid, REAP_MS, &status);
	if (why)
		snprintf(how, sizeof(how), "%s", why);
	else if (!reaped)
		snprintf(how, sizeof(how), "stopped answering and did not exit when killed");
	else if (WIFSIGNALED(status) && WTERMSIG(status) != SIGKILL)
		snprintf(how, sizeof(how), "killed by signal %d (%s)", WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
	else if (WIFSIGNALED(status))
		snprintf(how, sizeof(how), "killed (its memory or CPU limit)");
	else
		snprintf(how, sizeof(how), "exited with status %d", WEXITSTATUS(status));
	drop_child(w);
	w->st.failures++;
	if (w->st.failures >= DWARFWORKER_MAX_FAILURES)
		w->st.gave_up = true;
	return errf(err, -ECHILD, "DWARF reader (pid %d) %s%s", (int)pid, how,
		    w->st.gave_up ? "; no more source lines this window" : "");
}

static void retire(struct dwarfworker *w);

void dwarfworker_new_window(struct dwarfworker *w)
{
	char path[64];
	uint64_t cpu_ns, wait_ns;
	bool open = false;

	w->st.failures = 0;
	w->st.gave_up = false;
	for (size_t i = 0; i < DWARFWORKER_MAX_OPEN; i++)
		open |= w->slots[i].used;
	if (!w->pid || open)
		return;
	/* Retired at half its CPU limit, so that the limit never kills it mid-request. */
	snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)w->pid);
	if (!procstat_sched_ns(AT_FDCWD, path, &cpu_ns, &wait_ns) &&
	    cpu_ns >= DWARFCHILD_CPU_SECS / 2 * 1000000000ull) {
		retire(w);
		w->st.recycled++;
	}
}

/* Reads exactly @len bytes before @deadline; -ETIMEDOUT, -EPIPE (closed), -EIO. */
static int recv_by(struct dwarfworker *w, void *buf, size_t len, int64_t deadline)
{
	uint8_t *p = buf;

	while (len) {
		int64_t left = deadline - now_ms();
		struct pollfd pfd = { .fd = w->sock, .events = POLLIN };
		ssize_t n;
		int r;

		if (left <= 0)
			return -ETIMEDOUT;
		r = poll(&pfd, 1, (int)left);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -EIO;
		if (r == 0)
			return -ETIMEDOUT;
		n = recv(w->sock, p, len, MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			return n == 0 ? -EPIPE : -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Reads a reply into w->rbuf; a failure of the child is failed here. */
static int recv_reply(struct dwarfworker *w, struct rep *r, int64_t deadline, struct errbuf *err)
{
	int rc = recv_by(w, r, sizeof(*r), deadline);

	if (!rc && r->len > DWARFWORKER_MAX_REPLY)
		return fail(w, err, "sent a malformed reply (too long)");
	if (!rc && grow_to((void **)&w->rbuf, &w->rbuf_cap, r->len, 1, 65536,
			   DWARFWORKER_MAX_REPLY))
		return fail(w, err, "could not be heard: out of memory for its reply");
	if (!rc && r->len)
		rc = recv_by(w, w->rbuf, r->len, deadline);
	if (rc == -ETIMEDOUT) {
		char why[64];

		snprintf(why, sizeof(why), "did not answer within %.1f s, killed",
			 w->o.timeout_ms / 1000.0);
		return fail(w, err, why);
	}
	return rc ? fail(w, err, NULL) : 0;
}

static int send_req(struct dwarfworker *w, const struct req *q, const void *tail, size_t tail_len,
		    const int *fds, size_t nfds, struct errbuf *err)
{
	char cbuf[CMSG_SPACE(2 * sizeof(int))] = { 0 };
	struct iovec iov[2] = { { (void *)q, sizeof(*q) }, { (void *)tail, tail_len } };
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = tail_len ? 2 : 1 };
	size_t want = sizeof(*q) + tail_len;
	ssize_t n;

	if (nfds) {
		struct cmsghdr *c;

		m.msg_control = cbuf;
		m.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(nfds * sizeof(int));
		memcpy(CMSG_DATA(c), fds, nfds * sizeof(int));
	}
	/* Requests are small: the socket buffer takes them whole, or the child is stuck. */
	do
		n = sendmsg(w->sock, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)want)
		return fail(w, err, n < 0 && errno == EAGAIN ? "stopped reading requests" : NULL);
	return 0;
}

/* No child could be made: a failure like a child's (the worker gives up after a few). */
static int spawn_failed(struct dwarfworker *w, struct errbuf *err, const char *what, int errnum)
{
	w->st.failures++;
	if (w->st.failures >= DWARFWORKER_MAX_FAILURES)
		w->st.gave_up = true;
	return errf(err, -ECHILD, "DWARF reader not started: %s: %s", what, strerror(errnum));
}

/* The argv a child made with exec_self starts with: written before fork(). */
struct reader_argv {
	char sock[16], max[24], parent[16], child[16];
	char *argv[7];
};

static void reader_argv_init(struct reader_argv *a, const struct dwarfworker *w, int sock,
			     pid_t parent)
{
	snprintf(a->sock, sizeof(a->sock), "%d", sock);
	snprintf(a->max, sizeof(a->max), "%" PRIu64, w->o.max_bytes);
	snprintf(a->parent, sizeof(a->parent), "%d", (int)parent);
	snprintf(a->child, sizeof(a->child), "%u", w->st.spawned);
	memcpy(a->argv, (char *[]){ "cprof-bpf", DWARFCHILD_ARGV1, a->sock, a->max, a->parent,
				    a->child, NULL },
	       sizeof(a->argv));
}

/*
 * In the forked child: becomes the agent's binary started as the reader
 * (dwarfworker_reader_main()), with nothing of the agent's memory.
 * Returns only when the exec failed, the socket close-on-exec again.
 */
static void exec_reader(struct reader_argv *a, int sock)
{
	char *envp[] = { NULL };

	if (fcntl(sock, F_SETFD, 0))
		return;
	/* The kernel's link to our own image: no path anyone else controls. */
	execve("/proc/self/exe", a->argv, envp);
	fcntl(sock, F_SETFD, FD_CLOEXEC);
}

static int spawn(struct dwarfworker *w, struct errbuf *err)
{
	struct reader_argv args;
	int sv[2];
	pid_t parent = getpid(), pid;
	struct rep r;
	int rc;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return spawn_failed(w, err, "socketpair", errno);
	reader_argv_init(&args, w, sv[1], parent);
	/* The child leaves by _exit(): nothing buffered here is written twice. */
	pid = fork();
	if (pid < 0) {
		rc = errno;
		close(sv[0]);
		close(sv[1]);
		return spawn_failed(w, err, "fork", rc);
	}
	if (pid == 0) {
		close(sv[0]);
		if (w->o.exec_self && !w->o.child_hook)
			exec_reader(&args, sv[1]);
		dwarfchild_main(&w->o, sv[1], parent, w->st.spawned);
	}
	if (w->o.sched && w->o.sched->started)
		w->o.sched->started(pid);
	close(sv[1]);
	w->sock = sv[0];
	w->pid = pid;
	w->st.spawned++;
	rc = recv_reply(w, &r, now_ms() + w->o.timeout_ms, err);
	if (rc)
		return rc;
	if (r.rc) {
		char msg[ERRBUF_LEN];

		return fail(w, err, child_text(w->rbuf, r.len, msg, sizeof(msg)));
	}
	if (w->o.sched && w->o.sched->ready)
		w->o.sched->ready(pid);
	return 0;
}

/* Ends the current child after its share of work: it exits when its socket closes. */
static void retire(struct dwarfworker *w)
{
	int status;
	pid_t pid = w->pid;

	if (!pid)
		return;
	close(w->sock);
	w->sock = -1;
	if (!reap(pid, REAP_MS, &status)) {
		kill(pid, SIGKILL);
		reap(pid, REAP_MS, &status);
	}
	drop_child(w);
}

int dwarfworker_new(struct dwarfworker **out, const struct dwarfworker_opts *o)
{
	struct dwarfworker *w = calloc(1, sizeof(*w));

	*out = NULL;
	if (!w)
		return -ENOMEM;
	w->o = *o;
	if (!w->o.max_bytes || w->o.max_bytes > DWARFINFO_MAX_BYTES)
		w->o.max_bytes = DWARFINFO_MAX_BYTES;
	if (!w->o.timeout_ms)
		w->o.timeout_ms = DWARFWORKER_TIMEOUT_MS;
	if (!w->o.recycle_requests)
		w->o.recycle_requests = DWARFWORKER_RECYCLE_REQUESTS;
	w->sock = -1;
	w->sbuf = malloc(FRAMES_CAP * (NAME_CAP + 2 * PATH_CAP + 3));
	if (!w->sbuf) {
		free(w);
		return -ENOMEM;
	}
	*out = w;
	return 0;
}

void dwarfworker_free(struct dwarfworker *w)
{
	if (!w)
		return;
	if (w->o.in_process)
		for (size_t i = 0; i < DWARFWORKER_MAX_OPEN; i++)
			dwarfinfo_free(w->slots[i].d);
	retire(w);
	free(w->rbuf);
	free(w->sbuf);
	free(w);
}

static struct slot *find_slot(struct dwarfworker *w, uint32_t handle)
{
	size_t i = handle & 0xff;

	if (i >= DWARFWORKER_MAX_OPEN || !w->slots[i].used || w->slots[i].handle != handle)
		return NULL;
	return &w->slots[i];
}

int dwarfworker_open(struct dwarfworker *w, const struct dwarf_source *src, uint32_t *handle,
		     struct errbuf *err)
{
	struct req q = { .type = REQ_OPEN, .arg = w->o.max_bytes };
	int fds[2] = { src->fd, src->alt_fd };
	size_t slot = 0;
	uint64_t bytes;
	struct rep r;
	int rc;

	if (w->st.gave_up)
		return errf(err, -ECANCELED, "DWARF reader failed %u times: given up",
			    w->st.failures);
	while (slot < DWARFWORKER_MAX_OPEN && w->slots[slot].used)
		slot++;
	if (slot == DWARFWORKER_MAX_OPEN)
		return errf(err, -EMFILE, "DWARF reader: %d objects open already",
			    DWARFWORKER_MAX_OPEN);
	if (w->o.in_process) {
		struct dwarfinfo *d;

		rc = dwarfinfo_open_fds(&d, src->fd, src->alt_fd, w->o.max_bytes, err);
		if (rc)
			return rc;
		*handle = make_handle(w->gen, slot);
		w->slots[slot] = (struct slot){ .used = true, .handle = *handle, .d = d };
		return 0;
	}
	if (!w->pid && (rc = spawn(w, err)))
		return rc;
	q.handle = make_handle(w->gen, slot);
	q.n = src->alt_fd >= 0 ? 2 : 1;
	rc = send_req(w, &q, NULL, 0, fds, q.n, err);
	if (!rc)
		rc = recv_reply(w, &r, now_ms() + w->o.timeout_ms, err);
	if (rc)
		return rc;
	if (r.len < sizeof(bytes) || r.rc > 0 || (r.rc == 0 && r.len != sizeof(bytes)))
		return fail(w, err, "sent a malformed reply");
	memcpy(&bytes, w->rbuf, sizeof(bytes));
	if (r.rc) {
		char msg[ERRBUF_LEN];
		/* What dwarfinfo_open_fds() returns; anything else is not for us to pass on. */
		int rc2 = r.rc == -ENOENT || r.rc == -EFBIG || r.rc == -ENOMEM ? r.rc : -ENOEXEC;

		return errf(err, rc2, "%s",
			    child_text(w->rbuf + sizeof(bytes), r.len - sizeof(bytes), msg, sizeof(msg)));
	}
	w->slots[slot] = (struct slot){ .used = true, .handle = q.handle };
	*handle = q.handle;
	w->objects++;
	w->bytes += src->bytes;
	return 0;
}

/*
 * Decodes one address's frames from @p (@left bytes) into @f, their
 * strings copied NUL-terminated into w->sbuf; bytes used, or 0 if malformed.
 */
static size_t decode(struct dwarfworker *w, const uint8_t *p, size_t left, size_t max,
		     struct dwarf_frame *f, size_t *nf)
{
	static const size_t caps[3] = { NAME_CAP, PATH_CAP, PATH_CAP };
	const uint8_t *start = p;
	char *s = w->sbuf;

	if (!left || p[0] > max)
		return 0;
	*nf = p[0];
	p++, left--;
	for (size_t i = 0; i < *nf; i++) {
		const char **dst[3] = { &f[i].name, &f[i].file, &f[i].dir };
		int32_t lines[2];
		uint16_t lens[3];

		if (left < sizeof(lines) + sizeof(lens))
			return 0;
		memcpy(lines, p, sizeof(lines));
		memcpy(lens, p + sizeof(lines), sizeof(lens));
		p += sizeof(lines) + sizeof(lens);
		left -= sizeof(lines) + sizeof(lens);
		f[i].line = lines[0] > 0 ? lines[0] : 0;
		f[i].start_line = lines[1] > 0 ? lines[1] : 0;
		for (int k = 0; k < 3; k++) {
			*dst[k] = NULL;
			if (lens[k] == NO_STR)
				continue;
			if (lens[k] > caps[k] || lens[k] > left)
				return 0;
			memcpy(s, p, lens[k]);
			s[lens[k]] = '\0';
			*dst[k] = s;
			s += lens[k] + 1;
			p += lens[k];
			left -= lens[k];
		}
	}
	return (size_t)(p - start);
}

long dwarfworker_lookup(struct dwarfworker *w, uint32_t handle, const uint64_t *addrs,
			size_t n, size_t max_frames, dwarfworker_fn fn, void *ctx,
			struct errbuf *err)
{
	struct dwarf_frame f[FRAMES_CAP];
	struct slot *s = find_slot(w, handle);
	size_t done = 0;

	if (!s)
		return -ESTALE;
	if (max_frames > FRAMES_CAP)
		max_frames = FRAMES_CAP;
	if (w->o.in_process) {
		for (size_t i = 0; i < n; i++)
			fn(ctx, i, f, dwarfinfo_lookup(s->d, addrs[i], f, max_frames));
		return (long)n;
	}
	while (done < n) {
		size_t k = n - done < DWARFWORKER_BATCH ? n - done : DWARFWORKER_BATCH, off = 0;
		struct req q = { .type = REQ_LOOKUP, .handle = handle, .arg = max_frames,
				 .n = (uint32_t)k };
		struct rep r;

		w->requests++;
		if (send_req(w, &q, addrs + done, k * sizeof(addrs[0]), NULL, 0, err) ||
		    recv_reply(w, &r, now_ms() + w->o.timeout_ms, err))
			return (long)done;
		if (r.rc) {
			fail(w, err, "sent a malformed reply");
			return (long)done;
		}
		for (size_t j = 0; j < k; j++) {
			size_t nf = 0, used = decode(w, w->rbuf + off, r.len - off, max_frames, f, &nf);

			if (!used) {
				fail(w, err, "sent a malformed reply");
				return (long)(done + j);
			}
			fn(ctx, done + j, f, nf);
			off += used;
		}
		if (off != r.len) {
			fail(w, err, "sent a malformed reply (trailing bytes)");
			return (long)(done + k);
		}
		done += k;
	}
	return (long)done;
}

long dwarfworker_demangle(struct dwarfworker *w, const char *const *names, size_t n,
			  dwarfworker_name_fn fn, void *ctx, struct errbuf *err)
{
	char out[DEMANGLED_CAP + 1];
	uint8_t *buf;
	size_t done = 0;
	int rc;

	if (w->o.in_process) {
		for (size_t i = 0; i < n; i++)
			fn(ctx, i, demangle_v0(names[i], out, sizeof(out)) ? out : NULL);
		return (long)n;
	}
	if (w->st.gave_up)
		return errf(err, -ECANCELED, "DWARF reader failed %u times: given up",
			    w->st.failures);
	if (!w->pid && (rc = spawn(w, err)))
		return rc;
	buf = malloc(NAMES_BYTES);
	if (!buf)
		return errf(err, -ENOMEM, "out of memory");
	while (done < n) {
		size_t k = n - done < DWARFWORKER_NAMES ? n - done : DWARFWORKER_NAMES, len = 0, off = 0;
		struct req q = { .type = REQ_DEMANGLE, .n = (uint32_t)k };
		struct rep r;

		for (size_t j = 0; j < k; j++) {
			uint16_t l = (uint16_t)strnlen(names[done + j], DEMANGLE_MAX_INPUT);

			memcpy(buf + len, &l, sizeof(l));
			memcpy(buf + len + sizeof(l), names[done + j], l);
			len += sizeof(l) + l;
		}
		q.arg = len;
		w->requests++;
		if (send_req(w, &q, buf, len, NULL, 0, err) ||
		    recv_reply(w, &r, now_ms() + w->o.timeout_ms, err))
			break;
		for (size_t j = 0; j < k; j++) {
			uint16_t l;

			if (r.rc || r.len - off < sizeof(l) ||
			    (memcpy(&l, w->rbuf + off, sizeof(l)), l > DEMANGLED_CAP) ||
			    r.len - off - sizeof(l) < l) {
				fail(w, err, "sent a malformed reply");
				free(buf);
				return (long)(done + j);
			}
			memcpy(out, w->rbuf + off + sizeof(l), l);
			out[l] = '\0';
			off += sizeof(l) + l;
			fn(ctx, done + j, l ? out : NULL);
		}
		if (off != r.len) {
			fail(w, err, "sent a malformed reply (trailing bytes)");
			done += k;
			break;
		}
		done += k;
	}
	free(buf);
	return (long)done;
}

void dwarfworker_close(struct dwarfworker *w, uint32_t handle)
{
	struct slot *s = find_slot(w, handle);
	struct req q = { .type = REQ_CLOSE, .handle = handle };
	bool any = false;

	if (!s)
		return;
	if (w->o.in_process) {
		dwarfinfo_free(s->d);
		*s = (struct slot){ 0 };
		return;
	}
	*s = (struct slot){ 0 };
	if (send_req(w, &q, NULL, 0, NULL, 0, NULL))
		return; /* failed, and dropped */
	for (size_t i = 0; i < DWARFWORKER_MAX_OPEN; i++)
		any |= w->slots[i].used;
	/* libdw's leaks go with the child: a fresh one after its share of work. */
	if (!any && (w->objects >= DWARFWORKER_RECYCLE_OBJECTS ||
		     w->requests >= w->o.recycle_requests ||
		     w->bytes >= DWARFWORKER_RECYCLE_BYTES)) {
		retire(w);
		w->st.recycled++;
	}
}

void dwarfworker_stats(const struct dwarfworker *w, struct dwarfworker_stats *st)
{
	*st = w->st;
	st->pid = w->pid;
}
