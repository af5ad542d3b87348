# cprof-bpf — system-wide CPU profiler.  See README.md and ../shared/DESIGN.md.
#
#   make              build ./cprof-bpf (BPF object embedded via a skeleton)
#   sudo make run     install missing packages, build, profile the host 30 s
#   sudo make test    install missing packages, build, run every test
#   sudo make bench   benchmarks against bpftrace and perf -> bench/RESULTS.md
#   make deps         install the Debian packages the build and tests need

VERSION    := 0.1.0
CC         ?= gcc
CLANG      ?= clang
BPFTOOL    ?= $(shell command -v bpftool 2>/dev/null || echo /usr/sbin/bpftool)
ARCH       := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
# Sanitizer builds go to their own tree so objects never mix.
ifeq ($(SANITIZE),1)
BUILD      ?= build-san
else
BUILD      ?= build
endif

CFLAGS     ?= -O2 -g
CFLAGS     += -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Wshadow \
              -Wformat=2 -D_GNU_SOURCE -DCPROF_VERSION='"$(VERSION)"' \
              -I$(BUILD) -Iuser -Iproto -Ibpf -fno-strict-aliasing
LDLIBS     := -lbpf -ldw -lelf -lz -liberty
ifeq ($(SANITIZE),1)
CFLAGS     += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS    += -fsanitize=address,undefined
endif

BPF_CFLAGS := -O2 -g -target bpf -D__TARGET_ARCH_$(ARCH) -Ivmlinux -Ibpf \
              -I/usr/include/$(shell $(CC) -dumpmachine) \
              -Wall -Wno-unused-function

# Library code: everything but the entry point and the BPF loader (which needs
# the skeleton), so unit tests link without building BPF.
LIB_SRCS   := $(filter-out user/main.c user/sampler.c,$(wildcard user/*.c)) $(wildcard proto/*.c)
LIB_OBJS   := $(patsubst %.c,$(BUILD)/%.o,$(LIB_SRCS))
UNIT_SRCS  := $(wildcard tests/unit/test_*.c)
UNIT_BINS  := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))
WORKLOADS  := $(patsubst tests/workloads/%.c,$(BUILD)/workloads/%,$(filter-out tests/workloads/plugin.c,$(wildcard tests/workloads/*.c))) \
              $(BUILD)/workloads/nofp-nopie $(BUILD)/workloads/nofp-static $(BUILD)/workloads/libplugin.so

.PHONY: all deps run test bench clean unit-bins workloads
all: cprof-bpf

$(BUILD)/cprof.bpf.o: bpf/cprof.bpf.c $(wildcard bpf/*.h vmlinux/*.h) | $(BUILD)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/cprof.skel.h: $(BUILD)/cprof.bpf.o
	$(BPFTOOL) gen skeleton $< name cprof_bpf > $@.tmp && mv $@.tmp $@

$(BUILD)/user/sampler.o: $(BUILD)/cprof.skel.h

$(BUILD)/%.o: %.c $(wildcard user/*.h proto/*.h bpf/cprof.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/libcprof.a: $(LIB_OBJS)
	ar rcs $@ $^

$(BUILD)/cprof-bpf: $(BUILD)/user/main.o $(BUILD)/user/sampler.o $(BUILD)/libcprof.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# Replaced by rename, so a running ./cprof-bpf never blocks a rebuild.
cprof-bpf: $(BUILD)/cprof-bpf
	cp $< $@.tmp && mv -f $@.tmp $@

# Helpers the unit tests share (tests/*.c): the BPF unwinder built as plain C among them.
TEST_HELP  := $(patsubst tests/%.c,$(BUILD)/tests/help/%.o,$(wildcard tests/*.c))
$(BUILD)/tests/help/%.o: tests/%.c $(wildcard tests/*.h user/*.h bpf/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@
$(BUILD)/tests/libtesthelp.a: $(TEST_HELP)
	ar rcs $@ $^

$(BUILD)/tests/%: tests/unit/%.c tests/testlib.h tests/testutil.h $(BUILD)/tests/libtesthelp.a $(BUILD)/libcprof.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests $(LDFLAGS) -o $@ $< $(BUILD)/tests/libtesthelp.a $(BUILD)/libcprof.a $(LDLIBS)

# Workloads are built by the e2e tests with their own flags; this builds the
# frame-pointer variants used by `make run`-style smoke checks and benchmarks.
$(BUILD)/workloads/%: tests/workloads/%.c
	@mkdir -p $(dir $@)
	$(CC) -O1 -g -fno-omit-frame-pointer -pthread -o $@ $<

# The unwinder's workloads: no frame pointers, as distribution binaries are.
NOFP_CFLAGS := -O2 -g -fomit-frame-pointer -rdynamic
$(BUILD)/workloads/nofp: tests/workloads/nofp.c
	@mkdir -p $(dir $@)
	$(CC) $(NOFP_CFLAGS) -o $@ $<
$(BUILD)/workloads/nofp-nopie: tests/workloads/nofp.c
	@mkdir -p $(dir $@)
	$(CC) $(NOFP_CFLAGS) -no-pie -fno-pie -o $@ $<
$(BUILD)/workloads/nofp-static: tests/workloads/nofp.c
	@mkdir -p $(dir $@)
	$(CC) $(NOFP_CFLAGS) -DNOFP_STATIC -static -o $@ $<
$(BUILD)/workloads/libplugin.so: tests/workloads/plugin.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -fomit-frame-pointer -shared -fPIC -o $@ $<

# test_unwind_walk's fixture, built as distribution binaries are: no frame pointers.
STACKSHOTS := $(patsubst %,$(BUILD)/tests/stackshot-%,pie nopie static)
STACKSHOT_nopie  := -no-pie -fno-pie
STACKSHOT_static := -static
$(BUILD)/tests/stackshot-%: tests/unit/stackshot.c tests/unit/stackshot.h
	@mkdir -p $(dir $@)
	$(CC) $(NOFP_CFLAGS) -pthread $(STACKSHOT_$*) -o $@ $<

$(BUILD)/tests/test_unwind_walk: | $(STACKSHOTS)

unit-bins: $(UNIT_BINS)
workloads: $(WORKLOADS)

$(BUILD):
	mkdir -p $@

deps:
	@sh tools/deps.sh

run: deps
	$(MAKE) cprof-bpf
	./cprof-bpf --duration 30

test: deps
	$(MAKE) $(BUILD)/cprof-bpf unit-bins workloads
	@BUILD=$(BUILD) CPROF=$(BUILD)/cprof-bpf SANITIZE=$(SANITIZE) sh tests/run.sh

bench: deps
	$(MAKE) cprof-bpf workloads
	@sh bench/run.sh && sh bench/unwind.sh && sh bench/scale.sh && sh bench/symbols.sh

clean:
	rm -rf build build-san cprof-bpf

# Fuzz targets (make fuzz) live with their rules in tests/fuzz/.
-include tests/fuzz/fuzz.mk
