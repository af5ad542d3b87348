#!/bin/bash
# bench/scale.sh: how the cost of profiling grows, and what it costs the
# profiled programs (DESIGN.md §8).
#
#   sudo make bench                        # after run.sh and unwind.sh: ~6 minutes
#   sudo SCALE_SECS=3 SCALE_HI_SECS=2 SCALE_TP_SECS=2 SCALE_TP_REPS=1 \
#        SCALE_MANY=50 sh bench/scale.sh   # quick check of the script
#   sudo BENCH_CPROF=/path/to/cprof-bpf sh bench/scale.sh   # another build
#
# Whole-host profiling, every tool on the same freshly started workload:
#
# 1. Rate: 10 x `busy N 20` (frame pointers, 20 frames deep) profiled at
#    19, 99 and 999 Hz by cprof-bpf, bpftrace (@[ustack, kstack]),
#    perf record -g and perf record --call-graph dwarf (then perf script).
# 2. Processes: the same at 99 Hz with SCALE_MANY (200) light busy
#    processes instead of 10 (cprof-bpf, bpftrace, perf record -g).
#    Per run: BPF ns/sample (run_time_ns / run_cnt of the tool's own
#    perf_event programs, kernel.bpf_stats_enabled), agent CPU s and peak
#    RSS (GNU time), output size, and the time from the end of sampling to
#    the output written.
# 3. Overhead on the profiled workload: NCPU x bench/throughput.c (fixed
#    units of CPU work, -O2 without frame pointers, 12 frames deep), alone
#    and with each profiler sampling the whole host at 99 Hz, SCALE_TP_REPS
#    times, every profiled trial between two trials without a profiler;
#    slowdown = 1 - units/s / mean of the two neighbouring baselines.
#
# Results go to bench/RESULTS.md between the "scale" markers (raw logs in
# a directory under /tmp, printed at the end).
#
# Environment: SCALE_SECS (6) s of sampling at 19 and 99 Hz, SCALE_HI_SECS
# (3) at 999 Hz; SCALE_MANY (200) processes; SCALE_TP_SECS (5) s a
# throughput trial, SCALE_TP_REPS (3); SCALE_FINISH_MAX (30) s a tool may
# take to write its output before it is stopped (then ">30"), and
# SCALE_SCRIPT_MAX (30) for perf script; BENCH_RESULTS: write elsewhere.

if [ -z "${BASH_VERSION:-}" ]; then exec bash "$0" "$@"; fi
. "$(dirname "$0")/env.sh"
BUSY=$ROOT/build/workloads/busy

SECS=${SCALE_SECS:-6}
HI_SECS=${SCALE_HI_SECS:-3}
MANY=${SCALE_MANY:-200}
FEW=10
TP_SECS=${SCALE_TP_SECS:-5}
TP_REPS=${SCALE_TP_REPS:-3}
FINISH_MAX=${SCALE_FINISH_MAX:-30}
SCRIPT_MAX=${SCALE_SCRIPT_MAX:-30}
RATES="19 99 999"
NCPU=$(nproc)
BPF_PROG_TYPE_PERF_EVENT=7
TIMEFMT='%e %U %S %M'


bench_require "$CPROF" "$BUSY" -- bpftrace perf bpftool gcc /usr/bin/time pgrep

# Shared measuring helpers (SCHED_FIFO polling, BPF program counters,
# CPU used by others, bounded waits) and the results file.
. "$ROOT/bench/lib.sh"
bench_init cprof-bench-scale
TP=$RAW/throughput
gcc -O2 -o "$TP" "$ROOT/bench/throughput.c" || die "cannot build bench/throughput.c"
log "raw logs in $RAW"

# ---------------------------------------------------------------- helpers

# start_busy N SECS: N fresh busy processes, 20 frames deep, that outlive
# the tool (and end by themselves at worst).
start_busy() {
	local life=$(($2 + FINISH_MAX + SCRIPT_MAX + 60))
	WL_PIDS=""
	for _ in $(seq "$1"); do
		$NORMAL "$BUSY" "$life" 20 &
		WL_PIDS="$WL_PIDS $!"
	done
	sleep 1
}
# The workload is frozen (SIGSTOP) when sampling ends: the tool then writes
# its output without competing with $MANY CPU-bound processes (bench/run.sh
# measures that case), and the processes are still there to be read.
freeze_workload() {
	# shellcheck disable=SC2086
	[ -n "$WL_PIDS" ] && kill -STOP $WL_PIDS 2>/dev/null
}

OLD_STATS=$(sysctl -n kernel.bpf_stats_enabled)
TOOL_PIDS=""
cleanup() {
	# shellcheck disable=SC2086
	stop_tools $TOOL_PIDS
	stop_workload
	[ -n "${TP_PIDS:-}" ] && kill $TP_PIDS 2>/dev/null
	sysctl -q -w kernel.bpf_stats_enabled="$OLD_STATS" >/dev/null
}
trap cleanup EXIT
trap 'exit 130' INT TERM

declare -A R
dir_bytes() { du -sb "$1" 2>/dev/null | cut -f1; }

# --------------------------------------------------------- 1, 2: the runs
#
# Fields in R["TAG:..."]: cnt ns (BPF), cpu rss (GNU time), bytes (output),
# fin (end of sampling to output written), samples, other, foreign; perf
# also scpu srss sfin sbytes (perf script).

# run_cprof TAG HZ SECS NPROCS
run_cprof() {
	local tag=$1 hz=$2 secs=$3 out=$RAW/$1 tpid cpid rc u s fds fr t_exit fself
	mkdir -p "$out"
	start_busy "$4" "$secs"
	$NORMAL /usr/bin/time -f "$TIMEFMT" -o "$out/time" \
		"$CPROF" --duration "$secs" -F "$hz" --output-dir "$out/profiles" \
		--json-summary "$out/summary.json" >"$out/stdout" 2>"$out/stderr" &
	tpid=$!
	cpid=$(child_of "$tpid") || { log "$tag: cprof-bpf did not start"; wait "$tpid"; stop_workload; return 1; }
	TOOL_PIDS=$cpid
	if ! wait_first_sample "$cpid"; then
		log "$tag: no samples"; tail -n5 "$out/stderr" >&2
		wait_bounded "$tpid" 10 "$cpid"; TOOL_PIDS=""; stop_workload; return 1
	fi
	fds=$FDS
	load_mark $WL_PIDS "$cpid"
	sleep_until "$(near_end "$T_FIRST" "$secs")"
	load_other $WL_PIDS "$cpid"
	prog_stats "$cpid" "$fds"
	foreign "$P_IDS"
	poll_reset
	# to the end of its sampling (at most 3 s late), then to its exit
	poll_until "$cpid" "$fds" "$(calc "$T_FIRST + $secs + 3" %.6f)" 100000
	freeze_workload
	poll_until "$cpid" "$fds" "$(calc "$EPOCHREALTIME + $FINISH_MAX" %.6f)"
	wait_bounded "$tpid" "$FINISH_MAX" "$cpid"; rc=$?
	t_exit=$(now) TOOL_PIDS=""
	stop_workload
	[ "$rc" -eq 0 ] || { log "$tag: cprof-bpf failed ($rc)"; tail -n5 "$out/stderr" >&2; return 1; }
	R[$tag:other]=$OTHER_PCT R[$tag:foreign]=$FOREIGN_NOW
	R[$tag:cnt]=$P_CNT_LAST R[$tag:ns]=$(calc "$P_RT_LAST / ($P_CNT_LAST > 0 ? $P_CNT_LAST : 1)" %.0f)
	read -r _ u s R[$tag:rss] < <(read_time "$out/time")
	R[$tag:cpu]=$(calc "$u + $s" %.2f)
	R[$tag:bytes]=$(dir_bytes "$out/profiles")
	# end of sampling (its count stopped moving) to exit, or its own
	# --json-summary figure, whichever is larger (see bench/run.sh)
	fr=$(calc "$t_exit - ${T_FREEZE:-$t_exit}")
	fself=$(jget "$out/summary.json" output.last_write_s)
	R[$tag:fin]=$(calc "$fr > ${fself:-0} ? $fr : ${fself:-0}")
	[ -n "$FREEZE_SEEN" ] || [ "${R[$tag:fin]}" != "$fr" ] || R[$tag:fin]=">${R[$tag:fin]}"
	R[$tag:samples]=$(jget "$out/summary.json" samples.written)
	R[$tag:files]=$(jget "$out/summary.json" output.profiles)
	R[$tag:procs]=$(jget "$out/summary.json" processes)
	log "$tag: ${R[$tag:cnt]} runs, ${R[$tag:ns]} ns/sample; cpu ${R[$tag:cpu]} s, rss ${R[$tag:rss]} KiB;" \
		"${R[$tag:bytes]} bytes in ${R[$tag:files]} files; finish ${R[$tag:fin]} s; others used $OTHER_PCT% CPU"
}

# run_bpftrace TAG HZ SECS NPROCS
run_bpftrace() {
	local tag=$1 hz=$2 secs=$3 out=$RAW/$1 tpid bpid t_int t_exit rc u s fds
	mkdir -p "$out"
	start_busy "$4" "$secs"
	$NORMAL /usr/bin/time -f "$TIMEFMT" -o "$out/time" \
		bpftrace -e "profile:hz:$hz { @[ustack, kstack] = count(); }" >"$out/stdout" 2>"$out/stderr" &
	tpid=$!
	bpid=$(child_of "$tpid") || { log "$tag: bpftrace did not start"; wait "$tpid"; stop_workload; return 1; }
	TOOL_PIDS=$bpid
	if ! wait_first_sample "$bpid"; then
		log "$tag: no samples"; tail -n5 "$out/stderr" >&2
		kill -INT "$bpid"; wait_bounded "$tpid" 10 "$bpid"; TOOL_PIDS=""; stop_workload; return 1
	fi
	fds=$FDS
	load_mark $WL_PIDS "$bpid"
	sleep_until "$(near_end "$T_FIRST" "$secs")"
	load_other $WL_PIDS "$bpid"
	prog_stats "$bpid" "$fds"
	foreign "$P_IDS"
	poll_reset
	poll_until "$bpid" "$fds" "$(calc "$T_FIRST + $secs" %.6f)"
	t_int=$(now)
	kill -INT "$bpid"
	freeze_workload
	stop_bpftrace "$bpid" "$fds" sent
	wait_bounded "$tpid" "$FINISH_MAX" "$bpid"; rc=$?
	t_exit=$(now) TOOL_PIDS=""
	stop_workload
	if [ -n "$TIMED_OUT" ]; then
		log "$tag: bpftrace still printing after $FINISH_MAX s: stopped"
	elif [ "$rc" -ne 0 ]; then
		log "$tag: bpftrace failed ($rc)"; tail -n5 "$out/stderr" >&2; return 1
	fi
	R[$tag:other]=$OTHER_PCT R[$tag:foreign]=$FOREIGN_NOW
	R[$tag:cnt]=$P_CNT_LAST R[$tag:ns]=$(calc "$P_RT_LAST / ($P_CNT_LAST > 0 ? $P_CNT_LAST : 1)" %.0f)
	read -r _ u s R[$tag:rss] < <(read_time "$out/time")
	R[$tag:cpu]=$(calc "$u + $s" %.2f)
	R[$tag:bytes]=$(stat -c %s "$out/stdout")
	R[$tag:fin]=$(calc "$t_exit - $t_int")
	[ -n "$TIMED_OUT" ] && R[$tag:fin]=">$FINISH_MAX" R[$tag:bytes]=">${R[$tag:bytes]}"
	R[$tag:samples]=$(awk -F']: ' 'NF > 1 { n += $2 } END { print n + 0 }' "$out/stdout")
	log "$tag: ${R[$tag:cnt]} runs, ${R[$tag:ns]} ns/sample; cpu ${R[$tag:cpu]} s, rss ${R[$tag:rss]} KiB;" \
		"finish ${R[$tag:fin]} s; ${R[$tag:samples]} samples printed; others used $OTHER_PCT% CPU"
}

# run_perf TAG HZ SECS NPROCS MODE (fp: -g, dwarf: --call-graph dwarf)
run_perf() {
	local tag=$1 hz=$2 secs=$3 mode=$5 out=$RAW/$1 t_stop t_rec t_done tpid rpid rc src u s cg=-g
	mkdir -p "$out"
	[ "$mode" = dwarf ] && cg="--call-graph dwarf"
	start_busy "$4" "$secs"
	# shellcheck disable=SC2086
	$NORMAL /usr/bin/time -f "$TIMEFMT" -o "$out/time.record" \
		perf record -a $cg -F "$hz" -o "$out/perf.data" -- \
		sh -c "date +%s.%N >'$out/start'; sleep $secs; date +%s.%N >'$out/stop'" \
		>"$out/record.stdout" 2>"$out/record.stderr" &
	tpid=$!
	rpid=$(child_of "$tpid") || { log "$tag: perf did not start"; wait "$tpid"; stop_workload; return 1; }
	TOOL_PIDS=$rpid
	for _ in $(seq 3000); do [ -s "$out/start" ] && break; sleep 0.01; done
	load_mark $WL_PIDS "$rpid"
	sleep_until "$(near_end "$(cat "$out/start" 2>/dev/null || now)" "$secs")"
	load_other $WL_PIDS "$rpid"
	foreign ""
	while [ ! -s "$out/stop" ] && kill -0 "$rpid" 2>/dev/null; do sleep 0.01; done
	freeze_workload
	wait_bounded "$tpid" "$FINISH_MAX" "$rpid"; rc=$?
	t_rec=$(now) TOOL_PIDS=""
	[ "$rc" -eq 0 ] && [ -s "$out/stop" ] || { log "$tag: perf record failed ($rc)"; tail -n5 "$out/record.stderr" >&2; stop_workload; return 1; }
	$NORMAL /usr/bin/time -f "$TIMEFMT" -o "$out/time.script" \
		perf script -i "$out/perf.data" >"$out/script.out" 2>"$out/script.stderr" &
	tpid=$!
	TOOL_PIDS=$(child_of "$tpid")
	wait_bounded "$tpid" "$SCRIPT_MAX" "$TOOL_PIDS"; src=$?
	t_done=$(now) TOOL_PIDS=""
	stop_workload
	R[$tag:other]=$OTHER_PCT R[$tag:foreign]=$FOREIGN_NOW
	t_stop=$(cat "$out/stop")
	read -r _ u s R[$tag:rss] < <(read_time "$out/time.record")
	R[$tag:cpu]=$(calc "$u + $s" %.2f)
	R[$tag:bytes]=$(stat -c %s "$out/perf.data")
	R[$tag:fin]=$(calc "$t_rec - $t_stop")
	R[$tag:samples]=$(grep -c '^[^[:space:]]' "$out/script.out")
	if [ -n "$TIMED_OUT" ]; then
		R[$tag:sfin]=">$SCRIPT_MAX" R[$tag:scpu]="" R[$tag:srss]="" R[$tag:samples]=">${R[$tag:samples]}"
		R[$tag:sbytes]=">$(stat -c %s "$out/script.out")"
	elif [ "$src" -eq 0 ]; then
		read -r _ u s R[$tag:srss] < <(read_time "$out/time.script")
		R[$tag:scpu]=$(calc "$u + $s" %.2f)
		R[$tag:sfin]=$(calc "$t_done - $t_rec")
		R[$tag:sbytes]=$(stat -c %s "$out/script.out")
	fi
	log "$tag: record cpu ${R[$tag:cpu]} s, rss ${R[$tag:rss]} KiB, ${R[$tag:bytes]} bytes, finish ${R[$tag:fin]} s;" \
		"script ${R[$tag:sfin]:-?} s, cpu ${R[$tag:scpu]:-?} s; ${R[$tag:samples]} samples; others used $OTHER_PCT% CPU"
}

# --------------------------------------------------- 3: throughput trials

# task_ns PID: CPU time of all its threads so far, ns (schedstat)
task_ns() {
	local f v t=0
	for f in /proc/"$1"/task/*/schedstat; do
		read -r v _ 2>/dev/null <"$f" && t=$((t + v))
	done
	echo "$t"
}

# trial TAG TOOL: NCPU throughput processes for TP_SECS while TOOL (none,
# cprof, bpftrace, perf-fp, perf-dwarf) samples the whole host at 99 Hz.
# Sets R[TAG:rate] (units/s, all processes) and R[TAG:other].
TP_PIDS=""
trial() {
	local tag=$1 tool=$2 out=$RAW/tp/$1 tpid="" p n=0 w=0 c=0 units wall cpu a0 r0 fds=""
	mkdir -p "$out"
	case $tool in
	cprof)
		$NORMAL "$CPROF" --duration $((TP_SECS + 600)) -F 99 --output-dir "$out/profiles" \
			>"$out/tool.stdout" 2>"$out/tool.stderr" & ;;
	bpftrace)
		$NORMAL bpftrace -e 'profile:hz:99 { @[ustack, kstack] = count(); }' \
			>"$out/tool.stdout" 2>"$out/tool.stderr" & ;;
	perf-fp)
		$NORMAL perf record -a -g -F 99 -o "$out/perf.data" >"$out/tool.stdout" 2>"$out/tool.stderr" & ;;
	perf-dwarf)
		$NORMAL perf record -a --call-graph dwarf -F 99 -o "$out/perf.data" \
			>"$out/tool.stdout" 2>"$out/tool.stderr" & ;;
	esac
	if [ "$tool" != none ]; then
		tpid=$! TOOL_PIDS=$tpid
		case $tool in
		perf-*) sleep 1 ;;	# no BPF program to watch: give it a second
		*) wait_first_sample "$tpid" || { log "$tag: $tool did not start"; kill -KILL "$tpid"; wait "$tpid"; TOOL_PIDS=""; return 1; }
		   fds=$FDS ;;
		esac
		sleep 0.2
	fi
	TP_PIDS=""
	for _ in $(seq "$NCPU"); do
		$NORMAL "$TP" "$TP_SECS" 12 >"$out/tp.$n" &
		TP_PIDS="$TP_PIDS $!" n=$((n + 1))
	done
	load_mark $TP_PIDS $tpid
	[ -n "$tpid" ] && a0=$(task_ns "$tpid")
	if [ -n "$fds" ]; then prog_stats "$tpid" "$fds"; r0=$P_RT; fi
	sleep "$(calc "$TP_SECS - 0.2")"
	load_other $TP_PIDS $tpid
	# the profiler's CPU over the window, % of all CPUs
	[ -n "$tpid" ] && R[$tag:agent]=$(calc "100 * ($(task_ns "$tpid") - $a0) / ($NCPU * 1e9 * ($EPOCHREALTIME - $L_T))" %.2f)
	# and its BPF program's time (in the sampled tasks' time), likewise
	if [ -n "$fds" ]; then
		prog_stats "$tpid" "$fds"
		R[$tag:bpf]=$(calc "100 * ($P_RT - $r0) / ($NCPU * 1e9 * ($EPOCHREALTIME - $L_T))" %.3f)
	fi
	for p in $TP_PIDS; do wait "$p"; done
	TP_PIDS=""
	if [ -n "$tpid" ]; then
		# bpftrace would print a whole host's stacks (minutes on a busy
		# host): its output is not wanted here, so it is killed.
		if [ "$tool" = bpftrace ]; then kill -KILL "$tpid"; else kill -INT "$tpid"; fi
		wait_bounded "$tpid" "$FINISH_MAX"
		TOOL_PIDS=""
	fi
	n=0
	for p in "$out"/tp.*; do
		read -r units wall cpu <"$p" || continue
		w=$(calc "$w + $units / $wall" %.1f) c=$(calc "$c + $cpu" %.6f) n=$((n + units))
	done
	R[$tag:rate]=$w R[$tag:crate]=$(calc "$n / $c" %.1f) R[$tag:other]=$OTHER_PCT
	log "$tag: $w units/s, ${R[$tag:crate]} units/CPU-s; agent ${R[$tag:agent]:-0}%, BPF ${R[$tag:bpf]:-0}% of the CPUs;" \
		"others used $OTHER_PCT% CPU"
}

# ------------------------------------------------------------------- run

FOREIGN=$(bpftool prog show 2>/dev/null | grep -c ' perf_event ')
[ "$FOREIGN" -gt 0 ] && log "warning: $FOREIGN perf_event BPF programs already loaded"
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
T_START=$(now)
sysctl -q -w kernel.bpf_stats_enabled=1 >/dev/null || die "cannot enable kernel.bpf_stats_enabled"

for hz in $RATES; do
	secs=$SECS; [ "$hz" -ge 500 ] && secs=$HI_SECS
	log "1: $hz Hz for $secs s, $FEW processes"
	run_cprof "cprof-$hz-$FEW" "$hz" "$secs" $FEW
	run_bpftrace "bpftrace-$hz-$FEW" "$hz" "$secs" $FEW
	run_perf "perf-fp-$hz-$FEW" "$hz" "$secs" $FEW fp
	run_perf "perf-dwarf-$hz-$FEW" "$hz" "$secs" $FEW dwarf
done
log "2: 99 Hz for $SECS s, $MANY processes"
run_cprof "cprof-99-$MANY" 99 "$SECS" "$MANY"
run_bpftrace "bpftrace-99-$MANY" 99 "$SECS" "$MANY"
run_perf "perf-fp-99-$MANY" 99 "$SECS" "$MANY" fp

log "3: throughput, $TP_REPS x (none, cprof, none, bpftrace, none, perf -g, none, perf dwarf), $TP_SECS s each"
TP_TOOLS="cprof bpftrace perf-fp perf-dwarf"
for r in $(seq 1 "$TP_REPS"); do
	i=0
	trial "tp-base-$r-$i" none
	for t in $TP_TOOLS; do
		trial "tp-$t-$r" "$t"
		i=$((i + 1))
		trial "tp-base-$r-$i" none
	done
done

sysctl -q -w kernel.bpf_stats_enabled="$OLD_STATS" >/dev/null
T_TOTAL=$(calc "$EPOCHREALTIME - $T_START" %.0f)

# ---------------------------------------------------------------- report

na() { echo "${1:-n/a}"; }

# Slowdown of each profiled trial against the mean of its neighbours, in
# units per wall second (slow) and per CPU second of the workload (cslow);
# est = cslow + the profiler's share of the CPUs.  Noise floor: the
# change between consecutive baselines.
TP_NOISE="" TP_CNOISE=""
for r in $(seq 1 "$TP_REPS"); do
	i=0
	for t in $TP_TOOLS; do
		for m in rate crate; do
			b0=$(g "tp-base-$r-$i:$m") b1=$(g "tp-base-$r-$((i + 1)):$m") x=$(g "tp-$t-$r:$m")
			[ -n "$b0" ] && [ -n "$b1" ] || continue
			[ -n "$x" ] && R[tp-$t-$r:${m/rate/slow}]=$(calc "100 * (1 - $x / (($b0 + $b1) / 2))" %.2f)
			d=$(calc "100 * ($b1 - $b0) / $b0" %.2f); d=${d#-}
			if [ $m = rate ]; then TP_NOISE="$TP_NOISE $d"; else TP_CNOISE="$TP_CNOISE $d"; fi
		done
		[ -n "$(g "tp-$t-$r:cslow")" ] && [ -n "$(g "tp-$t-$r:agent")" ] &&
			R[tp-$t-$r:est]=$(calc "$(g "tp-$t-$r:cslow") + $(g "tp-$t-$r:agent")" %.2f)
		[ -n "$(g "tp-$t-$r:agent")" ] &&
			R[tp-$t-$r:acct]=$(calc "$(g "tp-$t-$r:agent") + ${R[tp-$t-$r:bpf]:-0}" %.2f)
		i=$((i + 1))
	done
done
# stats VALUES...: "median (min – max)"
stats() {
	printf '%s\n' "$@" | grep . | sort -g | awk '{ v[NR] = $1 }
		END { if (!NR) { print "n/a"; exit }
		      m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		      printf "%.2f (%.2f – %.2f)", m, v[1], v[NR] }'
}
stats0() { stats "$@" | sed 's/\.[0-9]*//g'; }	# the same, whole numbers
median() { median_fmt %.2f "$@"; }
tpf() { local r; for r in $(seq 1 "$TP_REPS"); do g "tp-$1-$r:$2"; echo; done; }	# tpf TOOL FIELD
base_rates() { local k; for k in $(printf '%s\n' "${!R[@]}" | grep "^tp-base-.*:$1\$"); do echo "${R[$k]}"; done; }
# shellcheck disable=SC2046
CPROF_EST=$(median $(tpf cprof est))
# shellcheck disable=SC2046
CPROF_SLOW=$(median $(tpf cprof slow))
# shellcheck disable=SC2046
CPROF_ACCT=$(median $(tpf cprof acct))
# shellcheck disable=SC2046
TP_CFLOOR=$(median $TP_CNOISE)
# shellcheck disable=SC2046
TP_FLOOR=$(median $TP_NOISE)
lt1() { [ -n "$1" ] || { echo n/a; return; }; [ "$(calc "$1 < 1" %d)" = 1 ] && echo PASS || echo FAIL; }
# verdict VALUE FLOOR: PASS/FAIL against 1%, or inconclusive when the
# noise between baselines (FLOOR, %) is itself 1% or more
verdict() {
	[ -n "$1" ] || { echo n/a; return; }
	if [ -n "$2" ] && [ "$(calc "$2 >= 1" %d)" = 1 ]; then echo "inconclusive ($(lt1 "$1") on this noise)"; else lt1 "$1"; fi
}

noisy_runs '^tp-'
TP_OTHERS=$(for k in $(printf '%s\n' "${!R[@]}" | grep '^tp-.*:other$'); do echo "${R[$k]}"; done | sort -n | awk '{ v[NR] = $1 } END { if (NR) printf "%d–%d", v[1], v[NR] }')
TP_NOISY=""
for k in $(printf '%s\n' "${!R[@]}" | grep ':rate$'); do
	k=${k%:rate}
	[ "${R[$k:other]:-0}" -gt 10 ] && TP_NOISY=1
done

# run_row TOOL-LABEL TAG [perf]: one row of the per-run table
run_row() {
	local t=$2
	printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$1" \
		"$(na "$(g "$t:cnt")")" "$(na "$(g "$t:ns")")" "$(na "$(g "$t:samples")")" \
		"$(na "$(g "$t:cpu")")" "$(kmib "$(g "$t:rss")")" "$(mib "$(g "$t:bytes")" %.2f)" \
		"$(na "$(g "$t:fin")")" "${3:-}"
}
perf_script_note() {
	local t=$1
	[ -n "$(g "$t:sfin")" ] || { echo "perf script failed"; return; }
	echo "perf script: $(g "$t:sfin") s, $(na "$(g "$t:scpu")") s CPU, $(kmib "$(g "$t:srss")") MiB, $(mib "$(g "$t:sbytes")" %.2f) MiB text"
}
rate_rows() {
	local hz secs
	for hz in $RATES; do
		secs=$SECS; [ "$hz" -ge 500 ] && secs=$HI_SECS
		run_row "$hz Hz, cprof-bpf" "cprof-$hz-$FEW" "$(g "cprof-$hz-$FEW:files") files"
		run_row "$hz Hz, bpftrace" "bpftrace-$hz-$FEW" \
			"BPF $(ratio "$(g "cprof-$hz-$FEW:ns")" "$(g "bpftrace-$hz-$FEW:ns")")×, CPU $(ratio "$(g "cprof-$hz-$FEW:cpu")" "$(g "bpftrace-$hz-$FEW:cpu")")×, RSS $(ratio "$(g "cprof-$hz-$FEW:rss")" "$(g "bpftrace-$hz-$FEW:rss")")× (cprof/bpftrace)"
		run_row "$hz Hz, perf record -g" "perf-fp-$hz-$FEW" "$(perf_script_note "perf-fp-$hz-$FEW")"
		run_row "$hz Hz, perf record --call-graph dwarf" "perf-dwarf-$hz-$FEW" "$(perf_script_note "perf-dwarf-$hz-$FEW")"
	done
}
proc_rows() {
	local t n
	for t in cprof bpftrace perf-fp; do
		for n in $FEW $MANY; do
			case $t in
			cprof) l="cprof-bpf" ;; bpftrace) l=bpftrace ;; *) l="perf record -g" ;;
			esac
			if [ "$t" = perf-fp ]; then
				run_row "$n processes, $l" "$t-99-$n" "$(perf_script_note "$t-99-$n")"
			elif [ "$t" = cprof ]; then
				run_row "$n processes, $l" "$t-99-$n" "$(g "$t-99-$n:files") files of $(g "$t-99-$n:procs") processes"
			else
				run_row "$n processes, $l" "$t-99-$n"
			fi
		done
		printf '| *%s: %s → %s processes* | | ×%s | | ×%s | ×%s | ×%s | ×%s | |\n' "$l" $FEW "$MANY" \
			"$(ratio "$(g "$t-99-$MANY:ns")" "$(g "$t-99-$FEW:ns")")" \
			"$(ratio "$(g "$t-99-$MANY:cpu")" "$(g "$t-99-$FEW:cpu")")" \
			"$(ratio "$(g "$t-99-$MANY:rss")" "$(g "$t-99-$FEW:rss")")" \
			"$(ratio "$(g "$t-99-$MANY:bytes")" "$(g "$t-99-$FEW:bytes")")" \
			"$(ratio "$(g "$t-99-$MANY:fin")" "$(g "$t-99-$FEW:fin")")"
	done
}
tp_rows() {
	local t l
	# shellcheck disable=SC2046
	printf '| none | %s | | %s | | | | | |\n' "$(stats0 $(base_rates rate))" "$(stats0 $(base_rates crate))"
	for t in $TP_TOOLS; do
		case $t in
		cprof) l=cprof-bpf ;; bpftrace) l=bpftrace ;; perf-fp) l="perf record -g" ;; *) l="perf record --call-graph dwarf" ;;
		esac
		# shellcheck disable=SC2046
		printf '| %s | %s | %s | %s | %s | %s | %s | **%s** | %s |\n' "$l" \
			"$(stats0 $(tpf "$t" rate))" "$(stats $(tpf "$t" slow))" \
			"$(stats0 $(tpf "$t" crate))" "$(stats $(tpf "$t" cslow))" \
			"$(stats $(tpf "$t" agent))" "$(stats $(tpf "$t" bpf))" \
			"$(stats $(tpf "$t" est))" "$(stats $(tpf "$t" acct))"
	done
}

CPU_MODEL=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)
OS=$(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME")

section() {
	cat <<EOF
<!-- BEGIN scale -->
## Scaling: rate, processes, and the cost to the profiled workload

Generated by \`bench/scale.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC') in $T_TOTAL s; the next run
replaces everything between the "scale" markers.  Raw logs: \`$RAW\`.

- Host: ${CPU_MODEL:-?}, $NCPU CPUs; kernel $(uname -r); ${OS:-?}
- cprof-bpf $("$CPROF" --version 2>/dev/null | awk '{ print $NF }') ($BUILD_DESC); $(bpftrace --version 2>/dev/null); $(perf --version 2>/dev/null)
- Load average before the run: $LOAD_BEFORE.  CPU used by processes other
  than the workload and the tool during each run, % of all CPUs (and
  perf_event BPF programs of others loaded meanwhile): $OTHERS;
  throughput trials: ${TP_OTHERS:-n/a}%.
$(if [ -n "$NOISY$TP_NOISY" ]; then printf '  **The host was not quiet (over 10%% used by others, or foreign BPF\n  programs) during%s%s: those figures are noisy.**' "$NOISY" "${TP_NOISY:+ and throughput trials}"; else echo "  The host was quiet throughout."; fi)

Every run profiles the whole host (as \`make run\` does) with a workload
started afresh 1 s before it, frozen (SIGSTOP) when sampling ends so that
the tool writes its output without competing with up to $MANY CPU-bound
processes (bench/run.sh measures finishing on a busy host), and killed
after the output is written; one run per tool and setting, so single figures (BPF ns/sample
above all) carry run-to-run noise: bench/run.sh and bench/unwind.sh have
repeated measurements.

\`\`\`sh
/usr/bin/time -f '%e %U %S %M' cprof-bpf --duration S -F HZ --output-dir DIR
/usr/bin/time -f '%e %U %S %M' bpftrace -e 'profile:hz:HZ { @[ustack, kstack] = count(); }' > FILE   # SIGINT after S
/usr/bin/time -f '%e %U %S %M' perf record -a -g -F HZ -o perf.data -- sleep S;  perf script -i perf.data > FILE
/usr/bin/time -f '%e %U %S %M' perf record -a --call-graph dwarf -F HZ -o perf.data -- sleep S;  perf script ...
\`\`\`

Columns: **BPF runs** and **ns/sample**: run_cnt and run_time_ns / run_cnt
of the tool's own perf_event programs (kernel.bpf_stats_enabled, from
/proc/PID/fdinfo), all CPUs, the whole run (bpftrace: until it has
unloaded its program after SIGINT).  **samples**: in its output.
**CPU s**, **peak RSS**: the agent process (GNU time; bpftrace's CPU includes
compiling its program; perf: \`perf record\` only, \`perf script\` in the notes).
**output**: cprof-bpf's files, bpftrace's printed map, perf.data.
**finish**: end of sampling to the output written: cprof-bpf, its count
frozen → exit or its own summary figure, the larger (as in bench/run.sh);
bpftrace, SIGINT → exit; perf, sleep end → \`perf record\` exit (then
\`perf script\`, in the notes, is what makes it readable).  ">N": stopped
after N s.

### 1. Sampling rate: $FEW × \`busy N 20\`, ${SECS} s at 19 and 99 Hz, ${HI_SECS} s at 999 Hz

| run | BPF runs | ns/sample | samples | CPU s | peak RSS MiB | output MiB | finish s | notes |
|---|---:|---:|---:|---:|---:|---:|---:|---|
$(rate_rows)

cprof-bpf from 19 to 999 Hz: CPU ×$(ratio "$(g cprof-999-$FEW:cpu)" "$(g cprof-19-$FEW:cpu)") (for ×$(ratio "$(g cprof-999-$FEW:cnt)" "$(g cprof-19-$FEW:cnt)") samples), RSS ×$(ratio "$(g cprof-999-$FEW:rss)" "$(g cprof-19-$FEW:rss)"),
output ×$(ratio "$(g cprof-999-$FEW:bytes)" "$(g cprof-19-$FEW:bytes)"), BPF ns/sample ×$(ratio "$(g cprof-999-$FEW:ns)" "$(g cprof-19-$FEW:ns)") (cost per sample falls as the
rate rises: warmer caches).  Note the sampling time differs at 999 Hz.

### 2. Processes: $FEW vs $MANY × \`busy N 20\` at 99 Hz, ${SECS} s

The $FEW-process rows are the 99 Hz rows above.  $MANY light processes share
$NCPU CPUs (each gets about $(calc "100 * $NCPU / $MANY" %.1f)% of one), so about as many
samples spread over $MANY processes; whatever else ran on the host is
profiled as well (cprof-bpf's processes column).

| run | BPF runs | ns/sample | samples | CPU s | peak RSS MiB | output MiB | finish s | notes |
|---|---:|---:|---:|---:|---:|---:|---:|---|
$(proc_rows)

### 3. Overhead on the profiled workload (99 Hz, whole host)

$NCPU × \`throughput $TP_SECS 12\` (bench/throughput.c, \`gcc -O2\`: no frame
pointers, 12 frames deep; fixed units of integer work, no syscalls) at
once, alone and while each profiler samples the whole host at 99 Hz;
$TP_REPS repetitions of: none, cprof-bpf, none, bpftrace, none, perf -g,
none, perf --call-graph dwarf, none.  The profilers start before the
trial and stop after it (bpftrace is killed: its output is not needed,
and printing a whole host's stacks takes long).  Figures per trial, each
profiled trial against the mean of the two baselines around it:

- **wall**: units per wall second, summed over the $NCPU processes: the
  throughput itself; on a loaded host, other users take CPU from the
  workload unevenly and this swings by more than the profilers cost.
- **per CPU-s**: units per CPU second of the workload (the time the
  sampling interrupt and its BPF program take is charged to the task it
  interrupts: this kernel has no IRQ time accounting), so it shows the
  cost inside the workload's own time (the BPF program, cache and TLB
  pollution) and not what other users take.
- **agent**: the profiler process's own CPU (all its threads, schedstat)
  over the trial, as a share of all $NCPU CPUs: what it takes from a saturated
  host.
- **BPF**: the time its BPF program ran (run_time_ns over the trial), as a
  share of all $NCPU CPUs: the cost it puts inside the sampled tasks' time,
  without the interrupt itself and the cache effects (BPF tools only).
- **estimate** = per-CPU-s slowdown + agent share: the throughput lost on
  a host whose CPUs the workload fills, without the noise of other users.
- **accounted** = agent share + BPF share: the same from the CPU time the
  profiler is known to use, free of throughput noise (a lower bound).

Noise floor (change between consecutive trials without a profiler): wall
$(stats $TP_NOISE) %, per CPU-s $(stats $TP_CNOISE) %.  Values: median (min – max)
over the repetitions; slowdowns in %, negative = faster.

| profiler | wall units/s | wall slowdown % | units per CPU-s | per-CPU-s slowdown % | agent % of CPUs | BPF % of CPUs | **estimate %** | accounted % |
|---|---:|---:|---:|---:|---:|---:|---:|---:|
$(tp_rows)

### Targets

| target | figure | |
|---|---|---|
| cprof-bpf's overhead on the workload < 1% at 99 Hz: estimate (per-CPU-s slowdown + agent share), median of $TP_REPS; per-CPU-s noise floor ${TP_CFLOOR:-?} % | ${CPROF_EST:-n/a}% | **$(verdict "$CPROF_EST" "$TP_CFLOOR")** |
| … accounted (agent + BPF CPU share), median of $TP_REPS | ${CPROF_ACCT:-n/a}% | **$(lt1 "$CPROF_ACCT")** |
| … measured on wall throughput, median of $TP_REPS; wall noise floor ${TP_FLOOR:-?} % | ${CPROF_SLOW:-n/a}% | $(verdict "$CPROF_SLOW" "$TP_FLOOR") |

<!-- END scale -->
EOF
}

NEW=$RAW/section.md
section >"$NEW"
publish_section scale "$NEW"
sed -n '/^### 3\./,/^<!-- END scale/p' "$NEW" >&2
