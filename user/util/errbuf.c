// SPDX-License-Identifier: MIT
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util/errbuf.h"

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

int errf_prefix(struct errbuf *e, int code, const char *prefix)
{
	char msg[ERRBUF_LEN];

	if (!e)
		return code;
	memcpy(msg, e->msg, sizeof(msg));
	msg[sizeof(msg) - 1] = '\0';
	return errf(e, code, "%s: %s", prefix, msg);
}
