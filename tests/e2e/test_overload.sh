#!/bin/sh
# End-to-end: an overloaded host, as a user meets it (issue 30).  2000
# threads spin in a session of their own, for longer than the run; from a
# shell in that session the profiler is started 2 s later, as a user would
# type it; three runs in a row, then three more beside a process of 30000
# mappings whose JIT-like thread keeps mapping new code.  Each run must
# begin sampling within 1 s of launch, write its last profile within 1 s
# of the end of sampling, exit within 8 s of launch, and sample the busy
# process for >= 80% of the CPU it had.  Then on an idle host sampling
# must begin within 1 s; a late start must be reported; a real-time
# thread holding a CPU must not hold the profiler up.  Needs root.
#
# What is measured does not come from the agent: its fork, its raise into
# the real-time class and its exit are seen by exitwatch (outside the
# load, in the real-time class, looking every ms), sampling's start and
# length are the profile's own (go tool pprof), the last write is the
# files' mtime, and the busy process's CPU is read from /proc.
#
# Launch is the shell's fork.  Until a process has raised itself into the
# real-time class it waits its turn among the load's 2000 threads, and
# that wait is the scheduler's, not the program's: build/workloads/rtfirst,
# a static program whose first act is the raise, was runnable but not
# run for 5-10 s between its fork and its raise under this load (kernel
# 6.18, EEVDF; bench/RESULTS.md "overload").
# So the start and exit bars are checked less the time the agent spent
# runnable but not running before its raise (its schedstat, read by
# exitwatch as its policy changed); everything it ran itself before the
# raise (the dynamic loader, main() up to the raise) still counts, and
# the whole figures and the CPU it used before the raise are printed.
. "$(dirname "$0")/lib.sh"

T=$(mktemp -d)
trap 'kill -CONT $CP 2>/dev/null; kill $MC $CP $RT $LL_SPIN 2>/dev/null; rm -rf "$T"' EXIT
MAPCHURN=$BUILD/workloads/mapchurn
EXITWATCH=$BUILD/workloads/exitwatch
NCPU=$(nproc)
RUNS=3
# Under ASan the agent's start-up before its raise (the sanitizer's shadow
# memory) costs tens of ms of CPU at the load's priority, so it waits some
# 35 s among the load before it can raise itself: one run of each kind
# there checks the rest of the run for memory errors; the plain build's
# three each hold the bars.
# And LeakSanitizer's check at exit stops the agent from a helper thread
# that is not in the real-time class: among the load it waited minutes to
# run, so the loaded runs leave the leak check to the other tests.
if [ "${SANITIZE:-}" = 1 ]; then
	RUNS=1
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
	export ASAN_OPTIONS
fi

names=""
for sc in load maps; do
	for i in $(seq $RUNS); do
		names="$names overload-$sc-$i:sampling-begins overload-$sc-$i:written overload-$sc-$i:exit overload-$sc-$i:samples overload-$sc-$i:duration"
	done
done
# Five per loaded run, then the mappings', idle, late and real-time checks.
plan $((10 * RUNS + 4))
# shellcheck disable=SC2086
require_root $names "overload-maps: the mappings' process sampled" \
	"idle: sampling begins within 1 s of launch" "late start reported" \
	"a real-time thread holding a CPU: the run ends without waiting for it"
if ! command -v bash >/dev/null || ! command -v chrt >/dev/null || ! command -v setsid >/dev/null; then
	# shellcheck disable=SC2086
	for n in $names; do skip "$n" "needs bash, chrt and setsid"; done
	names=""
fi

# summary_num FILE REGEX: the number the summary line matching REGEX holds
# at its "(NUMBER)" group, e.g. summary_num f 'in ([0-9.]+) s'.
summary_num() {
	sed -nE "s/.*$2.*/\\1/p" "$1" | head -n1
}

# loaded_run NAME [MCPID]: one run as a user would start it (loaded_launch),
# its five checks.  With MCPID, mapchurn's samples are counted too.
loaded_run() {
	_n=$1 _mc=${2:-0}
	_d=$T/$_n
	# The load lasts until the agent has exited (loaded_launch stops it).
	loaded_launch "$_d" 2000 600 "$_mc" "$CPROF" --duration 5 -F 99 -v \
		--json-summary "$_d/s.json" --output-dir "$_d/prof"
	_prof=$_d/prof/spin-$LL_SPIN.pb.gz
	_got=0 _t0= _dur=
	if [ -f "$_prof" ]; then
		folded "$_prof" >"$_d/spin.folded"
		_got=$(sum_where "$_d/spin.folded" .)
		_t0=$(profile_field "$_prof" Time)
		_dur=$(profile_field "$_prof" Duration)
	fi
	_last=$(stat -c %.9Y "$_d"/prof/* 2>/dev/null | sort -n | tail -n1)
	# The CPU spin had over the profile's own span: the other load on the
	# host (another test, a build) comes and goes over the run, and the
	# whole run's average once expected 750 samples where the span gave 514.
	_rate=0 _span=
	[ -f "$_prof" ] && _span=$(profile_span "$_prof")
	# shellcheck disable=SC2086
	[ -n "$_span" ] && _rate=$(cpus_between "$_d/watch" "$LL_SPIN" $_span)
	eval "$(awk -v f="$LL_FORK" -v r="$LL_RWAIT" -v e="$LL_EXIT" -v t0="${_t0:-0}" \
		-v d="${_dur:-0}" -v last="${_last:-0}" -v rate="$_rate" 'BEGIN {
		if (r < 0) r = 0
		start = t0 > 0 ? t0 * 1000 - f : -1
		printf "_start=%d _own=%d _write=%.2f _life=%d _ownlife=%d _expect=%d\n",
			start, start - r, last - t0 - d, e - f, e - f - r, 99 * d * rate
	}')"
	_js=$(jget "$_d/s.json" start_ms)
	_jr=$(jget "$_d/s.json" phases.raised_ms)
	_jl=$(jget "$_d/s.json" phases.load_ms)
	# The wait is subtracted only for a raise that was the agent's first
	# act: it had run 10-12 ms (the loader, main) when exitwatch saw it in
	# the real-time class.  An agent whose start step were skipped would be
	# seen there only at its first drain, its whole slow start (BPF loaded
	# in 6.4 s, not 0.45) counted as that wait: 519 ms of CPU by then
	# (issue 35's mutation check).  ASan's runtime starts first: 300 ms.
	_rcpu_max=100
	[ "${SANITIZE:-}" = 1 ] && _rcpu_max=300
	_ok=0
	[ "$LL_FORK" -gt 0 ] && [ "$LL_RAISED" -gt 0 ] && [ -n "$_t0" ] && [ "$_own" -le 1000 ] &&
		awk -v c="$LL_RCPU" -v m="$_rcpu_max" 'BEGIN { exit !(c >= 0 && c <= m) }' && _ok=1
	check "overload-$_n:sampling-begins: within 1 s of launch, less the wait before its raise, its first act (began ${_start} ms after the fork, of which ${LL_RWAIT} ms runnable and not run before the raise, ${LL_EWAIT} ms of them before the exec; ${LL_RCPU} ms CPU by the raise, at most ${_rcpu_max}; the agent says ${_js:-?} ms, raised at ${_jr:-?} ms, BPF loaded in ${_jl:-?} ms)" \
		[ $_ok -eq 1 ]
	check "overload-$_n:written: the last profile within 1 s of the end of sampling (${_write} s; sampled ${_dur:-?} s)" \
		awk -v w="$_write" -v t="${_t0:-}" 'BEGIN { exit !(t != "" && w <= 1) }'
	check "overload-$_n:exit: within 8 s of launch, less the wait before its raise (exited ${_life} ms after the fork, ${_ownlife} ms less it; exit ${LL_RC:-none})" \
		eval '[ "$LL_FORK" -gt 0 ] && [ "$LL_EXIT" -gt 0 ] && [ "$_ownlife" -le 8000 ] && [ "$LL_RC" = 0 ]'
	check "overload-$_n:samples: >= 80% of what the busy process's CPU gives ($_got of $_expect: it had $_rate CPUs while sampled, $LL_RATE over the run; full host $((NCPU * 99 * 5)))" \
		eval '[ "$_expect" -gt 0 ] && [ "$_got" -ge $((_expect * 8 / 10)) ]'
	# The alarm pauses sampling at 5 s however late the loop comes to it;
	# the last drains after it are the write's.  Counting them (1.7 s under
	# this load, CI's stop 41) made a 5 s profile say 6.67 s.
	check "overload-$_n:duration: the profile's duration is the 5 s sampled (${_dur:-?} s)" \
		awk -v d="${_dur:-}" 'BEGIN { exit !(d != "" && d >= 4.99 && d <= 5.01) }'
	if [ "$_mc" != 0 ]; then
		_mcf=$_d/prof/mapchurn-$_mc.pb.gz _mcgot=0
		[ -f "$_mcf" ] && folded "$_mcf" >"$_d/mc.folded" && _mcgot=$(sum_where "$_d/mc.folded" .)
		MCGOT=$((MCGOT + _mcgot))
		_orate=0
		# shellcheck disable=SC2086
		[ -n "$_span" ] && _orate=$(cpus_between "$_d/watch" "$_mc" $_span)
		MCEXP=$((MCEXP + $(awk -v r="$_orate" -v d="${_dur:-0}" 'BEGIN { printf "%d", 99 * d * r }')))
	fi
}

if [ -n "$names" ]; then
	for i in $(seq $RUNS); do
		loaded_run "load-$i"
	done
	# The same load beside 30000 changing mappings (a process outside it),
	# stopped after the runs: under ASan the agent alone waited 138 s for a
	# CPU before its raise, past a lifetime of 130 s (0 of its samples).
	$MAPCHURN 30000 3600 >"$T/mc.pid" &
	MC=$!
	mcpid=$(wait_pid_file "$T/mc.pid")
	MCGOT=0 MCEXP=0
	for i in $(seq $RUNS); do
		loaded_run "maps-$i" "$mcpid"
	done
	kill $MC 2>/dev/null
	wait $MC 2>/dev/null
	MC=
	check "overload-maps: the mappings' process sampled for >= 80% of its CPU ($MCGOT samples in $RUNS runs, its CPU gives $MCEXP)" \
		eval '[ "$MCEXP" -gt 0 ] && [ "$MCGOT" -ge $((MCEXP * 8 / 10)) ]'
else
	skip "overload-maps: the mappings' process sampled" "needs bash, chrt and setsid"
fi

# --- idle host: how soon after launch sampling begins ----------------------
# Launched by this shell; exitwatch sees the fork, the profile says when
# sampling began.  One process spins meanwhile (a profile to read the
# start from: a quiet host may give none in 1 s).
$BUILD/workloads/busy 4 >/dev/null &
IB=$!
$CPROF --duration 1 -v --output-dir "$T/idle" 2>"$T/idle.err" &
CP=$!
"$EXITWATCH" $$ "$IB" 60 >"$T/idle.watch"
wait $CP
CP=
kill $IB 2>/dev/null
read -r _ _ _ fork _ _ _ _ _ _ <"$T/idle.watch" || fork=0
t0=$(for f in "$T"/idle/*.pb.gz; do profile_field "$f" Time; break; done)
began=$(awk -v t="${t0:-0}" -v f="$fork" 'BEGIN { printf "%d", t * 1000 - f }')
said=$(sed -nE 's/.*sampling began ([0-9]+) ms after launch.*/\1/p' "$T/idle.err" | head -n1)
check "idle: sampling begins within 1 s of launch (${began} ms after the fork, by its profile's start; the agent says ${said:-?} ms)" \
	eval '[ -n "$t0" ] && [ "$fork" -gt 0 ] && [ "$began" -le 1000 ]'

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
