// SPDX-License-Identifier: MIT
/*
 * test_py_window: what bpf/python.bpf.h reads of the C stack (the
 * _PyCFrame of 3.11 and 3.12, the entry frames of 3.12 and 3.13) comes
 * from the stack window the user walk left, and from the thread's memory
 * only where the window does not hold all of it.
 *
 * The window's bytes differ from the memory's at the same addresses, so
 * each answer tells where it came from.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "unwind/bpfunwind.h"
#include "testlib.h"

#define MEM_LO 0x7ffd00000000ull
#define MEM_LEN 16384u
#define WIN_AT 4096u  /* the window's offset in the memory */
#define WIN_LEN 2048u /* bytes in the window */
#define FRAME 80u     /* a 3.12 frame's bytes read */

static uint8_t mem[MEM_LEN];
static uint8_t win[4096];

static uint64_t word_at(const uint8_t *b, size_t off)
{
	uint64_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

static void test_word(const struct bpfu_memory *m)
{
	uint64_t v = 0, lo = MEM_LO + WIN_AT;
	size_t reads = 0;

	CHECK(bpfu_py_stack_word(m, lo + 64, &v, &reads) == 0 && v == word_at(win, 64) &&
		      reads == 0,
	      "a word in the window is the window's, with no read", "v %#llx, %zu reads",
	      (unsigned long long)v, reads);
	CHECK(bpfu_py_stack_word(m, lo + WIN_LEN - 8, &v, &reads) == 0 &&
		      v == word_at(win, WIN_LEN - 8) && reads == 0,
	      "the window's last word too", "v %#llx, %zu reads", (unsigned long long)v, reads);
	CHECK(bpfu_py_stack_word(m, lo + WIN_LEN - 4, &v, &reads) == 0 &&
		      v == word_at(mem, WIN_AT + WIN_LEN - 4) && reads == 1,
	      "a word across the window's end is read from memory", "v %#llx, %zu reads",
	      (unsigned long long)v, reads);
	CHECK(bpfu_py_stack_word(m, lo - 8, &v, &reads) == 0 && v == word_at(mem, WIN_AT - 8) &&
		      reads == 1,
	      "a word below the window is read from memory", "v %#llx, %zu reads",
	      (unsigned long long)v, reads);
	CHECK(bpfu_py_stack_word(m, MEM_LO + MEM_LEN, &v, &reads) != 0,
	      "a word in neither fails", "v %#llx", (unsigned long long)v);
}

static void test_frame(void)
{
	uint64_t lo = MEM_LO + WIN_AT;
	uint8_t out[CPROF_PY_FRAME_READ];
	int rc;

	rc = bpfu_py_frame_from_window(lo + 512, FRAME, out);
	CHECK(rc == 0 && memcmp(out, win + 512, FRAME) == 0,
	      "a frame in the window is copied from it", "rc %d", rc);
	rc = bpfu_py_frame_from_window(lo + WIN_LEN - FRAME, FRAME, out);
	CHECK(rc == 0 && memcmp(out, win + WIN_LEN - FRAME, FRAME) == 0,
	      "a frame ending at the window's end too", "rc %d", rc);
	rc = bpfu_py_frame_from_window(lo + WIN_LEN - FRAME + 8, FRAME, out);
	CHECK(rc == -1, "a frame across the window's end is not", "rc %d", rc);
	rc = bpfu_py_frame_from_window(lo - 8, FRAME, out);
	CHECK(rc == -1, "a frame starting below the window is not", "rc %d", rc);
	rc = bpfu_py_frame_from_window(MEM_LO, FRAME, out);
	CHECK(rc == -1, "a frame far below it is not", "rc %d", rc);
	/* a full window: the copy's fixed size must stay inside it */
	bpfu_set_window(lo, win, sizeof(win));
	rc = bpfu_py_frame_from_window(lo + sizeof(win) - CPROF_PY_FRAME_READ, FRAME, out);
	CHECK(rc == 0 && memcmp(out, win + sizeof(win) - CPROF_PY_FRAME_READ, FRAME) == 0,
	      "in a full window, a frame as far up as a whole read fits", "rc %d", rc);
	rc = bpfu_py_frame_from_window(lo + sizeof(win) - FRAME, FRAME, out);
	CHECK(rc == -1, "one further up is left to a read of its own", "rc %d", rc);
	bpfu_set_window(lo, win, 0);
	rc = bpfu_py_frame_from_window(lo, FRAME, out);
	CHECK(rc == -1, "an empty window holds no frame", "rc %d", rc);
}

int main(void)
{
	struct bpfu_memory m = { MEM_LO, mem, sizeof(mem) };

	T_PLAN(13);
	for (size_t i = 0; i < sizeof(mem); i++)
		mem[i] = (uint8_t)(i * 7 + 1);
	for (size_t i = 0; i < sizeof(win); i++)
		win[i] = (uint8_t)(i * 13 + 5) ^ 0xa5;
	bpfu_set_window(MEM_LO + WIN_AT, win, WIN_LEN);
	test_word(&m);
	test_frame();
	return T_EXIT();
}
