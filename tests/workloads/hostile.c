// SPDX-License-Identifier: MIT
/*
 * hostile: what an unprivileged process can do to a profiler running as
 * root, for tests/e2e/test_hostile.sh.  Each mode sets its trap, prints
 * "ready <pid>" on stdout and then burns CPU (so that it is sampled) for
 * SECS seconds in attacker_spin(), or in code of its own mapped files.
 *
 *   hostile map FILE fifo SECS           map FILE, then a FIFO at its path
 *   hostile map FILE link TARGET SECS    ... a symlink to TARGET at its path
 *   hostile map FILE pty SECS            ... a symlink to a pty slave of ours,
 *                                        whose master we close a second later
 *   hostile map FILE overmount TARGET SECS   ... a tmpfs over FILE's directory
 *                                        (own mount namespace, after pivot_root:
 *                                        /old is detached), where FILE is a
 *                                        symlink to TARGET
 *   hostile race DIR N SECS              map DIR/filler-0.so, N more ELFs and
 *                                        DIR/target.so; when filler-0 is opened
 *                                        (inotify), unmap target.so and put a
 *                                        FIFO at its path (DIR/raced says so)
 *   hostile elfs DIR N SECS              N distinct small ELFs, all mapped,
 *                                        running code in the last 64
 *   hostile maps FILE N SECS             a small ELF FILE mapped N times apart,
 *                                        running code in the last mapping
 *   hostile jit PERFMAP SECS             JIT code in anonymous memory, named by
 *                                        /tmp/perf-PID.map: a symlink to
 *                                        PERFMAP, or with "-" a map of our own
 *   hostile comm NAME SECS               our name set to NAME (\e and \n in it
 *                                        are ESC and a newline)
 *
 * The small ELFs (write_elf()) are 256 bytes: an ELF header, a PT_LOAD and
 * a PT_NOTE with a build ID of their own, and a loop to run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <elf.h>

#define ELF_SIZE 256
#define CODE_OFF 224
#define PAGE 4096

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
	fprintf(stderr, "hostile: %s: %s\n", what, strerror(errno));
	exit(1);
}

static volatile uint64_t sink;

__attribute__((noinline)) void attacker_spin_leaf(void)
{
	for (int i = 0; i < 100000; i++)
		sink += (uint64_t)i * 2654435761u;
}

/*
 * True until @end; every 20 ms of running, a 30 ms nap: enough to be
 * sampled, little enough that a dozen attackers leave the CPUs to others.
 */
static bool keep_going(double end)
{
	static double burst;
	double t = now();

	if (!burst)
		burst = t;
	if (t - burst > 0.02) {
		usleep(30000);
		burst = now();
	}
	return t < end;
}

/* Burns CPU until @end, calling @poll (if any) between bursts. */
__attribute__((noinline)) void attacker_spin(double end, void (*poll)(void))
{
	while (keep_going(end)) {
		attacker_spin_leaf();
		if (poll)
			poll();
	}
}

static void ready(void)
{
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
}

/* A 256-byte ELF whose code at CODE_OFF counts ecx down and returns. */
static void write_elf(const char *path, uint32_t serial)
{
	static const uint8_t code[] = { 0xb9, 0x00, 0x00, 0x01, 0x00, /* mov ecx, 0x10000 */
					0xff, 0xc9,                   /* dec ecx */
					0x75, 0xfc,                   /* jnz -4 */
					0xc3 };                       /* ret */
	uint8_t img[ELF_SIZE] = { 0 };
	Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
	Elf64_Phdr *ph = (Elf64_Phdr *)(img + sizeof(*eh));
	Elf64_Nhdr *nh = (Elf64_Nhdr *)(img + sizeof(*eh) + 2 * sizeof(*ph));
	uint8_t *id = (uint8_t *)(nh + 1) + 4;
	int fd;

	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_DYN;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_phoff = sizeof(*eh);
	eh->e_ehsize = sizeof(*eh);
	eh->e_phentsize = sizeof(*ph);
	eh->e_phnum = 2;
	ph[0] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_filesz = ELF_SIZE,
			      .p_memsz = ELF_SIZE, .p_align = PAGE };
	ph[1] = (Elf64_Phdr){ .p_type = PT_NOTE, .p_flags = PF_R,
			      .p_offset = (uint8_t *)nh - img, .p_vaddr = (uint8_t *)nh - img,
			      .p_filesz = sizeof(*nh) + 4 + 20, .p_memsz = sizeof(*nh) + 4 + 20,
			      .p_align = 4 };
	*nh = (Elf64_Nhdr){ .n_namesz = 4, .n_descsz = 20, .n_type = NT_GNU_BUILD_ID };
	memcpy(nh + 1, "GNU", 4);
	memcpy(id, &serial, sizeof(serial));
	memcpy(id + 4, "cprof-hostile-elf", 16);
	memcpy(img + CODE_OFF, code, sizeof(code));
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (fd < 0 || write(fd, img, sizeof(img)) != (ssize_t)sizeof(img) || close(fd))
		die(path);
}

/* Maps @path executable (at @at if not NULL, which must be free). */
static uint8_t *map_file(const char *path, void *at)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	void *p;

	if (fd < 0)
		die(path);
	p = mmap(at, PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE | (at ? MAP_FIXED_NOREPLACE : 0),
		 fd, 0);
	if (p == MAP_FAILED)
		die("mmap");
	close(fd);
	return p;
}

static void run_code(const uint8_t *base)
{
	((void (*)(void))(uintptr_t)(base + CODE_OFF))();
}

/* --- map FILE ACTION ---------------------------------------------------------- */

static int pty_master = -1;
static double pty_close_at;

static void close_pty_later(void)
{
	if (pty_master >= 0 && now() >= pty_close_at) {
		close(pty_master); /* a hangup for whoever holds the slave as its terminal */
		pty_master = -1;
	}
}

static int mode_map(int argc, char **argv)
{
	const char *file = argv[2], *action = argv[3];
	double secs = atof(argv[argc - 1]);
	char dir[PATH_MAX];

	map_file(file, NULL);
	if (!strcmp(action, "fifo")) {
		if (unlink(file) || mkfifo(file, 0666))
			die("fifo");
	} else if (!strcmp(action, "link") && argc == 6) {
		if (unlink(file) || symlink(argv[4], file))
			die("link");
	} else if (!strcmp(action, "pty")) {
		pty_master = posix_openpt(O_RDWR | O_NOCTTY);
		if (pty_master < 0 || grantpt(pty_master) || unlockpt(pty_master) ||
		    unlink(file) || symlink(ptsname(pty_master), file))
			die("pty");
		pty_close_at = now() + 1;
	} else if (!strcmp(action, "overmount") && argc == 6) {
		/* After pivot_root: the old root goes, nothing of the host stays in view. */
		umount2("/old", MNT_DETACH);
		snprintf(dir, sizeof(dir), "%s", file);
		*strrchr(dir, '/') = '\0';
		if (mount("tmpfs", dir, "tmpfs", 0, "size=64k") || symlink(argv[4], file))
			die("overmount");
	} else {
		fprintf(stderr, "hostile: map: bad action %s\n", action);
		return 2;
	}
	ready();
	attacker_spin(now() + secs, pty_master >= 0 ? close_pty_later : NULL);
	return 0;
}

/* --- race DIR N ------------------------------------------------------------------ */

static int race_watch = -1;
static uint8_t *race_target;
static char race_path[PATH_MAX + 32], race_dir[PATH_MAX];

/* Waits for the profiler to open the first mapping, then swaps the last. */
static void *race_watcher(void *arg)
{
	char buf[4096], marker[PATH_MAX + 8];

	(void)arg;
	if (read(race_watch, buf, sizeof(buf)) <= 0)
		return NULL;
	munmap(race_target, PAGE);
	if (unlink(race_path) || mkfifo(race_path, 0666))
		die("race: fifo");
	snprintf(marker, sizeof(marker), "%s/raced", race_dir);
	close(open(marker, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
	return NULL;
}

static int mode_race(char **argv)
{
	int n = atoi(argv[3]);
	char path[PATH_MAX + 32];
	pthread_t watcher;
	/* Addresses in order: filler-0 first, target last, as a snapshot reads them. */
	uint8_t *at = (uint8_t *)0x100000000000ull;

	snprintf(race_dir, sizeof(race_dir), "%s", argv[2]);
	for (int i = 0; i <= n; i++) {
		snprintf(path, sizeof(path), "%s/filler-%d.so", race_dir, i);
		write_elf(path, (uint32_t)i);
		map_file(path, at + (size_t)i * 2 * PAGE);
	}
	snprintf(race_path, sizeof(race_path), "%s/target.so", race_dir);
	write_elf(race_path, (uint32_t)n + 1);
	race_target = map_file(race_path, at + (size_t)(n + 1) * 2 * PAGE);
	snprintf(path, sizeof(path), "%s/filler-0.so", race_dir);
	race_watch = inotify_init1(IN_CLOEXEC);
	if (race_watch < 0 || inotify_add_watch(race_watch, path, IN_OPEN) < 0 ||
	    pthread_create(&watcher, NULL, race_watcher, NULL))
		die("inotify");
	ready();
	attacker_spin(now() + atof(argv[4]), NULL);
	return 0;
}

/* --- elfs DIR N, maps FILE N ------------------------------------------------------- */

static int mode_elfs(char **argv)
{
	int n = atoi(argv[3]);
	uint8_t **base = calloc((size_t)n, sizeof(*base));
	char path[PATH_MAX + 32];
	double end;

	if (!base)
		die("calloc");
	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/elf-%d.so", argv[2], i);
		write_elf(path, (uint32_t)i);
		base[i] = map_file(path, NULL);
	}
	ready();
	end = now() + atof(argv[4]);
	for (int i = 0; keep_going(end); i++)
		run_code(base[n - 1 - i % (n < 64 ? n : 64)]);
	return 0;
}

static int mode_maps(char **argv)
{
	size_t n = (size_t)atol(argv[3]);
	uint8_t *area, *last = NULL;
	double end;
	int fd;

	write_elf(argv[2], 1);
	fd = open(argv[2], O_RDONLY | O_CLOEXEC);
	/* Every other page: the gaps keep the kernel from merging the mappings. */
	area = mmap(NULL, 2 * n * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (fd < 0 || area == MAP_FAILED)
		die("maps");
	for (size_t i = 0; i < n; i++) {
		last = mmap(area + 2 * i * PAGE, PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED,
			    fd, 0);
		if (last == MAP_FAILED)
			die("mmap");
	}
	close(fd);
	ready();
	end = now() + atof(argv[4]);
	while (keep_going(end))
		run_code(last);
	return 0;
}

/* --- jit PERFMAP, comm NAME ------------------------------------------------------ */

static int mode_jit(char **argv)
{
	static const uint8_t code[] = { 0xb9, 0x00, 0x00, 0x01, 0x00, 0xff, 0xc9, 0x75, 0xfc, 0xc3 };
	uint8_t *jit = mmap(NULL, PAGE, PROT_READ | PROT_WRITE | PROT_EXEC,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char map[64];
	double end;

	if (jit == MAP_FAILED)
		die("mmap");
	memcpy(jit, code, sizeof(code));
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)getpid());
	if (strcmp(argv[2], "-")) {
		if (symlink(argv[2], map))
			die("symlink");
	} else {
		FILE *f = fopen(map, "w");

		if (!f)
			die(map);
		fprintf(f, "%lx %x jit_own_function\n", (unsigned long)(uintptr_t)jit, PAGE);
		fclose(f);
	}
	printf("jit %lx\n", (unsigned long)(uintptr_t)jit);
	ready();
	end = now() + atof(argv[3]);
	while (keep_going(end))
		((void (*)(void))(uintptr_t)jit)();
	return 0;
}

static int mode_comm(char **argv)
{
	char name[64];
	size_t o = 0;

	for (const char *p = argv[2]; *p && o < sizeof(name) - 1; p++) {
		if (p[0] == '\\' && (p[1] == 'e' || p[1] == 'n')) {
			name[o++] = p[1] == 'e' ? '\x1b' : '\n';
			p++;
		} else {
			name[o++] = *p;
		}
	}
	name[o] = '\0';
	prctl(PR_SET_NAME, name);
	ready();
	attacker_spin(now() + atof(argv[3]), NULL);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 5 && !strcmp(argv[1], "map"))
		return mode_map(argc, argv);
	if (argc == 5 && !strcmp(argv[1], "race"))
		return mode_race(argv);
	if (argc == 5 && !strcmp(argv[1], "elfs"))
		return mode_elfs(argv);
	if (argc == 5 && !strcmp(argv[1], "maps"))
		return mode_maps(argv);
	if (argc == 4 && !strcmp(argv[1], "jit"))
		return mode_jit(argv);
	if (argc == 4 && !strcmp(argv[1], "comm"))
		return mode_comm(argv);
	fprintf(stderr, "usage: see tests/workloads/hostile.c\n");
	return 2;
}
