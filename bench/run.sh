#!/bin/bash
# bench/run.sh: cprof-bpf side by side with bpftrace and perf (DESIGN.md §8).
#
#   sudo make bench                     # builds, then runs this: ~4 minutes
#   sudo BENCH_SECS=3 BENCH_REPS=1 sh bench/run.sh   # quick check of the script
#   sudo BENCH_CPROF=/path/to/cprof-bpf sh bench/run.sh  # another build
#
# Every tool profiles the same freshly started workload (2 x busy at depth 20
# + 1 x syscalls: 3 CPU-bound processes on a 2-CPU box, so every CPU is busy
# and some samples have a kernel stack) for the same time at 99 Hz:
#
#   cprof-bpf --duration S -F 99
#   bpftrace -e 'profile:hz:99 { @[ustack, kstack] = count(); }'  (SIGINT after S)
#   perf record -a -g -F 99 -- <sleep S>, then perf script > file
#
# then the two BPF tools again, more times at 99 Hz and at 999 Hz (BPF cost
# per sample falls as the rate rises, so BPF costs are compared at equal
# rates, and it varies from run to run, so we take medians).
#
# Measured: BPF ns/sample (kernel.bpf_stats_enabled: run_time_ns/run_cnt of
# the tool's perf_event programs), agent CPU s (user+sys) and peak RSS
# (GNU time), and the time from the end of sampling to the last output
# written.  Results go to bench/RESULTS.md between the "core" markers; the
# raw logs stay in a directory under /tmp (printed at the end).
#
# Environment: BENCH_SECS (default 20) sampling seconds per tool at 99 Hz;
# BENCH_HI_SECS (default BENCH_SECS/2) at BENCH_HZ_HI (default 999) Hz;
# BENCH_REPS (default 5) repetitions of the BPF tools at each rate;
# BENCH_PAIRED_REPS (default 3) runs of the two BPF tools at once at 99 Hz;
# BENCH_ALT_TURNS (default 8) turns of BENCH_ALT_SECS (default 8) s for
# each tool alone in turn on one workload, at 99 Hz;
# BENCH_FINISH_MAX (default 60) s bpftrace may take to print before it is
# stopped (its finish then reads ">60").

# `make bench` runs us with sh (dash on Debian); we need bash for
# $EPOCHREALTIME (timestamps without forking) and builtin-only /proc reads.
if [ -z "${BASH_VERSION:-}" ]; then exec bash "$0" "$@"; fi
. "$(dirname "$0")/env.sh"
BUSY=$ROOT/build/workloads/busy
SYSC=$ROOT/build/workloads/syscalls

SECS=${BENCH_SECS:-20}
HI_SECS=${BENCH_HI_SECS:-$(( SECS / 2 > 0 ? SECS / 2 : 1 ))}
HZ=99
HZ_HI=${BENCH_HZ_HI:-999}
REPS=${BENCH_REPS:-5}
PAIRED_REPS=${BENCH_PAIRED_REPS:-3}
ALT_TURNS=${BENCH_ALT_TURNS:-8}
ALT_SECS=${BENCH_ALT_SECS:-8}
FINISH_MAX=${BENCH_FINISH_MAX:-60}
NCPU=$(nproc)
BPF_PROG_TYPE_PERF_EVENT=7	# prog_type in /proc/PID/fdinfo
TIMEFMT='%e %U %S %M'		# wall s, user s, sys s, max RSS KiB
BT_PROG='profile:hz:%d { @[ustack, kstack] = count(); }'


bench_require "$CPROF" "$BUSY" "$SYSC" -- bpftrace perf bpftool /usr/bin/time pgrep

# Shared measuring helpers (SCHED_FIFO polling, BPF program counters,
# CPU used by others, bounded waits) and the results file.
. "$ROOT/bench/lib.sh"
bench_init cprof-bench
log "raw logs in $RAW"

# ---------------------------------------------------------------- helpers

# The workload runs well past the tool (killed when the tool is done) so
# that every tool also finishes on a busy machine.
start_workload() {
	local life=$(( $1 + FINISH_MAX + 60 ))
	WL_PIDS=""
	$NORMAL "$BUSY" "$life" 20 & WL_PIDS="$WL_PIDS $!"
	$NORMAL "$BUSY" "$life" 20 & WL_PIDS="$WL_PIDS $!"
	$NORMAL "$SYSC" "$life" >/dev/null & WL_PIDS="$WL_PIDS $!"
	sleep 1 # let them reach their steady state (deep stack, busy loop)
}

OLD_STATS=$(sysctl -n kernel.bpf_stats_enabled)
TOOL_PID=""
cleanup() {
	# SIGINT: every tool here stops cleanly on it
	# shellcheck disable=SC2086
	[ -n "$TOOL_PID" ] && kill -INT $TOOL_PID 2>/dev/null && sleep 1
	stop_workload
	sysctl -q -w kernel.bpf_stats_enabled="$OLD_STATS" >/dev/null
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# bpftool_snapshot IDS FILE: what `bpftool prog show --json` says about the
# tool's programs near the end of sampling (kept for the record and for the
# program names; the table uses the final fdinfo values, which cover the
# whole run).  Prints "name run_time_ns run_cnt" summed over IDS.  Call it
# without $(...): it sets FOREIGN_NOW and SNAP.
bpftool_snapshot() {
	bpftool prog show --json >"$2" 2>&1
	local id name="" rt=0 cnt=0 j n
	# Someone else's perf_event programs (another profiler, a test) run on
	# the same ticks and skew the figures: count them (sets FOREIGN_NOW).
	n=$(grep -o '"type":"perf_event"' "$2" | wc -l)
	FOREIGN_NOW=$((n - $(echo "${1//,/ }" | wc -w)))
	for id in ${1//,/ }; do
		j=$(bpftool prog show id "$id" --json 2>/dev/null)
		name=$(printf '%s' "$j" | sed -n 's/.*"name":"\([^"]*\)".*/\1/p')
		rt=$((rt + $(printf '%s' "$j" | sed -n 's/.*"run_time_ns":\([0-9]*\).*/\1/p') + 0))
		cnt=$((cnt + $(printf '%s' "$j" | sed -n 's/.*"run_cnt":\([0-9]*\).*/\1/p') + 0))
	done
	SNAP="${name:-?} $rt $cnt"
}

# ------------------------------------------------------------- the tools
#
# Each run_* stores its figures in R["TAG:field"], so that the report can
# name them.  Fields common to the BPF tools: ids name cnt rt ns (BPF);
# cpu rss (GNU time); fin (finish s); samples; other (% CPU used by others).

declare -A R

# run_cprof TAG HZ SECS
run_cprof() {
	local tag=$1 hz=$2 secs=$3 tpid cpid t_launch t_exit snap rc u s fds fr
	local out=$RAW/$tag
	mkdir -p "$out"
	start_workload "$secs"
	t_launch=$(now)
	$NORMAL /usr/bin/time -f "$TIMEFMT" -o "$out/time" \
		"$CPROF" --duration "$secs" -F "$hz" --output-dir "$out/profiles" \
		--json-summary "$out/summary.json" >"$out/stdout" 2>"$out/stderr" &
	tpid=$!
	cpid=$(child_of "$tpid") || die "$tag: cprof-bpf did not start"
	TOOL_PID=$cpid
	wait_first_sample "$cpid" || { cat "$out/stderr" >&2; die "$tag: no samples"; }
	fds=$FDS
	load_mark $WL_PIDS "$cpid"
	# Its own clock starts a little after the first sample, so this is
	# safely before the end of sampling.
	sleep_until "$(near_end "$T_FIRST" "$secs")"
	load_other $WL_PIDS "$cpid"
	prog_stats "$cpid" "$fds"
	bpftool_snapshot "$P_IDS" "$out/bpftool.json"
	snap=$SNAP
	poll_reset
	POLL_LOG=$out/poll.log poll_until "$cpid" "$fds"
	wait "$tpid"; rc=$?
	t_exit=$(now) TOOL_PID=""
	echo "$t_exit exit" >>"$out/poll.log"
	stop_workload
	[ "$rc" -eq 0 ] || { cat "$out/stderr" >&2; die "$tag: cprof-bpf failed ($rc)"; }

	R[$tag:other]=$OTHER_PCT R[$tag:foreign]=$FOREIGN_NOW
	R[$tag:name]=${snap%% *}
	R[$tag:ids]=$P_IDS_LAST R[$tag:rt]=$P_RT_LAST R[$tag:cnt]=$P_CNT_LAST
	R[$tag:ns]=$(calc "$P_RT_LAST / ($P_CNT_LAST > 0 ? $P_CNT_LAST : 1)" %.0f)
	read -r _ u s R[$tag:rss] < <(read_time "$out/time")
	R[$tag:cpu]=$(calc "$u + $s" %.2f)
	R[$tag:startup]=$(calc "$T_FIRST - $t_launch")
	# Finish, three ways (see the report): count frozen -> exit, wall
	# clock - start-up - duration, and its own summary.  The first and the
	# last can only err low (a late poll; a span that leaves things out),
	# so the larger of the two is the one reported.
	R[$tag:fin_freeze]=$(calc "$t_exit - $T_FREEZE")
	# Sampling already over at our first poll: that figure is too low.
	[ -n "$FREEZE_SEEN" ] || R[$tag:fin_freeze]=">${R[$tag:fin_freeze]}"
	fr=${R[$tag:fin_freeze]#>}
	R[$tag:fin_wall]=$(calc "$t_exit - $T_FIRST - $secs")
	R[$tag:fin_self]=$(jget "$out/summary.json" output.last_write_s)
	R[$tag:fin]=$(calc "$fr > ${R[$tag:fin_self]:-0} ? $fr : ${R[$tag:fin_self]:-0}")
	R[$tag:samples]=$(jget "$out/summary.json" samples.written)
	R[$tag:files]=$(jget "$out/summary.json" output.profiles)
	R[$tag:procs]=$(jget "$out/summary.json" processes)
	log "$tag: ${R[$tag:name]} (${R[$tag:ids]}) ${R[$tag:cnt]} runs, ${R[$tag:ns]} ns/sample;" \
		"cpu ${R[$tag:cpu]} s, rss ${R[$tag:rss]} KiB; finish ${R[$tag:fin]} s" \
		"(frozen ${R[$tag:fin_freeze]}, wall ${R[$tag:fin_wall]}, self ${R[$tag:fin_self]:-?});" \
		"${R[$tag:files]} files," \
		"${R[$tag:samples]} samples; others used ${R[$tag:other]}% CPU"
}

# run_bpftrace TAG HZ SECS
run_bpftrace() {
	local tag=$1 hz=$2 secs=$3 tpid bpid t_int t_exit snap prog rc u s fds
	local out=$RAW/$tag
	mkdir -p "$out"
	# shellcheck disable=SC2059
	prog=$(printf "$BT_PROG" "$hz")
	start_workload "$secs"
	$NORMAL /usr/bin/time -f "$TIMEFMT" -o "$out/time" \
		bpftrace -e "$prog" >"$out/stdout" 2>"$out/stderr" &
	tpid=$!
	bpid=$(child_of "$tpid") || die "$tag: bpftrace did not start"
	TOOL_PID=$bpid
	wait_first_sample "$bpid" || { cat "$out/stderr" >&2; die "$tag: no samples"; }
	fds=$FDS
	load_mark $WL_PIDS "$bpid"
	sleep_until "$(near_end "$T_FIRST" "$secs")"
	load_other $WL_PIDS "$bpid"
	prog_stats "$bpid" "$fds"
	bpftool_snapshot "$P_IDS" "$out/bpftool.json"
	snap=$SNAP
	# Poll to the end of sampling: bpftrace closes its programs as soon as
	# it gets SIGINT, so the last values must be read before.
	poll_reset
	POLL_LOG=$out/poll.log poll_until "$bpid" "$fds" "$(calc "$T_FIRST + $secs" %.6f)"
	# SIGINT ends sampling; bpftrace then prints its map and exits.
	t_int=$(now)
	stop_bpftrace "$bpid" "$fds"
	wait_bounded "$tpid" "$FINISH_MAX" "$bpid"; rc=$?
	t_exit=$(now) TOOL_PID=""
	stop_workload
	if [ -n "$TIMED_OUT" ]; then
		log "$tag: bpftrace still printing after $FINISH_MAX s: stopped"
	elif [ "$rc" -ne 0 ]; then
		cat "$out/stderr" >&2; die "$tag: bpftrace failed ($rc)"
	fi

	R[$tag:other]=$OTHER_PCT R[$tag:foreign]=$FOREIGN_NOW
	R[$tag:name]=${snap%% *}
	R[$tag:ids]=$P_IDS_LAST R[$tag:rt]=$P_RT_LAST R[$tag:cnt]=$P_CNT_LAST
	R[$tag:ns]=$(calc "$P_RT_LAST / ($P_CNT_LAST > 0 ? $P_CNT_LAST : 1)" %.0f)
	read -r _ u s R[$tag:rss] < <(read_time "$out/time")
	R[$tag:cpu]=$(calc "$u + $s" %.2f)
	R[$tag:fin]=$(calc "$t_exit - $t_int")
	[ -n "$TIMED_OUT" ] && R[$tag:fin]=">$FINISH_MAX"
	# Samples it printed: the count after each "]: ".
	R[$tag:samples]=$(awk -F']: ' 'NF > 1 { n += $2 } END { print n + 0 }' "$out/stdout")
	log "$tag: ${R[$tag:name]} (${R[$tag:ids]}) ${R[$tag:cnt]} runs, ${R[$tag:ns]} ns/sample;" \
		"cpu ${R[$tag:cpu]} s, rss ${R[$tag:rss]} KiB; finish ${R[$tag:fin]} s;" \
		"${R[$tag:samples]} samples printed; others used ${R[$tag:other]}% CPU"
}

# run_perf TAG HZ SECS: fields rcpu rrss rfin (perf record), scpu srss sfin
# (perf script), cpu rss fin (both), samples, other.
run_perf() {
	local tag=$1 hz=$2 secs=$3 t_stop t_rec t_done tpid rpid rc src u s
	local out=$RAW/$tag
	mkdir -p "$out"
	start_workload "$secs"
	# The command perf runs is a sleep that stamps when it starts and ends:
	# perf samples while it runs and stops when it exits.
	$NORMAL /usr/bin/time -f "$TIMEFMT" -o "$out/time.record" \
		perf record -a -g -F "$hz" -o "$out/perf.data" -- \
		sh -c "date +%s.%N >'$out/start'; sleep $secs; date +%s.%N >'$out/stop'" \
		>"$out/record.stdout" 2>"$out/record.stderr" &
	tpid=$!
	rpid=$(child_of "$tpid") || die "$tag: perf did not start"
	TOOL_PID=$rpid
	for _ in $(seq 3000); do [ -s "$out/start" ] && break; sleep 0.01; done
	load_mark $WL_PIDS "$rpid"
	sleep_until "$(near_end "$(cat "$out/start" 2>/dev/null || now)" "$secs")"
	load_other $WL_PIDS "$rpid"
	bpftool_snapshot "" "$out/bpftool.json"
	wait "$tpid"; rc=$?
	t_rec=$(now) TOOL_PID=""
	$NORMAL /usr/bin/time -f "$TIMEFMT" -o "$out/time.script" \
		perf script -i "$out/perf.data" >"$out/script.out" 2>"$out/script.stderr"
	src=$?
	t_done=$(now)
	stop_workload
	[ "$rc" -eq 0 ] && [ "$src" -eq 0 ] || { cat "$out"/*.stderr >&2; die "$tag: perf failed ($rc/$src)"; }

	R[$tag:other]=$OTHER_PCT R[$tag:foreign]=$FOREIGN_NOW
	t_stop=$(cat "$out/stop")
	read -r _ u s R[$tag:rrss] < <(read_time "$out/time.record")
	R[$tag:rcpu]=$(calc "$u + $s" %.2f)
	read -r _ u s R[$tag:srss] < <(read_time "$out/time.script")
	R[$tag:scpu]=$(calc "$u + $s" %.2f)
	R[$tag:cpu]=$(calc "${R[$tag:rcpu]} + ${R[$tag:scpu]}" %.2f)
	R[$tag:rss]=${R[$tag:rrss]}
	[ "${R[$tag:srss]}" -gt "${R[$tag:rss]}" ] && R[$tag:rss]=${R[$tag:srss]}
	R[$tag:rfin]=$(calc "$t_rec - $t_stop")
	R[$tag:sfin]=$(calc "$t_done - $t_rec")
	R[$tag:fin]=$(calc "$t_done - $t_stop")
	# A sample's header line is the only unindented non-empty line.
	R[$tag:samples]=$(grep -c '^[^[:space:]]' "$out/script.out")
	log "$tag: cpu record ${R[$tag:rcpu]} + script ${R[$tag:scpu]} s;" \
		"rss ${R[$tag:rrss]}/${R[$tag:srss]} KiB; finish record ${R[$tag:rfin]}" \
		"+ script ${R[$tag:sfin]} s; ${R[$tag:samples]} samples; others used ${R[$tag:other]}% CPU"
}

# run_paired TAG HZ SECS: both BPF tools at once, at the same rate, on the
# same workload; their counters are read at the same two moments, SECS
# apart, once both sample.  Whatever else the host does then hits both
# alike, so the ratio of this pair is far steadier than that of runs made
# one after the other (each program may find the caches warmed by the
# other, which fires on the same CPUs at the same rate and its own phase).
# Fields: cprof-ns, cprof-cnt, bpftrace-ns, bpftrace-cnt, other, foreign.
# Further arguments go to cprof-bpf (--unwind fp).
run_paired() {
	local tag=$1 hz=$2 secs=$3 out=$RAW/$1 prog ct cp bt bp c0r c0n b0r b0n cfds bfds
	shift 3
	mkdir -p "$out"
	# shellcheck disable=SC2059
	prog=$(printf "$BT_PROG" "$hz")
	start_workload "$secs"
	# bpftrace first: it takes a second or two to compile.
	$NORMAL bpftrace -e "$prog" >"$out/bpftrace.stdout" 2>"$out/bpftrace.stderr" &
	bp=$! TOOL_PID=$bp
	wait_first_sample "$bp" || { cat "$out/bpftrace.stderr" >&2; die "$tag: bpftrace: no samples"; }
	bfds=$FDS
	# cprof-bpf samples until SIGINT (its --duration is only a backstop).
	$NORMAL "$CPROF" --duration $((secs + 60)) -F "$hz" --output-dir "$out/profiles" "$@" \
		>"$out/cprof.stdout" 2>"$out/cprof.stderr" &
	cp=$! TOOL_PID="$bp $cp"
	wait_first_sample "$cp" || { cat "$out/cprof.stderr" >&2; die "$tag: cprof-bpf: no samples"; }
	cfds=$FDS
	sleep 0.5
	load_mark $WL_PIDS "$cp" "$bp"
	prog_stats "$cp" "$cfds"; c0r=$P_RT c0n=$P_CNT
	prog_stats "$bp" "$bfds"; b0r=$P_RT b0n=$P_CNT
	sleep "$secs"
	prog_stats "$cp" "$cfds"; ct=$P_IDS
	R[$tag:cprof-cnt]=$((P_CNT - c0n))
	R[$tag:cprof-ns]=$(ns_since "$c0r" "$c0n")
	prog_stats "$bp" "$bfds"; bt=$P_IDS
	R[$tag:bpftrace-cnt]=$((P_CNT - b0n))
	R[$tag:bpftrace-ns]=$(ns_since "$b0r" "$b0n")
	load_other $WL_PIDS "$cp" "$bp"
	bpftool_snapshot "$ct,$bt" "$out/bpftool.json"
	R[$tag:other]=$OTHER_PCT R[$tag:foreign]=$FOREIGN_NOW
	kill -INT "$cp" "$bp"
	wait_bounded "$cp" "$FINISH_MAX"
	wait_bounded "$bp" "$FINISH_MAX"
	TOOL_PID=""
	stop_workload
	log "$tag: at once: cprof-bpf ${R[$tag:cprof-cnt]} runs, ${R[$tag:cprof-ns]} ns/sample;" \
		"bpftrace ${R[$tag:bpftrace-cnt]} runs, ${R[$tag:bpftrace-ns]} ns/sample;" \
		"others used ${R[$tag:other]}% CPU"
}

# run_alternating TAG HZ SECS N: the two BPF tools each alone in turn, N
# turns each (alternating which goes first), on one workload that runs
# throughout; a turn's counters are read over SECS once its tool has
# sampled for a second (start-up left out, as at once).  The 20 s runs
# above are minutes apart and the host's drift moves one tool's figure by
# up to 2x between them; turns seconds apart see the same host.  Fields:
# cprof-I, bpftrace-I (ns/sample of turn I).
run_alternating() {
	local tag=$1 hz=$2 secs=$3 n=$4 out=$RAW/$1 prog i t p fds r0 n0 order
	mkdir -p "$out"
	# shellcheck disable=SC2059
	prog=$(printf "$BT_PROG" "$hz")
	start_workload $(((secs + 10) * 2 * n))
	for i in $(seq 1 "$n"); do
		order="cprof bpftrace"
		[ $((i % 2)) -eq 0 ] && order="bpftrace cprof"
		for t in $order; do
			if [ "$t" = cprof ]; then
				$NORMAL "$CPROF" --duration $((secs + 60)) -F "$hz" \
					--output-dir "$out/profiles-$i" >"$out/$t-$i.stdout" 2>"$out/$t-$i.stderr" &
			else
				$NORMAL bpftrace -e "$prog" >"$out/$t-$i.stdout" 2>"$out/$t-$i.stderr" &
			fi
			p=$! TOOL_PID=$p
			wait_first_sample "$p" || { cat "$out/$t-$i.stderr" >&2; die "$tag: $t: no samples"; }
			fds=$FDS
			sleep 1
			prog_stats "$p" "$fds"; r0=$P_RT n0=$P_CNT
			sleep "$secs"
			prog_stats "$p" "$fds"
			R[$tag:$t-$i]=$(ns_since "$r0" "$n0")
			if [ "$t" = cprof ]; then
				kill -INT "$p"
			else
				stop_bpftrace "$p" "$fds"
			fi
			wait_bounded "$p" "$FINISH_MAX"
			TOOL_PID=""
		done
		log "$tag: turn $i/$n: cprof-bpf ${R[$tag:cprof-$i]}, bpftrace ${R[$tag:bpftrace-$i]} ns/sample"
	done
	stop_workload
}

# ------------------------------------------------------------------- run

# Someone else profiling the host (other BPF perf_event programs) skews
# every figure: note it in the results rather than refuse to run.
FOREIGN=$(bpftool prog show 2>/dev/null | grep -c ' perf_event ')
[ "$FOREIGN" -gt 0 ] && log "warning: $FOREIGN perf_event BPF programs already loaded"
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
T_START=$(now)

sysctl -q -w kernel.bpf_stats_enabled=1 >/dev/null || die "cannot enable kernel.bpf_stats_enabled"

# Repetition 1 is the side-by-side run every table is made of.  Further
# repetitions of the two BPF tools only firm up the BPF ns/sample figure,
# which varies between runs far more than the tools differ (at 99 Hz the
# caches are cold and whatever else the machine does shows); they
# alternate which tool goes first, so a drift favours neither.
pair() {	# pair HZ SECS REP
	local first=cprof second=bpftrace
	[ $(($3 % 2)) -eq 0 ] && first=bpftrace second=cprof
	log "rep $3/$REPS at $1 Hz for $2 s"
	"run_$first" "$first-$1-$3" "$1" "$2"
	"run_$second" "$second-$1-$3" "$1" "$2"
}
pair $HZ "$SECS" 1
log "perf record -g at $HZ Hz for $SECS s"
run_perf perf-$HZ $HZ "$SECS"
for r in $(seq 2 "$REPS"); do pair $HZ "$SECS" "$r"; done
for r in $(seq 1 "$REPS"); do pair "$HZ_HI" "$HI_SECS" "$r"; done
log "both BPF tools at once at $HZ Hz for $SECS s ($PAIRED_REPS times), then at $HZ_HI Hz for $HI_SECS s"
# Each run starts the two tools' timers at a new phase to each other, and
# the phase decides which program finds the caches warmed by the other:
# several runs, and the median of their ratios.
for r in $(seq 1 "$PAIRED_REPS"); do
	run_paired paired-$HZ-$r $HZ "$SECS"
done
run_paired paired-"$HZ_HI" "$HZ_HI" "$HI_SECS"
# The frame-pointer walk this benchmark's peers do (and cprof-bpf's first
# design): the same pairing with cprof-bpf --unwind fp.
log "both at once again, cprof-bpf with --unwind fp"
run_paired paired-fp-$HZ $HZ "$SECS" --unwind fp
run_paired paired-fp-"$HZ_HI" "$HZ_HI" "$HI_SECS" --unwind fp
log "each BPF tool alone in turn, $ALT_TURNS turns of $ALT_SECS s each, at $HZ Hz"
run_alternating alt-$HZ $HZ "$ALT_SECS" "$ALT_TURNS"

sysctl -q -w kernel.bpf_stats_enabled="$OLD_STATS" >/dev/null
T_TOTAL=$(calc "$EPOCHREALTIME - $T_START" %.0f)

# ---------------------------------------------------------------- report

median() { median_fmt %.0f "$@"; }
# series KEY N: R[KEY] for each run, @ in KEY standing for 1..N; a line each
series() { local i; for i in $(seq 1 "$2"); do echo "${R[${1//@/$i}]}"; done; }
# ratios KEY_A KEY_B N: R[KEY_A] / R[KEY_B] for each run, as in series
ratios() { local i; for i in $(seq 1 "$3"); do calc "${R[${1//@/$i}]} / ${R[${2//@/$i}]}"; echo; done; }
# shellcheck disable=SC2046
range2() { minmax $(printf '%.2f\n' "$@"); }	# range2 VALUES...: lowest–highest
# field TOOL HZ FIELD: that field of every repetition
field() { series "$1-$2-@:$3" "$REPS"; }
minmax() {
	printf '%s\n' "$@" | awk '{ v = $1; sub(/^>/, "", v); v += 0 }
		NR == 1 || v < lo { lo = v; los = $1 } NR == 1 || v > hi { hi = v; his = $1 }
		END { if (los == his) print los; else printf "%s–%s\n", los, his }'
}

c=cprof-$HZ-1 b=bpftrace-$HZ-1 p=perf-$HZ
# shellcheck disable=SC2046
for hz in $HZ $HZ_HI; do
	R[cprof-$hz:med]=$(median $(field cprof "$hz" ns))
	R[bpftrace-$hz:med]=$(median $(field bpftrace "$hz" ns))
done
C_FINS=$(field cprof $HZ fin)
C_RSSES=$(field cprof $HZ rss; field cprof "$HZ_HI" rss)
C_RSS_MAX=$(printf '%s\n' $C_RSSES | sort -n | tail -n1)
C_FIN_MAX=$(printf '%s\n' $C_FINS | sort -g | tail -n1)

# Over 10% of the CPUs busy with something else, or someone else's BPF
# perf_event programs loaded: say those figures are noisy.
noisy_runs

# Sanity: every BPF run should have sampled about HZ x CPUs x seconds
# (the CPUs are kept busy, so no idle ticks are skipped).
ODD=""
for r in $(seq 1 "$REPS"); do
	for t in cprof bpftrace; do
		for hz in $HZ $HZ_HI; do
			k=$t-$hz-$r want=$((hz * NCPU * (hz == HZ ? SECS : HI_SECS)))
			[ "$(calc "${R[$k:cnt]} < 0.95 * $want || ${R[$k:cnt]} > 1.05 * $want" %d)" = 1 ] &&
				ODD="$ODD $k (${R[$k:cnt]} runs, $want expected)"
		done
	done
done
[ -n "$ODD" ] && log "warning: run counts off by more than 5%:$ODD"

NS_PASS=$(pass "${R[cprof-$HZ:med]} <= ${R[bpftrace-$HZ:med]}")
# The two runs of a repetition are back to back: their ratio cancels the
# host's drift between repetitions, which the ratio of medians does not.
rep_ratios() { ratios "cprof-$1-@:ns" "bpftrace-$1-@:ns" "$REPS"; }
# shellcheck disable=SC2046
REP_R=$(median_fmt %.2f $(rep_ratios $HZ))
# shellcheck disable=SC2046
REP_RANGE=$(range2 $(rep_ratios $HZ))
REP_PASS=$(pass "$REP_R <= 1")
# summarize NAME KEY_C KEY_B N: NAME_C and NAME_B, the medians of the runs'
# ns/sample; NAME_R, the median of their ratios; NAME_RANGE; NAME_PASS.
# shellcheck disable=SC2046,SC2086
summarize() {
	local r
	r=$(ratios "$2" "$3" "$4")
	printf -v "$1_C" %s "$(median $(series "$2" "$4"))"
	printf -v "$1_B" %s "$(median $(series "$3" "$4"))"
	printf -v "$1_R" %s "$(median_fmt %.2f $r)"
	printf -v "$1_RANGE" %s "$(range2 $r)"
	printf -v "$1_PASS" %s "$(pass "$(median_fmt %.2f $r) <= 1")"
}
summarize PAIRED "paired-$HZ-@:cprof-ns" "paired-$HZ-@:bpftrace-ns" "$PAIRED_REPS"
summarize ALT "alt-$HZ:cprof-@" "alt-$HZ:bpftrace-@" "$ALT_TURNS"
NS1_PASS=$(pass "${R[$c:ns]} <= ${R[$b:ns]}")
NS_HI_PASS=$(pass "${R[cprof-$HZ_HI:med]} <= ${R[bpftrace-$HZ_HI:med]}")
RSS_PASS=$(pass "$C_RSS_MAX < 16384")
FIN_PASS=$(pass "${R[$c:fin]} < 0.5")
FIN_ALL_PASS=$(pass "$C_FIN_MAX < 0.5")

CPU_MODEL=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)

# bpf_rows HZ: one table row per repetition, then the medians.
bpf_rows() {
	local hz=$1 r cc bb
	for r in $(seq 1 "$REPS"); do
		cc=cprof-$hz-$r bb=bpftrace-$hz-$r
		printf '| %s Hz | %s | %s (%s) | %s | %s | %s (%s) | %s | %s | %s |\n' "$hz" "$r" \
			"${R[$cc:name]}" "${R[$cc:ids]}" "${R[$cc:cnt]}" "${R[$cc:ns]}" \
			"${R[$bb:name]}" "${R[$bb:ids]}" "${R[$bb:cnt]}" "${R[$bb:ns]}" \
			"$(ratio "${R[$cc:ns]}" "${R[$bb:ns]}")"
	done
	printf '| %s Hz | **median** | | | **%s** | | | **%s** | **%s** |\n' "$hz" \
		"${R[cprof-$hz:med]}" "${R[bpftrace-$hz:med]}" \
		"$(ratio "${R[cprof-$hz:med]}" "${R[bpftrace-$hz:med]}")"
	# shellcheck disable=SC2046
	printf '| %s Hz | median of the %s repetitions'"'"' ratios | | | | | | | **%s** |\n' "$hz" \
		"$REPS" "$(median_fmt %.2f $(rep_ratios "$hz"))"
	if [ "$hz" = "$HZ" ]; then
		for r in $(seq 1 "$PAIRED_REPS"); do
			cc=paired-$hz-$r
			printf '| %s Hz | at once, run %s | | %s | %s | | %s | %s | %s |\n' "$hz" "$r" \
				"${R[$cc:cprof-cnt]}" "${R[$cc:cprof-ns]}" \
				"${R[$cc:bpftrace-cnt]}" "${R[$cc:bpftrace-ns]}" \
				"$(ratio "${R[$cc:cprof-ns]}" "${R[$cc:bpftrace-ns]}")"
		done
		printf '| %s Hz | **at once, median of %s** (ratio: of the runs'"'"' ratios) | | | **%s** | | | **%s** | **%s** |\n' \
			"$hz" "$PAIRED_REPS" "$PAIRED_C" "$PAIRED_B" "$PAIRED_R"
	else
		printf '| %s Hz | at once | | %s | %s | | %s | %s | %s |\n' "$hz" \
			"${R[paired-$hz:cprof-cnt]}" "${R[paired-$hz:cprof-ns]}" \
			"${R[paired-$hz:bpftrace-cnt]}" "${R[paired-$hz:bpftrace-ns]}" \
			"$(ratio "${R[paired-$hz:cprof-ns]}" "${R[paired-$hz:bpftrace-ns]}")"
	fi
	printf '| %s Hz | at once, cprof-bpf --unwind fp | | %s | %s | | %s | %s | %s |\n' "$hz" \
		"${R[paired-fp-$hz:cprof-cnt]}" "${R[paired-fp-$hz:cprof-ns]}" \
		"${R[paired-fp-$hz:bpftrace-cnt]}" "${R[paired-fp-$hz:bpftrace-ns]}" \
		"$(ratio "${R[paired-fp-$hz:cprof-ns]}" "${R[paired-fp-$hz:bpftrace-ns]}")"
	[ "$hz" = "$HZ" ] && printf '| %s Hz | each alone in turn: median of %s turns (turn ratios %s) | | | %s | | | %s | %s |\n' \
		"$hz" "$ALT_TURNS" "$ALT_RANGE" "$ALT_C" "$ALT_B" "$ALT_R"
	return 0
}

# shellcheck disable=SC2046,SC2059
section() {
cat <<EOF
<!-- BEGIN core -->
## Core: cprof-bpf vs bpftrace vs perf record -g

Generated by \`bench/run.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC') in $T_TOTAL s; the next run
replaces everything between the "core" markers.

- Host: $CPU_MODEL, $NCPU CPUs; kernel $(uname -r); $(sed -n 's/^PRETTY_NAME="\(.*\)"/\1/p' /etc/os-release)
- cprof-bpf $("$CPROF" --version 2>&1 | awk '{print $NF}') ($BUILD_DESC); $(bpftrace --version 2>&1); $(perf --version 2>&1)
- Load average before the run: $LOAD_BEFORE.  CPU used by processes other
  than the workload and the tools while each tool sampled, % of all CPUs
  (and perf_event BPF programs of others loaded near its end, e.g. someone
  else's profiler or test): $OTHERS.$( [ -n "$NOISY" ] && printf '\n  **The host was not quiet (over 10%% used by others, or foreign BPF\n  programs) during%s: those figures are noisy.**' "$NOISY")
- Workload, started afresh 1 s before each tool and stopped after it exits
  (so every tool also finishes on a busy machine): 2 × \`build/workloads/busy
  N 20\` (CPU-bound, 20 frame-pointer frames deep) + 1 ×
  \`build/workloads/syscalls N\` (mostly in the kernel): 3 CPU-bound processes
  on $NCPU CPUs.
- Commands (repetition 1 in this order; then $((REPS - 1)) more repetitions of the
  two BPF tools at $HZ Hz and $REPS at $HZ_HI Hz, alternating which goes first;
  then the two BPF tools at once, $PAIRED_REPS times at $HZ Hz and once at
  $HZ_HI Hz, and again with
  cprof-bpf --unwind fp, the frame-pointer walk bpftrace does):

\`\`\`sh
sysctl kernel.bpf_stats_enabled=1
/usr/bin/time -f '$TIMEFMT' ./cprof-bpf --duration $SECS -F $HZ --output-dir DIR
/usr/bin/time -f '$TIMEFMT' bpftrace -e '$(printf "$BT_PROG" $HZ)' > FILE   # SIGINT after $SECS s of sampling
/usr/bin/time -f '$TIMEFMT' perf record -a -g -F $HZ -o perf.data -- sh -c 'sleep $SECS; date +%s.%N > stop'
/usr/bin/time -f '$TIMEFMT' perf script -i perf.data > FILE
/usr/bin/time -f '$TIMEFMT' ./cprof-bpf --duration $HI_SECS -F $HZ_HI --output-dir DIR
/usr/bin/time -f '$TIMEFMT' bpftrace -e '$(printf "$BT_PROG" "$HZ_HI")' > FILE   # SIGINT after $HI_SECS s
\`\`\`

How each figure is taken:
- **BPF ns/sample** = run_time_ns / run_cnt (\`kernel.bpf_stats_enabled\`) of
  the perf_event programs the tool's own process holds open (read from
  \`/proc/PID/fdinfo\`, the counters \`bpftool prog show\` prints; names from
  \`bpftool prog show --json\` near the end of sampling).  Each tool loads
  one program and attaches it on every CPU, so its counters cover all CPUs.
  Values are the last ones before the tool unloads it: the whole run,
  the first sample of every stack and process included.
- **median of the repetitions' ratios**: a repetition runs the two tools
  back to back, so its ratio cancels the drift of the host between
  repetitions (minutes apart) that moves both medians.
- **at once**: both BPF tools running together on the same workload at the
  same rate, their counters read at the same two moments $SECS s apart
  ($HI_SECS s at $HZ_HI Hz) once both sample.  Load from others then hits
  both alike, so this ratio is steadier than that of the runs made one
  after the other; start-up is left out.  Each may find caches warmed by
  the other: both fire on the same CPUs at the same rate, at a phase to
  each other that is fixed for a run and new in the next, and it decides
  which program comes second.  Hence $PAIRED_REPS runs at $HZ Hz and the median
  of their ratios.
- **alone in turn**: one workload runs throughout while the two BPF tools
  take turns, each alone, $ALT_TURNS turns each (alternating which goes
  first), each turn's counters read over $ALT_SECS s after its first
  second of sampling (start-up left out).  The separate runs above are
  minutes apart, and this host's drift moves one tool's figure by up to 2×
  between them; turns seconds apart see the same host, and neither tool
  warms the other's caches.  The ratio of each turn pair, then their median.
- **CPU s** = user + sys of the agent process (GNU time; bpftrace's includes
  compiling its program with LLVM at start-up); **peak RSS** = its maxrss.
  perf: \`perf record\` and \`perf script\` separately, their total CPU and
  the larger RSS.
- **Finish** = end of sampling to the last output written, to process exit,
  on the outside clock (the script polls at real-time priority, the tools
  and the workload run at normal priority).  cprof-bpf: end of sampling =
  when its program's run count stopped moving (it destroys its perf links
  then; polled every 10 ms, a sample comes every ~$((1000 / (HZ * NCPU))) ms on busy CPUs).
  Its own figure (--json-summary's output.last_write_s) starts after its final drain of
  the BPF maps and stops at the last rename, so it leaves out the drain,
  the unloading and the exit.  Both can only err low; the larger is
  reported.  Check: wall clock − start-up (launch to first sample) −
  duration, higher by however long cprof-bpf samples past its deadline (it
  looks at the clock between ring-buffer polls of up to 100 ms).
  bpftrace: SIGINT → exit (it prints its map).  perf: end of the sleep →
  \`perf record\` exit (it collects build IDs) → \`perf script\` done.

### BPF cost per sample (same workload, same rate)

| rate | rep | cprof-bpf program (id) | run_cnt | ns/sample | bpftrace program (id) | run_cnt | ns/sample | cprof/bpftrace |
|---|---|---|---:|---:|---|---:|---:|---:|
$(bpf_rows $HZ)
$(bpf_rows "$HZ_HI")

Sanity: $HZ Hz × $NCPU CPUs × $SECS s = $((HZ * NCPU * SECS)) expected runs, $HZ_HI Hz × $NCPU × $HI_SECS s =
$((HZ_HI * NCPU * HI_SECS)).  Samples in the output of repetition 1: cprof-bpf ${R[$c:samples]} (in
${R[$c:files]} profiles of ${R[$c:procs]} processes), bpftrace ${R[$b:samples]}, perf ${R[$p:samples]}.
Cost per sample falls as the rate rises (warmer caches), hence the
comparison at equal rates only.$( [ -n "$ODD" ] && printf '\n**Run counts off by more than 5%%:%s.**' "$ODD")

### Agent CPU and peak RSS ($HZ Hz, $SECS s, repetition 1)

| tool | CPU s (user+sys) | peak RSS MiB | CPU cprof/peer | RSS cprof/peer |
|---|---:|---:|---:|---:|
| cprof-bpf | **${R[$c:cpu]}** | **$(kmib "${R[$c:rss]}")** | | |
| bpftrace | ${R[$b:cpu]} | $(kmib "${R[$b:rss]}") | $(ratio "${R[$c:cpu]}" "${R[$b:cpu]}") | $(ratio "${R[$c:rss]}" "${R[$b:rss]}") |
| perf record -g | ${R[$p:rcpu]} | $(kmib "${R[$p:rrss]}") | | |
| perf script | ${R[$p:scpu]} | $(kmib "${R[$p:srss]}") | | |
| perf, both | ${R[$p:cpu]} | $(kmib "${R[$p:rss]}") (max) | $(ratio "${R[$c:cpu]}" "${R[$p:cpu]}") | $(ratio "${R[$c:rss]}" "${R[$p:rss]}") |

cprof-bpf over all repetitions: CPU $(minmax $(field cprof $HZ cpu)) s, peak RSS $(minmax $(for v in $C_RSSES; do kmib "$v"; echo; done)) MiB
(at $HZ_HI Hz: CPU $(minmax $(field cprof "$HZ_HI" cpu)) s); bpftrace CPU $(minmax $(field bpftrace $HZ cpu)) s,
RSS $(minmax $(for v in $(field bpftrace $HZ rss); do kmib "$v"; echo; done)) MiB.

### End of sampling to last file written ($HZ Hz, $SECS s, repetition 1)

| tool | finish s | cprof/peer |
|---|---:|---:|
| cprof-bpf (reported: the larger of the next two) | **${R[$c:fin]}** | |
| cprof-bpf: sample count frozen → exit | ${R[$c:fin_freeze]} | |
| cprof-bpf: its own figure (--json-summary) | ${R[$c:fin_self]:-n/a} | |
| cprof-bpf, check: wall − start-up − $SECS s | ${R[$c:fin_wall]} | |
| bpftrace: SIGINT → exit, map printed | ${R[$b:fin]} | $(ratio "${R[$c:fin]}" "${R[$b:fin]}") |
| perf record: sleep end → exit | ${R[$p:rfin]} | |
| perf script | ${R[$p:sfin]} | |
| perf record + perf script | ${R[$p:fin]} | $(ratio "${R[$c:fin]}" "${R[$p:fin]}") |

cprof-bpf over all $HZ Hz repetitions: $(minmax $C_FINS) s; bpftrace $(minmax $(field bpftrace $HZ fin)) s.
At $HZ_HI Hz: cprof-bpf $(minmax $(field cprof "$HZ_HI" fin)) s, bpftrace $(minmax $(field bpftrace "$HZ_HI" fin)) s.
cprof-bpf start-up (launch → first sample): ${R[$c:startup]} s.

### Targets

| target | figure | |
|---|---|---|
| BPF ns/sample ≤ bpftrace's at $HZ Hz, $REPS repetitions: median of their ratios | ${REP_R}× (${REP_RANGE}) | **$REP_PASS** |
| … ratio of the medians of the $REPS repetitions | ${R[cprof-$HZ:med]} vs ${R[bpftrace-$HZ:med]} ns ($(ratio "${R[cprof-$HZ:med]}" "${R[bpftrace-$HZ:med]}")×) | **$NS_PASS** |
| … repetition 1 alone | ${R[$c:ns]} vs ${R[$b:ns]} ns ($(ratio "${R[$c:ns]}" "${R[$b:ns]}")×) | $NS1_PASS |
| … each alone in turn on one running workload, $ALT_TURNS turns of $ALT_SECS s: median of the turn ratios | ${ALT_R}× (${ALT_RANGE}); medians $ALT_C vs $ALT_B ns | **$ALT_PASS** |
| … both at once, $HZ Hz, $PAIRED_REPS runs: median of their ratios | ${PAIRED_R}× (${PAIRED_RANGE}); medians $PAIRED_C vs $PAIRED_B ns | **$PAIRED_PASS** |
| … at $HZ_HI Hz, median of $REPS | ${R[cprof-$HZ_HI:med]} vs ${R[bpftrace-$HZ_HI:med]} ns ($(ratio "${R[cprof-$HZ_HI:med]}" "${R[bpftrace-$HZ_HI:med]}")×) | $NS_HI_PASS |
| … both at once, $HZ_HI Hz | ${R[paired-$HZ_HI:cprof-ns]} vs ${R[paired-$HZ_HI:bpftrace-ns]} ns ($(ratio "${R[paired-$HZ_HI:cprof-ns]}" "${R[paired-$HZ_HI:bpftrace-ns]}")×) | $(pass "${R[paired-$HZ_HI:cprof-ns]} <= ${R[paired-$HZ_HI:bpftrace-ns]}") |
| … frame-pointer stacks as bpftrace walks them (\`--unwind fp\`), both at once, $HZ Hz | ${R[paired-fp-$HZ:cprof-ns]} vs ${R[paired-fp-$HZ:bpftrace-ns]} ns ($(ratio "${R[paired-fp-$HZ:cprof-ns]}" "${R[paired-fp-$HZ:bpftrace-ns]}")×) | $(pass "${R[paired-fp-$HZ:cprof-ns]} <= ${R[paired-fp-$HZ:bpftrace-ns]}") |
| … the same at $HZ_HI Hz | ${R[paired-fp-$HZ_HI:cprof-ns]} vs ${R[paired-fp-$HZ_HI:bpftrace-ns]} ns ($(ratio "${R[paired-fp-$HZ_HI:cprof-ns]}" "${R[paired-fp-$HZ_HI:bpftrace-ns]}")×) | $(pass "${R[paired-fp-$HZ_HI:cprof-ns]} <= ${R[paired-fp-$HZ_HI:bpftrace-ns]}") |
| peak RSS < 16 MiB, every run | $(kmib "$C_RSS_MAX") MiB at most | **$RSS_PASS** |
| finish < 0.5 s, repetition 1 | ${R[$c:fin]} s | **$FIN_PASS** |
| … every $HZ Hz repetition | $C_FIN_MAX s at most | $FIN_ALL_PASS |

<!-- END core -->
EOF
}

# Replace only our section; keep whatever other benchmarks wrote around it.
NEW=$RAW/section.md
section >"$NEW"
publish_section core "$NEW"
sed -n '/^### Targets/,/^<!-- END core/p' "$NEW" >&2
