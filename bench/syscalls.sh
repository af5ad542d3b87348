#!/bin/bash
# bench/syscalls.sh: what the agent costs every other process's system
# calls.  The CPU time of a getppid() call (bench/sysloop.c, the best of 5
# rounds of 2M calls) with no profiler, with cprof-bpf sampling the whole
# host at its defaults, and, for reference, with one program on the mmap
# syscall's tracepoint (bpftrace): any syscall tracepoint puts every
# syscall of every task on the kernel's slow path, which is why cprof-bpf
# learns of a new program's libraries from ld.so (bpf/ldstate.bpf.h), not
# from mmap.  REPS runs of each, interleaved; medians.
#
# Results replace the "syscalls" section of bench/RESULTS.md.  Needs root.
if [ -z "${BASH_VERSION:-}" ]; then exec bash "$0" "$@"; fi
. "$(dirname "$0")/env.sh"
REPS=${SYSCALLS_REPS:-5}
bench_require "$CPROF" -- cc bpftrace
. "$ROOT/bench/lib.sh"
bench_init cprof-bench-syscalls
LOOP=$RAW/sysloop
cc -O2 -o "$LOOP" "$ROOT/bench/sysloop.c" || die "cannot build bench/sysloop.c"

declare -A R
none=() agent=() tp=()
LOAD0=$(cut -d' ' -f1 /proc/loadavg)
for i in $(seq "$REPS"); do
	none+=("$($NORMAL "$LOOP")")
	"$CPROF" --duration 30 -o "$RAW/out$i" >"$RAW/agent$i.log" 2>&1 &
	apid=$!
	sleep 3 # loaded and sampling (its programs load in ~2 s)
	agent+=("$($NORMAL "$LOOP")")
	kill -INT "$apid"
	wait "$apid"
	bpftrace -e 'tracepoint:syscalls:sys_exit_mmap { @n = count(); }' >"$RAW/bt$i.log" 2>&1 &
	bpid=$!
	sleep 3
	tp+=("$($NORMAL "$LOOP")")
	kill -INT "$bpid"
	wait "$bpid"
done
LOAD1=$(cut -d' ' -f1 /proc/loadavg)
R[none]=$(median_fmt %.1f "${none[@]}")
R[agent]=$(median_fmt %.1f "${agent[@]}")
R[tp]=$(median_fmt %.1f "${tp[@]}")
log "getppid ns: none ${none[*]}; cprof-bpf ${agent[*]}; syscall tracepoint ${tp[*]}"

S=$RAW/section.md
{
	echo "<!-- BEGIN syscalls -->"
	echo "## syscalls: what the agent costs other processes' system calls"
	echo
	echo "Build $BUILD_DESC; $(date -u '+%Y-%m-%d %H:%M UTC'); load $LOAD0 -> $LOAD1;"
	echo "\`sh bench/syscalls.sh\`: getppid() CPU time a call (best of 5 rounds of 2M"
	echo "calls), median of $REPS interleaved runs each."
	echo
	echo "| while the loop runs | ns a call | vs none |"
	echo "|---|---|---|"
	echo "| nothing | $(g none) | 1.00 |"
	echo "| cprof-bpf, whole host, defaults | $(g agent) | $(ratio "$(g agent)" "$(g none)") |"
	echo "| bpftrace on tracepoint:syscalls:sys_exit_mmap (reference) | $(g tp) | $(ratio "$(g tp)" "$(g none)") |"
	echo
	echo "Runs: none ${none[*]}; cprof-bpf ${agent[*]}; syscall tracepoint ${tp[*]}."
	echo "<!-- END syscalls -->"
} >"$S"
cat "$S"
publish_section syscalls "$S"
