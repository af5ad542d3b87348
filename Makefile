# cprof-bpf — system-wide CPU profiler.  See README.md and docs/DESIGN.md.
#
#   make              build ./cprof-bpf (BPF object embedded via a skeleton),
#                     linked statically: it starts sooner on an overloaded
#                     host (no dynamic loader) and runs on a host without
#                     libbpf, libelf, libdw, zlib
#   make STATIC=0     the same, linked dynamically (build-dyn/; the Debian
#                     package's build)
#   sudo make run     install missing packages, build, profile the host 30 s
#   sudo make test    install missing packages, build, run every test
#   sudo make bench   benchmarks against bpftrace and perf -> bench/RESULTS.md
#   sudo make install install the binary, man page and systemd unit under
#                     PREFIX (/usr/local); DESTDIR stages them; make uninstall
#   make image        container image cprof-bpf:VERSION (podman, static binary)
#   make deb          Debian package -> build-deb/cprof-bpf_VERSION_ARCH.deb
#   make deps         install the Debian packages the build and tests need

VERSION    := 0.1.0
CC         ?= gcc
CLANG      ?= clang
BPFTOOL    ?= $(shell command -v bpftool 2>/dev/null || echo /usr/sbin/bpftool)
ARCH       := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
# Sanitizer and dynamic builds go to their own trees so objects never mix.
# Static by default: among 2000 busy threads a dynamically linked agent
# waited for a CPU about twice as long before it could raise its priority
# (the dynamic loader's CPU costs rounds of the load; bench/RESULTS.md,
# "overload").  The sanitizers' runtimes are shared libraries.
ifeq ($(SANITIZE)$(STATIC),11)
$(error SANITIZE=1 and STATIC=1 do not mix: the sanitizer runtimes are shared libraries)
endif
ifeq ($(SANITIZE),1)
STATIC     := 0
BUILD      ?= build-san
else ifeq ($(STATIC),0)
BUILD      ?= build-dyn
else
STATIC     := 1
BUILD      ?= build
endif

PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
MANDIR     ?= $(PREFIX)/share/man
UNITDIR    ?= $(PREFIX)/lib/systemd/system
# podman calls it localhost/cprof-bpf:VERSION, the name deploy/ uses
IMAGE      ?= cprof-bpf:$(VERSION)
PODMAN     ?= podman

CFLAGS     ?= -O2 -g
CFLAGS     += -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Wshadow \
              -Wformat=2 -D_GNU_SOURCE -DCPROF_VERSION='"$(VERSION)"' \
              -I$(BUILD) -Iuser -Iproto -Ibpf -fno-strict-aliasing
LDLIBS     := -lbpf -ldw -lelf -lz -liberty
# The agent's link; unit tests stay dynamic (they look at their own maps).
AGENT_LDFLAGS = $(LDFLAGS)
AGENT_LDLIBS  = $(LDLIBS)
ifeq ($(STATIC),1)
# libdw.so brings its decompressors itself; the archive needs them named.
# No NSS or dlopen is used, so a static glibc is safe here.
AGENT_LDFLAGS = $(LDFLAGS) -static
AGENT_LDLIBS  = -lbpf -ldw -lelf -llzma -lbz2 -lz -liberty
endif
# CI builds with WERROR=1: the tree stays free of warnings under gcc and clang.
ifeq ($(WERROR),1)
CFLAGS     += -Werror
endif
ifeq ($(SANITIZE),1)
CFLAGS     += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS    += -fsanitize=address,undefined
endif

BPF_CFLAGS := -O2 -g -target bpf -D__TARGET_ARCH_$(ARCH) -Ivmlinux -Ibpf \
              -I/usr/include/$(shell $(CC) -print-multiarch) \
              -Wall -Wno-unused-function

# Library code: everything but the entry point, its event handling and the BPF
# loader (which needs the skeleton), so unit tests link without building BPF.
AGENT_SRCS := user/main.c user/agent/events.c user/sampling/sampler.c user/sampling/sampler_maps.c
# user/ is laid out in folders by job (user/README.md): includes name the folder
LIB_SRCS   := $(filter-out $(AGENT_SRCS),$(wildcard user/*.c user/*/*.c)) $(wildcard proto/*.c)
LIB_OBJS   := $(patsubst %.c,$(BUILD)/%.o,$(LIB_SRCS))
UNIT_SRCS  := $(wildcard tests/unit/test_*.c)
UNIT_BINS  := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))
WORKLOADS  := $(patsubst tests/workloads/%.c,$(BUILD)/workloads/%,$(filter-out tests/workloads/plugin.c,$(wildcard tests/workloads/*.c))) \
              $(BUILD)/workloads/nofp-nopie $(BUILD)/workloads/nofp-static $(BUILD)/workloads/libplugin.so

.PHONY: all deps run test bench clean unit-bins workloads install uninstall image deb FORCE
all: cprof-bpf

$(BUILD)/cprof.bpf.o: bpf/cprof.bpf.c $(wildcard bpf/*.h vmlinux/*.h) | $(BUILD)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/cprof.skel.h: $(BUILD)/cprof.bpf.o
	$(BPFTOOL) gen skeleton $< name cprof_bpf > $@.tmp && mv $@.tmp $@

# (the sampler's header includes the skeleton, which -MMD names only once it exists)
$(patsubst %.c,$(BUILD)/%.o,$(AGENT_SRCS)): $(BUILD)/cprof.skel.h

# Each object's headers, as the compiler found them (-MMD): a header's edit
# rebuilds what includes it, and nothing else.
$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

# An archive keeps a member whose source is gone (moved, deleted) until it
# is made anew: each is made anew when its list of members changes.
$(BUILD)/%.members: FORCE
	@mkdir -p $(dir $@)
	@echo '$(MEMBERS_$(notdir $*))' | cmp -s - $@ || echo '$(MEMBERS_$(notdir $*))' >$@

MEMBERS_libcprof := $(LIB_OBJS)
$(BUILD)/libcprof.a: $(LIB_OBJS) $(BUILD)/libcprof.members
	rm -f $@
	ar rcs $@ $(LIB_OBJS)

# How binaries are linked: a change (STATIC, SANITIZE, LDFLAGS) relinks them.
$(BUILD)/link.flags: FORCE
	@mkdir -p $(dir $@)
	@echo '$(AGENT_LDFLAGS) $(AGENT_LDLIBS) / $(LDFLAGS) $(LDLIBS)' | cmp -s - $@ || \
		echo '$(AGENT_LDFLAGS) $(AGENT_LDLIBS) / $(LDFLAGS) $(LDLIBS)' >$@

$(BUILD)/cprof-bpf: $(patsubst %.c,$(BUILD)/%.o,$(AGENT_SRCS)) $(BUILD)/libcprof.a $(BUILD)/link.flags
	$(CC) $(AGENT_LDFLAGS) -o $@ $(filter-out %.flags,$^) $(AGENT_LDLIBS)

# The same objects linked dynamically: valgrind cannot see a static
# binary's malloc (tests/e2e/test_faults.sh runs it on this one).
$(BUILD)/cprof-bpf-dyn: $(patsubst %.c,$(BUILD)/%.o,$(AGENT_SRCS)) $(BUILD)/libcprof.a $(BUILD)/link.flags
	$(CC) $(LDFLAGS) -o $@ $(filter-out %.flags,$^) $(LDLIBS)

# Replaced by rename, so a running ./cprof-bpf never blocks a rebuild;
# compared rather than dated, as `make` and `make STATIC=0` share the name.
cprof-bpf: $(BUILD)/cprof-bpf FORCE
	@cmp -s $< $@ || { echo "cp $< $@"; cp $< $@.tmp && mv -f $@.tmp $@; }
FORCE:

# Helpers the unit tests share (tests/*.c): the BPF unwinder built as plain C among them.
TEST_HELP  := $(patsubst tests/%.c,$(BUILD)/tests/help/%.o,$(wildcard tests/*.c))
$(BUILD)/tests/help/%.o: tests/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@
MEMBERS_libtesthelp := $(TEST_HELP)
$(BUILD)/tests/libtesthelp.a: $(TEST_HELP) $(BUILD)/tests/libtesthelp.members
	rm -f $@
	ar rcs $@ $(TEST_HELP)

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/tests/libtesthelp.a $(BUILD)/libcprof.a $(BUILD)/link.flags
	@mkdir -p $(dir $@) $(BUILD)/tests/deps
	$(CC) $(CFLAGS) -Itests -MMD -MP -MF $(BUILD)/tests/deps/$*.d $(LDFLAGS) -o $@ $< $(BUILD)/tests/libtesthelp.a $(BUILD)/libcprof.a $(LDLIBS)

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
$(BUILD)/workloads/rtfirst: tests/workloads/rtfirst.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -static -o $@ $<
$(BUILD)/workloads/shortspin: tests/workloads/shortspin.c
	@mkdir -p $(dir $@)
	$(CC) $(NOFP_CFLAGS) -o $@ $<
$(BUILD)/workloads/libplugin.so: tests/workloads/plugin.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -fomit-frame-pointer -shared -fPIC -o $@ $<

# A process mapping a libjvm.so that lies (tests/e2e/test_jvm_fake.sh).
WORKLOADS += $(BUILD)/workloads/fakejvm/fakejvm
$(BUILD)/workloads/fakejvm/libjvm.so: tests/workloads/fakejvm/libjvm.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -shared -fPIC -o $@ $<
$(BUILD)/workloads/fakejvm/fakejvm: tests/workloads/fakejvm/main.c $(BUILD)/workloads/fakejvm/libjvm.so
	$(CC) $(NOFP_CFLAGS) -o $@ $< -L$(dir $@) -ljvm -Wl,-rpath,'$$ORIGIN'

# Processes exporting V8's metadata (tests/e2e/test_node.sh): of a release
# not read, and of node 20's with a frame that lies.
WORKLOADS += $(BUILD)/workloads/fakenode/fakenode $(BUILD)/workloads/fakenode/fakenode-lying
$(BUILD)/workloads/fakenode/fakenode: tests/workloads/fakenode/main.c
	@mkdir -p $(dir $@)
	$(CC) $(NOFP_CFLAGS) -o $@ $<
$(BUILD)/workloads/fakenode/fakenode-lying: tests/workloads/fakenode/main.c
	@mkdir -p $(dir $@)
	$(CC) $(NOFP_CFLAGS) -DFAKE_V8_MAJOR=11 -DFAKE_V8_MINOR=3 -o $@ $<

# The JVM's workloads, where there is a javac (tests/unit/test_jvm skips without).
JAVAC ?= $(shell command -v javac 2>/dev/null)
ifneq ($(JAVAC),)
WORKLOADS += $(patsubst tests/workloads/java/%.java,$(BUILD)/workloads/java/%.class,$(wildcard tests/workloads/java/*.java))
endif
$(BUILD)/workloads/java/%.class: tests/workloads/java/%.java
	@mkdir -p $(dir $@)
	$(JAVAC) -g -d $(dir $@) $<

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
	$(MAKE) $(BUILD)/cprof-bpf $(BUILD)/cprof-bpf-dyn unit-bins workloads
	@BUILD=$(BUILD) CPROF=$(BUILD)/cprof-bpf SANITIZE=$(SANITIZE) sh tests/run.sh

bench: deps
	$(MAKE) cprof-bpf workloads
	@sh bench/run.sh && sh bench/unwind.sh && sh bench/scale.sh && sh bench/symbols.sh && sh bench/overload.sh && sh bench/python.sh && sh bench/java.sh && sh bench/node.sh && sh bench/offcpu.sh && sh bench/realhost.sh && sh bench/syscalls.sh && sh bench/windows.sh && sh bench/phase.sh

# The unit names the binary where this installs it.
install: cprof-bpf
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(UNITDIR)
	install -m 755 cprof-bpf $(DESTDIR)$(BINDIR)/cprof-bpf
	install -m 644 docs/cprof-bpf.1 $(DESTDIR)$(MANDIR)/man1/cprof-bpf.1
	sed 's|/usr/local/bin/cprof-bpf|$(BINDIR)/cprof-bpf|' deploy/cprof-bpf.service \
		> $(DESTDIR)$(UNITDIR)/cprof-bpf.service
	chmod 644 $(DESTDIR)$(UNITDIR)/cprof-bpf.service

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/cprof-bpf $(DESTDIR)$(MANDIR)/man1/cprof-bpf.1 \
		$(DESTDIR)$(UNITDIR)/cprof-bpf.service

# A FROM scratch image around the static binary: no registry needed.
image:
	@sh tools/deps.sh build image
	$(MAKE) STATIC=1 BUILD=build build/cprof-bpf
	$(PODMAN) build -f Containerfile -t $(IMAGE) .

# Built from a copy of the sources in DEBDIR, where the package lands too
# (dpkg-buildpackage writes beside the source tree).
DEBDIR     ?= build-deb
DEB_SRCS   := Makefile README.md bpf debian deploy docs proto tools user vmlinux
deb:
	@sh tools/deps.sh build package
	rm -rf $(DEBDIR)
	mkdir -p $(DEBDIR)/cprof-bpf-$(VERSION)
	cp -a $(DEB_SRCS) $(DEBDIR)/cprof-bpf-$(VERSION)/
	cd $(DEBDIR)/cprof-bpf-$(VERSION) && dpkg-buildpackage -b -us -uc
	lintian $(LINTIAN_FLAGS) --fail-on error $(DEBDIR)/cprof-bpf_$(VERSION)_*.changes

clean:
	rm -rf build build-san build-dyn build-static build-deb cprof-bpf

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

# Fuzz targets (make fuzz) live with their rules in tests/fuzz/.
-include tests/fuzz/fuzz.mk
