/* SPDX-License-Identifier: MIT */
/*
 * escape: what a process names itself (comm, thread names, cgroup,
 * mapping paths, function and file names), made safe to show.  Every
 * string a process controls goes through this on its way into a profile
 * or the summary, so that no name can rewrite a terminal or fake a line.
 */
#ifndef CPROF_ESCAPE_H
#define CPROF_ESCAPE_H

#include <stddef.h>

/*
 * @s with what a terminal would act on shown as text: C0 and C1 control
 * characters and DEL become \n, \t, \r or \xHH, so that "\x1b[31mred" is
 * read, not run, by whoever prints it.  Writes at most @len bytes, NUL
 * included, never cutting an escape; returns the length of the whole (as
 * snprintf does).
 */
size_t escape_controls(const char *s, char *out, size_t len);

#endif
