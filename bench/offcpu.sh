#!/bin/bash
# bench/offcpu.sh: off-CPU time (--off-cpu, issue 12).
#
#   totals    `offcpu sleep` (one thread, real-time so that the host's load
#             does not change it, ~70% of its time asleep in sleep_phase,
#             waits of 4.7-9.3 ms): the share of the time cprof-bpf charges
#             off the CPU, beside bcc's offcputime-bpfcc on the same process
#             for SECS within cprof-bpf's window (-m 1000: the same
#             minimum), and the workload's own measure (wall time inside
#             sleep_phase, over its whole run).  Where bcc cannot run (it needs kprobes and
#             the kernel's headers), a bpftrace program on the sched_switch
#             tracepoint doing what offcputime does (switch-out of a blocked
#             thread to its switch-in, waits >= 1 ms) stands in, and the
#             table says so.  Each tool's share is of its own window.
#   overhead  `offcpu pingpong` (two processes sending a byte back and
#             forth over pipes: > 50k voluntary switches a second), placed
#             one on each CPU and both on one: round trips a second with
#             no profiler, with only an empty program on sched_switch, with
#             only an empty program on rseq_update (which the kernel fires
#             after each switch of a task with an rseq area: where
#             cprof-bpf hooked a new program's start until 2026-11-29), with
#             cprof-bpf sampling the whole host without --off-cpu (issue
#             34's bar: within 1% of none), with
#             --off-cpu (default minimum), and with a bpftrace program doing
#             what bcc's offcputime does host-wide (each block stamped in a
#             hash with its two stacks, each switch in looked up: the cost
#             users pay today), PP_REPS rounds of each, with the
#             BPF run-time statistics off; then 3 more with them on, for
#             the sched_switch program's ns per run beside an empty
#             program's on the same tracepoint.  --off-cpu's cost against
#             the empty sched_switch program's (issue 34's bar: 1.5x).
#
# Results replace the "offcpu" section of bench/RESULTS.md.  Needs root.
if [ -z "${BASH_VERSION:-}" ]; then exec bash "$0" "$@"; fi
. "$(dirname "$0")/env.sh"
OFFCPU=$ROOT/build/workloads/offcpu
REPS=${OFFCPU_REPS:-5}
SECS=${OFFCPU_SECS:-6}
NCPU=$(nproc)
FINISH_MAX=60
BPF_PROG_TYPE_PERF_EVENT=7

bench_require "$CPROF" "$OFFCPU" -- go bpftrace bpftool python3
. "$ROOT/bench/lib.sh"
bench_init cprof-bench-offcpu
. "$ROOT/tests/e2e/lib.sh" # folded, sum_where
export HOME=$RAW
log "raw logs in $RAW"

# The BPF run-time statistics (run_time_ns, run_cnt) add two clock reads to
# every run of every program, ~60 ns a switch here: on for the totals
# (wait_first_sample reads run_cnt to know that sampling has begun) and
# for the runs that read the program's cost, off for the throughput runs.
# bench/bpfhold.py holds them on through a file descriptor of its own
# (BPF_ENABLE_STATS), which leaves kernel.bpf_stats_enabled to whoever set
# it: if someone else on the host has that on, the throughput runs pay
# for it, and the table says so; OFFCPU_STATS_OFF=1 turns it off for them
# (and back on after), for when nobody else is measuring.
OLD_STATS=$(sysctl -n kernel.bpf_stats_enabled)
HOLD_PID=""
# hold_start ARGS...: bench/bpfhold.py ARGS, until hold_stop.
hold_start() {
	local line=""
	# (the coproc sets HOLD_PID)
	coproc HOLD { exec python3 "$ROOT/bench/bpfhold.py" "$@" 2>&1; }
	read -r line <&"${HOLD[0]}"
	[ "$line" = ready ] || die "bench/bpfhold.py $*: ${line:-died}"
}
hold_stop() {
	[ -n "$HOLD_PID" ] || return 0
	kill "$HOLD_PID" 2>/dev/null
	wait "$HOLD_PID" 2>/dev/null
	HOLD_PID=""
}
cleanup() {
	stop_workload
	hold_stop
	[ "$(sysctl -n kernel.bpf_stats_enabled)" = "$OLD_STATS" ] ||
		sysctl -q -w kernel.bpf_stats_enabled="$OLD_STATS" >/dev/null
}
trap cleanup EXIT

BCC=$(command -v offcputime-bpfcc || command -v offcputime || true)

# The reference where bcc cannot run: offcputime's method on the
# sched_switch tracepoint, for thread $1 (the workload is one thread).
# prev_state & 0xff: blocked (a preempted thread reports 0 or 0x100).
BT_PROG='BEGIN { @t0 = nsecs; }
tracepoint:sched:sched_switch /args->prev_pid == $1 && (args->prev_state & 0xff)/ { @start = nsecs; }
tracepoint:sched:sched_switch /args->next_pid == $1 && @start/ {
	$d = nsecs - @start; if ($d >= 1000000) { @total = sum($d); } @start = 0; }
END { printf("window_ns %lld\n", nsecs - @t0); clear(@start); }'

# --- totals -----------------------------------------------------------------
declare -a T_CPROF T_REF T_OWN
REF_NAME=""
LOAD_TOTALS=$(cut -d' ' -f1 /proc/loadavg)
hold_start stats
for r in $(seq "$REPS"); do
	# Real-time, so that it keeps its 70/30 whatever else the host runs:
	# both tools must see the same behaviour.
	chrt -f 1 "$OFFCPU" sleep 600 >"$RAW/sleep.$r" &
	WL_PIDS=$!
	pid=$(wait_pid_file "$RAW/sleep.$r") || die "offcpu sleep did not start"
	# cprof-bpf first, until the reference has run SECS: their windows
	# then nearly coincide (the profile's a little longer at both ends)
	$NORMAL "$CPROF" --off-cpu --pid "$pid" --duration $((SECS + 120)) -o "$RAW/tot.$r" \
		2>"$RAW/tot.$r.err" &
	c=$!
	wait_first_sample "$c" || die "cprof-bpf never sampled"
	ref_ok=""
	if [ -n "$BCC" ]; then
		if $NORMAL timeout $((SECS + 30)) "$BCC" -p "$pid" -m 1000 -f "$SECS" \
			>"$RAW/bcc.$r" 2>"$RAW/bcc.$r.err"; then
			REF_NAME=bcc ref_ok=1
			# folded lines end in the µs off the CPU; its window is SECS
			T_REF[r]=$(awk -v s="$SECS" '{ t += $NF } END { printf "%.4f", t / 1e6 / s }' \
				"$RAW/bcc.$r")
		else
			BCC_WHY=$(grep -m1 -iE '^(unable|error|exception)' "$RAW/bcc.$r.err")
			BCC=""
		fi
	fi
	if [ -z "$ref_ok" ]; then
		REF_NAME=bpftrace
		timeout -s INT "$SECS" bpftrace -e "$BT_PROG" "$pid" >"$RAW/bt.$r" 2>&1
		T_REF[r]=$(awk '/^window_ns/ { w = $2 } /^@total:/ { t = $2 }
			END { if (w) printf "%.4f", t / w }' "$RAW/bt.$r")
	fi
	kill -INT "$c"
	wait "$c"
	kill -INT "$WL_PIDS" # it prints its own measure then
	wait "$WL_PIDS"
	WL_PIDS=""
	# a reference that never ran ends cprof-bpf's window at once: no total to set beside it
	[ -n "${T_REF[r]}" ] || die "totals: $REF_NAME gave no total: $(head -c 300 "$RAW/bt.$r" 2>/dev/null)"
	f=$(ls "$RAW/tot.$r"/*.pb.gz 2>/dev/null | head -n1)
	dur=$(go tool pprof -raw "$f" 2>/dev/null | awk '/^Duration:/ { print $2 * 1e9 }')
	folded "$f" 3 >"$RAW/tot.$r.off"
	T_CPROF[r]=$(awk -v t="$(sum_where "$RAW/tot.$r.off" .)" -v d="$dur" \
		'BEGIN { if (d) printf "%.4f", t / d }')
	T_OWN[r]=$(awk 'NR == 2 { printf "%.4f", $1 / $3 }' "$RAW/sleep.$r")
	log "totals $r: cprof-bpf ${T_CPROF[r]}, $REF_NAME ${T_REF[r]}, own ${T_OWN[r]}"
done
hold_stop

# --- overhead ---------------------------------------------------------------
# prog_runs PID NAME: "run_time_ns run_cnt" of the program NAME that PID
# holds open (by its own fds: right whoever else runs programs meanwhile).
prog_runs() {
	bpftool prog show --json 2>/dev/null | python3 -c '
import glob, json, sys
ids = set()
for f in glob.glob("/proc/%s/fdinfo/*" % sys.argv[1]):
    try:
        ids.update(int(l.split()[1]) for l in open(f) if l.startswith("prog_id:"))
    except (OSError, ValueError, IndexError):
        pass
progs = json.load(sys.stdin)
for p in progs if isinstance(progs, list) else [progs]:
    if p.get("id") in ids and p.get("name") == sys.argv[2]:
        print(p.get("run_time_ns", 0), p.get("run_cnt", 0))' "$1" "$2"
}
# per_run BEFORE AFTER: ns a run and runs between two prog_runs readings
per_run() {
	awk -v a="$1" -v b="$2" 'BEGIN { split(a, x, " "); split(b, y, " ")
		n = y[2] - x[2]; if (n > 0) printf "%.1f %d", (y[1] - x[1]) / n, n }'
}

# The pingpong's two processes are placed, not left to the scheduler:
# where it puts them moves the throughput by a third between runs of one
# configuration (both on one CPU is twice as fast as one on each).  So
# each placement is measured on its own: "split", one process a CPU, each
# wakes the other across CPUs that idle in between (four switches a round
# trip, two of them from idle); "same", both on one CPU (two switches a
# round trip, task to task: the most switches a second, the worst case).
PP_SECS=${OFFCPU_PP_SECS:-3}
PP_REPS=${OFFCPU_PP_REPS:-8}
LAYOUTS=${OFFCPU_LAYOUTS:-split same}
# Seconds a profiler settles after its first sample before the pingpong
# is timed: its start-up (every process of the host read, their tables
# built) is not the steady cost a service pays; 0 measures it in (the
# method before 2026-11-29: -4.3% for cprof-bpf on the same CPU then).
PP_SETTLE=${OFFCPU_PP_SETTLE:-2}
MODES="none empty rseq cpu off bpftrace"

# What bcc's offcputime (libbpf-tools' and bcc's alike) does on every
# switch, host-wide, as bpftrace says it: a thread that blocks is stamped
# in a hash by tid with its kernel and user stacks; the thread switched in
# is looked up, and a wait of 1 ms or more is added to its stacks.
BT_OFFCPU='tracepoint:sched:sched_switch {
	if (args->prev_state & 0xff) {
		@start[args->prev_pid] = nsecs; @ks[args->prev_pid] = kstack; @us[args->prev_pid] = ustack;
	}
	$s = @start[args->next_pid];
	if ($s) {
		$d = nsecs - $s;
		if ($d >= 1000000) { @off[@ks[args->next_pid], @us[args->next_pid]] = sum($d); }
		delete(@start[args->next_pid]);
	}
}
END { clear(@start); clear(@ks); clear(@us); clear(@off); }'

# run_pingpong MODE LAYOUT REP: one pingpong run under MODE: none; empty
# (no profiler, an empty program on sched_switch: what any program there
# costs); cpu (cprof-bpf without --off-cpu); off (with it); bpftrace
# (BT_OFFCPU); stats (--off-cpu and the BPF statistics on).
declare -A TRIPS SW NS EMPTY RUNS
STATS_SEEN=0
run_pingpong() {
	local mode=$1 lay=$2 r=$3 c="" out b0="" b1="" e0="" e1="" r0="" r1="" seen
	out=$RAW/pp.$mode.$lay.$r
	case $mode in
	cpu) $NORMAL "$CPROF" --duration $((PP_SECS + 30)) -o "$RAW/pp.o.$mode.$r" 2>"$out.err" & c=$! ;;
	off | stats) $NORMAL "$CPROF" --off-cpu --duration $((PP_SECS + 30)) -o "$RAW/pp.o.$mode.$r" \
		2>"$out.err" & c=$! ;;
	empty) hold_start empty sched_switch ;;
	rseq) hold_start empty rseq_update ;;
	bpftrace) bpftrace -e "$BT_OFFCPU" >"$out.bt" 2>&1 & c=$! ;;
	esac
	if [ "$mode" = bpftrace ]; then
		for _ in $(seq 600); do grep -q Attaching "$out.bt" && break; sleep 0.1; done
		grep -q Attaching "$out.bt" || die "pingpong: bpftrace never attached: $(head -c 300 "$out.bt")"
	elif [ -n "$c" ]; then
		wait_sampling "$c" || die "pingpong $mode: cprof-bpf never sampled"
		sleep "$PP_SETTLE"
	fi
	[ "$mode" = stats ] && b0=$(prog_runs "$c" on_switch) e0=$(prog_runs "$HOLD_PID" empty)
	seen=$(sysctl -n kernel.bpf_stats_enabled)
	$NORMAL "$OFFCPU" pingpong "$PP_SECS" "$lay" >"$out"
	# someone else's, at the start or the end of a throughput run
	[ "$mode" != stats ] && [ "$seen$(sysctl -n kernel.bpf_stats_enabled)" != 00 ] &&
		STATS_SEEN=$((STATS_SEEN + 1))
	if [ "$mode" = stats ]; then
		b1=$(prog_runs "$c" on_switch) e1=$(prog_runs "$HOLD_PID" empty)
		read -r NS[$lay.$r] RUNS[$lay.$r] <<<"$(per_run "$b0" "$b1")"
		EMPTY[$lay.$r]=$(per_run "$e0" "$e1" | cut -d' ' -f1)
	fi
	case $mode in empty | rseq) hold_stop ;; esac
	if [ -n "$c" ]; then
		kill -INT "$c"
		wait "$c"
	fi
	TRIPS[$mode.$lay.$r]=$(awk 'NR == 2 { print $1 }' "$out")
	SW[$mode.$lay.$r]=$(awk 'NR == 2 { print $2 }' "$out")
	log "pingpong $lay $mode $r: ${TRIPS[$mode.$lay.$r]} trips/s, ${SW[$mode.$lay.$r]} switches/s" \
		"${NS[$lay.$r]:+(on_switch ${NS[$lay.$r]} ns a run, an empty program ${EMPTY[$lay.$r]})}"
}
LOAD_PP=$(cut -d' ' -f1 /proc/loadavg)
[ "${OFFCPU_STATS_OFF:-}" = 1 ] && [ "$OLD_STATS" = 1 ] &&
	log "kernel.bpf_stats_enabled 1 -> 0 for the throughput runs" &&
	sysctl -q -w kernel.bpf_stats_enabled=0 >/dev/null
# Each round runs every mode once, in an order turned by one each round,
# so that a drift of the host's speed falls on every mode alike; each
# mode's figure is the median over rounds of its run against the same
# round's run with no profiler.
for lay in $LAYOUTS; do
	for r in $(seq "$PP_REPS"); do
		set -- $MODES
		for _ in $(seq $(((r - 1) % 4))); do set -- "$@" "$1"; shift; done
		for m in "$@"; do run_pingpong "$m" "$lay" "$r"; done
	done
done
[ "$(sysctl -n kernel.bpf_stats_enabled)" = "$OLD_STATS" ] ||
	sysctl -q -w kernel.bpf_stats_enabled="$OLD_STATS" >/dev/null
LOAD_PP_END=$(cut -d' ' -f1 /proc/loadavg)
STATS_REPS=3
hold_start stats empty sched_switch
for lay in $LAYOUTS; do
	for r in $(seq "$STATS_REPS"); do run_pingpong stats "$lay" "$r"; done
done
hold_stop

# med MODE LAYOUT: the median round trips a second; rel MODE BASE LAYOUT:
# the median over rounds of MODE's against BASE's of the same round, as
# a change in percent.
med() {
	local v=() r
	for r in $(seq "$PP_REPS"); do v+=("${TRIPS[$1.$2.$r]:-}"); done
	median_fmt %.0f "${v[@]}"
}
rel() {
	local v=() r a b
	for r in $(seq "$PP_REPS"); do
		a=${TRIPS[$1.$3.$r]:-} b=${TRIPS[$2.$3.$r]:-}
		[ -n "$a" ] && [ -n "$b" ] && v+=("$(calc "100 * ($a - $b) / $b" '%.2f')")
	done
	median_fmt %+.1f "${v[@]}"
}
# ratio MODE BASE LAYOUT: MODE's cost (its drop against none) over BASE's,
# the median over rounds of the same round's two.
ratio() {
	local v=() r a b n
	for r in $(seq "$PP_REPS"); do
		a=${TRIPS[$1.$3.$r]:-} b=${TRIPS[$2.$3.$r]:-} n=${TRIPS[none.$3.$r]:-}
		[ -n "$a" ] && [ -n "$b" ] && [ -n "$n" ] &&
			awk -v b="$b" -v n="$n" 'BEGIN { exit !(n > b) }' &&
			v+=("$(calc "($n - $a) / ($n - $b)" '%.3f')")
	done
	[ ${#v[@]} -gt 0 ] && echo "$(median_fmt %.2f "${v[@]}")x"
}
# stat KIND LAYOUT: the median of NS, EMPTY or own (NS less EMPTY) ns a run
stat_of() {
	local v=() r n e
	for r in $(seq "$STATS_REPS"); do
		n=${NS[$2.$r]:-} e=${EMPTY[$2.$r]:-}
		case $1 in
		ns) v+=("$n") ;;
		empty) v+=("$e") ;;
		own) [ -n "$n" ] && [ -n "$e" ] && v+=("$(calc "$n - $e" '%.1f')") ;;
		rps) [ -n "${RUNS[$2.$r]:-}" ] && v+=("$(calc "${RUNS[$2.$r]} / $PP_SECS" '%.0f')") ;;
		esac
	done
	median_fmt %.0f "${v[@]}"
}
tc=$(median_fmt %.4f "${T_CPROF[@]}") tr=$(median_fmt %.4f "${T_REF[@]}")
to=$(median_fmt %.4f "${T_OWN[@]}")

# --- publish ------------------------------------------------------------------
S=$RAW/section.md
{
	echo "<!-- BEGIN offcpu -->"
	echo "## Off-CPU time: totals against offcputime, cost on a switch-heavy workload (issue 12)"
	echo
	echo "\`sudo sh bench/offcpu.sh\` ($REPS runs of ${SECS} s each; $BUILD_DESC; $NCPU CPUs, shared;"
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'); the host's load, 1 minute: $LOAD_TOTALS at the totals,"
	echo "$LOAD_PP to $LOAD_PP_END over the throughput runs)."
	echo
	echo "### Totals: share of the time \`offcpu sleep\` spent off the CPU"
	echo
	if [ "$REF_NAME" = bpftrace ]; then
		echo "bcc's \`offcputime-bpfcc\` cannot run on this host: ${BCC_WHY:-not installed}"
		echo "(it also needs kprobes, which this kernel is built without).  In its place, a"
		echo "bpftrace program doing what offcputime does, on the sched_switch tracepoint:"
		echo "a blocked thread's switch-out to its switch-in, waits of 1 ms or more."
		echo
	fi
	echo "| run | cprof-bpf --off-cpu | $REF_NAME | difference | the workload's own |"
	echo "|---|---|---|---|---|"
	for r in $(seq "$REPS"); do
		echo "| $r | $(calc "100 * ${T_CPROF[r]:-0}" %.1f)% | $(calc "100 * ${T_REF[r]:-0}" %.1f)% |" \
			"$(calc "100 * (${T_CPROF[r]:-0} - ${T_REF[r]:-0}) / (${T_REF[r]:-0} > 0 ? ${T_REF[r]:-0} : 1)" %+.1f)% |" \
			"$(calc "100 * ${T_OWN[r]:-0}" %.1f)% |"
	done
	echo "| median | $(calc "100 * $tc" %.1f)% | $(calc "100 * $tr" %.1f)% |" \
		"$(calc "100 * ($tc - $tr) / ($tr > 0 ? $tr : 1)" %+.1f)% | $(calc "100 * $to" %.1f)% |"
	echo
	echo "Each tool's off-CPU time of the process over its own window (cprof-bpf: the"
	echo "profile's duration; $REF_NAME: from its start to its end), so that their"
	echo "different start-up times do not count.  Target: within 5% of each other."
	echo
	echo "### Overhead: \`offcpu pingpong\`, round trips a second"
	echo
	echo "| placement | voluntary switches/s | none | an empty program on sched_switch | an empty program on rseq_update | cprof-bpf | cprof-bpf --off-cpu (min 1 ms) | offcputime's method (bpftrace) | **cprof-bpf vs none** | **--off-cpu vs none** | the empty sched_switch program vs none | **--off-cpu's cost / the empty program's** | the empty rseq_update program vs none | offcputime's method vs none |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
	for lay in $LAYOUTS; do
		sw=$(median_fmt %.0f $(for r in $(seq "$PP_REPS"); do echo "${SW[none.$lay.$r]:-}"; done))
		echo "| $lay | $sw | $(med none $lay) | $(med empty $lay) | $(med rseq $lay) | $(med cpu $lay) |" \
			"$(med off $lay) | $(med bpftrace $lay) | **$(rel cpu none $lay)%** | **$(rel off none $lay)%** |" \
			"$(rel empty none $lay)% | **$(ratio off empty $lay)** | $(rel rseq none $lay)% | $(rel bpftrace none $lay)% |"
	done
	echo
	echo "Medians of $PP_REPS rounds of ${PP_SECS} s runs, each profiler timed from ${PP_SETTLE} s after its first sample; a round runs each configuration once,"
	echo "in an order turned by one each round, and the changes are the medians of"
	echo "each round's against the same round's run with no profiler (or without"
	echo "--off-cpu).  split: one process on each CPU; same: both on one.  The"
	echo "host is shared with other developers' builds and tests, whose load"
	echo "moves single runs.  The BPF run-time statistics were off"
	if [ "$STATS_SEEN" -gt 0 ]; then
		echo "as far as this script goes, but someone else on the host had"
		echo "kernel.bpf_stats_enabled on at the start or end of $STATS_SEEN of the throughput runs: under"
		echo "cprof-bpf, those pay ~60 ns a program run more."
	elif [ "$OLD_STATS" = 1 ]; then
		echo "for these runs: kernel.bpf_stats_enabled, which someone else had left on,"
		echo "turned off for them (OFFCPU_STATS_OFF=1) and back on after."
	else
		echo "for these runs (kernel.bpf_stats_enabled 0 throughout)."
	fi
	echo
	echo "The sched_switch program's own cost, from $STATS_REPS more runs of each placement"
	echo "with the statistics on (which add their own clock reads to every run):"
	echo
	echo "| placement | on_switch ns a run | an empty program's | its own | runs a second |"
	echo "|---|---|---|---|---|"
	for lay in $LAYOUTS; do
		echo "| $lay | $(stat_of ns $lay) | $(stat_of empty $lay) | $(stat_of own $lay) | $(stat_of rps $lay) |"
	done
	echo
	echo "The pingpong's waits are all shorter than the minimum, so after its first"
	echo "wait from each place nothing is walked: a switch out of a thread that"
	echo "blocks stamps it in its task storage, and charges (counts) its last wait."
	echo "A switch in runs nothing of the program's own.  What is left is the"
	echo "kernel's dispatch of any program on the tracepoint (the empty program's"
	echo "column) and one task-storage lookup a switch.  Target: --off-cpu costs"
	echo "< 3% of the throughput."
	echo
	echo "cprof-bpf without --off-cpu runs nothing on a switch: a new program's"
	echo "libraries go into its entry by a timer armed at its exec (bpf/ldstate.bpf.h),"
	echo "where they went at the rseq_update tracepoint before, whose dispatch alone"
	echo "is the empty rseq_update program's column.  Targets (issue 34): cprof-bpf"
	echo "within 1% of none, --off-cpu's cost at most 1.5x the empty program's (each"
	echo "a median over rounds of the round's change against none)."
	e=$(rel empty none same)
	if [ -n "$e" ] && awk -v e="$e" 'BEGIN { exit !(e <= -3) }'; then
		echo "With both processes on one CPU the empty program on sched_switch alone"
		echo "costs ${e}%: the kernel's dispatch of any program there is past the"
		echo "target on this host, before the program does anything."
	fi
	echo
	echo "Per run (round trips/s, rounds in order):"
	echo
	for lay in $LAYOUTS; do
		for m in $MODES; do
			printf '%s, %s: ' "$lay" "$m"
			for r in $(seq "$PP_REPS"); do printf '%s ' "${TRIPS[$m.$lay.$r]:-}"; done
			echo
			echo
		done
	done
	echo "<!-- END offcpu -->"
} >"$S"
publish_section offcpu "$S"
