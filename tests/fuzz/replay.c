// SPDX-License-Identifier: MIT
/*
 * replay: a main() for a fuzz target without libFuzzer, so the regression
 * inputs in tests/fuzz/regress/ run under plain ASan/UBSan with any
 * compiler (make fuzz-regress, tests/unit/test_fuzz_regress.sh).
 *
 *   replay-NAME FILE...   runs the target once on each file; a finding
 *                         aborts (sanitizer report or FUZZ_ASSERT), so the
 *                         exit status says whether every file passed.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Fuzz inputs are capped well below this (-max_len); bigger is a mistake. */
#define REPLAY_MAX (64u << 20)

static int replay(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0;

	if (!f) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	for (;;) {
		size_t n;

		if (len == cap) {
			uint8_t *b;

			cap = cap ? cap * 2 : 65536;
			if (cap > REPLAY_MAX || !(b = realloc(buf, cap))) {
				fprintf(stderr, "replay: %s: too large\n", path);
				free(buf);
				fclose(f);
				return -1;
			}
			buf = b;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
		if (n == 0)
			break;
	}
	if (ferror(f)) {
		fprintf(stderr, "replay: %s: read error\n", path);
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	/* An exact-size copy, so ASan sees reads one past the input. */
	uint8_t *exact = malloc(len ? len : 1);

	if (!exact) {
		free(buf);
		return -1;
	}
	memcpy(exact, buf, len);
	free(buf);
	LLVMFuzzerTestOneInput(exact, len);
	free(exact);
	return 0;
}

int main(int argc, char **argv)
{
	int bad = 0;

	for (int i = 1; i < argc; i++)
		if (replay(argv[i]))
			bad = 1;
	return bad;
}
