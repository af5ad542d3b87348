// SPDX-License-Identifier: MIT
#include <errno.h>
#include <string.h>
#include <sys/uio.h>

#include "fs/procmem.h"

#define PAGE 4096u

int procmem_read(uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

static int read_live(const struct memsrc *m, uint64_t addr, void *buf, size_t len)
{
	return procmem_read(m->pid, addr, buf, len);
}

struct memsrc procmem_src(uint32_t pid)
{
	return (struct memsrc){ .read = read_live, .pid = pid };
}

int memsrc_read_str(const struct memsrc *m, uint64_t addr, char *buf, size_t cap)
{
	size_t got = 0;

	if (!cap)
		return -ENAMETOOLONG;
	while (got < cap) {
		/* up to the end of @addr's page: the next may not be mapped */
		size_t n = PAGE - (size_t)((addr + got) % PAGE);
		const char *nul;
		int err;

		if (n > cap - got)
			n = cap - got;
		if (addr + got < addr)
			return -EFAULT;
		err = memsrc_read(m, addr + got, buf + got, n);
		if (err)
			return err;
		nul = memchr(buf + got, 0, n);
		if (nul)
			return 0;
		got += n;
	}
	buf[cap - 1] = 0;
	return -ENAMETOOLONG;
}
