// SPDX-License-Identifier: MIT
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfiasm.h"
#include "unwindcheck.h"

static void c_put(struct cfiasm *c, const void *p, size_t n)
{
	if (n == 0)
		return; /* p may be NULL */
	if (c->n + n > sizeof(c->b)) {
		fprintf(stderr, "cfi buffer overflow\n");
		exit(2);
	}
	memcpy(c->b + c->n, p, n);
	c->n += n;
}

static void c_u8(struct cfiasm *c, uint8_t v) { c_put(c, &v, 1); }
static void c_u16(struct cfiasm *c, uint16_t v) { c_put(c, &v, 2); }
void c_u32(struct cfiasm *c, uint32_t v) { c_put(c, &v, 4); }
void c_u64(struct cfiasm *c, uint64_t v) { c_put(c, &v, 8); }

static void c_uleb(struct cfiasm *c, uint64_t v)
{
	do {
		uint8_t b = v & 0x7f;

		v >>= 7;
		c_u8(c, b | (v ? 0x80 : 0));
	} while (v);
}

static void c_sleb(struct cfiasm *c, int64_t v)
{
	for (;;) {
		uint8_t b = v & 0x7f;

		v >>= 7;
		if ((v == 0 && !(b & 0x40)) || (v == -1 && (b & 0x40))) {
			c_u8(c, b);
			return;
		}
		c_u8(c, b | 0x80);
	}
}

/* A pointer as an FDE would encode it (the formats and bases we test). */
static void c_ptr(struct cfiasm *c, uint8_t enc, uint64_t v)
{
	if ((enc & 0x70) == 0x10)
		v -= (c->debug ? 0 : CFI_VADDR) + c->n;
	else if ((enc & 0x70) == 0x20)
		v -= TEXT_VADDR;
	switch (enc & 0x0f) {
	case 0x01:
		c_uleb(c, v);
		break;
	case 0x02:
	case 0x0a:
		c_u16(c, (uint16_t)v);
		break;
	case 0x03:
	case 0x0b:
		c_u32(c, (uint32_t)v);
		break;
	case 0x09:
		c_sleb(c, (int64_t)v);
		break;
	default:
		c_u64(c, v);
		break;
	}
}

/* Opens an entry: its length is patched by c_close(). */
static size_t c_open(struct cfiasm *c)
{
	size_t at = c->n;

	if (c->dwarf64) {
		c_u32(c, 0xffffffffu);
		c_u64(c, 0);
	} else {
		c_u32(c, 0);
	}
	return at;
}

static void c_close(struct cfiasm *c, size_t at)
{
	if (c->dwarf64) {
		uint64_t len = c->n - at - 12;

		memcpy(c->b + at + 4, &len, 8);
	} else {
		uint32_t len = (uint32_t)(c->n - at - 4);

		memcpy(c->b + at, &len, 4);
	}
}

static void c_id(struct cfiasm *c, uint64_t v)
{
	if (c->dwarf64)
		c_u64(c, v);
	else
		c_u32(c, (uint32_t)v);
}


size_t c_cie(struct cfiasm *c, const char *aug, int64_t data_align, uint8_t enc,
	     const uint8_t *ins, size_t nins)
{
	size_t at = c_open(c);
	int ver = c->version ? c->version : c->debug ? 4 : 1;

	c_id(c, c->debug ? (c->dwarf64 ? UINT64_MAX : 0xffffffffu) : 0);
	c_u8(c, (uint8_t)ver);
	c_put(c, aug, strlen(aug) + 1);
	if (ver == 4) {
		c_u8(c, 8); /* address size */
		c_u8(c, 0); /* segment selector size */
	}
	c_uleb(c, 1);
	c_sleb(c, data_align);
	if (ver == 1)
		c_u8(c, 16);
	else
		c_uleb(c, 16);
	if (aug[0] == 'z') {
		struct cfiasm a = { .debug = c->debug };

		for (const char *q = aug + 1; *q; q++) {
			if (*q == 'R') {
				c_u8(&a, enc);
			} else if (*q == 'L') {
				c_u8(&a, 0x1b);
			} else if (*q == 'P') {
				c_u8(&a, 0x9b);
				c_u32(&a, 0x12345678);
			}
		}
		c_uleb(c, a.n);
		c_put(c, a.b, a.n);
	}
	c_put(c, ins, nins);
	c_close(c, at);
	return at;
}

size_t c_fde(struct cfiasm *c, size_t cie, uint8_t enc, bool lsda, uint64_t start,
	     uint64_t len, const uint8_t *ins, size_t nins)
{
	size_t at = c_open(c);

	c_id(c, c->debug ? cie : c->n - cie);
	if (c->debug) {
		c_u64(c, start);
		c_u64(c, len);
	} else {
		c_ptr(c, enc, start);
		c_ptr(c, enc & 0x0f, len);
		c_uleb(c, lsda ? 4 : 0);
		if (lsda)
			c_u32(c, 0);
	}
	c_put(c, ins, nins);
	c_close(c, at);
	return at;
}

uint8_t *c_image(const struct cfiasm *eh, const struct cfiasm *dbg, size_t *len)
{
	static const char strtab[] = "\0.text\0.eh_frame\0.shstrtab\0.debug_frame\0.data";
	size_t neh = eh ? eh->n : 0, ndbg = dbg ? dbg->n : 0;
	size_t text_off = sizeof(Elf64_Ehdr), eh_off = text_off + TEXT_SIZE;
	size_t dbg_off = eh_off + neh, str_off = dbg_off + ndbg;
	size_t sh_off = (str_off + sizeof(strtab) + 7) & ~(size_t)7;
	uint8_t *img = calloc(1, sh_off + 5 * sizeof(Elf64_Shdr));
	Elf64_Ehdr *h = (Elf64_Ehdr *)img;
	Elf64_Shdr *sh;

	if (!img)
		exit(2);
	memcpy(h->e_ident, ELFMAG, SELFMAG);
	h->e_ident[EI_CLASS] = ELFCLASS64;
	h->e_ident[EI_DATA] = ELFDATA2LSB;
	h->e_ident[EI_VERSION] = EV_CURRENT;
	h->e_type = ET_DYN;
	h->e_machine = EM_X86_64;
	h->e_version = EV_CURRENT;
	h->e_shoff = sh_off;
	h->e_ehsize = sizeof(*h);
	h->e_shentsize = sizeof(Elf64_Shdr);
	h->e_shnum = 5;
	h->e_shstrndx = 4;
	if (neh)
		memcpy(img + eh_off, eh->b, neh);
	if (ndbg)
		memcpy(img + dbg_off, dbg->b, ndbg);
	memcpy(img + str_off, strtab, sizeof(strtab));
	sh = (Elf64_Shdr *)(img + sh_off);
	sh[1] = (Elf64_Shdr){ .sh_name = 1, .sh_type = SHT_PROGBITS,
			      .sh_flags = SHF_ALLOC | SHF_EXECINSTR, .sh_addr = TEXT_VADDR,
			      .sh_offset = text_off, .sh_size = TEXT_SIZE, .sh_addralign = 16 };
	sh[2] = (Elf64_Shdr){ .sh_name = eh ? 7 : 40, .sh_type = SHT_PROGBITS,
			      .sh_flags = SHF_ALLOC, .sh_addr = CFI_VADDR,
			      .sh_offset = eh_off, .sh_size = neh, .sh_addralign = 8 };
	sh[3] = (Elf64_Shdr){ .sh_name = dbg ? 27 : 40, .sh_type = SHT_PROGBITS,
			      .sh_offset = dbg_off, .sh_size = ndbg, .sh_addralign = 8 };
	sh[4] = (Elf64_Shdr){ .sh_name = 17, .sh_type = SHT_STRTAB, .sh_offset = str_off,
			      .sh_size = sizeof(strtab), .sh_addralign = 1 };
	*len = sh_off + 5 * sizeof(Elf64_Shdr);
	return img;
}

int c_build2(const struct cfiasm *eh, const struct cfiasm *dbg, struct unwind_table *t)
{
	struct errbuf err = { "" };
	size_t len;
	uint8_t *img = c_image(eh, dbg, &len);
	int rc = build_mem(img, len, t, &err);

	if (rc)
		printf("# unwind_build_mem: %d (%s)\n", rc, err.msg);
	free(img);
	return rc;
}

int c_build(const struct cfiasm *c, struct unwind_table *t)
{
	return c->debug ? c_build2(NULL, c, t) : c_build2(c, NULL, t);
}
