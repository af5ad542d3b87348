// SPDX-License-Identifier: MIT
/*
 * runframes: a managed runtime's frames as symbolized ones (runframes.h).
 */
#include "node/v8_bpf.h"
#include "output/runframes.h"

void runframe_python(const struct process *p, uint64_t code, uint64_t pos, struct sym *out)
{
	struct py_frame pf;

	pyproc_frame(p->py, code, pos, &pf);
	*out = (struct sym){ .vma = -1, .nlines = 1 };
	out->lines[0] = (struct sym_line){
		.name = pf.name ? pf.name : "[python: code object not read]",
		.file = pf.file,
		.line = pf.line,
		.start_line = pf.start_line,
	};
}

_Static_assert(JVM_FRAME_LINES <= SYM_MAX_LINES, "a Java frame's lines do not fit a sym");
void runframe_java(const struct process *p, uint64_t tagged, struct sym *out)
{
	const struct jvm_frame_rec *r = p->jvm ? jvm_frame_lines(p->jvm, tagged) : NULL;

	*out = (struct sym){ .vma = -1, .nlines = 1, .dwarf = true };
	if (!r || !r->n) {
		out->lines[0].name = r && r->res == JVM_NAMED_GONE ? "[java: compiled code gone]" :
								   "[java: method not read]";
		return;
	}
	out->nlines = r->n;
	for (size_t i = 0; i < r->n; i++) {
		const struct jvm_named *m = r->lines[i].method;

		out->lines[i] = m ? (struct sym_line){ .name = m->function,
						       .system_name = m->system_name,
						       .file = m->file,
						       .line = r->lines[i].line,
						       .start_line = m->start_line } :
				    (struct sym_line){ .name = "[java: method not read]" };
	}
}

/*
 * As named at the drain that brought it (V8's collector moves what names
 * it).  Its line is the bytecode offset's where one was recorded and read
 * (an interpreted frame), else the function's first: a compiled frame's
 * pc is not mapped to a line yet.
 */
void runframe_js(const struct process *p, uint64_t tagged, struct sym *out)
{
	const struct v8_frame *f = p->v8 ? v8proc_frame_kept(p->v8, tagged) : NULL;

	*out = (struct sym){ .vma = -1, .nlines = 1 };
	if (!f || f->err) {
		out->lines[0].name = "[js: function not read]";
		return;
	}
	out->lines[0] = (struct sym_line){
		.name = f->function,
		.file = f->script[0] ? f->script : NULL,
		.line = f->line ? f->line : f->start_line,
		.start_line = f->start_line,
	};
}
