/* SPDX-License-Identifier: MIT */
/*
 * The pyenv CPythons installed here, for the unit tests that run them.
 * Header-only, like testlib.h.
 */
#ifndef CPROF_TEST_PYENV_H
#define CPROF_TEST_PYENV_H

#include <stdio.h>
#include <string.h>

#define PYENV "/root/.pyenv/versions"

/* The directory of the newest pyenv install of @v ("3.12": "…/3.12.1"), or NULL. */
static inline const char *pyenv_install(const char *v, char *buf, size_t len)
{
	char cmd[256];
	FILE *f;

	snprintf(cmd, sizeof(cmd), "ls -d " PYENV "/%s.* 2>/dev/null | sort -V | tail -1", v);
	f = popen(cmd, "r");
	if (!f)
		return NULL;
	if (!fgets(buf, (int)len, f))
		buf[0] = '\0';
	pclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return buf[0] ? buf : NULL;
}

#endif
