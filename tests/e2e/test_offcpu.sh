#!/bin/sh
# End-to-end: --off-cpu on workloads that wait in known places
# (tests/workloads/offcpu.c), read back through `go tool pprof`.
. "$(dirname "$0")/lib.sh"

T=$(mktemp -d)
BG=
CG=
HOLD=
trap 'stop_all; [ -z "$HOLD" ] || kill "$HOLD"; cgroup_gone "$CG"; rm -rf "$T"' EXIT

# --- bad input (no privileges needed: refused before anything loads) --------
plan 19
for bad in 2x -1 0 0.5ms 61s 1h ""; do
	$CPROF --off-cpu --off-cpu-min "$bad" -d 1 -o "$T/bad" >"$T/err" 2>&1; rc=$?
	check "--off-cpu-min '$bad': exit 2, one line naming the option" \
		sh -c "[ $rc -eq 2 ] && [ \$(wc -l <'$T/err') -eq 1 ] && grep -q -- '--off-cpu-min' '$T/err' && [ ! -e '$T/bad' ]"
done
$CPROF --off-cpu-min 5ms -d 1 -o "$T/bad" >"$T/err" 2>&1; rc=$?
check "--off-cpu-min without --off-cpu: exit 2" \
	sh -c "[ $rc -eq 2 ] && grep -q -- 'needs --off-cpu' '$T/err' && [ ! -e '$T/bad' ]"

require_root "off-CPU share of the sleeping function" "CPU + off-CPU cover the window" \
	"default sample type stays cpu" "summary reports off-CPU" \
	"kernel stacks start at __schedule" \
	"kernel stacks start at __schedule while another program watches the switch" \
	"mutex waiter through pthread_mutex_lock" "wait spanning windows" \
	"--cgroup: the process in it charged" "--cgroup: the process outside it not" \
	"python: the sleeping Python function on off-CPU stacks"

# off_cpu FILE PATTERN: ns off the CPU of samples whose line matches PATTERN.
off_cpu() {
	folded "$1" 3 >"$1.off"
	sum_where "$1.off" "$2"
}

# --- ~70% asleep in sleep_phase, ~30% computing in compute_phase -----------
# Real-time, above the host's other work: time it waits runnable behind
# others is neither CPU nor off-CPU (a preempted thread is not waiting),
# and on a shared, busy host it would eat into the cover.
start PID chrt -f 1 $BUILD/workloads/offcpu sleep 13
sleep 0.5
$CPROF --off-cpu --pid "$PID" --duration 10 --output-dir "$T/sleep" \
	--json-summary "$T/sleep.json" 2>"$T/sleep.err"
F="$T/sleep/offcpu-$PID.pb.gz"
wait $BG # its own measure comes at its end
BG=
own=$(sed -n 2p "$T/pid."* 2>/dev/null | head -n1)
dur=$(go tool pprof -raw "$F" 2>/dev/null | awk '/^Duration:/ { print $2 * 1e9 }')
period=$(go tool pprof -raw "$F" 2>/dev/null | awk '/^Period:/ { print $2 }')
asleep=$(off_cpu "$F" ';sleep_phase;')
folded "$F" >"$T/sleep.folded"
computing=$(sum_where "$T/sleep.folded" ';compute_phase(;|$)')
check "off-CPU share of the sleeping function within 5 points of its own (off=$asleep ns of $dur; own: $own)" \
	awk -v off="$asleep" -v dur="$dur" -v own="$own" 'BEGIN {
		split(own, m, " "); if (!dur || !m[3]) exit 1
		d = off / dur - m[1] / m[3]; exit !(d * d < 0.05 * 0.05) }'
check "CPU + off-CPU cover the window (cpu=$computing x $period ns, off=$asleep ns, of $dur)" \
	awk -v c="$computing" -v p="$period" -v off="$asleep" -v dur="$dur" \
	'BEGIN { exit !(dur > 0 && (c * p + off) / dur >= 0.90) }'
check "default sample type stays cpu" \
	sh -c "go tool pprof -top '$F' 2>/dev/null | grep -q '^Type: cpu'"
waits=$(jget "$T/sleep.json" off_cpu.waits)
min=$(jget "$T/sleep.json" off_cpu.min_ns)
check "summary reports off-CPU (waits=$waits, min_ns=$min)" \
	sh -c "grep -q 'off-CPU: [1-9][0-9]* waits charged' '$T/sleep.err' &&
	       [ '${waits:-0}' -gt 0 ] && [ '$min' = 1000000 ]"

# at_schedule NAME FILE: all of FILE's off-CPU time on kernel stacks whose
# first frame (the leaf) is __schedule, where the thread switched out.
at_schedule() {
	_all=$(off_cpu "$2" .)
	_at=$(sum_where "$2.off" ';schedule;__schedule$')
	check "$1 ($_at of $_all ns; leaves: $(awk '$1 + 0 > 0' "$2.off" | grep -o '[^;]*$' | sort -u | tr '\n' ' '))" \
		awk -v a="$_at" -v n="$_all" 'BEGIN { exit !(n >= 1e9 && a == n) }'
}
at_schedule "kernel stacks start at __schedule" "$F"

# --- the same while another program watches sched_switch -------------------
# With two programs on it the kernel calls them through
# __traceiter_sched_switch: one frame more between __schedule and ours.
python3 "$(dirname "$0")/../../bench/bpfhold.py" empty sched_switch >"$T/hold" 2>&1 &
HOLD=$!
for _ in 1 2 3 4 5 6 7 8 9 10; do
	[ -s "$T/hold" ] && break
	sleep 0.5
done
if [ "$(cat "$T/hold")" != ready ]; then
	fail "kernel stacks start at __schedule while another program watches the switch" \
		"bench/bpfhold.py empty sched_switch: $(head -n1 "$T/hold")"
else
	start PID $BUILD/workloads/offcpu sleep 6
	sleep 0.3
	$CPROF --off-cpu --pid "$PID" --duration 3 --output-dir "$T/twice" 2>"$T/twice.err"
	stop_all
	at_schedule "kernel stacks start at __schedule while another program watches the switch" \
		"$T/twice/offcpu-$PID.pb.gz"
fi
kill "$HOLD"
wait "$HOLD" 2>/dev/null
HOLD=

# --- two threads, one mutex: the waiter blocks in pthread_mutex_lock -------
start PID $BUILD/workloads/offcpu mutex 9
sleep 0.5
$CPROF --off-cpu --comm offcpu --duration 6 --output-dir "$T/mutex" 2>"$T/mutex.err"
F="$T/mutex/offcpu-$PID.pb.gz"
waited=$(off_cpu "$F" 'thread_name:.waiter.')
in_lock=$(sum_where "$F.off" 'thread_name:.waiter..*;wait_for_lock;_*pthread_mutex_lock;')
check "mutex waiter through pthread_mutex_lock to its caller ($in_lock of $waited ns)" \
	awk -v a="$in_lock" -v w="$waited" 'BEGIN { exit !(w > 1e9 && a >= 0.9 * w) }'
stop_all

# --- waits of 2.5 s, windows of 2 s: charged to the window each ends in -----
start PID $BUILD/workloads/offcpu longsleep 12
sleep 0.3
$CPROF --off-cpu --pid "$PID" --interval 2 --duration 8 --output-dir "$T/win" 2>"$T/win.err"
best=0
lost=0
for f in "$T"/win/*.pb.gz; do
	n=$(off_cpu "$f" ';sleep_phase;')
	l=$(sum_where "$f.off" 'stack not found')
	best=$(awk -v a="$best" -v b="$n" 'BEGIN { print (b > a ? b : a) }')
	lost=$(awk -v a="$lost" -v b="$l" 'BEGIN { print a + b }')
done
check "wait spanning windows charged whole, with its stack ($best ns in one window, $lost lost)" \
	awk -v b="$best" -v l="$lost" 'BEGIN { exit !(b >= 2.4e9 && l == 0) }'
stop_all

# --- --cgroup: one process in the cgroup, the same program outside it ------
CG=$(cgroup_new "cprof-e2e-offcpu-$$")
if [ -z "$CG" ]; then
	skip "--cgroup: the process in it charged" "no writable cgroup v2 hierarchy"
	skip "--cgroup: the process outside it not" "no writable cgroup v2 hierarchy"
else
	# real-time, as above: on a busy host its compute phase would take longer
	start IN in_cgroup "$CG" chrt -f 1 $BUILD/workloads/offcpu sleep 10
	start OUT chrt -f 1 $BUILD/workloads/offcpu sleep 10
	sleep 0.3
	$CPROF --off-cpu --cgroup "/cprof-e2e-offcpu-$$" --duration 4 --output-dir "$T/cg" \
		2>"$T/cg.err"
	stop_all
	F="$T/cg/offcpu-$IN.pb.gz"
	dur=$(go tool pprof -raw "$F" 2>/dev/null | awk '/^Duration:/ { print $2 * 1e9 }')
	asleep=$(off_cpu "$F" ';sleep_phase;')
	# ~70% of its time asleep
	check "--cgroup: the process in it charged ($asleep ns in sleep_phase of $dur)" \
		awk -v a="$asleep" -v d="$dur" 'BEGIN { exit !(d > 0 && a >= 0.6 * d) }'
	check "--cgroup: the process outside it not ($(cd "$T/cg" && echo *.pb.gz))" \
		test ! -e "$T/cg/offcpu-$OUT.pb.gz"
	cgroup_gone "$CG"
	CG=
fi

# --- Python: the frames of a CPython sleeping in a named function ----------
PY=$(ls -d "${PYENV_ROOT:-/root/.pyenv}"/versions/3.12.* 2>/dev/null | sort -V | tail -n1)
if [ -z "$PY" ]; then
	skip "python: the sleeping Python function on off-CPU stacks" \
		"no pyenv CPython 3.12 under ${PYENV_ROOT:-/root/.pyenv}/versions"
else
	cat >"$T/nap.py" <<'PYEOF'
import os, sys, time

def napping():
    time.sleep(0.02)

def waker(secs):
    end = time.time() + secs
    while time.time() < end:
        napping()

print(os.getpid(), flush=True)
waker(float(sys.argv[1]))
PYEOF
	start PID "$PY/bin/python3.12" "$T/nap.py" 10
	sleep 0.5
	$CPROF --off-cpu --pid "$PID" --duration 4 --output-dir "$T/py" 2>"$T/py.err"
	stop_all
	F=$(ls "$T"/py/*-"$PID".pb.gz 2>/dev/null | head -n1)
	all=$(off_cpu "$F" .)
	named=$(sum_where "$F.off" ';waker;napping;([^;]*;)*time_sleep;')
	# all but a wait or two before the loader had read the interpreter
	check "python: the sleeping Python function on off-CPU stacks ($named of $all ns under waker;napping;...;time_sleep)" \
		awk -v n="$named" -v a="$all" 'BEGIN { exit !(a >= 2e9 && n >= 0.9 * a) }'
fi
