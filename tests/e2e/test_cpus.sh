#!/bin/sh
# End-to-end: --cpu LIST samples only on the CPUs listed.  A CPU-bound
# program pinned to CPU 1 (taskset -c 1) cannot run on CPU 0: profiled with
# --cpu 0 it has no samples, with --cpu 1 about -F a second.  Bad lists are
# refused, the item named.  Needs root and at least 2 CPUs.
. "$(dirname "$0")/lib.sh"

T=$(mktemp -d)
BG=
trap 'stop_all; rm -rf "$T"' EXIT
NAMES="--cpu 0: the program pinned to CPU 1 has no samples|--cpu: one CPU's ticks, not two|--cpu 1: the program pinned to CPU 1 has its samples|--cpu: the summary names the CPUs sampled|--off-cpu --cpu 0: no waits of a program blocking on CPU 1|--off-cpu --cpu 1: its waits recorded|--cpu 7-2: refused, the range named|--cpu x: refused, the item named"
plan 8

[ "$(id -u)" -eq 0 ] || skip_all "needs root (CAP_BPF, CAP_PERFMON)"
command -v taskset >/dev/null && command -v chrt >/dev/null || skip_all "needs taskset and chrt (util-linux)"
[ "$(getconf _NPROCESSORS_ONLN)" -ge 2 ] && taskset -c 1 true 2>/dev/null ||
	skip_all "needs 2 CPUs, CPU 1 among them ($(getconf _NPROCESSORS_ONLN) online)"

taskset -c 1 "$BUILD/workloads/busy" 120 >/dev/null &
W=$!
BG=$W

# cpu N: profiles the program for 2 s at 199 Hz on CPU N alone; $T/N.json,
# and in $T/N.log its CPU time every 50 ms, by /proc (exitwatch, real-time):
# the independent view of its samples, over the profile's own span.  Over
# the whole run the agent's start (real-time, on CPU 1 too) made its share
# 0.69 where it had 0.96 of CPU 1 while sampled.
cpu() {
	cpu_log_start "$T/$1.log" "$W"
	$CPROF -F 199 --cpu "$1" --pid "$W" --duration 2 --output-dir "$T/out$1" \
		--json-summary "$T/$1.json" -v 2>"$T/$1.err"
	_rc=$?
	cpu_log_stop
	echo $_rc
}
rc0=$(cpu 0)
rc1=$(cpu 1)
n0=$(jget "$T/0.json" samples.written)
n1=$(jget "$T/1.json" samples.written)
# the files' samples, read by go tool pprof
f0=0 f1=0
[ -e "$T/out0/busy-$W.pb.gz" ] && f0=$(folded "$T/out0/busy-$W.pb.gz" | sum_where - .)
[ -e "$T/out1/busy-$W.pb.gz" ] && f1=$(folded "$T/out1/busy-$W.pb.gz" | sum_where - .)
# Pinned, it never runs on CPU 0: 0 expected, a handful allowed.
check "--cpu 0: the program pinned to CPU 1 has no samples ($n0, $f0 in its file; exit $rc0)" \
	eval '[ "$rc0" -eq 0 ] && [ -n "$n0" ] && [ "$n0" -le 3 ] && [ "$f0" -le 3 ]'
# 199 a second of its CPU time (/proc) over the profile's span, within 25%.
s1=$(jget "$T/1.json" sampled_s) u1=0 span1=
[ -e "$T/out1/busy-$W.pb.gz" ] && span1=$(profile_span "$T/out1/busy-$W.pb.gz")
# shellcheck disable=SC2086
[ -n "$span1" ] && u1=$(cpus_between "$T/1.log" "$W" $span1)
check "--cpu 1: the program pinned to CPU 1 has its samples ($n1, $f1 in its file; its CPU share ${u1} over the ${s1:-?} s sampled at 199 Hz; exit $rc1)" \
	eval '[ "$rc1" -eq 0 ] && [ "${n1:-0}" -ge 20 ] && [ "$f1" -eq "$n1" ] &&
	      awk -v n="$f1" -v u="$u1" -v s="${s1:-0}" "BEGIN { e = u * s * 199; exit !(n >= 0.75 * e && n <= 1.25 * e) }"'
# ticks FILE: every sample the CPUs took (idle, other processes' and the program's)
ticks() {
	echo $(($(jget "$1" samples.sampled) + $(jget "$1" samples.idle) + $(jget "$1" samples.filtered)))
}
# One CPU at 199 Hz ticks ~199 times a second; two would tick twice that.
t0=$(ticks "$T/0.json") t1=$(ticks "$T/1.json")
s0=$(jget "$T/0.json" sampled_s) s1=$(jget "$T/1.json" sampled_s)
check "--cpu: one CPU's ticks, not two ($t0 in $s0 s, $t1 in $s1 s at 199 Hz)" \
	awk -v a="$t0" -v b="$t1" -v sa="$s0" -v sb="$s1" \
	'BEGIN { exit !(a >= 40 && b >= 40 && a <= 199 * 1.5 * sa && b <= 199 * 1.5 * sb) }'
l0=$(jget "$T/0.json" cpu_list) l1=$(jget "$T/1.json" cpu_list)
c0=$(jget "$T/0.json" cpus) c1=$(jget "$T/1.json" cpus)
check "--cpu: the summary names the CPUs sampled (json: '$l0' '$l1', $c0 and $c1 CPUs; -v: $(grep -o 'on 1 CPU ([0-9]*)' "$T/1.err"))" \
	eval '[ "$l0" = 0 ] && [ "$l1" = 1 ] && [ "$c0" = 1 ] && [ "$c1" = 1 ] &&
	      grep -q "at 199 Hz on 1 CPU (1):" "$T/1.err" && grep -q "on CPUs 1 at" "$T/1.err"'

# --off-cpu: the program's waits all begin on CPU 1, where it blocks.
taskset -c 1 "$BUILD/workloads/offcpu" sleep 120 >/dev/null &
O=$!
BG="$BG $O"
# offcpu N: its waits recorded in 2 s with --cpu N, a line "waits charged"
offcpu() {
	$CPROF --off-cpu --cpu "$1" --pid "$O" --duration 2 --output-dir "$T/off$1" \
		--json-summary "$T/off$1.json" 2>"$T/off$1.err" || echo "exit $?"
	echo "$(jget "$T/off$1.json" off_cpu.waits) $(jget "$T/off$1.json" off_cpu.short_waits)"
}
o0=$(offcpu 0)
o1=$(offcpu 1)
# ~7 ms asleep a round: ~280 waits in 2 s, on CPU 1 only.
check "--off-cpu --cpu 0: no waits of a program blocking on CPU 1 (waits, short: $o0)" \
	eval '[ "$o0" = "0 0" ] && [ ! -e "$T/off0/offcpu-$O.pb.gz" ]'
check "--off-cpu --cpu 1: its waits recorded (waits, short: $o1)" \
	eval 'set -- $o1; [ "$#" -eq 2 ] && [ "$1" -ge 50 ] && [ -s "$T/off1/offcpu-$O.pb.gz" ]'

# Refused before anything is loaded: an option's error and status.
$CPROF --cpu 7-2 --duration 1 --output-dir "$T/bad" 2>"$T/bad1.err"
b1=$?
$CPROF --cpu x --duration 1 --output-dir "$T/bad" 2>"$T/bad2.err"
b2=$?
check "--cpu 7-2: refused, the range named (exit $b1: $(head -n 1 "$T/bad1.err"))" \
	eval '[ "$b1" -eq 2 ] && grep -q "^cprof-bpf: --cpu: '"'7-2'"'" "$T/bad1.err" && [ ! -e "$T/bad" ]'
check "--cpu x: refused, the item named (exit $b2: $(head -n 1 "$T/bad2.err"))" \
	eval '[ "$b2" -eq 2 ] && grep -q "^cprof-bpf: --cpu: '"'x'"'" "$T/bad2.err" && [ ! -e "$T/bad" ]'
