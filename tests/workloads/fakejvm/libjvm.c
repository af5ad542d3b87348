// SPDX-License-Identifier: MIT
/*
 * A libjvm.so that is not a JVM: it exports the serviceability tables'
 * symbols HotSpot does (gHotSpotVMStructs and the rest), filled by
 * fakejvm_fill() with what a hostile process might put there.  The agent
 * must refuse it, say so, and keep the process's native frames.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

struct field {
	const char *type, *name, *type_string;
	int32_t is_static;
	uint64_t offset;
	void *address;
};

struct type {
	const char *name, *super;
	int32_t is_oop, is_int, is_unsigned;
	uint64_t size;
};

struct constant {
	const char *name;
	int64_t value;
};

void *gHotSpotVMStructs, *gHotSpotVMTypes, *gHotSpotVMIntConstants, *gHotSpotVMLongConstants;
uint64_t gHotSpotVMStructEntryArrayStride = sizeof(struct field);
uint64_t gHotSpotVMStructEntryTypeNameOffset = offsetof(struct field, type);
uint64_t gHotSpotVMStructEntryFieldNameOffset = offsetof(struct field, name);
uint64_t gHotSpotVMStructEntryTypeStringOffset = offsetof(struct field, type_string);
uint64_t gHotSpotVMStructEntryIsStaticOffset = offsetof(struct field, is_static);
uint64_t gHotSpotVMStructEntryOffsetOffset = offsetof(struct field, offset);
uint64_t gHotSpotVMStructEntryAddressOffset = offsetof(struct field, address);
uint64_t gHotSpotVMTypeEntryArrayStride = sizeof(struct type);
uint64_t gHotSpotVMTypeEntryTypeNameOffset = offsetof(struct type, name);
uint64_t gHotSpotVMTypeEntrySuperclassNameOffset = offsetof(struct type, super);
uint64_t gHotSpotVMTypeEntrySizeOffset = offsetof(struct type, size);
uint64_t gHotSpotVMIntConstantEntryArrayStride = sizeof(struct constant);
uint64_t gHotSpotVMIntConstantEntryNameOffset = offsetof(struct constant, name);
uint64_t gHotSpotVMIntConstantEntryValueOffset = offsetof(struct constant, value);
uint64_t gHotSpotVMLongConstantEntryArrayStride = sizeof(struct constant);
uint64_t gHotSpotVMLongConstantEntryNameOffset = offsetof(struct constant, name);
uint64_t gHotSpotVMLongConstantEntryValueOffset = offsetof(struct constant, value);

static int major = 17;
static struct field fields[] = {
	{ "CodeBlob", "_frame_size", "int", 0, 4000, NULL }, /* past its type's 8 bytes */
	{ "Abstract_VM_Version", "_vm_major_version", "int", 1, 0, &major },
	{ "CodeCache", "_heaps", "GrowableArray<CodeHeap*>*", 1, 0, &fields[0] },
	{ NULL, NULL, NULL, 0, 0, NULL },
};
static struct type types[] = {
	{ "CodeBlob", NULL, 0, 0, 0, 8 },
	{ "int", NULL, 0, 1, 0, 4 },
	{ NULL, NULL, 0, 0, 0, 0 },
};
static struct constant none[] = { { NULL, 0 } };

/*
 * "lying": tables that hold together but whose members lie outside their
 * types; "endless": a field table with no end, running into a page that
 * cannot be read; "stride": an entry stride of a megabyte; "empty": the
 * tables never filled in (a JVM forever starting); "zero": the tables'
 * pointer set but their strides 0, as a real libjvm.so is between its
 * relocation and its constructors.
 */
int fakejvm_fill(const char *mode)
{
	gHotSpotVMTypes = types;
	gHotSpotVMIntConstants = none;
	gHotSpotVMLongConstants = none;
	gHotSpotVMStructEntryArrayStride = sizeof(struct field);
	if (!strcmp(mode, "lying")) {
		gHotSpotVMStructs = fields;
	} else if (!strcmp(mode, "endless")) {
		long page = 4096;
		char *p = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0);
		size_t n = page / sizeof(struct field);

		if (p == MAP_FAILED || mprotect(p + page, page, PROT_NONE))
			return -1;
		for (size_t i = 0; i < n; i++)
			((struct field *)p)[i] = fields[0];
		/* the table fills its page to the last byte: the next entry is unreadable */
		gHotSpotVMStructs = p + page - n * sizeof(struct field);
		memmove(gHotSpotVMStructs, p, n * sizeof(struct field));
	} else if (!strcmp(mode, "stride")) {
		gHotSpotVMStructEntryArrayStride = 1 << 20;
		gHotSpotVMStructs = fields;
	} else if (!strcmp(mode, "empty")) {
		gHotSpotVMStructs = NULL;
	} else if (!strcmp(mode, "zero")) {
		gHotSpotVMStructEntryArrayStride = 0;
		gHotSpotVMStructs = fields;
	} else {
		return -1;
	}
	return 0;
}
