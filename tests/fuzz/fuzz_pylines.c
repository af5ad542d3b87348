// SPDX-License-Identifier: MIT
/*
 * fuzz_pylines: any bytes as a code object's line table (a process's
 * memory, read by the loader) in each CPython version's format.  The first
 * byte picks the version, the next four the first line and the two after
 * the bytecode offset; the rest is the table.
 *
 * Checked: a line or none (>= 0), within the table (ASan), no overflow
 * (UBSan); an empty table gives none except by co_lnotab's rule (first line).
 */
#include <stdint.h>
#include <string.h>

#include "fuzz_common.h"
#include "python/python_lines.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const unsigned versions[] = { 0x308, 0x309, 0x30a, 0x30b, 0x30c, 0x30d };
	int32_t first;
	uint16_t addr;
	unsigned v;

	if (size < 7)
		return 0;
	v = versions[data[0] % 6];
	memcpy(&first, data + 1, sizeof(first));
	memcpy(&addr, data + 5, sizeof(addr));
	FUZZ_ASSERT(py_line(v, data + 7, size - 7, first, addr) >= 0);
	if (v >= 0x30a)
		FUZZ_ASSERT(py_line(v, data + 7, 0, first, addr) == 0);
	return 0;
}
