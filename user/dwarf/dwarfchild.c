// SPDX-License-Identifier: MIT
/*
 * dwarfchild: the DWARF reader's side of dwarfproto.h, run in a forked
 * child inside the sandbox: it opens objects from the descriptors it is
 * sent, looks up addresses and demangles names, and trusts nothing it reads
 * from the files; every reply is bounded by DWARFWORKER_MAX_REPLY.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dwarf/dwarfkeep.h"
#include "dwarf/dwarfproto.h"
#include "util/grow.h"
#include "dwarf/sandbox.h"

#define CHILD_MEM(max) (4 * (max) + (256ull << 20))
#define CHILD_NOFILE   64

struct out {
	uint8_t *p;
	size_t len, cap;
};

static bool put(struct out *b, const void *data, size_t n)
{
	if (n > DWARFWORKER_MAX_REPLY - b->len ||
	    grow_to((void **)&b->p, &b->cap, b->len + n, 1, 65536, DWARFWORKER_MAX_REPLY))
		return false;
	memcpy(b->p + b->len, data, n);
	b->len += n;
	return true;
}

/* Reads (or writes) exactly @len bytes on the socket; false when it closed or failed. */
static bool child_io(void *buf, size_t len, bool writing)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = writing ? write(SANDBOX_SERVE_FD, p, len) : read(SANDBOX_SERVE_FD, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		p += n;
		len -= (size_t)n;
	}
	return true;
}

static bool child_read(void *buf, size_t len)
{
	return child_io(buf, len, false);
}

static bool child_write(const void *buf, size_t len)
{
	return child_io((void *)buf, len, true);
}

static bool send_reply(int rc, const struct out *payload)
{
	struct rep r = { .rc = rc, .len = payload ? (uint32_t)payload->len : 0 };

	return child_write(&r, sizeof(r)) && (!r.len || child_write(payload->p, payload->len));
}

/* A request header, and the descriptors that came with it. */
static bool child_recv(struct req *q, int *fds, size_t *nfds)
{
	char cbuf[CMSG_SPACE(2 * sizeof(int))];
	struct iovec iov = { q, sizeof(*q) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	ssize_t n;

	*nfds = 0;
	do
		n = recvmsg(SANDBOX_SERVE_FD, &m, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return false;
	for (c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

			for (size_t i = 0; i < k; i++) {
				int fd;

				memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
				if (*nfds < 2)
					fds[(*nfds)++] = fd;
				else
					close(fd);
			}
		}
	return child_read((uint8_t *)q + n, sizeof(*q) - (size_t)n);
}

static bool put_str(struct out *b, const char *s, size_t cap, uint16_t *len)
{
	size_t n = s ? strnlen(s, cap) : 0;

	*len = s ? (uint16_t)n : NO_STR;
	return !n || put(b, s, n);
}

/* One address's frames, encoded. */
static bool put_frames(struct out *b, const struct dwarf_frame *f, size_t n)
{
	uint8_t nf = (uint8_t)n;

	if (!put(b, &nf, 1))
		return false;
	for (size_t i = 0; i < n; i++) {
		int32_t lines[2] = { f[i].line, f[i].start_line };
		uint16_t lens[3];
		size_t at;

		if (!put(b, lines, sizeof(lines)))
			return false;
		at = b->len;
		/* Room for the lengths, filled in once the strings are out. */
		if (!put(b, (uint16_t[3]){ 0 }, sizeof(lens)) ||
		    !put_str(b, f[i].name, NAME_CAP, &lens[0]) ||
		    !put_str(b, f[i].file, PATH_CAP, &lens[1]) ||
		    !put_str(b, f[i].dir, PATH_CAP, &lens[2]))
			return false;
		memcpy(b->p + at, lens, sizeof(lens));
	}
	return true;
}

static struct slot *child_slot(struct slot *slots, uint32_t handle)
{
	size_t i = handle & 0xff;

	return i < DWARFWORKER_MAX_OPEN && slots[i].used && slots[i].handle == handle ? &slots[i]
										       : NULL;
}

/*
 * Opens the object the agent sent into slot @q->handle: the one kept from
 * before (a window ago) when its files are the same, else read anew.
 * @ids[slot] records its identity for the close.
 */
static int child_open(struct slot *slots, struct dwarfkeep_id *ids, struct dwarfkeep *keep,
		      const struct req *q, int *fds, size_t nfds, struct out *b)
{
	struct errbuf err = { "" };
	struct dwarfinfo *d = NULL;
	size_t i = q->handle & 0xff;
	uint64_t bytes = 0;
	int rc = 0;

	if (i >= DWARFWORKER_MAX_OPEN || slots[i].used || nfds < 1) {
		rc = errf(&err, -EINVAL, "bad open request");
	} else {
		dwarfkeep_id(fds[0], nfds > 1 ? fds[1] : -1, q->arg, &ids[i]);
		d = dwarfkeep_take(keep, &ids[i]);
		if (!d)
			rc = dwarfinfo_open_fds(&d, fds[0], nfds > 1 ? fds[1] : -1, q->arg, &err);
	}
	for (size_t k = 0; k < nfds; k++)
		close(fds[k]);
	if (!rc) {
		slots[i] = (struct slot){ .used = true, .handle = q->handle, .d = d };
		bytes = dwarfinfo_bytes(d);
	}
	b->len = 0;
	put(b, &bytes, sizeof(bytes));
	if (rc)
		put(b, err.msg, strlen(err.msg));
	return rc;
}

static bool child_lookup(struct slot *slots, const struct req *q, struct out *b)
{
	uint64_t addrs[DWARFWORKER_BATCH];
	struct dwarf_frame frames[FRAMES_CAP];
	struct slot *s = child_slot(slots, q->handle);
	size_t max = q->arg < FRAMES_CAP ? (size_t)q->arg : FRAMES_CAP;

	if (q->n > DWARFWORKER_BATCH || !child_read(addrs, q->n * sizeof(addrs[0])) || !s)
		return false;
	b->len = 0;
	for (size_t i = 0; i < q->n; i++) {
		size_t n = dwarfinfo_lookup(s->d, addrs[i], frames, max);

		if (!put_frames(b, frames, n))
			return false;
	}
	return true;
}

static bool child_demangle(const struct req *q, uint8_t *in, struct out *b)
{
	char name[DEMANGLE_MAX_INPUT + 1], out[DEMANGLED_CAP + 1];
	size_t off = 0;

	if (q->n > DWARFWORKER_NAMES || q->arg > NAMES_BYTES || !child_read(in, (size_t)q->arg))
		return false;
	b->len = 0;
	for (uint32_t i = 0; i < q->n; i++) {
		uint16_t len, outlen;

		if (q->arg - off < sizeof(len))
			return false;
		memcpy(&len, in + off, sizeof(len));
		off += sizeof(len);
		if (len > DEMANGLE_MAX_INPUT || q->arg - off < len)
			return false;
		memcpy(name, in + off, len);
		name[len] = '\0';
		off += len;
		outlen = (uint16_t)demangle_v0(name, out, sizeof(out));
		if (!put(b, &outlen, sizeof(outlen)) || !put(b, out, outlen))
			return false;
	}
	return off == q->arg;
}

void dwarfchild_main(const struct dwarfworker_opts *o, int sock, pid_t parent, unsigned child)
{
	struct sandbox_opts so = {
		.serve_fd = sock,
		.mem_bytes = CHILD_MEM(o->max_bytes),
		.cpu_secs = DWARFCHILD_CPU_SECS,
		.nofile = CHILD_NOFILE,
	};
	struct slot slots[DWARFWORKER_MAX_OPEN] = { { 0 } };
	struct dwarfkeep_id ids[DWARFWORKER_MAX_OPEN];
	struct dwarfkeep keep;
	struct errbuf err = { "" };
	struct out b = { 0 };
	uint8_t *names;
	unsigned long nreq = 0;
	int rc;

	/* Named for what it is, before anything else: a failure costs only the name. */
	prctl(PR_SET_NAME, DWARFCHILD_COMM, 0, 0, 0);
	names = malloc(NAMES_BYTES);
	rc = names ? sandbox_enter(&so, parent, &err) : errf(&err, -ENOMEM, "out of memory");

	if (rc) {
		put(&b, err.msg, strlen(err.msg));
		send_reply(rc, &b);
		_exit(1);
	}
	if (!send_reply(0, NULL))
		_exit(0);
	/* As much kept for the next window as one object may take (16 MB without a bound). */
	dwarfkeep_init(&keep, o->max_bytes ? o->max_bytes : 16ull << 20);
	for (;;) {
		struct req q;
		int fds[2];
		size_t nfds;

		if (!child_recv(&q, fds, &nfds))
			_exit(0); /* the agent closed its end: done */
		if (q.type != REQ_OPEN)
			for (size_t k = 0; k < nfds; k++)
				close(fds[k]);
		switch (q.type) {
		case REQ_OPEN:
			rc = child_open(slots, ids, &keep, &q, fds, nfds, &b);
			if (!send_reply(rc, &b))
				_exit(0);
			break;
		case REQ_LOOKUP:
		case REQ_DEMANGLE:
			if (o->child_hook)
				o->child_hook(nreq, child);
			nreq++;
			if (!(q.type == REQ_LOOKUP ? child_lookup(slots, &q, &b)
						   : child_demangle(&q, names, &b)) ||
			    !send_reply(0, &b))
				_exit(2);
			break;
		case REQ_CLOSE: {
			struct slot *s = child_slot(slots, q.handle);

			if (s) {
				/* Kept for the next window's open of the same files. */
				dwarfkeep_put(&keep, &ids[s - slots], s->d);
				*s = (struct slot){ 0 };
			}
			break;
		}
		default:
			_exit(2);
		}
	}
}

/* A decimal argument of the reader's argv, at most @max; false when malformed. */
static bool arg_u64(const char *s, uint64_t max, uint64_t *v)
{
	char *end;

	if (!s || *s < '0' || *s > '9')
		return false;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return !errno && !*end && *v <= max;
}

int dwarfworker_reader_main(int argc, char **argv)
{
	struct dwarfworker_opts o = { 0 };
	uint64_t sock, parent, child;

	if (argc < 2 || strcmp(argv[1], DWARFCHILD_ARGV1))
		return -1;
	if (argc != 6 || !arg_u64(argv[2], INT_MAX, &sock) ||
	    !arg_u64(argv[3], DWARFINFO_MAX_BYTES, &o.max_bytes) ||
	    !arg_u64(argv[4], INT_MAX, &parent) || !arg_u64(argv[5], UINT_MAX, &child))
		return 2;
	dwarfchild_main(&o, (int)sock, (pid_t)parent, (unsigned)child);
}
