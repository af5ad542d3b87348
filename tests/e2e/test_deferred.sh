#!/bin/sh
# End-to-end: deferred walks (bpf/defer.bpf.h, user/unwind/deferred.c).  A brand-new
# program without frame pointers, its binary's .eh_frame big enough that its
# table takes a while, started after the whole-host profiler: its first
# samples come before its table is built (before, they went by frame
# pointers and stopped at once: 292 of 301 complete, the build before
# this test); they are sent to wait for the table, walked on by the loader
# once it is built, and counted complete; those of an image that exec'd
# another before then, by its own mappings.  At 999 Hz, so that tens of
# samples fall before the table.  Floors, not timings (bench/realhost.sh
# measures the build's share).  Needs root and two CPUs.
. "$(dirname "$0")/lib.sh"

T=$(mktemp -d)
CGS= CP=
cleanup() {
	[ -n "$CP" ] && kill "$CP" 2>/dev/null && wait "$CP"
	for c in $CGS; do cgroup_gone "$c"; done
	rm -rf "$T"
}
trap cleanup EXIT
NAMES="a new program's first samples walked on|a new program's stacks complete|a new program's stacks named|a program's samples before its exec"
plan 4

[ "$(id -u)" -eq 0 ] || skip_all "needs root (CAP_BPF, CAP_PERFMON)"
command -v cc >/dev/null || skip_all "needs a C compiler"
[ -n "$(cgroup_new "cprof-e2e-probe-$$")" ] || skip_all "no writable cgroup v2 hierarchy"
cgroup_gone "$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)/cprof-e2e-probe-$$"

# A binary whose main calls a few functions until it has used MS of CPU
# time (then exec's the rest of its arguments, if any), with 60000 more of
# a few CFI rows each (its .eh_frame, 2.5 MB, is what the table is made
# of: 4-17 ms to build here, 3x that under ASan), written in assembly so
# that they take no time to compile.  (Twice the rows made more wait than
# BPF's budget of 64 a second sends, and those went by frame pointers.)
gen_functions 100 >"$T/big.c"
awk -v n="${DEFER_FILLER:-60000}" 'BEGIN {
	print "\t.text"
	for (i = 0; i < n; i++) {
		printf "\t.globl filler%d\n\t.type filler%d, @function\nfiller%d:\n\t.cfi_startproc\n", i, i, i
		printf "\tpush %%rbx\n\t.cfi_def_cfa_offset 16\n\t.cfi_offset %%rbx, -16\n"
		printf "\tpush %%r12\n\t.cfi_def_cfa_offset 24\n\t.cfi_offset %%r12, -24\n"
		printf "\tpop %%r12\n\t.cfi_def_cfa_offset 16\n\tpop %%rbx\n\t.cfi_def_cfa_offset 8\n\tret\n"
		printf "\t.cfi_endproc\n\t.size filler%d, .-filler%d\n", i, i
	}
	print "\t.section .note.GNU-stack,\"\",@progbits"
}' >"$T/filler.s"
cat >>"$T/big.c" <<'MAIN'
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	static int a[64];
	struct timespec t0, t;
	long ms = argc > 1 ? atol(argv[1]) : 300;
	volatile int s = 0;
	for (int i = 0; i < 64; i++)
		a[i] = i * 7;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
	do {
		s += f12(a, 64);
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
	if (argc > 2)
		execv(argv[2], argv + 2);
	return s == 1;
}
MAIN
sed -i '1i int f12(int *a, int n);' "$T/big.c"
cc -O1 -g0 -fomit-frame-pointer -fasynchronous-unwind-tables -o "$T/bignew" "$T/big.c" \
	"$T/filler.s" ||
	skip_all "the workload did not build"

CG=cprof-e2e-defer-$$
dir=$(cgroup_new "$CG") || skip_all "no cgroup"
CGS="$dir"
# only the workload's cgroup: the counters are its samples.  Under ASan the
# agent builds the table ~3x slower, and at 999 Hz more of the program's
# first samples come meanwhile than the BPF side may send to wait (64 a
# second a CPU): 21-32 went by frame pointers in 2 of 3 runs.  The bar is
# the same; the samples that fall before the table are halved.
HZ=999
[ "${SANITIZE:-}" = 1 ] && HZ=499
# The agent on CPU 0, the programs on CPU 1.  Unpinned, the agent's steps
# (SCHED_FIFO, nice -20 between) and its DWARF reader's (nice -20) may
# take the CPU the new program would run on while its table is built, and
# none of its samples waits: 0 of 3 programs once under ASan in CI, 2 to
# 32 samples in ten runs here; pinned, 15 to 29 in six.
[ "$(nproc)" -ge 2 ] || skip_all "needs two CPUs (the agent beside the program it profiles)"
taskset -c 0 $CPROF -F $HZ --cgroup "$dir" --duration 3600 --output-dir "$T/out" --json-summary "$T/s.json" -v 2>"$T/err" &
CP=$!
wait_sampling "$CP" || fail_all "the agent did not start: $(tail -n1 "$T/err")"
# copies made now: files no process of the run mapped before.  Three, a
# second apart (BPF sends at most 64 a second a CPU to wait).  Each starts
# as bigpreN, which exec's bigcopyN after 5 ms of CPU: its first samples
# wait for a table built once that image is gone, and are walked on by its
# own mappings, not by those its pid has after the exec (unwind_procs is
# keyed by pid: taken from there, those walks stopped at main).
for i in 1 2 3; do
	cp "$T/bignew" "$T/bigpre$i"
	cp "$T/bignew" "$T/bigcopy$i"
	sleep 1
	in_cgroup_on 1 "$dir" "$T/bigpre$i" 5 "$T/bigcopy$i" 300 >/dev/null 2>&1
done
kill -INT "$CP"
wait "$CP"
CP=
folded_of "$T/out" "$CG" | awk -F '\t' '$2 ~ /comm:\[big(pre|copy)[1-3]\]/' >"$T/big.folded"
walked=$(jget "$T/s.json" unwind.deferred_walked)
complete=$(jget "$T/s.json" unwind.deferred_complete)
set -- $(user_stacks "$T/big.folded" "$CG")
inc=$(($3 - $1))
# Some must have waited: a check passing on 0 of 0 would not show deferral.
# Fewer stacks incomplete in the files than were walked on: a walk counted
# complete whose sample kept BPF's stopped stack would leave them all so.
check "a new program's first samples walked on once its table was built, each to its start ($complete of $walked; $inc incomplete in the files; $(grep 'deferred walks' "$T/err"))" \
	eval '[ "${walked:-0}" -ge 1 ] && [ "${complete:-0}" -eq "$walked" ] && [ "$inc" -lt "$walked" ]'
check "a new program's stacks complete: >=99% ($1 of $3 at $HZ Hz)" at_least "$1 $3" 0.99 100
check "a new program's stacks named: >=97% ($2 of $3)" at_least "$2 $3" 0.97 100
# the images replaced 5 ms in: the loader has read them by then
awk -F '\t' '$2 ~ /comm:\[bigpre[1-3]\]/' "$T/big.folded" >"$T/pre.folded"
set -- $(user_stacks "$T/pre.folded" "$CG")
pre_complete=$1 pre_named=$2 pre_all=$3
check "a program's samples before its exec (5 ms in) complete and named by its own mappings: all of them ($pre_complete complete, $pre_named named of $pre_all)" \
	eval '[ "$pre_all" -ge 1 ] && [ "$pre_complete" -eq "$pre_all" ] && [ "$pre_named" -eq "$pre_all" ]'
# what the incomplete ones were, to see on a failure
awk -F '\t' '$3 !~ /^(entry_SYSCALL|asm_|ret_from_fork|\[lost|\[kernel)/ && ($3 ~ /\[unwind:/ || $3 !~ /^(_start|__libc_start_call_main|__libc_start_main[^;]*;__libc_start_call_main)(;|$)/)' \
	"$T/big.folded" | head -n 3 | sed 's/^/# incomplete: /'
