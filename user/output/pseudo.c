// SPDX-License-Identifier: MIT
/*
 * pseudo: the frames that say why a stack is missing or cut (pseudo.h).
 */
#include <stddef.h>

#include "cprof.h"
#include "output/pseudo.h"

static const char *const names[PSEUDO_MAX] = {
	[PSEUDO_LOST] = "[lost samples]",
	[PSEUDO_READ] = "[unwind: stack read failed]",
	[PSEUDO_EMPTY] = "[unwind: no user frames]",
	[PSEUDO_FULL] = "[lost: stack map full]",
	[PSEUDO_UNKNOWN] = "[lost: stack not found]",
	[PSEUDO_TRUNCATED] = "[unwind: truncated]",
	[PSEUDO_UNWIND_READ] = "[unwind: stack read failed]",
	[PSEUDO_NO_ROW] = "[unwind: no CFI for pc]",
	[PSEUDO_BAD_CFA] = "[unwind: bad CFA]",
	[PSEUDO_UNMAPPED] = "[unwind: frame pointers left the code]",
	[PSEUDO_UNWALKED] = "[off-cpu: not walked]",
};

static const enum pseudo by_unwind[CPROF_UNWIND_STATUS_MAX] = {
	[CPROF_UNWIND_TRUNCATED] = PSEUDO_TRUNCATED,
	[CPROF_UNWIND_READ] = PSEUDO_UNWIND_READ,
	[CPROF_UNWIND_NO_ROW] = PSEUDO_NO_ROW,
	[CPROF_UNWIND_BAD_CFA] = PSEUDO_BAD_CFA,
};

const char *pseudo_name(uint64_t p)
{
	return p < PSEUDO_MAX ? names[p] : NULL;
}

enum pseudo pseudo_of_status(uint64_t stack)
{
	switch (stack) {
	case CPROF_STACK_ERR_READ:
		return PSEUDO_READ;
	case CPROF_STACK_ERR_EMPTY:
		return PSEUDO_EMPTY;
	case CPROF_STACK_ERR_FULL:
		return PSEUDO_FULL;
	case CPROF_STACK_UNWALKED:
		return PSEUDO_UNWALKED;
	default:
		return PSEUDO_UNKNOWN;
	}
}

enum pseudo pseudo_of_unwind(uint32_t how)
{
	return how < CPROF_UNWIND_STATUS_MAX ? by_unwind[how] : PSEUDO_NONE;
}
