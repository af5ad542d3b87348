// SPDX-License-Identifier: MIT
/*
 * fuzz_dwarfinfo: the DWARF sections source lines and inlined calls read
 * (.debug_info, _abbrev, _line, _line_str, _str, _aranges, _rnglists,
 * _ranges, _addr, _str_offsets, _types), wrapped by the harness in a
 * valid ELF (synth_elf.h), plain or compressed either way (possibly with
 * a size that lies), read from a file descriptor the way the sandboxed
 * worker reads an object (dwarfinfo_open_fds(): dwarfimage.c, then libdw),
 * and looked up at the addresses the input names.
 *
 *   u16 flags    bit 0: ELF-compress (zlib) the sections marked in `zmask`
 *                bit 1: GNU .zdebug_ instead        bit 2: ET_EXEC
 *                bit 3: the first compressed size claims `lie` bytes more
 *                bit 4: a .gnu_debugaltlink (no dwz file is given)
 *                bit 5: tiny budget (`budget` bytes)
 *   u16 zmask    which sections to compress (bit i: section i below)
 *   u32 lie, budget
 *   u32 len[11]  the sections' lengths, in the order above
 *   u64 addr[8]  addresses to look up (and the 64 after each)
 *   ... the sections
 *
 * tests/fuzz/seedgen.c writes seeds in this format from real objects.
 * Checked beyond "no crash": open errors are the documented ones, frames
 * are at most what was asked, every string is NUL-terminated (strlen under
 * ASan), lines are not negative.  libdw is not built with sanitizers here:
 * what is caught inside it is what the interceptors (strlen, memchr,
 * memcpy) see, and its leaks on malformed DWARF (the worker's child takes
 * them away) are not reported.
 */
#include <errno.h>
#include <stdint.h>
#include <zlib.h>

#include "dwarf/dwarfinfo.h"
#include "fuzz_common.h"
#include "synth_elf.h"

enum {
	F_ZLIB = 1 << 0,
	F_GNU = 1 << 1,
	F_EXEC = 1 << 2,
	F_LIE = 1 << 3,
	F_ALTLINK = 1 << 4,
	F_BUDGET = 1 << 5,
};

#define NSEC 11
#define NADDR 8

static const char *const names[NSEC] = {
	"info", "abbrev", "line", "line_str", "str", "aranges",
	"rnglists", "ranges", "addr", "str_offsets", "types",
};

/* libdw's own leaks on malformed DWARF: the worker's child dies with them. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libdw.so\n";
}

/* @data compressed as an ELF (Chdr) or GNU ("ZLIB" + size) section; NULL on failure. */
static uint8_t *squeeze(const uint8_t *data, size_t len, bool gnu, uint64_t lie, size_t *out_len)
{
	uLongf zlen = compressBound((uLong)len);
	size_t hdr = gnu ? 12 : sizeof(Elf64_Chdr);
	uint8_t *out = malloc(hdr + zlen);
	uint64_t claim = len + lie;

	if (!out || compress2(out + hdr, &zlen, data, (uLong)len, 1) != Z_OK) {
		free(out);
		return NULL;
	}
	if (gnu) {
		memcpy(out, "ZLIB", 4);
		for (int i = 0; i < 8; i++)
			out[4 + i] = (uint8_t)(claim >> (56 - 8 * i));
	} else {
		Elf64_Chdr ch = { .ch_type = ELFCOMPRESS_ZLIB, .ch_size = claim, .ch_addralign = 1 };

		memcpy(out, &ch, sizeof(ch));
	}
	*out_len = hdr + zlen;
	return out;
}

static void check_frames(const struct dwarf_frame *f, size_t n, size_t max)
{
	FUZZ_ASSERT(n <= max);
	for (size_t i = 0; i < n; i++) {
		FUZZ_ASSERT(!f[i].name || strlen(f[i].name) < (1u << 24));
		FUZZ_ASSERT(!f[i].file || strlen(f[i].file) < (1u << 24));
		FUZZ_ASSERT(!f[i].dir || strlen(f[i].dir) < (1u << 24));
		FUZZ_ASSERT(f[i].line >= 0 && f[i].start_line >= 0);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fdp f = fdp_init(data, size);
	uint16_t flags = fdp_u16(&f), zmask = fdp_u16(&f);
	uint32_t lie = fdp_u32(&f), budget = fdp_u32(&f), len[NSEC];
	uint64_t addr[NADDR];
	struct synth s;
	struct dwarfinfo *d = NULL;
	struct errbuf err = { "" };
	bool lied = false;
	uint8_t *img;
	size_t img_len;
	int fd, rc;

	for (int i = 0; i < NSEC; i++)
		len[i] = fdp_u32(&f);
	for (int i = 0; i < NADDR; i++)
		addr[i] = fdp_u64(&f);
	synth_init(&s, (flags & F_EXEC) ? ET_EXEC : ET_DYN);
	synth_phdr(&s, &(Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R | PF_X,
				      .p_filesz = 4096, .p_memsz = 4096, .p_align = 4096 });
	for (int i = 0; i < NSEC; i++) {
		size_t got, blen;
		const uint8_t *b = fdp_bytes(&f, len[i], &got);
		bool z = (flags & F_ZLIB) && (zmask & (1u << i));
		uint8_t *zb = NULL;
		char name[32];
		uint64_t off;

		if (z && (zb = squeeze(b, got, flags & F_GNU, (flags & F_LIE) && !lied ? lie : 0, &blen))) {
			lied = true;
			b = zb;
			got = blen;
		}
		snprintf(name, sizeof(name), "%s%s", zb && (flags & F_GNU) ? ".zdebug_" : ".debug_",
			 names[i]);
		off = synth_blob(&s, b, got, 1);
		synth_section(&s, name,
			      &(Elf64_Shdr){ .sh_type = SHT_PROGBITS,
					     .sh_flags = zb && !(flags & F_GNU) ? SHF_COMPRESSED : 0,
					     .sh_offset = off, .sh_size = got, .sh_addralign = 1 });
		free(zb);
	}
	if (flags & F_ALTLINK) {
		static const char link[] = "common.dwz\0ABCDEFGHIJKLMNOPQRST";
		uint64_t off = synth_blob(&s, link, sizeof(link) - 1, 1);

		synth_section(&s, ".gnu_debugaltlink",
			      &(Elf64_Shdr){ .sh_type = SHT_PROGBITS, .sh_offset = off,
					     .sh_size = sizeof(link) - 1, .sh_addralign = 1 });
	}
	img = synth_finish(&s, &img_len);
	if (!img)
		return 0;
	fd = fuzz_memfd(img, img_len);
	free(img);
	if (fd < 0)
		return 0;
	rc = dwarfinfo_open_fds(&d, fd, -1, (flags & F_BUDGET) ? budget : 0, &err);
	close(fd);
	FUZZ_ASSERT(rc == 0 || rc == -ENOENT || rc == -EFBIG || rc == -ENOEXEC || rc == -ENOMEM);
	FUZZ_ASSERT(rc ? !d && err.msg[0] : d != NULL);
	if (rc == -ENOENT && (flags & F_ALTLINK) && len[0])
		FUZZ_ASSERT(strstr(err.msg, "dwz") || strstr(err.msg, "no DWARF"));
	if (!d)
		return 0;
	FUZZ_ASSERT(dwarfinfo_bytes(d) <= DWARFINFO_MAX_BYTES);
	for (int i = 0; i < NADDR; i++)
		for (uint64_t a = addr[i]; a < addr[i] + 64 && a >= addr[i]; a += 1 + (a & 7)) {
			struct dwarf_frame fr[DWARFINFO_MAX_FRAMES], two[2];

			check_frames(fr, dwarfinfo_lookup(d, a, fr, DWARFINFO_MAX_FRAMES),
				     DWARFINFO_MAX_FRAMES);
			check_frames(two, dwarfinfo_lookup(d, a, two, 2), 2);
		}
	dwarfinfo_free(d);
	return 0;
}
