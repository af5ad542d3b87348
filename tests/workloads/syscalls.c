// SPDX-License-Identifier: MIT
/*
 * syscalls: spends its time in the kernel, writing one byte at a time to
 * /dev/null with a raw syscall instruction (so the user leaf is our own
 * frame-pointer function, not libc's).  syscalls [SECONDS] (default 10).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long raw_write(int fd, const void *buf, unsigned long n)
{
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"((long)SYS_write), "D"((long)fd), "S"(buf), "d"(n)
			 : "rcx", "r11", "memory");
	return ret;
}

__attribute__((noinline)) void do_writes(int fd, time_t end)
{
	char c = 'x';

	while (time(NULL) < end)
		for (int i = 0; i < 10000; i++)
			raw_write(fd, &c, 1);
}

int main(int argc, char **argv)
{
	int secs = argc > 1 ? atoi(argv[1]) : 10;
	int fd = open("/dev/null", O_WRONLY);

	if (fd < 0)
		return 1;
	printf("%d\n", getpid());
	fflush(stdout);
	do_writes(fd, time(NULL) + secs);
	return 0;
}
