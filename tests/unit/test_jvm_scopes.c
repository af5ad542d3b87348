// SPDX-License-Identifier: MIT
/*
 * A compiled method's inlined frames read from its debug info
 * (jvm_scopes), against the JDK's own serviceability agent: each JDK
 * found here (Debian's 17, Temurin's 25) runs tests/workloads/java/Hot,
 * whose Hot.work is compiled by C2 with spinA and spinB inlined, and
 * `jhsdb clhsdb`'s "jstack -v" says, for the main thread's compiled
 * frame, its pc and each of its Java frames with its Method*, bci and
 * line.  (jhsdb jstack --mixed gives pcs too, but JDK 25's names its top
 * compiled frame "<Unknown compiled code>"; "jstack -v" is the same
 * agent's walk, printed with the pc and Method* of every frame.)
 *
 * The agent picks, for a pc that is not a return address, the PcDesc
 * nearest at or before it (a debugger's guess); jvm_scopes_at takes the
 * one at or after it (the VM's and profilers' rule).  The test asks
 * jvm_scopes_at at the agent's PcDesc, found from the offsets
 * jvm_scopes_pc_offsets gives, so both decode the same scope chain.
 * That rule seldom shows the agent a leaf inside an inlined loop (C2
 * leaves a PcDesc only at its end), so inlining is checked apart: C2's
 * Hot.work has a PcDesc in spinA and one in spinB inlined into it, each
 * at the bci javap gives for work's call of it.
 *
 * Then made-up memory: a small nmethod in each release's layout, well
 * made, then with a decode offset past its stream, a sender chain that
 * loops, a PcDesc array of a size no multiple of a PcDesc's, a method
 * index past the metadata, sections outside the blob.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "elf/elfobj.h"
#include "fs/procmaps.h"
#include "java/jvm.h"
#include "java/jvm_method.h"
#include "java/jvm_scopes.h"
#include "jvmlive.h"
#include "testlib.h"
#include "testutil.h"

#define CHECKS_PER_JDK 5
#define HOSTILE_CHECKS 11
#define SA_FRAMES_MAX 64
#define SA_SAMPLES 3
#define OFFSETS_MAX 65536

/* "Hot.work(long)" as "Hot" "." "work": whether @jm is that method. */
static bool same_name(const struct jvm_method *jm, const char *sa)
{
	size_t k = strlen(jm->klass), n = strlen(jm->name);

	return !strncmp(sa, jm->klass, k) && sa[k] == '.' && !strncmp(sa + k + 1, jm->name, n) &&
	       sa[k + 1 + n] == '(';
}

struct tally {
	size_t frames, matched, named, lines;
	char miss[2048];
};

static void note(struct tally *t, const char *f, ...) __attribute__((format(printf, 2, 3)));
static void note(struct tally *t, const char *f, ...)
{
	size_t used = strlen(t->miss);
	va_list ap;

	if (used > sizeof(t->miss) - 64)
		return;
	va_start(ap, f);
	vsnprintf(t->miss + used, sizeof(t->miss) - used, f, ap);
	va_end(ap);
}

/* One physical compiled frame, @sa (@n Java frames, innermost first), checked. */
static void check_frame(const struct jvmproc *jp, const struct jvmlive_saframe *sa, size_t n,
			struct jvm_method *jm, int32_t *offs, struct tally *t)
{
	struct jvm_scope sc[JVM_SCOPES_MAX];
	struct jvm_blob b;
	uint64_t q = 0;
	int k, e = jvm_blob_find(&jp->layout, &jp->mem, &jp->code, sa[0].pc, &b);
	bool same = true, names = true, lines = true;

	t->frames++;
	if (!e)
		q = jvmlive_sa_pc(jp, &b, sa[0].pc);
	k = e ? e : jvm_scopes_at(&jp->layout, &jp->mem, &b, q ? q : sa[0].pc, sc, JVM_SCOPES_MAX);
	if (k != (int)n) {
		note(t, "pc %#lx (blob %d, %s, PcDesc at +%#lx): %d scopes, the agent %zu (%s@%d); ",
		     sa[0].pc, e, e ? "" : b.name, q ? (unsigned long)(q - b.code_begin) : 0ul, k, n,
		     sa[0].name, sa[0].bci);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		if (sc[i].method != sa[i].method || sc[i].bci != sa[i].bci) {
			same = false;
			note(t, "pc %#lx scope %zu: %#lx@%d, the agent %s %#lx@%d; ", sa[0].pc, i,
			     sc[i].method, sc[i].bci, sa[i].name, sa[i].method, sa[i].bci);
		}
		if (jvm_method_read(&jp->layout, &jp->mem, sc[i].method, jm) ||
		    !same_name(jm, sa[i].name)) {
			names = false;
			note(t, "scope %zu named %s.%s, the agent %s; ", i, jm->klass, jm->name,
			     sa[i].name);
		} else if (sa[i].line >= 0 && sc[i].bci >= 0 &&
			   jvm_method_line(jm, (uint32_t)sc[i].bci) != (uint32_t)sa[i].line) {
			lines = false;
			note(t, "%s bci %d: line %u, the agent %d; ", sa[i].name, sc[i].bci,
			     jvm_method_line(jm, (uint32_t)sc[i].bci), sa[i].line);
		}
	}
	t->matched += same;
	t->named += names;
	t->lines += lines;
}

/* Each PcDesc of Hot.work's nmethod (the one at @pc): its scopes, and the rule between two. */
static bool sweep(const struct jvmproc *jp, uint64_t pc, int32_t *offs, char *why, size_t cap)
{
	struct jvm_scope a[JVM_SCOPES_MAX], c[JVM_SCOPES_MAX];
	struct jvm_method *jm = calloc(1, sizeof(*jm));
	struct jvm_blob b;
	int n = -ENOENT;
	size_t good = 0;

	if (jm && !jvm_blob_find(&jp->layout, &jp->mem, &jp->code, pc, &b))
		n = jvm_scopes_pc_offsets(&jp->layout, &jp->mem, &b, offs, OFFSETS_MAX);
	for (int i = 1; i + 1 < n && i < OFFSETS_MAX; i++) {
		uint64_t at = b.code_begin + (uint64_t)offs[i];
		int ka = jvm_scopes_at(&jp->layout, &jp->mem, &b, at, a, JVM_SCOPES_MAX);
		/* a pc just past the previous PcDesc finds this one */
		int kc = jvm_scopes_at(&jp->layout, &jp->mem, &b,
				       b.code_begin + (uint64_t)(offs[i - 1] + 1), c, JVM_SCOPES_MAX);
		bool ok = ka > 0 && kc == ka && a[ka - 1].method == b.method;

		for (int s = 0; ok && s < ka; s++)
			ok = a[s].method == c[s].method && a[s].bci == c[s].bci &&
			     !jvm_method_read(&jp->layout, &jp->mem, a[s].method, jm) &&
			     a[s].bci < (int32_t)jm->code_size;
		if (ok)
			good++;
		else if (!why[0])
			snprintf(why, cap, "PcDesc %d (offset %d): %d scopes, %d just past the last", i,
				 offs[i], ka, kc);
	}
	free(jm);
	if (n < 3 && !why[0])
		snprintf(why, cap, "%d PcDescs", n);
	return n >= 3 && good == (size_t)(n - 2);
}

/* The bci of Hot.work's call of @callee ("spinA"), from javap's bytecode; -1 if none. */
static int call_bci(const char *home, const char *classes, const char *callee)
{
	char cmd[600], line[512], want[64];
	bool in = false;
	int bci = -1, b;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "%s/bin/javap -c -p -cp %s Hot 2>/dev/null", home, classes);
	snprintf(want, sizeof(want), "// Method %s:(J)J", callee);
	f = popen(cmd, "r");
	while (f && fgets(line, sizeof(line), f)) {
		if (line[0] == ' ' && line[1] == ' ' && line[2] != ' ')
			in = strstr(line, " work(long)") != NULL;
		else if (in && bci < 0 && strstr(line, want) && sscanf(line, " %d:", &b) == 1)
			bci = b;
	}
	if (f)
		pclose(f);
	return bci;
}

/*
 * Whether the nmethod at @pc (C2's Hot.work) has a PcDesc in spinA and one
 * in spinB inlined into it, each at the bci of work's call of it: C2
 * inlines both (small, hot), and javap says where the calls are.
 */
static bool inlined_at_calls(const struct jvmproc *jp, uint64_t pc, const char *home,
			     const char *classes, struct jvm_method *jm, int32_t *offs, char *why,
			     size_t cap)
{
	static const char *const callee[2] = { "spinA", "spinB" };
	int at[2] = { call_bci(home, classes, callee[0]), call_bci(home, classes, callee[1]) };
	bool seen[2] = { false, false };
	struct jvm_scope sc[JVM_SCOPES_MAX];
	struct jvm_blob b;
	int n = -ENOENT;

	if (!jvm_blob_find(&jp->layout, &jp->mem, &jp->code, pc, &b))
		n = jvm_scopes_pc_offsets(&jp->layout, &jp->mem, &b, offs, OFFSETS_MAX);
	for (int i = 1; i + 1 < n && i < OFFSETS_MAX; i++) {
		int k = jvm_scopes_at(&jp->layout, &jp->mem, &b, b.code_begin + (uint64_t)offs[i], sc,
				      JVM_SCOPES_MAX);

		if (k != 2 || jvm_method_read(&jp->layout, &jp->mem, sc[0].method, jm) ||
		    strcmp(jm->klass, "Hot"))
			continue;
		for (int c = 0; c < 2; c++)
			if (!strcmp(jm->name, callee[c]) && sc[1].bci == at[c] && sc[1].method == b.method)
				seen[c] = true;
	}
	snprintf(why, cap, "%d PcDescs; spinA at bci %d %s, spinB at bci %d %s", n, at[0],
		 seen[0] ? "seen" : "not seen", at[1], seen[1] ? "seen" : "not seen");
	return at[0] >= 0 && at[1] >= 0 && seen[0] && seen[1];
}

static void check_jdk(unsigned major, const char *home, const char *classes)
{
	char java[PATH_MAX], why[256] = "";
	struct jvmlive_saframe *sa = calloc(SA_FRAMES_MAX, sizeof(*sa));
	struct jvm_method *jm = calloc(1, sizeof(*jm));
	int32_t *offs = calloc(OFFSETS_MAX, sizeof(*offs));
	struct errbuf err = { "" };
	struct jvmproc *jp = NULL;
	struct tally t = { 0 };
	uint64_t work_pc = 0;
	pid_t pid;
	int e;

	snprintf(java, sizeof(java), "%s/bin/java", home);
	if (!jvmlive_usable(major, home, classes, true, CHECKS_PER_JDK))
		goto out;
	pid = jvmlive_start_hot(java, classes, 60);
	e = pid > 0 ? jvmlive_find(pid, &jp, &err) : -ECHILD;
	CHECK(!e && jp->layout.major == major && jp->layout.scopes_ok,
	      fmt("JDK %u: its JVM found, its debug info's layout known", major),
	      "%d: %s (major %u, scopes %d)", e, err.msg, jp ? jp->layout.major : 0,
	      jp ? jp->layout.scopes_ok : 0);

	/* a few of the agent's looks at C2's Hot.work */
	if (!e)
		jvmlive_wait_c2(home, pid, "Hot.work(J)V", 30);
	for (int s = 0; !e && s < SA_SAMPLES; s++) {
		size_t n = jvmlive_sa_frames(home, pid, sa, SA_FRAMES_MAX);

		jvmproc_refresh(jp, &err);
		for (size_t i = 0; i < n && jm && offs;) {
			size_t j = i + 1;

			if (!sa[i].compiled) {
				i++;
				continue;
			}
			/* the Java frames of one compiled frame share its pc */
			while (j < n && sa[j].compiled && sa[j].pc == sa[i].pc)
				j++;
			check_frame(jp, &sa[i], j - i, jm, offs, &t);
			if (strstr(sa[j - 1].name, "Hot.work("))
				work_pc = sa[i].pc;
			i = j;
		}
	}
	CHECK(!e && t.frames && t.matched == t.frames,
	      fmt("JDK %u: each compiled frame of main the agent shows has its Method*s and bcis",
		  major),
	      "%zu of %zu: %s", t.matched, t.frames, t.miss);
	CHECK(!e && work_pc && jm && offs && inlined_at_calls(jp, work_pc, home, classes, jm, offs, why,
								sizeof(why)),
	      fmt("JDK %u: C2's Hot.work has spinA and spinB inlined, at their calls' bcis in javap",
		  major),
	      "%s", work_pc ? why : "no compiled Hot.work seen");
	why[0] = 0;
	CHECK(!e && t.frames && t.named == t.frames && t.lines == t.frames,
	      fmt("JDK %u: ... each named, and at the line, the agent gives", major),
	      "%zu, %zu of %zu: %s", t.named, t.lines, t.frames, t.miss);
	CHECK(!e && work_pc && offs && sweep(jp, work_pc, offs, why, sizeof(why)),
	      fmt("JDK %u: every PcDesc of Hot.work decodes out to it, and a pc between two finds the next",
		  major),
	      "%s", work_pc ? why : "no compiled Hot.work seen");
	jvmproc_free(jp);
	jvmlive_stop(pid);
out:
	free(offs);
	free(jm);
	free(sa);
}

/* Made-up memory: one region from BASE. */
#define BASE 0x100000ull
#define IMG_SIZE 0x3000u
#define BLOB (BASE + 0x100)
#define OWN 0x7000ull   /* the nmethod's Method* */
#define INNER 0x7100ull /* the one inlined into it */

struct img {
	uint8_t mem[IMG_SIZE];
};

static int img_read(const struct memsrc *m, uint64_t addr, void *buf, size_t len)
{
	const struct img *im = m->ctx;

	if (addr < BASE || addr - BASE > IMG_SIZE || len > IMG_SIZE - (addr - BASE))
		return -EFAULT;
	memcpy(buf, im->mem + (addr - BASE), len);
	return 0;
}

static void put32(struct img *im, uint64_t a, int32_t v)
{
	memcpy(im->mem + (a - BASE), &v, 4);
}

static void put64(struct img *im, uint64_t a, uint64_t v)
{
	memcpy(im->mem + (a - BASE), &v, 8);
}

/*
 * The scopes stream, as the JVM writes it for JDK @major: a first byte no
 * offset points at, then the outer scope at 1 (no sender, metadata 1,
 * bci 10) and the inner at 7 (sender 1, metadata 2, bci 3), each with
 * three more offsets (locals, expressions, monitors) left 0.  Numbers
 * below 192 are one byte, plus one from JDK 20.
 */
static const uint8_t stream17[] = { 0xff, 0, 1, 11, 0, 0, 0, 1, 2, 4, 0, 0, 0 };
#define OUTER_AT 1
#define INNER_AT 7
#define STREAM_LEN sizeof(stream17)

/* PcDescs: the sentinel, the inner scope at 0x10, the outer at 0x20, the end. */
static const int32_t descs[][4] = {
	{ -1, 0, 0, 0 }, { 0x10, INNER_AT, 0, 0 }, { 0x20, OUTER_AT, 0, 0 }, { INT32_MAX, OUTER_AT, 0, 0 },
};
#define NDESCS 4

/* Where the made-up nmethod's members are. */
static void fake_layout(struct jvm_layout *l, unsigned major)
{
	memset(l, 0, sizeof(*l));
	l->major = major;
	l->scopes_ok = true;
	l->scopes_immutable = major >= 24;
	l->pcdesc_size = 16;
	l->pcdesc_pc_offset = 0;
	l->pcdesc_scope_offset = 4;
	l->nm_scopes_pcs = 0x10;
	l->nm_dependencies = 0x14;
	l->nm_metadata = 0x18;
	l->nm_scopes_data_begin = 0x20;
	l->nm_scopes_data = 0x14;
	l->nm_immutable = 0x18;
	l->nm_immutable_size = 0x20;
	l->blob_mutable = 0x28;
	l->blob_mutable_size = 0x30;
	l->blob_relocation_size = 0x34;
}

/*
 * A well-made nmethod of JDK @major at BLOB: 17's with its sections in
 * the blob (metadata at 0x100, stream at 0x110, PcDescs at 0x140); 25's
 * with its PcDescs and stream in immutable data (BASE + 0x1000) and its
 * metadata after 8 bytes of relocations in mutable data (BASE + 0x2000).
 */
static void fake_nmethod(struct img *im, struct jvm_blob *b, unsigned major)
{
	uint64_t meta, data, pcs;

	memset(im, 0, sizeof(*im));
	*b = (struct jvm_blob){ .addr = BLOB, .code_begin = BLOB + 0x400, .size = 0x800,
				.is_nmethod = true, .method = OWN };
	if (major >= 24) {
		uint64_t imm = BASE + 0x1000, mut = BASE + 0x2000;

		pcs = imm;
		data = imm + NDESCS * 16;
		meta = mut + 8;
		put32(im, BLOB + 0x10, 0);
		put32(im, BLOB + 0x14, NDESCS * 16);
		put64(im, BLOB + 0x18, imm);
		put32(im, BLOB + 0x20, NDESCS * 16 + (int32_t)STREAM_LEN + 4);
		put64(im, BLOB + 0x28, mut);
		put32(im, BLOB + 0x30, 8 + 16);
		put32(im, BLOB + 0x34, 8);
	} else {
		meta = BLOB + 0x100;
		data = BLOB + 0x110;
		pcs = BLOB + 0x140;
		put32(im, BLOB + 0x10, 0x140);
		put32(im, BLOB + 0x14, 0x140 + NDESCS * 16);
		put32(im, BLOB + 0x18, 0x100);
		put64(im, BLOB + 0x20, data);
	}
	put64(im, meta, OWN);
	put64(im, meta + 8, INNER);
	for (size_t i = 0; i < STREAM_LEN; i++)
		im->mem[data + i - BASE] = (uint8_t)(stream17[i] + (major >= 20));
	for (int i = 0; i < NDESCS; i++)
		for (int k = 0; k < 4; k++)
			put32(im, pcs + (uint64_t)(i * 16 + k * 4), descs[i][k]);
}

/* The stream's byte at @off of the made-up nmethod of JDK @major. */
static uint8_t *stream_at(struct img *im, unsigned major, size_t off)
{
	return &im->mem[(major >= 24 ? 0x1000 + NDESCS * 16 : 0x210) + off];
}

static int32_t *desc_at(struct img *im, unsigned major, int i, int k)
{
	return (int32_t *)&im->mem[(major >= 24 ? 0x1000 : 0x240) + i * 16 + k * 4];
}

static void check_hostile(void)
{
	static struct img im;
	struct memsrc m = { .read = img_read, .ctx = &im };
	struct jvm_layout l;
	struct jvm_blob b;
	struct jvm_scope sc[JVM_SCOPES_MAX];
	int k, k2, k3;

	for (unsigned major = 17; major <= 25; major += 8) {
		fake_layout(&l, major);
		fake_nmethod(&im, &b, major);
		k = jvm_scopes_at(&l, &m, &b, b.code_begin + 5, sc, JVM_SCOPES_MAX);
		CHECK(k == 2 && sc[0].method == INNER && sc[0].bci == 3 && sc[1].method == OWN &&
			      sc[1].bci == 10,
		      fmt("made-up JDK %u nmethod: a pc before the first PcDesc has its two scopes",
			  major),
		      "%d: %#lx@%d %#lx@%d", k, sc[0].method, sc[0].bci, sc[1].method, sc[1].bci);
		k = jvm_scopes_at(&l, &m, &b, b.code_begin + 0x20, sc, JVM_SCOPES_MAX);
		k2 = jvm_scopes_at(&l, &m, &b, b.code_begin + 0x21, sc + 1, JVM_SCOPES_MAX - 1);
		k3 = jvm_scopes_at(&l, &m, &b, b.code_begin + 5, sc + 1, 1);
		CHECK(k == 1 && sc[0].method == OWN && sc[0].bci == 10 && k2 == -ENOENT &&
			      k3 == -ENOSPC,
		      fmt("made-up JDK %u nmethod: the outer PcDesc's one scope; none past the last; "
			  "too few slots said",
			  major),
		      "%d, %d, %d", k, k2, k3);
	}

	/* a native method's wrapper: no PcDescs (the section ends where it begins) */
	fake_layout(&l, 17);
	fake_nmethod(&im, &b, 17);
	put32(&im, BLOB + 0x14, 0x140);
	k = jvm_scopes_at(&l, &m, &b, b.code_begin + 5, sc, JVM_SCOPES_MAX);
	k2 = jvm_scopes_at(&l, &m, &b, b.code_begin + 5, sc + 1, 0);
	CHECK(k == 1 && sc[0].method == OWN && sc[0].bci == 0 && k2 == -ENOSPC,
	      "made-up nmethod without PcDescs (a native method's wrapper): its method at bci 0, "
	      "as the VM gives it",
	      "%d: %#lx@%d; %d", k, sc[0].method, sc[0].bci, k2);

	fake_nmethod(&im, &b, 17);
	*desc_at(&im, 17, 1, 1) = 0x140 - 0x110; /* the stream's section is 0x30 bytes */
	k = jvm_scopes_at(&l, &m, &b, b.code_begin + 5, sc, JVM_SCOPES_MAX);
	CHECK(k == -EINVAL, "made-up nmethod: a decode offset at the stream's end is refused", "%d",
	      k);

	fake_nmethod(&im, &b, 17);
	*stream_at(&im, 17, OUTER_AT) = INNER_AT; /* the outer's sender: the inner */
	k = jvm_scopes_at(&l, &m, &b, b.code_begin + 5, sc, JVM_SCOPES_MAX);
	CHECK(k == -ELOOP, "made-up nmethod: a sender chain that loops is refused", "%d", k);

	fake_nmethod(&im, &b, 17);
	put32(&im, BLOB + 0x14, 0x140 + NDESCS * 16 - 8);
	k = jvm_scopes_at(&l, &m, &b, b.code_begin + 5, sc, JVM_SCOPES_MAX);
	CHECK(k == -EINVAL,
	      "made-up nmethod: PcDescs of a size no multiple of a PcDesc's are refused", "%d", k);

	fake_nmethod(&im, &b, 17);
	*stream_at(&im, 17, INNER_AT + 1) = 3; /* metadata 3 of 2 */
	k = jvm_scopes_at(&l, &m, &b, b.code_begin + 5, sc, JVM_SCOPES_MAX);
	k2 = (fake_nmethod(&im, &b, 17), b.method = INNER,
	      jvm_scopes_at(&l, &m, &b, b.code_begin + 5, sc, JVM_SCOPES_MAX));
	CHECK(k == -EINVAL && k2 == -EINVAL,
	      "made-up nmethod: a method past the metadata, an outermost scope not the nmethod's, "
	      "are refused",
	      "%d, %d", k, k2);

	fake_nmethod(&im, &b, 17);
	put32(&im, BLOB + 0x14, 0x900); /* the PcDescs run past the blob */
	k = jvm_scopes_at(&l, &m, &b, b.code_begin + 5, sc, JVM_SCOPES_MAX);
	fake_nmethod(&im, &b, 17);
	*desc_at(&im, 17, 2, 0) = 0x10; /* offsets that do not rise */
	k2 = jvm_scopes_at(&l, &m, &b, b.code_begin + 0x18, sc, JVM_SCOPES_MAX);
	CHECK(k == -EINVAL && k2 == -EINVAL,
	      "made-up nmethod: sections past the blob, PcDesc offsets that do not rise, are refused",
	      "%d, %d", k, k2);

	fake_layout(&l, 25);
	fake_nmethod(&im, &b, 25);
	put32(&im, BLOB + 0x14, NDESCS * 16 + 0x1000); /* the stream starts past the data */
	k = jvm_scopes_at(&l, &m, &b, b.code_begin + 5, sc, JVM_SCOPES_MAX);
	fake_nmethod(&im, &b, 25);
	l.scopes_ok = false;
	k2 = jvm_scopes_at(&l, &m, &b, b.code_begin + 5, sc, JVM_SCOPES_MAX);
	CHECK(k == -EINVAL && k2 == -ENOTSUP,
	      "made-up JDK 25 nmethod: offsets past its immutable data refused; an unknown layout is -ENOTSUP",
	      "%d, %d", k, k2);
}

int main(void)
{
	jvmlive_run(check_jdk, CHECKS_PER_JDK, HOSTILE_CHECKS);
	check_hostile();
	return T_EXIT();
}
