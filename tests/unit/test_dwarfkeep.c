// SPDX-License-Identifier: MIT
/*
 * Tests for dwarfkeep: objects kept by their files' identity, found again
 * only for the same files read with the same bound, a changed file never,
 * and the budget held (the least recently kept go first).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dwarf/dwarfkeep.h"
#include "testlib.h"

/* A copy of this test binary (built with -g): a file with DWARF of our own. */
static int copy_self(const char *path)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "cp /proc/%d/exe '%s'", (int)getpid(), path);
	return system(cmd) == 0 ? open(path, O_RDONLY | O_CLOEXEC) : -1;
}

static struct dwarfinfo *open_d(int fd)
{
	struct dwarfinfo *d = NULL;

	return dwarfinfo_open_fds(&d, fd, -1, 0, NULL) ? NULL : d;
}

int main(void)
{
	char dir[] = "/tmp/test_dwarfkeep.XXXXXX", a[64], b[64];
	struct dwarfkeep k;
	struct dwarfkeep_id ia, ib, ia2;
	struct dwarfinfo *da, *db, *got;
	int fa, fb;

	T_PLAN(9);
	if (!mkdtemp(dir))
		abort();
	snprintf(a, sizeof(a), "%s/a", dir);
	snprintf(b, sizeof(b), "%s/b", dir);
	fa = copy_self(a);
	fb = copy_self(b);
	da = fa >= 0 ? open_d(fa) : NULL;
	db = fb >= 0 ? open_d(fb) : NULL;
	CHECK(da && db, "setup: two copies of a binary with DWARF open", "a %p, b %p", (void *)da,
	      (void *)db);
	if (!da || !db)
		return T_EXIT();

	dwarfkeep_init(&k, 2 * dwarfinfo_bytes(da) + 2 * dwarfinfo_bytes(db));
	dwarfkeep_id(fa, -1, 0, &ia);
	dwarfkeep_id(fb, -1, 0, &ib);
	CHECK(ia.valid && ib.valid, "ids of open files are valid", "%d %d", ia.valid, ib.valid);
	dwarfkeep_put(&k, &ia, da);
	dwarfkeep_put(&k, &ib, db);
	CHECK(k.n == 2, "both kept within the budget", "%zu kept", k.n);

	dwarfkeep_id(fa, -1, 1 << 20, &ia2);
	CHECK(!dwarfkeep_take(&k, &ia2), "the same file read with another bound: not found", "%s", "found");
	got = dwarfkeep_take(&k, &ia);
	CHECK(got == da && k.n == 1, "the same file: its object back, no longer kept", "%p, %zu kept",
	      (void *)got, k.n);
	CHECK(!dwarfkeep_take(&k, &ia), "taken once: gone", "%s", "still there");
	dwarfkeep_put(&k, &ia, da);

	/* A change to the file (its change time moves even if mtime is set back). */
	fchmod(fa, 0600);
	dwarfkeep_id(fa, -1, 0, &ia2);
	CHECK(!dwarfkeep_take(&k, &ia2), "a changed file: not found", "%s", "found");

	/* Room for one: putting b back pushes a (the older) out. */
	got = dwarfkeep_take(&k, &ib);
	dwarfkeep_free(&k);
	dwarfkeep_init(&k, dwarfinfo_bytes(got) + dwarfinfo_bytes(got) / 2);
	da = open_d(fa);
	dwarfkeep_id(fa, -1, 0, &ia);
	dwarfkeep_put(&k, &ia, da);
	dwarfkeep_put(&k, &ib, got);
	CHECK(k.n == 1 && k.bytes <= k.budget && dwarfkeep_take(&k, &ib) == got,
	      "over the budget: the least recently kept goes", "%zu kept, %llu of %llu bytes", k.n,
	      (unsigned long long)k.bytes, (unsigned long long)k.budget);
	dwarfinfo_free(got);

	struct dwarfkeep_id bad = { 0 };
	da = open_d(fa);
	dwarfkeep_put(&k, &bad, da);
	CHECK(k.n == 0, "an object without a valid id is freed, not kept", "%zu kept", k.n);
	dwarfkeep_free(&k);

	close(fa);
	close(fb);
	unlink(a);
	unlink(b);
	rmdir(dir);
	return T_EXIT();
}
