// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "node/v8_heap.h"
#include "node/v8_layout.h"
#include "node/v8_names.h"
#include "node/v8_script.h"
#include "node/v8_sfi.h"

/* A frame's key and entry: the key first, as hmap wants. */
struct frame_key {
	uint64_t sfi;
	int64_t offset;
};

struct frame_slot {
	struct frame_key key;
	uint64_t head[V8_SFI_HEAD]; /* the SFI's words when read; 0s: unreadable */
	struct v8_frame f;
	char *strings;              /* f's function and script, one allocation */
	size_t bytes;
};

/* A script's lines, checked by its source and name words. */
struct script_slot {
	uint64_t script;
	uint64_t source, name;
	uint32_t *ends;
	size_t n;
	int err; /* why there are none */
};

void v8_names_init(struct v8_names *n)
{
	memset(n, 0, sizeof(*n));
	hmap_init(&n->frames, sizeof(struct frame_key), sizeof(struct frame_slot));
	hmap_init(&n->scripts, sizeof(uint64_t), sizeof(struct script_slot));
}

void v8_names_free(struct v8_names *n)
{
	size_t it = 0;
	struct frame_slot *f;
	struct script_slot *s;

	while ((f = hmap_next(&n->frames, &it)))
		free(f->strings);
	it = 0;
	while ((s = hmap_next(&n->scripts, &it)))
		free(s->ends);
	hmap_free(&n->frames);
	hmap_free(&n->scripts);
}

static bool room(const struct v8_names *n, size_t bytes)
{
	return n->frames.n + n->scripts.n < V8_NAMES_MAX && n->bytes + bytes <= V8_NAMES_BYTES;
}

/* The script's words its lines are checked by. */
static int script_words(const struct v8_layout *l, const struct memsrc *m, uint64_t script,
			uint64_t *source, uint64_t *name)
{
	int e = v8_field(l, m, script, l->script_source, source);

	return e ? e : v8_field(l, m, script, l->script_name, name);
}

/*
 * The line ends of @script (type checked), read once while its words
 * hold: 0 and *@out; -EFAULT: unreadable and not read before; -ENOSPC,
 * -ENOMEM.
 */
static int script_lines(struct v8_names *n, const struct v8_layout *l, const struct memsrc *m,
			uint64_t script, const struct script_slot **out)
{
	struct script_slot *s = hmap_find(&n->scripts, &script), tmp = { .script = script };
	bool created;

	*out = s;
	if (script_words(l, m, script, &tmp.source, &tmp.name))
		return s ? 0 : -EFAULT;
	if (s && s->source == tmp.source && s->name == tmp.name)
		return 0;
	tmp.err = v8_script_line_ends(l, m, script, &tmp.ends, &tmp.n);
	if (!s && !room(n, tmp.n * sizeof(uint32_t))) {
		n->st.refused++;
		free(tmp.ends);
		return -ENOSPC;
	}
	if (!s && !(s = hmap_insert(&n->scripts, &script, &created))) {
		free(tmp.ends);
		return -ENOMEM;
	}
	n->bytes -= s->n * sizeof(uint32_t);
	free(s->ends);
	*s = tmp;
	n->bytes += s->n * sizeof(uint32_t);
	*out = s;
	return 0;
}

/* Lines of the script @sfi's start and @pos (-1: none). */
static void lines(struct v8_names *n, const struct v8_layout *l, const struct memsrc *m,
		  const struct v8_sfi *sfi, int32_t pos, struct v8_frame *f)
{
	const struct script_slot *s;
	int e = script_lines(n, l, m, sfi->script, &s);

	if (!e && s->err)
		e = s->err;
	if (e) {
		f->start_err = e;
		if (pos >= 0)
			f->line_err = e;
		return;
	}
	if (sfi->start >= 0)
		f->start_line = v8_line_of(s->ends, s->n, (uint32_t)sfi->start);
	else
		f->start_err = -ENODATA;
	if (pos >= 0)
		f->line = v8_line_of(s->ends, s->n, (uint32_t)pos);
}

/* Resolves @k into @slot's frame, its strings in one new allocation. */
static void resolve(struct v8_names *n, const struct v8_layout *l, const struct memsrc *m,
		    const struct frame_key *k, struct frame_slot *slot)
{
	struct v8_sfi sfi;
	struct v8_frame *f = &slot->f;
	char script[V8_SCRIPT_NAME_MAX] = "";
	int32_t pos = -1;
	size_t fl, sl;

	memset(f, 0, sizeof(*f));
	f->err = v8_sfi_read(l, m, k->sfi, &sfi);
	if (f->err)
		sfi.name[0] = 0;
	if (!f->err && sfi.script && v8_script_name(l, m, sfi.script, script, sizeof(script)))
		script[0] = 0;
	if (!f->err && k->offset >= 0) {
		f->line_err = sfi.bytecode ? v8_bytecode_position(l, m, sfi.bytecode,
								  (int32_t)k->offset, &pos) : -ENODATA;
		if (f->line_err)
			pos = -1;
	}
	if (!f->err && sfi.script)
		lines(n, l, m, &sfi, pos, f);
	else if (!f->err)
		f->start_err = f->line_err = -ENODATA;
	if (f->line_err || k->offset < 0)
		f->line = 0;
	fl = strlen(sfi.name) + 1;
	sl = strlen(script) + 1;
	slot->strings = malloc(fl + sl);
	if (!slot->strings) {
		f->err = -ENOMEM;
		f->function = f->script = "";
		slot->bytes = 0;
		return;
	}
	f->function = memcpy(slot->strings, sfi.name, fl);
	f->script = memcpy(slot->strings + fl, script, sl);
	slot->bytes = fl + sl;
}

const struct v8_frame *v8_frame_kept(const struct v8_names *n, uint64_t sfi, int32_t offset)
{
	struct frame_key k = { sfi, offset < 0 ? -1 : offset };
	const struct frame_slot *slot = hmap_find(&n->frames, &k);

	return slot ? &slot->f : NULL;
}

int v8_frame_name(struct v8_names *n, const struct v8_layout *l, const struct memsrc *m,
		  uint64_t sfi, int32_t offset, const struct v8_frame **out)
{
	struct frame_key k = { sfi, offset < 0 ? -1 : offset };
	struct frame_slot *slot = hmap_find(&n->frames, &k), tmp = { .key = k };
	bool read_ok, created;

	/* 40 bytes from the tagged pointer's object: 0s when unreadable */
	read_ok = !v8_read(l, m, sfi, 0, tmp.head, sizeof(tmp.head));
	if (slot && (!read_ok || !memcmp(slot->head, tmp.head, sizeof(tmp.head)))) {
		*out = &slot->f;
		return 0;
	}
	resolve(n, l, m, &k, &tmp);
	if (tmp.f.err == -ENOMEM)
		return -ENOMEM;
	if (!slot && !room(n, tmp.bytes)) {
		n->st.refused++;
		free(tmp.strings);
		return -ENOSPC;
	}
	if (!slot && !(slot = hmap_insert(&n->frames, &k, &created))) {
		free(tmp.strings);
		return -ENOMEM;
	}
	n->bytes -= slot->bytes;
	free(slot->strings);
	*slot = tmp;
	n->bytes += slot->bytes;
	if (tmp.f.err)
		n->st.failed++;
	else
		n->st.named++;
	*out = &slot->f;
	return 0;
}
