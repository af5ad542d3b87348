// SPDX-License-Identifier: MIT
#include "util/membudget.h"

bool membudget_take(struct membudget *b, uint64_t n)
{
	if (n > b->max || b->used > b->max - n) {
		b->refused++;
		return false;
	}
	b->used += n;
	if (b->used > b->peak)
		b->peak = b->used;
	return true;
}

void membudget_give(struct membudget *b, uint64_t n)
{
	b->used -= n < b->used ? n : b->used;
}
