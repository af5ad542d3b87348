#!/bin/sh
# End-to-end: complete user stacks of real programs of this machine, whole
# host at default settings (issue 11): clang-14 compiling a generated file
# of 2000 functions (libLLVM-14 and libclang-cpp: 2M rows of CFI), a make
# -j2 of this project from clean (make, sh, cc1, as, ld, clang -target
# bpf, bpftool), and a loop of short coreutils programs and a 50 ms C
# spinner started after the profiler: their first samples come before the
# loader has read their maps; and 40 short runs of a program whose stacks go
# through a library of its own, libc and the binary.  A copy of the spinner with a corrupt
# .eh_frame is left to frame pointers and counted; the rest is unchanged.
# Each workload runs in a cgroup of its own: its label selects the samples.
# Shares only, no timings (bench/realhost.sh measures those).  Needs root.
#
# The make -j2 and short-program checks hold issue 11's bars (95%, 97%;
# bench/realhost.sh measures 96-99.5% and 99-100%).  Under ASan
# (SANITIZE=1) the agent builds tables about 3x slower, so more of a new
# program's first samples wait past their budget: there the bars are 85%
# and 90%, floors for the sanitizer's run, not the product's figures.
. "$(dirname "$0")/lib.sh"

T=$(mktemp -d)
CGS= CP= STORM=
cleanup() {
	[ -n "$CP" ] && kill "$CP" 2>/dev/null && wait "$CP"
	[ -n "$STORM" ] && kill "$STORM" 2>/dev/null
	for c in $CGS; do cgroup_gone "$c"; done
	rm -rf "$T"
}
trap cleanup EXIT
NAMES="clang-14|make -j2|short programs complete|short programs named|three files, default settings|a library no process mapped before|three files|three files named|corrupt .eh_frame"
plan 9

[ "$(id -u)" -eq 0 ] || skip_all "needs root (CAP_BPF, CAP_PERFMON)"
command -v clang-14 >/dev/null && command -v objcopy >/dev/null ||
	skip_all "needs clang-14 and objcopy"
[ -n "$(cgroup_new "cprof-e2e-probe-$$")" ] || skip_all "no writable cgroup v2 hierarchy"
cgroup_gone "$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)/cprof-e2e-probe-$$"

# profile_host NAME COMMAND...: runs COMMAND in cgroup cprof-e2e-NAME-PID
# (its name in $CG) under a whole-host profile at default settings, started
# once the agent samples and stopped after it; leaves the samples in "$T/NAME.folded",
# the summary in "$T/NAME.err", its counters in "$T/NAME.json" (--json-summary).
profile_host() {
	_n=$1
	shift
	CG=cprof-e2e-$_n-$$
	_dir=$(cgroup_new "$CG") || return 1
	CGS="$CGS $_dir"
	# (PH_ARGS: options beside the defaults)
	$CPROF ${PH_ARGS:-} --duration 3600 --output-dir "$T/$_n" --json-summary "$T/$_n.json" 2>"$T/$_n.err" &
	CP=$!
	wait_sampling "$CP" || return 1
	in_cgroup "$_dir" "$@" >"$T/$_n.out" 2>&1
	_rc=$?
	kill -INT "$CP"
	wait "$CP"
	CP=
	folded_of "$T/$_n" "$CG" >"$T/$_n.folded"
	return $_rc
}

# complete_of FOLDED: "COMPLETE TOTAL" of the samples of cgroup $CG.
complete_of() {
	set -- $(user_stacks "$1" "$CG")
	echo "$1 $3"
}

# --- clang-14 -O2 on 2000 functions ------------------------------------------
gen_functions 2000 >"$T/gen.c"
profile_host clang clang-14 -O2 -c "$T/gen.c" -o "$T/gen.o"
r=$(complete_of "$T/clang.folded")
check "clang-14 -O2 on 2000 functions: >=97% of its user stacks reach _start ($r; tables: $(jget "$T/clang.json" unwind_tables.built) built, $(jget "$T/clang.json" unwind_tables.no_room) without room)" \
	at_least "$r" 0.97 200

# --- make -j2 of this project from clean -------------------------------------
mkdir "$T/src"
(cd "$(dirname "$0")/../.." && tar cf - Makefile bpf proto user vmlinux) | tar xf - -C "$T/src"
profile_host make make -C "$T/src" -j2 BUILD=build build/cprof-bpf
rc=$?
r=$(complete_of "$T/make.folded")
# the share of each program, to see which falls short
per=$(awk -F '\t' -v cg="cgroup:[/$CG]" 'index($2, cg) {
	c = $2; sub(/.*comm:\[/, "", c); sub(/\].*/, "", c); t[c] += $1
	if ($3 !~ /\[unwind:/ && $3 ~ /^(_start|__libc_start_call_main|(__)?clone3?;start_thread)(;|$)/) k[c] += $1 }
	END { for (c in t) printf "%s %d/%d ", c, k[c], t[c] }' "$T/make.folded")
MAKE_BAR=0.95 SHORT_BAR=0.97
[ "${SANITIZE:-}" = 1 ] && MAKE_BAR=0.85 SHORT_BAR=0.90
check "make -j2 from clean: >=$MAKE_BAR of all its user stacks complete ($r; $per)" \
	eval '[ "$rc" -eq 0 ] && at_least "$r" $MAKE_BAR 300'

# --- 100 x (date, cut, a 50 ms spinner), started after the profiler ----------
# (about 500 samples: one short program's miss is 0.2 points of the bar)
SPIN=$BUILD/workloads/shortspin
cat >"$T/loop.sh" <<LOOP
i=0
while [ \$i -lt 100 ]; do
	date >/dev/null
	cut -d: -f1 /etc/passwd >/dev/null
	$SPIN 50
	i=\$((i + 1))
done
LOOP
profile_host loop sh "$T/loop.sh"
r=$(user_stacks "$T/loop.folded" "$CG")
set -- $r
check "short programs complete: >=$SHORT_BAR of their user stacks reach _start ($1 of $3)" \
	at_least "$1 $3" $SHORT_BAR 300
# Named: the spinner's stacks, which have symbols.  date, cut and sh are
# stripped (their own functions have no name anywhere: perf shows them as
# addresses too), and the vDSO's inner function is in no symbol table.
awk -F '\t' 'index($2, "comm:[shortspin]")' "$T/loop.folded" |
	sed -E 's/(;__vdso_[a-z_]+);0x[0-9a-f]+/\1/' >"$T/spin.folded"
set -- $(user_stacks "$T/spin.folded" "$CG")
check "short programs named: >=$SHORT_BAR of the spinner's user stacks complete and fully named ($2 of $3; its vDSO's inner frame aside)" \
	at_least "$2 $3" $SHORT_BAR 200

# --- short programs whose stacks go through three files ----------------------
# A comparator in a library of its own, called by libc's qsort, called by the
# binary: its first samples walk libhop -> libc -> the binary, each file
# mapped after the loader read the process at its exec (the dynamic loader
# maps libraries after that), and a sample resolves one file by itself.  The
# libraries go into the process's entry once ld.so has mapped them
# (bpf/ldstate.bpf.h on_ld_state), with --ld-probe: without it (the
# default, since its breakpoint stops valgrind), ~80% of these stacks are
# complete, the first samples of each run stopping in libc.
# One run first, so that the loader knows the files (a file never seen
# before is another matter: the loader must open it).
cat >"$T/hop.c" <<'HOP'
#include <stdlib.h>
int hop_cmp(const void *a, const void *b)
{
	volatile unsigned x = 0;
	for (int i = 0; i < 200; i++)
		x += (unsigned)i * *(const int *)a;
	return *(const int *)a - *(const int *)b + (int)(x & 0);
}
HOP
cat >"$T/hopper.c" <<'HOP'
#include <stdlib.h>
#include <time.h>
int hop_cmp(const void *a, const void *b);
int main(int argc, char **argv)
{
	static int v[2000];
	struct timespec t0, t;
	long ms = argc > 1 ? atol(argv[1]) : 50;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0); /* CPU time: as many samples on a busy host */
	do {
		for (int i = 0; i < 2000; i++)
			v[i] = (i * 7919) % 2003;
		qsort(v, 2000, sizeof(v[0]), hop_cmp);
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
	return 0;
}
HOP
if cc -O2 -g -fomit-frame-pointer -shared -fPIC -o "$T/libhop.so" "$T/hop.c" &&
	cc -O2 -g -fomit-frame-pointer -o "$T/hopper" "$T/hopper.c" -L"$T" -lhop -Wl,-rpath,"$T"; then
	cat >"$T/hops.sh" <<LOOP
$T/hopper 200
i=0
while [ \$i -lt 40 ]; do
	$T/hopper 50
	i=\$((i + 1))
done
LOOP
	# default settings: the libraries go into the entry once the program
	# has registered its rseq area (ldstate.bpf.h, a timer from the exec),
	# no uprobe
	profile_host hopsd sh "$T/hops.sh"
	awk -F '\t' '$2 ~ /comm:\[hopper\]/' "$T/hopsd.folded" >"$T/hopperd.folded"
	set -- $(user_stacks "$T/hopperd.folded" "$CG")
	check "three files, 40 short runs, default settings (libraries added once glibc registered rseq): >=95% of their user stacks complete ($1 of $3)" \
		at_least "$1 $3" 0.95 100
	# A program whose library no process of the run mapped before: the
	# startup walk cannot add it to the entry, so it asks the loader to
	# read the process at once (refreshes_at_start), rather than when a
	# sample first meets it; its own samples are counted too (a floor).
	mkdir "$T/fresh"
	sed 's/200/201/' "$T/hop.c" >"$T/fresh/hop.c"
	if cc -O2 -g -fomit-frame-pointer -shared -fPIC -o "$T/fresh/libhop.so" "$T/fresh/hop.c" &&
		cc -O2 -g -fomit-frame-pointer -o "$T/fresh/hopper" "$T/hopper.c" -L"$T/fresh" -lhop \
			-Wl,-rpath,"$T/fresh"; then
		profile_host fresh "$T/fresh/hopper" 400
		awk -F '\t' '$2 ~ /comm:\[hopper\]/' "$T/fresh.folded" >"$T/freshh.folded"
		set -- $(user_stacks "$T/freshh.folded" "$CG")
		starts=$(jget "$T/fresh.json" bounds.refreshes_at_start)
		check "a library no process mapped before: the loader reads the program at its start ($starts re-snapshots at a program's start), >=85% of its user stacks complete ($1 of $3)" \
			eval '[ "${starts:-0}" -ge 1 ] && at_least "$1 $3" 0.85 20'
	else
		skip "a library no process mapped before" "the workload did not build"
	fi
	# Beside a loop of short programs, as on a busy build host: hundreds of
	# program starts a second, each walked at _dl_debug_state() (twice)
	# and once it registered rseq; the walks of _dl_debug_state() have a
	# budget, and the hoppers' starts must not go without their libraries
	# when it is spent (86% complete when they shared it).
	sh -c 'while :; do /bin/true; done' >/dev/null 2>&1 &
	STORM=$!
	PH_ARGS=--ld-probe profile_host hops sh "$T/hops.sh"
	kill "$STORM"
	wait "$STORM" 2>/dev/null
	STORM=
	awk -F '\t' '$2 ~ /comm:\[hopper\]/' "$T/hops.folded" >"$T/hopper.folded"
	set -- $(user_stacks "$T/hopper.folded" "$CG")
	check "three files (libhop -> libc qsort -> the binary), 40 short runs beside a loop of short programs, --ld-probe: >=95% of their user stacks complete ($1 of $3)" \
		at_least "$1 $3" 0.95 100
	# the libraries in the loader's snapshot too: refreshed (read again when
	# BPF added them while it was read), or from the exit record
	check "three files named, --ld-probe: >=95% of their user stacks complete and fully named ($2 of $3)" \
		at_least "$2 $3" 0.95 100
	awk -F '\t' '$3 ~ /(^|;)0x[0-9a-f]+(;|$)/' "$T/hopper.folded" | head -n 3 | sed 's/^/# unnamed: /'
else
	skip "three files, default settings" "no C compiler to build the workload"
	skip "a library no process mapped before" "no C compiler to build the workload"
	skip "three files" "no C compiler to build the workload"
	skip "three files named" "no C compiler to build the workload"
fi

# --- a corrupt .eh_frame ----------------------------------------------------
# Every byte 0xff: a length no section holds, so no CFI at all is read.
objcopy --dump-section .eh_frame="$T/eh" "$SPIN" "$T/shortspin-good" 2>/dev/null &&
	tr '\000-\377' '\377' <"$T/eh" >"$T/eh.bad" &&
	objcopy --update-section .eh_frame="$T/eh.bad" "$SPIN" "$T/shortspin-bad"
profile_host bad sh -c "$SPIN 3000 & $T/shortspin-bad 3000; wait"
awk -F '\t' '$2 ~ /comm:\[shortspin\]/' "$T/bad.folded" >"$T/good.folded"
good=$(complete_of "$T/good.folded")
bad=$(awk -F '\t' '$2 ~ /comm:\[shortspin-bad\]/ { s += $1 } END { print s + 0 }' "$T/bad.folded")
failed=$(jget "$T/bad.json" unwind_tables.failed)
check "corrupt .eh_frame: that object counted as failed ($failed) and profiled ($bad samples), the good copy beside it complete ($good)" \
	eval '[ "${failed:-0}" -ge 1 ] && [ "$bad" -ge 20 ] && at_least "$good" 0.97 50'
