#!/bin/sh
# End-to-end: an overloaded host.  2000 threads spin in the profiler's own
# session (at the priority a user's would have) beside a process with 30000
# mappings whose JIT-like thread keeps mapping new code; the profiler must
# sample from its start, end on time and write promptly.  Then on an idle
# host, sampling must begin quickly, and a late start must be reported.
# And a real-time thread holding a CPU must not hold the profiler up.
# Needs root.
#
# The machine is shared: the busy process's expected samples are those of
# the CPU it really had (2 CPUs x 99 Hz x 5 s when it has the host to
# itself), and timings are asserted with a margin over the bars of issue 13
# (bench/overload.sh measures them precisely).  The load lasts 6.5 s.
. "$(dirname "$0")/lib.sh"

T=$(mktemp -d)
trap 'kill -CONT $CP 2>/dev/null; kill $MC $CP $RT 2>/dev/null; rm -rf "$T"' EXIT
SPIN=$BUILD/workloads/spin
MAPCHURN=$BUILD/workloads/mapchurn
NCPU=$(nproc)

require_root "overload: busy process sampled throughout" "overload: run ends on time" \
	"overload: profiles written promptly" "overload: the mappings' process profiled" \
	"idle: sampling begins quickly" "late start reported" \
	"a real-time thread holding a CPU: the run ends without waiting for it"

# summary_num FILE REGEX: the number the summary line matching REGEX holds
# at its "(NUMBER)" group, e.g. summary_num f 'in ([0-9.]+) s'.
summary_num() {
	sed -nE "s/.*$2.*/\\1/p" "$1" | head -n1
}

# --- 2000 spinning threads + a process with 30000 changing mappings ---------
$MAPCHURN 30000 12 >"$T/mc.pid" &
MC=$!
mcpid=$(wait_pid_file "$T/mc.pid")
t0=$(date +%s.%N)
# setsid: the threads and the profiler share a session of their own, as
# `spin & cprof-bpf` typed in a terminal would.
setsid "$SPIN" 2000 6.5 $CPROF --duration 5 -F 99 -v --output-dir "$T/load" \
	>"$T/spin.out" 2>"$T/load.err"
rc=$?
t1=$(date +%s.%N)
kill $MC 2>/dev/null
wait $MC 2>/dev/null
MC=
spid=$(sed -n 's/^pid //p' "$T/spin.out")
cpu=$(sed -n 's/^cpu //p' "$T/spin.out")
wall=$(sed -n 's/^wall //p' "$T/spin.out")
# (the profiler's exit status is spin's)
got=0
if [ -f "$T/load/spin-$spid.pb.gz" ]; then
	folded "$T/load/spin-$spid.pb.gz" >"$T/spin.folded"
	got=$(sum_where "$T/spin.folded" .)
fi
# What 5 s at 99 Hz give a process running on $NCPU CPUs, or on the CPU
# time it had (other developers' tests share the machine).
expect=$(awk -v c="$cpu" -v w="$wall" -v n="$NCPU" 'BEGIN {
	full = n * 99 * 5; had = w > 0 ? 99 * 5 * c / w : 0
	printf "%d", had < full ? had : full }')
began=$(summary_num "$T/load.err" 'sampling began ([0-9]+) ms after launch')
pass=0
[ "$rc" -eq 0 ] && [ "$expect" -gt 0 ] && [ "$got" -ge $((expect * 8 / 10)) ] && pass=1
check "overload: busy process sampled throughout ($got samples, expected $expect: it had $cpu CPU-s in $wall s; full host $((NCPU * 99 * 5)); sampling began ${began:-?} ms after launch; exit $rc)" \
	[ $pass -eq 1 ]

took=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
# Bar 10 s from launch to exit; 12 s allowed here (the load itself lasts 6.5 s).
check "overload: run ends on time ($took s from launch to exit, load included; bar 10 s)" \
	awk -v t="$took" 'BEGIN { exit !(t <= 12) }'

wrote=$(summary_num "$T/load.err" 'profiles \([0-9]+ samples\) to .* in ([0-9.]+) s')
# Bar 1 s after the end of sampling; 3 s allowed here (issue 13's bar for the
# end of a run): the write covers every process of the host, and others'
# tests on a shared machine can bring a thousand of them in 5 s.
check "overload: profiles written promptly (${wrote:-?} s after the end of sampling; bar 1 s)" \
	awk -v t="${wrote:-99}" 'BEGIN { exit !(t <= 3) }'

mcgot=0
if [ -f "$T/load/mapchurn-$mcpid.pb.gz" ]; then
	folded "$T/load/mapchurn-$mcpid.pb.gz" >"$T/mc.folded"
	mcgot=$(sum_where "$T/mc.folded" .)
fi
snaps=$(summary_num "$T/load.err" 're-snapshots: ([0-9]+) taken')
check "overload: the mappings' process profiled ($mcgot samples; re-snapshots taken: ${snaps:-none told})" \
	[ "$mcgot" -gt 0 ]

# --- idle host: how soon after launch sampling begins ----------------------
t0=$(date +%s.%N)
$CPROF --duration 1 -v --output-dir "$T/idle" 2>"$T/idle.err"
t1=$(date +%s.%N)
began=$(summary_num "$T/idle.err" 'sampling began ([0-9]+) ms after launch')
took=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%d", (b - a) * 1000 }')
# Bar 1 s; 1.5 s allowed here.  The figure is checked against the run's own
# length: it cannot have begun later than its end less the 1 s sampled.
pass=0
[ -n "$began" ] && [ "$began" -le 1500 ] && [ "$began" -le $((took - 1000)) ] && pass=1
check "idle: sampling begins quickly (${began:-?} ms after launch; bar 1000 ms; run $took ms)" \
	[ $pass -eq 1 ]

# --- a late start is told ----------------------------------------------------
# Held stopped for 1.5 s from its launch, as a starved process would be:
# sampling begins after that, and the summary must say so.
$CPROF --duration 1 --output-dir "$T/late" 2>"$T/late.err" &
CP=$!
kill -STOP $CP
sleep 1.5
kill -CONT $CP
wait $CP
late=$(summary_num "$T/late.err" 'late start: sampling began ([0-9]+) ms after launch')
pass=0
[ -n "$late" ] && [ "$late" -ge 1500 ] && pass=1
check "late start reported (${late:-no line} ms after launch, held 1500 ms)" [ $pass -eq 1 ]

# --- a real-time thread holds a CPU ------------------------------------------
# SCHED_FIFO 50, pinned, spinning for 10 s (a busy-polling thread): nothing
# below its priority runs on its CPU.  The agent's start-up once moved
# itself to every CPU in turn, in the real-time class at priority 1, and
# waited there until the thread was gone.  Left 1 CPU at least.
RTCPU=$((NCPU - 1))
if [ "$NCPU" -lt 2 ] || ! command -v chrt >/dev/null; then
	skip "a real-time thread holding a CPU: the run ends without waiting for it" \
		"needs 2 CPUs and chrt ($NCPU CPUs)"
else
	chrt -f 50 taskset -c "$RTCPU" "$BUILD/workloads/busy" 10 >/dev/null &
	RT=$!
	sleep 0.3
	timeout -s KILL 60 $CPROF --duration 1 --pid "$RT" --output-dir "$T/rt" 2>"$T/rt.err"
	rc=$?
	alive=no
	kill -0 "$RT" 2>/dev/null && alive=yes
	kill "$RT"
	check "a real-time thread holding a CPU: the run ends without waiting for it (exit $rc; the thread still running: $alive; its profile: $(ls "$T/rt" 2>/dev/null))" \
		eval '[ "$rc" -eq 0 ] && [ "$alive" = yes ] && [ -s "$T/rt/busy-$RT.pb.gz" ]'
fi
