# Fuzz targets for every parser of untrusted input (included by the Makefile).
#
#   make fuzz                      each target for FUZZ_SECS (default 60) s
#   make fuzz FUZZ_SECS=600 FUZZ_TARGETS="elf ehframe"
#   make fuzz-regress              replay tests/fuzz/regress/<target>/* once
#
# A target NAME is tests/fuzz/fuzz_NAME.c plus the library sources it
# exercises, compiled straight into it by clang with libFuzzer, ASan and
# UBSan (not linked against libcprof.a, which gcc builds without coverage
# instrumentation).  Corpora grow in $(BUILD)/fuzz/corpus-NAME, seeded from
# tests/fuzz/seeds/NAME and from real files of this machine
# (tests/fuzz/seed.sh); crashes land in $(BUILD)/fuzz/artifacts/NAME/.
# Minimize one with `$(BUILD)/fuzz/fuzz-NAME -minimize_crash=1 -runs=10000 FILE`,
# add it to tests/fuzz/regress/NAME/ and `make test` replays it from then on
# (tests/unit/test_fuzz_regress.sh), with the replay-NAME binaries below,
# which need no libFuzzer.

FUZZ_CC      ?= clang
FUZZ_SECS    ?= 60
FUZZ_DIR     := $(BUILD)/fuzz
# Regression replays use clang when there is one, else the C compiler:
# both have ASan and UBSan.
REPLAY_CC    ?= $(shell command -v $(FUZZ_CC) >/dev/null 2>&1 && echo $(FUZZ_CC) || echo $(CC))
FUZZ_CFLAGS  := -g -O1 -std=gnu11 -D_GNU_SOURCE -fno-omit-frame-pointer \
                -Wall -Wextra -Wno-unused-parameter \
                -Iuser -Iproto -Ibpf -Itests -Itests/fuzz -DCPROF_VERSION='"fuzz"'
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_LIBS    := -lelf -lz
FUZZ_HDRS    := $(wildcard tests/fuzz/*.h tests/*.h user/*/*.h proto/*.h bpf/*.h)

# Library sources per target, the libFuzzer options that suit its input,
# and the libraries it needs beyond FUZZ_LIBS.
# The ELF layer (elfsrc.c) and the debug-file finder serve every reader of ELF.
ELF_SRCS            := user/elf/elfsrc.c user/util/errbuf.c
ELFOBJ_SRCS         := user/elf/elfobj.c user/elf/elfsyms.c user/elf/debugfile.c user/elf/symsel.c \
                       user/fs/rootfs.c user/util/arena.c user/util/membudget.c $(ELF_SRCS)
UNWIND_SRCS         := $(wildcard user/unwind/unwind*.c) user/unwind/rows.c user/elf/secread.c user/util/ranges.c \
                       tests/unwindcheck.c user/unwind/bpfunwind.c
fuzz_elf_SRCS       := $(ELFOBJ_SRCS) $(UNWIND_SRCS)
fuzz_elf_OPTS       := -max_len=262144
fuzz_ehframe_SRCS   := $(UNWIND_SRCS) $(ELF_SRCS)
fuzz_ehframe_OPTS   := -max_len=65600
fuzz_elfsyms_SRCS   := $(ELFOBJ_SRCS)
fuzz_elfsyms_OPTS   := -max_len=65600
fuzz_procmaps_SRCS  := user/fs/procmaps.c user/util/errbuf.c
fuzz_procmaps_OPTS  := -max_len=65536 -dict=tests/fuzz/procmaps.dict
fuzz_kallsyms_SRCS  := user/symbols/kallsyms.c user/symbols/kcatalog.c user/util/membudget.c user/util/errbuf.c
fuzz_kallsyms_OPTS  := -max_len=16384 -dict=tests/fuzz/kallsyms.dict
fuzz_pprof_SRCS     := $(wildcard proto/*.c) user/util/arena.c user/util/membudget.c user/util/hmap.c
fuzz_pprof_OPTS     := -max_len=16384
fuzz_perfmap_SRCS   := user/symbols/perfmap.c user/fs/rootfs.c user/fs/fdlru.c user/util/errbuf.c
fuzz_perfmap_OPTS   := -max_len=65536 -dict=tests/fuzz/perfmap.dict
fuzz_pylines_SRCS   := user/python/python_lines.c
fuzz_pylines_OPTS   := -max_len=4096
fuzz_cgroup_SRCS    := user/fs/cgroup.c user/util/errbuf.c
fuzz_cgroup_OPTS    := -max_len=8192
fuzz_dwarfinfo_SRCS := user/dwarf/dwarfinfo.c user/dwarf/dwarfimage.c $(ELFOBJ_SRCS)
fuzz_dwarfinfo_OPTS := -max_len=65700
fuzz_dwarfinfo_LIBS := -ldw
fuzz_symbolize_SRCS := user/symbols/symbolize.c user/util/strpool.c user/dwarf/dwarfworker.c \
                       user/dwarf/dwarfchild.c user/dwarf/dwarfkeep.c user/dwarf/sandbox.c user/dwarf/dwarfinfo.c user/dwarf/dwarfimage.c \
                       user/util/demangle.c $(ELFOBJ_SRCS) user/util/hmap.c user/fs/procmaps.c \
                       user/util/stackstore.c user/process/aggregate.c user/symbols/perfmap.c \
                       user/symbols/kallsyms.c user/fs/fdlru.c user/fs/procstat.c user/output/collect.c
fuzz_symbolize_OPTS := -max_len=65700
fuzz_symbolize_LIBS := -ldw -liberty
fuzz_demangle_SRCS  := user/util/demangle.c
fuzz_demangle_OPTS  := -max_len=8192 -dict=tests/fuzz/demangle.dict
fuzz_demangle_LIBS  := -liberty

# A target is built only when its harness and every source it needs exist
# (perfmap and cgroup parsing arrive with their own changes).
FUZZ_ALL     := $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_READY   := $(foreach t,$(FUZZ_ALL),$(if $(strip $(foreach s,$(fuzz_$(t)_SRCS),$(if $(wildcard $(s)),,x))),,$(t)))
FUZZ_TARGETS ?= $(FUZZ_READY)

define FUZZ_RULES
$(FUZZ_DIR)/fuzz-$(1): tests/fuzz/fuzz_$(1).c $(fuzz_$(1)_SRCS) $(FUZZ_HDRS)
	@mkdir -p $$(dir $$@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $(FUZZ_SAN) -o $$@ tests/fuzz/fuzz_$(1).c $(fuzz_$(1)_SRCS) $(FUZZ_LIBS) $(fuzz_$(1)_LIBS)

$(FUZZ_DIR)/replay-$(1): tests/fuzz/fuzz_$(1).c tests/fuzz/replay.c $(fuzz_$(1)_SRCS) $(FUZZ_HDRS)
	@mkdir -p $$(dir $$@)
	$(REPLAY_CC) $(FUZZ_CFLAGS) $(FUZZ_SAN) -o $$@ tests/fuzz/fuzz_$(1).c tests/fuzz/replay.c $(fuzz_$(1)_SRCS) $(FUZZ_LIBS) $(fuzz_$(1)_LIBS)
endef
$(foreach t,$(FUZZ_READY),$(eval $(call FUZZ_RULES,$(t))))

$(FUZZ_DIR)/seedgen: tests/fuzz/seedgen.c
	@mkdir -p $(dir $@)
	$(CC) -O1 -g -Wall -Wextra -o $@ $< -lz

.PHONY: fuzz fuzz-bins fuzz-regress fuzz-replay-bins
fuzz-bins: $(patsubst %,$(FUZZ_DIR)/fuzz-%,$(FUZZ_TARGETS)) $(FUZZ_DIR)/seedgen
fuzz-replay-bins: $(patsubst %,$(FUZZ_DIR)/replay-%,$(FUZZ_READY))

# Each target in turn; stops at the first that finds something.
fuzz: fuzz-bins
	@$(foreach t,$(FUZZ_TARGETS),FUZZ_DIR=$(FUZZ_DIR) FUZZ_SECS=$(FUZZ_SECS) \
		sh tests/fuzz/fuzz.sh $(t) $(fuzz_$(t)_OPTS) &&) true

fuzz-regress: fuzz-replay-bins
	@BUILD=$(BUILD) sh tests/unit/test_fuzz_regress.sh --no-build
