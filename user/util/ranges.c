// SPDX-License-Identifier: MIT
#include <stdlib.h>

#include "util/ranges.h"

static int range_cmp(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

size_t range_normalize(struct range *r, size_t n)
{
	size_t m = 0;

	qsort(r, n, sizeof(*r), range_cmp);
	for (size_t i = 0; i < n; i++) {
		if (m && r[i].lo <= r[m - 1].hi) {
			if (r[i].hi > r[m - 1].hi)
				r[m - 1].hi = r[i].hi;
		} else {
			r[m++] = r[i];
		}
	}
	return m;
}
