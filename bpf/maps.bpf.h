/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * maps.bpf.h: map idioms written once (as bcc's libbpf-tools keep theirs).
 */
#ifndef CPROF_MAPS_BPF_H
#define CPROF_MAPS_BPF_H

#include "base.bpf.h"

/*
 * The value of @key in hash @map for the caller to update, or NULL when
 * there is none to update: either @init went in as the value (*@inserted:
 * the caller's update must be in @init already, which spares a lookup
 * after every insert) or the map is full.  A lookup finds most keys
 * without the bucket lock an insert takes; an insert that loses a race
 * with another CPU's finds theirs.
 */
static __always_inline void *map_lookup_or_insert(void *map, const void *key, const void *init,
						  bool *inserted)
{
	void *v = bpf_map_lookup_elem(map, key);

	*inserted = false;
	if (v)
		return v;
	if (bpf_map_update_elem(map, key, init, BPF_NOEXIST) == 0) {
		*inserted = true;
		return NULL;
	}
	return bpf_map_lookup_elem(map, key);
}

#endif
