// SPDX-License-Identifier: MIT
#include <stdarg.h>
#include <stdio.h>

#include "errbuf.h"

int errf(struct errbuf *e, int code, const char *fmt, ...)
{
	va_list ap;

	if (!e)
		return code;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return code;
}
