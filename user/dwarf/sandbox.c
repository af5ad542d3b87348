// SPDX-License-Identifier: MIT
/*
 * sandbox: see sandbox.h.
 *
 * The order matters: the capability bounding set can only be dropped
 * while still privileged, the identity change clears the permitted and
 * effective sets (and resets dumpability and the parent-death signal, so
 * those are set after), and the seccomp filter comes last since the steps
 * before it need syscalls it refuses.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "dwarf/sandbox.h"

#if defined(__x86_64__)
#define SANDBOX_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define SANDBOX_ARCH AUDIT_ARCH_AARCH64
#else
#error "sandbox.c: add this architecture's AUDIT_ARCH"
#endif

#define MAX_INSNS 160
/* The low 32 bits of syscall argument @i. */
#define ARG_LO(i) (offsetof(struct seccomp_data, args[i]) + (BYTE_ORDER == LITTLE_ENDIAN ? 0 : 4))
#define ARG_HI(i) (offsetof(struct seccomp_data, args[i]) + (BYTE_ORDER == LITTLE_ENDIAN ? 4 : 0))
#define DENY (SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA))

/* Syscalls allowed whatever their arguments: reading, memory, exiting. */
static const int plain[] = {
	__NR_read, __NR_pread64, __NR_recvmsg, __NR_close, __NR_lseek, __NR_fstat,
	__NR_newfstatat, __NR_munmap, __NR_mremap, __NR_brk, __NR_madvise, __NR_exit,
	__NR_exit_group, __NR_rt_sigreturn, __NR_rt_sigprocmask, __NR_futex, __NR_getpid,
	__NR_gettid, __NR_clock_gettime, __NR_gettimeofday, __NR_sched_yield, __NR_getrandom,
	__NR_sigaltstack, __NR_restart_syscall, __NR_clock_nanosleep, __NR_nanosleep,
};

struct prog {
	struct sock_filter insn[MAX_INSNS];
	unsigned short n;
};

static void emit(struct prog *p, struct sock_filter f)
{
	if (p->n < MAX_INSNS)
		p->insn[p->n++] = f;
}

static void allow_if(struct prog *p, int nr)
{
	emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr, 0, 1));
	emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
}

/*
 * The filter.  After the architecture check the syscall number is in the
 * accumulator; each test that does not match falls through to the next,
 * and the blocks that load an argument end in a return, so the number
 * need not be reloaded.
 */
static void build(struct prog *p, int serve_fd, pid_t self)
{
	emit(p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					     offsetof(struct seccomp_data, arch)));
	emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SANDBOX_ARCH, 1, 0));
	emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
	emit(p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					     offsetof(struct seccomp_data, nr)));
#ifdef __x86_64__
	/* x32 syscalls share the architecture: refuse them all. */
	emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1));
	emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, DENY));
#endif
	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
		allow_if(p, plain[i]);

	/* write: to stderr or the socket only. */
	emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_write, 0, 5));
	emit(p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(0)));
	emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)serve_fd, 1, 0));
	emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, STDERR_FILENO, 0, 1));
	emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
	emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, DENY));

	/* mmap and mprotect: never executable memory. */
	emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mmap, 1, 0));
	emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mprotect, 0, 4));
	emit(p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(2)));
	emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_EXEC, 0, 1));
	emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, DENY));
	emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));

	/* prlimit64: reading limits only (the sanitizers ask for the stack's). */
	emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_prlimit64, 0, 6));
	emit(p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(2)));
	emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 2));
	emit(p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_HI(2)));
	emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0));
	emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, DENY));
	emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));

	/*
	 * tgkill: on itself only (abort() and raise(): an unexpected fault
	 * must still end it), never another process of its uid (uid 0, when
	 * the agent could not give it another).
	 */
	emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_tgkill, 0, 3));
	emit(p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(0)));
	emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)self, 0, 1));
	emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));

	emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, DENY));
}

/* Address space now, from /proc/self/statm (first field, in pages). */
static uint64_t vm_bytes(void)
{
	char buf[128];
	unsigned long long pages = 0;
	int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	if (sscanf(buf, "%llu", &pages) != 1)
		return 0;
	return pages * (uint64_t)sysconf(_SC_PAGESIZE);
}

static int close_others(void)
{
	int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);

	if (devnull < 0 || dup2(devnull, STDIN_FILENO) < 0 || dup2(devnull, STDOUT_FILENO) < 0)
		return -errno;
	if (syscall(SYS_close_range, SANDBOX_SERVE_FD + 1, ~0u, 0) == 0)
		return 0;
	/* Kernels before 5.9: as far as the limit allows. */
	for (int fd = SANDBOX_SERVE_FD + 1; fd < 65536; fd++)
		close(fd);
	return 0;
}

static int set_limit(int what, rlim_t v)
{
	struct rlimit rl = { v, v };

	return setrlimit(what, &rl) ? -errno : 0;
}

/*
 * A user of its own, no groups; the bounding set first, while we may.  An
 * agent that is root without CAP_SETUID, CAP_SETGID or CAP_SETPCAP (the
 * systemd unit bounds its capabilities so) can't: it keeps uid 0 and
 * loses every capability below, and the filter keeps it from opening,
 * signalling or exec'ing anything, which is what the uid would have done.
 */
static int drop_identity(void)
{
	if (geteuid() != 0)
		return 0; /* unprivileged already: capabilities are dropped below */
	for (int cap = 0; cap <= 63; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) && errno != EINVAL && errno != EPERM)
			return -errno;
	if (setgroups(0, NULL) && errno != EPERM)
		return -errno;
	if (setresgid(SANDBOX_ID, SANDBOX_ID, SANDBOX_ID) &&
	    setresgid(SANDBOX_ID_ALT, SANDBOX_ID_ALT, SANDBOX_ID_ALT) && errno != EPERM)
		return -errno;
	/* An id outside a user namespace's map is EINVAL: nobody is mapped nearly always. */
	if (setresuid(SANDBOX_ID, SANDBOX_ID, SANDBOX_ID) &&
	    setresuid(SANDBOX_ID_ALT, SANDBOX_ID_ALT, SANDBOX_ID_ALT) && errno != EPERM)
		return -errno;
	return 0;
}

static int drop_caps(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = { { 0 } };

	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) && errno != EINVAL)
		return -errno;
	return syscall(SYS_capset, &hdr, data) ? -errno : 0;
}

int sandbox_enter(const struct sandbox_opts *o, pid_t parent, struct errbuf *err)
{
	static const int ignored[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGTSTP };
	struct prog prog = { .n = 0 };
	struct sock_fprog fprog;
	uint64_t vm;
	int rc;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
		return errf(err, -ESRCH, "sandbox: parent gone");
	setsid();
	for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
		signal(ignored[i], SIG_IGN);
	if (o->serve_fd != SANDBOX_SERVE_FD && dup2(o->serve_fd, SANDBOX_SERVE_FD) < 0)
		return errf(err, -errno, "sandbox: dup2: %s", strerror(errno));
	vm = vm_bytes();
	rc = close_others();
	if (rc)
		return errf(err, rc, "sandbox: descriptors: %s", strerror(-rc));
	if ((vm && (rc = set_limit(RLIMIT_AS, vm + o->mem_bytes))) ||
	    (rc = set_limit(RLIMIT_CPU, o->cpu_secs)) || (rc = set_limit(RLIMIT_NOFILE, o->nofile)) ||
	    (rc = set_limit(RLIMIT_FSIZE, 0)) || (rc = set_limit(RLIMIT_CORE, 0)) ||
	    (rc = set_limit(RLIMIT_MEMLOCK, 0)))
		return errf(err, rc, "sandbox: rlimits: %s", strerror(-rc));
	rc = drop_identity();
	if (!rc)
		rc = drop_caps();
	if (rc)
		return errf(err, rc, "sandbox: dropping privileges: %s", strerror(-rc));
	/* A change of user clears the parent-death signal: set it again. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
		return errf(err, -ESRCH, "sandbox: parent gone");
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return errf(err, -errno, "sandbox: prctl: %s", strerror(errno));
	build(&prog, SANDBOX_SERVE_FD, getpid());
	if (prog.n >= MAX_INSNS)
		return errf(err, -E2BIG, "sandbox: filter too long");
	fprog = (struct sock_fprog){ .len = prog.n, .filter = prog.insn };
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog, 0, 0))
		return errf(err, -errno, "sandbox: seccomp: %s", strerror(errno));
	return 0;
}
