#!/bin/bash
# bench/unwind.sh: what DWARF unwinding costs and buys (DESIGN.md §4, §8).
#
#   sudo make bench                          # after bench/run.sh: ~5 minutes
#   sudo UNWIND_SECS=3 UNWIND_HI_SECS=2 UNWIND_REPS=1 UNWIND_COMP_SECS=3 \
#        UNWIND_HOST_SECS=5 sh bench/unwind.sh     # quick check of the script
#   sudo BENCH_CPROF=/path/to/cprof-bpf sh bench/unwind.sh   # another build
#
# Four parts, in one run, written to bench/RESULTS.md between the "unwind"
# markers (raw logs stay in a directory under /tmp, printed at the end):
#
# A. BPF ns/sample, DWARF vs frame pointers.  NCPU x `busy N DEPTH`
#    (frame pointers, DEPTH+4 frames deep: 20 by default), profiled at 99
#    and at 999 Hz by cprof-bpf (--unwind dwarf), cprof-bpf --unwind fp and
#    bpftrace (`@[ustack, kstack]`: bpf_get_stackid, a frame-pointer walk),
#    all three restricted to the workload (--pid; bpftrace: a `pid == N`
#    predicate), UNWIND_REPS times each, alternating the order; then all
#    three at once.  Figures: run_time_ns / run_cnt of each tool's own
#    perf_event programs (kernel.bpf_stats_enabled, /proc/PID/fdinfo).
# B. Stack completeness on `nofp split` (-O2 -fomit-frame-pointer): share
#    of samples whose stack reaches main(), for cprof-bpf (dwarf and fp),
#    perf record --call-graph dwarf, perf record -g and bpftrace @[ustack];
#    bytes per sample: cprof-bpf's file and the BPF map data it copies out
#    (its drain syscalls, traced with strace), perf's perf.data.
# C. Unwind-table build time and size (build/tests/bench_unwind) for libc,
#    python3, libpython, the largest LLVM library in /usr/lib and the
#    largest shared library on the machine.
# D. A whole-host run: agent peak RSS (GNU time) and the BPF map memory
#    the agent holds near its end (bpftool map show: bytes_memlock).
#
# Environment (seconds unless said): UNWIND_SECS (8) per run at 99 Hz in A,
# UNWIND_HI_SECS (4) at UNWIND_HZ_HI (999) Hz, UNWIND_REPS (3),
# UNWIND_DEPTH (16: busy's recursion, 20 frames for a frame-pointer walk),
# UNWIND_COMP_SECS (8) per tool in B, UNWIND_HOST_SECS (20) in D,
# UNWIND_TABLE_RUNS (10) builds per object in C, UNWIND_FINISH_MAX (60)
# before a tool that will not finish is stopped.

# `make bench` runs us with sh; we need bash ($EPOCHREALTIME, arrays).
if [ -z "${BASH_VERSION:-}" ]; then exec bash "$0" "$@"; fi
. "$(dirname "$0")/env.sh"
BUSY=$ROOT/build/workloads/busy
NOFP=$ROOT/build/workloads/nofp
BENCH_UNWIND=$ROOT/build/tests/bench_unwind

SECS=${UNWIND_SECS:-8}
HI_SECS=${UNWIND_HI_SECS:-4}
HZ=99
HZ_HI=${UNWIND_HZ_HI:-999}
REPS=${UNWIND_REPS:-3}
DEPTH=${UNWIND_DEPTH:-16}
COMP_SECS=${UNWIND_COMP_SECS:-8}
HOST_SECS=${UNWIND_HOST_SECS:-20}
TABLE_RUNS=${UNWIND_TABLE_RUNS:-10}
FINISH_MAX=${UNWIND_FINISH_MAX:-60}
NCPU=$(nproc)
BPF_PROG_TYPE_PERF_EVENT=7
TIMEFMT='%e %U %S %M'


bench_require "$CPROF" "$BUSY" "$NOFP" -- bpftrace perf bpftool go /usr/bin/time pgrep

# Shared measuring helpers (SCHED_FIFO polling, BPF program counters,
# CPU used by others, bounded waits) and the results file.
. "$ROOT/bench/lib.sh"
bench_init cprof-bench-unwind
log "raw logs in $RAW"

# ---------------------------------------------------------------- helpers

# start_busy N DEPTH SECS: N fresh busy processes (they outlive the tool,
# and end by themselves at worst).  Sets WL_PIDS, PIDS_CSV, BT_PRED.
start_busy() {
	local life=$(($3 + FINISH_MAX + 60)) p
	WL_PIDS=""
	for _ in $(seq "$1"); do
		$NORMAL "$BUSY" "$life" "$2" &
		WL_PIDS="$WL_PIDS $!"
	done
	PIDS_CSV="" BT_PRED=""
	for p in $WL_PIDS; do
		PIDS_CSV=${PIDS_CSV:+$PIDS_CSV,}$p
		BT_PRED="${BT_PRED:+$BT_PRED || }pid == $p"
	done
	sleep 1
}

OLD_STATS=$(sysctl -n kernel.bpf_stats_enabled)
TOOL_PIDS=""
cleanup() {
	# shellcheck disable=SC2086
	stop_tools $TOOL_PIDS
	stop_workload
	[ -n "${NOFP_PID:-}" ] && kill "$NOFP_PID" 2>/dev/null
	sysctl -q -w kernel.bpf_stats_enabled="$OLD_STATS" >/dev/null
}
trap cleanup EXIT
trap 'exit 130' INT TERM

declare -A R
ODD=""

# folded PROFILE: "count<TAB>labels<TAB>root;...;leaf" (tests/e2e/lib.sh)
folded() {
	$NORMAL sh -c '. "$1/tests/e2e/lib.sh"; folded "$2"' _ "$ROOT" "$1"
}
# cprof_summary SUMMARY.JSON: sets S_SAMPLES S_CFI S_FPONLY S_TABLES
cprof_summary() {
	S_SAMPLES=$(jget "$1" samples.written)
	S_CFI=$(jget "$1" unwind.cfi)
	S_FPONLY=$(jget "$1" unwind.fp_only)
	S_TABLES=$(python3 -c 'import json, sys
t = json.load(open(sys.argv[1]))["unwind_tables"]
print("%d built in %.3f s, %d failed, %d without room, %d evicted; peak %.1f of %.1f MB (%d rows)"
      % (t["built"], t["build_s"], t["failed"], t["no_room"], t["evicted"], t["peak_mb"],
         t["capacity_mb"], t["rows_peak"]))' "$1" 2>/dev/null)
}

# ------------------------------------------------- A. BPF cost per sample

# run_cost KIND TAG HZ SECS; KIND: dwarf | fp (cprof-bpf --unwind KIND)
# or bpftrace.  Fields: ids cnt rt ns (per program run), wl (workload
# samples in the output), nsw (ns per workload sample), share, other,
# foreign.
run_cost() {
	local kind=$1 tag=$2 hz=$3 secs=$4 out=$RAW/$2 tpid fds rc want
	mkdir -p "$out"
	start_busy "$NCPU" "$DEPTH" "$secs"
	if [ "$kind" = bpftrace ]; then
		$NORMAL bpftrace -e "profile:hz:$hz /$BT_PRED/ { @[ustack, kstack] = count(); }" \
			>"$out/stdout" 2>"$out/stderr" &
	else
		$NORMAL "$CPROF" --duration "$secs" -F "$hz" --pid "$PIDS_CSV" --unwind "$kind" \
			--output-dir "$out/profiles" --json-summary "$out/summary.json" \
			>"$out/stdout" 2>"$out/stderr" &
	fi
	tpid=$! TOOL_PIDS=$tpid
	if ! wait_first_sample "$tpid"; then
		log "$tag: no samples; stderr:"; tail -n5 "$out/stderr" >&2
		kill -INT "$tpid" 2>/dev/null; wait_bounded "$tpid" 10
		TOOL_PIDS=""; stop_workload; return 1
	fi
	fds=$FDS
	load_mark $WL_PIDS "$tpid"
	sleep_until "$(near_end "$T_FIRST" "$secs")"
	load_other $WL_PIDS "$tpid"
	prog_stats "$tpid" "$fds"
	foreign "$P_IDS"
	poll_reset
	if [ "$kind" = bpftrace ]; then
		# it unloads its program on SIGINT: read the counters up to then
		poll_until "$tpid" "$fds" "$(calc "$T_FIRST + $secs" %.6f)"
		stop_bpftrace "$tpid" "$fds"
		wait_bounded "$tpid" "$FINISH_MAX"; rc=$?
		[ -n "$TIMED_OUT" ] && rc=0 && log "$tag: bpftrace still printing after $FINISH_MAX s: stopped"
	else
		poll_until "$tpid" "$fds" "$(calc "$T_FIRST + $secs + $FINISH_MAX" %.6f)"
		wait_bounded "$tpid" "$FINISH_MAX"; rc=$?
	fi
	TOOL_PIDS=""
	stop_workload
	if [ "$rc" -ne 0 ] || [ "$P_CNT_LAST" -le 0 ]; then
		log "$tag: failed ($rc); stderr:"; tail -n5 "$out/stderr" >&2
		return 1
	fi
	R[$tag:other]=$OTHER_PCT R[$tag:foreign]=$FOREIGN_NOW
	R[$tag:ids]=$P_IDS_LAST R[$tag:rt]=$P_RT_LAST R[$tag:cnt]=$P_CNT_LAST
	R[$tag:ns]=$(calc "$P_RT_LAST / $P_CNT_LAST" %.0f)
	if [ "$kind" = bpftrace ]; then
		R[$tag:wl]=$(awk -F']: ' 'NF > 1 { n += $2 } END { print n + 0 }' "$out/stdout")
	else
		cprof_summary "$out/summary.json"
		R[$tag:wl]=${S_SAMPLES:-0}
	fi
	if [ "${R[$tag:wl]}" -gt 0 ]; then
		R[$tag:nsw]=$(calc "$P_RT_LAST / ${R[$tag:wl]}" %.0f)
		R[$tag:share]=$(calc "100 * ${R[$tag:wl]} / $P_CNT_LAST" %.0f)%
	fi
	# every tick of every CPU runs the program: HZ x CPUs x SECS
	want=$((hz * NCPU * secs))
	if [ "$(calc "$P_CNT_LAST < 0.8 * $want || $P_CNT_LAST > 1.2 * $want" %d)" = 1 ]; then
		ODD="$ODD $tag ($P_CNT_LAST runs, $want expected)"
		log "$tag: warning: $P_CNT_LAST runs, $want expected"
	fi
	log "$tag: ${R[$tag:cnt]} runs, ${R[$tag:ns]} ns/run; ${R[$tag:wl]} workload samples" \
		"(${R[$tag:share]:-?}), ${R[$tag:nsw]:-?} ns each; others used $OTHER_PCT% CPU"
}

# user_frames_cprof DIR: frames of the heaviest stack in the profiles.
user_frames_cprof() {
	local f
	for f in "$1"/*.pb.gz; do [ -f "$f" ] && folded "$f"; done |
		sort -t "$(printf '\t')" -k1,1nr | head -n1 |
		awk -F '\t' '{ print split($3, a, ";"), $3 }'
}
# user_frames_bpftrace FILE: user frames of the heaviest @[ustack, kstack].
user_frames_bpftrace() {
	awk '/^@\[/ { n = 0; u = 1; s = ""; next }
		/\]: [0-9]+$/ { c = $NF; if (c > best) { best = c; bn = n; bs = s } u = 0; next }
		u && /^,/ { u = 0; next }
		u && /^ +/ { n++; f = $1; sub(/\+[0-9]+$/, "", f); s = f (s == "" ? "" : ";" s); next }
		END { print bn + 0, bs }' "$1"
}

# run_together HZ SECS: the three at once on one workload, counters read
# at the same two moments SECS apart.  Fields together-HZ:KIND-ns.
run_together() {
	local hz=$1 secs=$2 tag=together-$1 out=$RAW/together-$1 k p pids="" ids=""
	local -A PID FD R0 C0
	mkdir -p "$out"
	start_busy "$NCPU" "$DEPTH" "$((secs + 30))"
	# bpftrace first: it takes seconds to compile.
	$NORMAL bpftrace -e "profile:hz:$hz /$BT_PRED/ { @[ustack, kstack] = count(); }" \
		>"$out/bpftrace.stdout" 2>"$out/bpftrace.stderr" &
	PID[bpftrace]=$! TOOL_PIDS=$!
	for k in dwarf fp; do
		$NORMAL "$CPROF" --duration $((secs + 60)) -F "$hz" --pid "$PIDS_CSV" --unwind "$k" \
			--output-dir "$out/$k" >"$out/$k.stdout" 2>"$out/$k.stderr" &
		PID[$k]=$! TOOL_PIDS="$TOOL_PIDS $!"
	done
	for k in bpftrace dwarf fp; do
		if ! wait_first_sample "${PID[$k]}"; then
			log "$tag: $k did not start"
			kill -INT $TOOL_PIDS 2>/dev/null
			for p in $TOOL_PIDS; do wait_bounded "$p" "$FINISH_MAX"; done
			TOOL_PIDS=""; stop_workload; return 1
		fi
		FD[$k]=$FDS
	done
	sleep 0.5
	load_mark $WL_PIDS $TOOL_PIDS
	for k in bpftrace dwarf fp; do
		prog_stats "${PID[$k]}" "${FD[$k]}"; R0[$k]=$P_RT C0[$k]=$P_CNT
	done
	sleep "$secs"
	for k in bpftrace dwarf fp; do
		prog_stats "${PID[$k]}" "${FD[$k]}"
		ids=${ids:+$ids,}$P_IDS
		R[$tag:$k-cnt]=$((P_CNT - C0[$k]))
		R[$tag:$k-ns]=$(ns_since "${R0[$k]}" "${C0[$k]}")
	done
	load_other $WL_PIDS $TOOL_PIDS
	foreign "$ids"
	R[$tag:other]=$OTHER_PCT R[$tag:foreign]=$FOREIGN_NOW
	kill -INT "${PID[dwarf]}" "${PID[fp]}"
	stop_bpftrace "${PID[bpftrace]}" "${FD[bpftrace]}"
	for k in dwarf fp bpftrace; do wait_bounded "${PID[$k]}" "$FINISH_MAX"; done
	TOOL_PIDS=""
	stop_workload
	log "$tag: ns/run dwarf ${R[$tag:dwarf-ns]}, fp ${R[$tag:fp-ns]}," \
		"bpftrace ${R[$tag:bpftrace-ns]} (${R[$tag:bpftrace-cnt]} runs); others used $OTHER_PCT% CPU"
}

# ------------------------------------------------ B. stack completeness

# reaches_main FOLDED: "samples with-main"
reaches_main() {
	awk -F '\t' '{ n += $1 } $3 ~ /(^|;)main(;|$)/ { m += $1 } END { print n + 0, m + 0 }' "$1"
}

# comp_cprof KIND: cprof-bpf --unwind KIND on the nofp process.  The dwarf
# run goes under strace (seccomp-filtered to bpf(2): the others do not
# stop) to add up what its drains copy out of the BPF maps.
comp_cprof() {
	local kind=$1 tag=comp-cprof-$1 out=$RAW/comp-cprof-$1 rc f size=0 st=""
	mkdir -p "$out"
	[ "$kind" = dwarf ] && command -v strace >/dev/null &&
		st="strace -f --seccomp-bpf -qq -e trace=bpf -o $out/strace"
	load_mark "$NOFP_PID"
	# shellcheck disable=SC2086
	$NORMAL $st "$CPROF" --duration "$COMP_SECS" -F $HZ --pid "$NOFP_PID" --unwind "$kind" \
		--output-dir "$out/profiles" --json-summary "$out/summary.json" \
		>"$out/stdout" 2>"$out/stderr" &
	TOOL_PIDS=$!
	wait_bounded "$TOOL_PIDS" $((COMP_SECS + FINISH_MAX)); rc=$?
	TOOL_PIDS=""
	load_other "$NOFP_PID"
	R[$tag:other]=$OTHER_PCT
	[ "$rc" -eq 0 ] || { log "$tag: failed ($rc)"; tail -n5 "$out/stderr" >&2; return 1; }
	for f in "$out"/profiles/*.pb.gz; do [ -f "$f" ] && folded "$f"; done >"$out/folded"
	for f in "$out"/profiles/*.pb.gz; do [ -f "$f" ] && size=$((size + $(stat -c %s "$f"))); done
	read -r R[$tag:n] R[$tag:main] < <(reaches_main "$out/folded")
	cprof_summary "$out/summary.json"
	R[$tag:cfi]=$S_CFI R[$tag:fponly]=$S_FPONLY R[$tag:bytes]=$size
	[ "${R[$tag:n]}" -gt 0 ] && R[$tag:bps]=$(calc "$size / ${R[$tag:n]}" %.0f)
	if [ -s "$out/strace" ]; then
		# bpf(BPF_MAP_CREATE, {..., key_size=K, value_size=V, ...}, N) = FD
		# bpf(BPF_MAP_LOOKUP_AND_DELETE_BATCH, {batch={..., map_fd=FD, ...}}
		#     => {batch={count=C}}, N) = R: C entries of K + V bytes
		R[$tag:traffic]=$(awk '
			function num(s, name,   i) { i = index(s, name "="); return i ? substr(s, i + length(name) + 1) + 0 : -1 }
			/BPF_MAP_CREATE/ && $NF ~ /^[0-9]+$/ { sz[$NF] = num($0, "key_size") + num($0, "value_size") }
			/BPF_MAP_LOOKUP_AND_DELETE_BATCH/ && index($0, "=> ") {
				fd = num($0, "map_fd"); c = num(substr($0, index($0, "=> ")), "count")
				if (c > 0) { b += c * sz[fd]; e += c }
			}
			END { print b + 0 }' "$out/strace")
		[ "${R[$tag:n]}" -gt 0 ] && R[$tag:tps]=$(calc "${R[$tag:traffic]} / ${R[$tag:n]}" %.0f)
	fi
	log "$tag: ${R[$tag:main]}/${R[$tag:n]} samples reach main; ${R[$tag:bps]:-?} file bytes" \
		"and ${R[$tag:tps]:-?} map bytes a sample; others used $OTHER_PCT% CPU"
}

# comp_perf KIND: perf record (--call-graph dwarf | -g) on the nofp process.
comp_perf() {
	local kind=$1 tag=comp-perf-$1 out=$RAW/comp-perf-$1 rc cg="-g"
	mkdir -p "$out"
	[ "$kind" = dwarf ] && cg="--call-graph dwarf"
	load_mark "$NOFP_PID"
	# shellcheck disable=SC2086
	$NORMAL perf record $cg -F $HZ -p "$NOFP_PID" -o "$out/perf.data" -- sleep "$COMP_SECS" \
		>"$out/record.stdout" 2>"$out/record.stderr" &
	TOOL_PIDS=$!
	wait_bounded "$TOOL_PIDS" $((COMP_SECS + FINISH_MAX)); rc=$?
	TOOL_PIDS=""
	load_other "$NOFP_PID"
	R[$tag:other]=$OTHER_PCT
	[ "$rc" -eq 0 ] || { log "$tag: perf record failed ($rc)"; tail -n5 "$out/record.stderr" >&2; return 1; }
	timeout 300 $NORMAL perf script -i "$out/perf.data" >"$out/script.out" 2>"$out/script.stderr" ||
		{ log "$tag: perf script failed"; return 1; }
	# A sample: an unindented header line, then one indented line a frame.
	read -r R[$tag:n] R[$tag:main] < <(awk '
		/^[^[:space:]]/ { n++; cur = 0; next }
		/^[[:space:]]+[0-9a-f]+ main\+0x/ { if (!cur) m++; cur = 1 }
		END { print n + 0, m + 0 }' "$out/script.out")
	R[$tag:bytes]=$(stat -c %s "$out/perf.data")
	[ "${R[$tag:n]}" -gt 0 ] && R[$tag:bps]=$(calc "${R[$tag:bytes]} / ${R[$tag:n]}" %.0f)
	log "$tag: ${R[$tag:main]}/${R[$tag:n]} samples reach main; ${R[$tag:bps]:-?} bytes a sample;" \
		"others used $OTHER_PCT% CPU"
}

comp_bpftrace() {
	local tag=comp-bpftrace out=$RAW/comp-bpftrace tpid rc fds
	mkdir -p "$out"
	$NORMAL bpftrace -e "profile:hz:$HZ /pid == $NOFP_PID/ { @[ustack] = count(); }" \
		>"$out/stdout" 2>"$out/stderr" &
	tpid=$! TOOL_PIDS=$tpid
	if ! wait_first_sample "$tpid"; then
		log "$tag: no samples"; kill -INT "$tpid" 2>/dev/null; wait_bounded "$tpid" 10
		TOOL_PIDS=""; return 1
	fi
	fds=$FDS
	load_mark "$NOFP_PID" "$tpid"
	sleep_until "$(calc "$T_FIRST + $COMP_SECS")"
	load_other "$NOFP_PID" "$tpid"
	stop_bpftrace "$tpid" "$fds"
	wait_bounded "$tpid" "$FINISH_MAX"; rc=$?
	TOOL_PIDS=""
	R[$tag:other]=$OTHER_PCT
	[ "$rc" -eq 0 ] || [ -n "$TIMED_OUT" ] || { log "$tag: failed ($rc)"; return 1; }
	read -r R[$tag:n] R[$tag:main] < <(awk '
		/^@\[/ { m = 0; next }
		/^ +main\+[0-9]+$/ { m = 1 }
		/^\]: / { n += $2; if (m) k += $2 }
		END { print n + 0, k + 0 }' "$out/stdout")
	R[$tag:bytes]=$(stat -c %s "$out/stdout")
	log "$tag: ${R[$tag:main]}/${R[$tag:n]} samples reach main; others used $OTHER_PCT% CPU"
}

# --------------------------------------------------- C. unwind tables

# table_row FILE: bench_unwind's figures for one object.  Fields under
# table:FILE: best med rows bytes fdes size ehsize.
table_row() {
	local f=$1 line hex
	line=$($NORMAL "$BENCH_UNWIND" -n "$TABLE_RUNS" "$f" 2>&1 | head -n1)
	log "table: $line"
	R[table:$f:best]=$(printf '%s' "$line" | sed -n 's/.*: best \([0-9.]*\) ms.*/\1/p')
	R[table:$f:med]=$(printf '%s' "$line" | sed -n 's/.*median \([0-9.]*\) ms.*/\1/p')
	R[table:$f:rows]=$(printf '%s' "$line" | sed -n 's/.*ms; \([0-9]*\) rows.*/\1/p')
	R[table:$f:bytes]=$(printf '%s' "$line" | sed -n 's/.* rows, \([0-9]*\) bytes.*/\1/p')
	R[table:$f:fdes]=$(printf '%s' "$line" | sed -n 's/.* \([0-9]*\) FDEs.*/\1/p')
	R[table:$f:size]=$(stat -L -c %s "$f")
	# .eh_frame's size (readelf -SW: "[Nr] Name Type Addr Off Size ...")
	hex=$(readelf -SW "$f" 2>/dev/null |
		awk '{ sub(/^ *\[ *[0-9]+\] */, "") } $1 == ".eh_frame" { print $5; exit }')
	R[table:$f:ehsize]=""
	case $hex in ?*[!0-9a-f]* | "") ;; *) R[table:$f:ehsize]=$((16#$hex)) ;; esac
	[ -n "${R[table:$f:med]}" ]
}

# ------------------------------------------------------------------- run

FOREIGN=$(bpftool prog show 2>/dev/null | grep -c ' perf_event ')
[ "$FOREIGN" -gt 0 ] && log "warning: $FOREIGN perf_event BPF programs already loaded"
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
T_START=$(now)
sysctl -q -w kernel.bpf_stats_enabled=1 >/dev/null || die "cannot enable kernel.bpf_stats_enabled"

# A: repetitions rotate the order of the three tools.
KINDS=(dwarf fp bpftrace)
for hz in $HZ "$HZ_HI"; do
	secs=$SECS; [ "$hz" = "$HZ" ] || secs=$HI_SECS
	for r in $(seq 1 "$REPS"); do
		log "A: rep $r/$REPS at $hz Hz for $secs s"
		for i in 0 1 2; do
			k=${KINDS[$(((i + r - 1) % 3))]}
			run_cost "$k" "$k-$hz-$r" "$hz" "$secs"
		done
	done
done
log "A: the three at once at $HZ Hz for $SECS s, then at $HZ_HI Hz for $HI_SECS s"
run_together $HZ "$SECS"
run_together "$HZ_HI" "$HI_SECS"
FRAMES_DWARF=$(user_frames_cprof "$RAW/dwarf-$HZ-1/profiles")
FRAMES_FP=$(user_frames_cprof "$RAW/fp-$HZ-1/profiles")
FRAMES_BT=$(user_frames_bpftrace "$RAW/bpftrace-$HZ-1/stdout")

# B: one nofp process for every tool in turn.
log "B: stack completeness on nofp split, $COMP_SECS s per tool at $HZ Hz"
NOFP_LIFE=$((8 * (COMP_SECS + 20) + 5 * FINISH_MAX))
$NORMAL "$NOFP" split "$NOFP_LIFE" >"$RAW/nofp.out" &
NOFP_PID=$!
sleep 1
comp_cprof dwarf
comp_cprof fp
comp_perf dwarf
comp_perf fp
comp_bpftrace
kill "$NOFP_PID" 2>/dev/null; wait "$NOFP_PID" 2>/dev/null; NOFP_PID=""

# C: which objects.  The largest shared library: the biggest *.so* ELF
# file under the usual places (not /proc, /sys, /tmp).
log "C: unwind tables"
$NORMAL make -s -C "$ROOT" build/tests/bench_unwind >"$RAW/make-bench_unwind.log" 2>&1 ||
	log "warning: could not rebuild bench_unwind (see $RAW/make-bench_unwind.log)"
LIBC=$(realpath "$(ldconfig -p | awk '$1 == "libc.so.6" && /x86-64/ { print $NF; exit }')" 2>/dev/null)
[ -f "$LIBC" ] || LIBC=$(realpath /lib/x86_64-linux-gnu/libc.so.6)
PY=$(realpath "$(PATH=/usr/local/bin:/usr/bin:/bin command -v python3)" 2>/dev/null)
LIBPY=$(ls /usr/lib/x86_64-linux-gnu/libpython3*.so.1.0 2>/dev/null | tail -n1)
LLVM=$(ls -S /usr/lib/x86_64-linux-gnu/libLLVM*.so* /usr/lib/llvm-*/lib/libclang-cpp.so* 2>/dev/null | head -n1)
[ -n "$LLVM" ] && LLVM=$(realpath "$LLVM")
LARGEST=$(timeout 120 $NORMAL find / -xdev \( -path /proc -o -path /sys -o -path /dev -o -path /run \
	-o -path /tmp -o -path /var/tmp \) -prune -o -name '*.so*' -type f -size +10M -printf '%s %p\n' 2>/dev/null |
	sort -rn | while read -r _ p; do
		[ "$(head -c4 "$p" 2>/dev/null | od -An -c | tr -d ' ')" = '177ELF' ] && { echo "$p"; break; }
	done)
TABLE_FILES=()
for f in "$LIBC" "$PY" "$LIBPY" "$LLVM" "$LARGEST"; do
	[ -n "$f" ] && [ -f "$f" ] || continue
	case " ${TABLE_FILES[*]} " in *" $f "*) continue ;; esac
	TABLE_FILES+=("$f")
done
if [ -x "$BENCH_UNWIND" ]; then
	for f in "${TABLE_FILES[@]}"; do table_row "$f" || log "table: $f failed"; done
else
	log "C: $BENCH_UNWIND missing: skipped"
fi

# D: whole host, like `make run`, with our workloads in it.
log "D: whole host for $HOST_SECS s at $HZ Hz"
host_run() {
	local out=$RAW/host tpid cpid f k v ids="" rc
	mkdir -p "$out"
	start_busy 2 20 "$HOST_SECS"
	$NORMAL "$NOFP" split $((HOST_SECS + FINISH_MAX + 60)) >/dev/null &
	WL_PIDS="$WL_PIDS $!"
	$NORMAL /usr/bin/time -f "$TIMEFMT" -o "$out/time" \
		"$CPROF" --duration "$HOST_SECS" -F $HZ --output-dir "$out/profiles" \
		--json-summary "$out/summary.json" >"$out/stdout" 2>"$out/stderr" &
	tpid=$!
	cpid=$(child_of "$tpid") || { log "D: cprof-bpf did not start"; wait "$tpid"; stop_workload; return 1; }
	TOOL_PIDS=$cpid
	wait_first_sample "$cpid" || { log "D: no samples"; wait_bounded "$tpid" 10 "$cpid"; TOOL_PIDS=""; stop_workload; return 1; }
	load_mark $WL_PIDS "$cpid"
	sleep_until "$(near_end "$T_FIRST" "$HOST_SECS")"
	load_other $WL_PIDS "$cpid"
	foreign "$P_IDS"
	R[host:other]=$OTHER_PCT R[host:foreign]=$FOREIGN_NOW
	for f in /proc/"$cpid"/fdinfo/*; do
		while read -r k v; do
			[ "$k" = map_id: ] && ids="$ids${ids:+,}$v"
		done 2>/dev/null <"$f"
	done
	bpftool map show --json >"$out/maps.json" 2>/dev/null
	R[host:vmhwm]=$(awk '/^VmHWM:/ { print $2 }' /proc/"$cpid"/status)
	# Once sampling is over, freeze the workload (SIGSTOP): the agent then
	# writes its files without competing with it.
	sleep_until "$(calc "$T_FIRST + $HOST_SECS + 0.5")"
	# shellcheck disable=SC2086
	kill -STOP $WL_PIDS 2>/dev/null
	if command -v jq >/dev/null; then
		jq --argjson ids "[$ids]" '[.[] | select(.id as $i | $ids | index($i))]' \
			"$out/maps.json" >"$out/ours.json"
		R[host:maps]=$(jq length "$out/ours.json")
		R[host:memlock]=$(jq '[.[].bytes_memlock // 0] | add // 0' "$out/ours.json")
		R[host:topmaps]=$(jq -r 'sort_by(-(.bytes_memlock // 0)) | .[:8][] |
			"\(.name // "?") (\(.type), \(.max_entries) × \(.bytes_key)+\(.bytes_value) B): \((.bytes_memlock // 0) / 1048576 * 100 | round / 100) MiB"' \
			"$out/ours.json" | paste -sd ';' | sed 's/;/; /g')
	else
		log "D: jq missing: no BPF map memory figure"
	fi
	wait_bounded "$tpid" "$FINISH_MAX" "$cpid"; rc=$?
	TOOL_PIDS=""
	stop_workload
	if [ -n "$TIMED_OUT" ]; then
		log "D: cprof-bpf still writing after $FINISH_MAX s: stopped"
		R[host:timedout]=1
	elif [ "$rc" -ne 0 ]; then
		log "D: cprof-bpf failed ($rc)"; tail -n5 "$out/stderr" >&2; return 1
	fi
	read -r _ u s 'R[host:rss]' < <(tail -n1 "$out/time")
	R[host:cpu]=$(calc "$u + $s" %.2f)
	cprof_summary "$out/summary.json"
	R[host:tables]=$S_TABLES R[host:samples]=$S_SAMPLES
	R[host:procs]=$(jget "$out/summary.json" processes)
	R[host:files]=$(jget "$out/summary.json" output.profiles)
	log "D: peak RSS ${R[host:rss]} KiB; ${R[host:maps]} maps, ${R[host:memlock]} bytes memlock;" \
		"tables: ${R[host:tables]}; others used $OTHER_PCT% CPU"
}
host_run

sysctl -q -w kernel.bpf_stats_enabled="$OLD_STATS" >/dev/null
T_TOTAL=$(calc "$EPOCHREALTIME - $T_START" %.0f)

# ---------------------------------------------------------------- report

median() { median_fmt %.0f "$@"; }
field() { local r; for r in $(seq 1 "$REPS"); do g "$1-$2-$r:$3"; echo; done; }

for hz in $HZ "$HZ_HI"; do
	for k in dwarf fp bpftrace; do
		# shellcheck disable=SC2046
		R[$k-$hz:med]=$(median $(field "$k" "$hz" nsw))
		# shellcheck disable=SC2046
		R[$k-$hz:medrun]=$(median $(field "$k" "$hz" ns))
	done
done

noisy_runs

cost_rows() {	# cost_rows HZ
	local hz=$1 r k
	for r in $(seq 1 "$REPS"); do
		printf '| %s Hz | %s |' "$hz" "$r"
		for k in dwarf fp bpftrace; do
			printf ' %s | %s | %s | **%s** |' "$(g "$k-$hz-$r:cnt")" "$(g "$k-$hz-$r:ns")" \
				"$(g "$k-$hz-$r:share")" "$(g "$k-$hz-$r:nsw")"
		done
		printf ' %s | %s |\n' "$(ratio "$(g "dwarf-$hz-$r:nsw")" "$(g "bpftrace-$hz-$r:nsw")")" \
			"$(ratio "$(g "dwarf-$hz-$r:nsw")" "$(g "fp-$hz-$r:nsw")")"
	done
	printf '| %s Hz | **median** | | %s | | **%s** | | %s | | **%s** | | %s | | **%s** | **%s** | **%s** |\n' "$hz" \
		"$(g "dwarf-$hz:medrun")" "$(g "dwarf-$hz:med")" "$(g "fp-$hz:medrun")" "$(g "fp-$hz:med")" \
		"$(g "bpftrace-$hz:medrun")" "$(g "bpftrace-$hz:med")" \
		"$(ratio "$(g "dwarf-$hz:med")" "$(g "bpftrace-$hz:med")")" \
		"$(ratio "$(g "dwarf-$hz:med")" "$(g "fp-$hz:med")")"
	printf '| %s Hz | at once | %s | **%s** | | | %s | **%s** | | | %s | **%s** | | | **%s** | **%s** |\n' "$hz" \
		"$(g "together-$hz:dwarf-cnt")" "$(g "together-$hz:dwarf-ns")" \
		"$(g "together-$hz:fp-cnt")" "$(g "together-$hz:fp-ns")" \
		"$(g "together-$hz:bpftrace-cnt")" "$(g "together-$hz:bpftrace-ns")" \
		"$(ratio "$(g "together-$hz:dwarf-ns")" "$(g "together-$hz:bpftrace-ns")")" \
		"$(ratio "$(g "together-$hz:dwarf-ns")" "$(g "together-$hz:fp-ns")")"
}

comp_row() {	# comp_row TAG LABEL
	local t=$1
	printf '| %s | %s | %s | **%s%%** | %s | %s |\n' "$2" "$(g "$t:n")" "$(g "$t:main")" \
		"$(pct "$(g "$t:main")" "$(g "$t:n")")" "$(g "$t:bytes")" "${3:-$(g "$t:bps")}"
}

table_rows() {
	local f ms
	for f in "${TABLE_FILES[@]}"; do
		[ -n "$(g "table:$f:med")" ] || { printf '| `%s` | %s | | failed | | | | | |\n' "$f" "$(mib "$(g "table:$f:size")")"; continue; }
		ms=$(calc "$(g "table:$f:med") / ($(g "table:$f:size") / 104857600)" %.1f)
		printf '| `%s` | %s | %s | %s / **%s** | %s | %s | %s | %s | %s |\n' "$f" \
			"$(mib "$(g "table:$f:size")")" "$(mib "$(g "table:$f:ehsize")")" \
			"$(g "table:$f:best")" "$(g "table:$f:med")" "$(g "table:$f:fdes")" \
			"$(g "table:$f:rows")" "$(mib "$(g "table:$f:bytes")")" \
			"$(calc "$(g "table:$f:bytes") / ($(g "table:$f:rows") > 0 ? $(g "table:$f:rows") : 1)" %.0f)" "$ms"
	done
}

# targets
T_HI_PASS=n/a T_BIG=""
for f in "${TABLE_FILES[@]}"; do
	[ -n "$(g "table:$f:med")" ] || continue
	# "< 1 s for a 100 MB library": every object of 100 MB or more
	if [ "$(g "table:$f:size")" -ge 104857600 ]; then
		T_BIG="$T_BIG $(basename "$f") $(g "table:$f:med") ms;"
		[ "$(pass "$(g "table:$f:med") < 1000")" = PASS ] && [ "$T_HI_PASS" != FAIL ] && T_HI_PASS=PASS ||
			T_HI_PASS=FAIL
	fi
done
T_LIBC=$(passif "$(g "table:$LIBC:med")" "<" 30)

# cprof-bpf's bytes a sample: its file plus what it copied out of BPF maps
CPROF_BPS=""
[ -n "$(g comp-cprof-dwarf:tps)" ] && [ -n "$(g comp-cprof-dwarf:bps)" ] &&
	CPROF_BPS=$(($(g comp-cprof-dwarf:tps) + $(g comp-cprof-dwarf:bps)))

CPU_MODEL=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)
OS=$(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME")
HOST_SUMMARY="${R[host:samples]:-?} samples of ${R[host:procs]:-?} processes, ${R[host:files]:-?} files"

section() {
	cat <<EOF
<!-- BEGIN unwind -->
## Unwinding: DWARF cost and completeness vs frame pointers, bpftrace and perf

Generated by \`bench/unwind.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC') in $T_TOTAL s; the next run
replaces everything between the "unwind" markers.  Raw logs: \`$RAW\`.

- Host: ${CPU_MODEL:-?}, $NCPU CPUs; kernel $(uname -r); ${OS:-?}
- cprof-bpf $("$CPROF" --version 2>/dev/null | awk '{ print $NF }') ($BUILD_DESC); $(bpftrace --version 2>/dev/null); $(perf --version 2>/dev/null)
- Load average before the run: $LOAD_BEFORE.  CPU used by processes other
  than the workload and the tool under test during each run, % of all
  CPUs (and perf_event BPF programs of others loaded meanwhile):
  $OTHERS.
$(if [ -n "$NOISY" ]; then printf '  **The host was not quiet (over 10%% used by others, or foreign BPF\n  programs) during%s: those figures are noisy.**' "$NOISY"; else echo "  The host was quiet throughout."; fi)

### A. BPF ns/sample: DWARF unwinding vs frame-pointer walks

Workload: $NCPU × \`build/workloads/busy N $DEPTH\` (built with frame pointers;
$NCPU CPU-bound processes on $NCPU CPUs), started afresh 1 s before each run.
Its heaviest stack: cprof-bpf DWARF ${FRAMES_DWARF%% *} frames
(\`_start\` → \`busy_leaf\`), cprof-bpf fp ${FRAMES_FP%% *}, bpftrace ${FRAMES_BT%% *}
(a frame-pointer walk stops at \`__libc_start_call_main\`, which has no frame
pointer).  Every tool is restricted to the workload, cprof-bpf in its BPF
program and bpftrace by a predicate, so all three run on the same ticks
(every tick of every CPU: the predicate is inside the program):

\`\`\`sh
cprof-bpf --duration S -F HZ --pid A,B --unwind dwarf --output-dir DIR
cprof-bpf --duration S -F HZ --pid A,B --unwind fp --output-dir DIR
bpftrace -e 'profile:hz:HZ /pid == A || pid == B/ { @[ustack, kstack] = count(); }'   # SIGINT after S
\`\`\`

S = $SECS s at $HZ Hz, $HI_SECS s at $HZ_HI Hz; $REPS repetitions of each, the order
of the three rotating; then the three at once on one workload, their
counters read at the same two moments.  **ns/run** = run_time_ns /
run_cnt of the tool's own perf_event programs (kernel.bpf_stats_enabled,
from /proc/PID/fdinfo; the whole run, first samples included).  Ticks
that land on other processes (other users of the host, idle) are
rejected after a cheap test, so ns/run is diluted by them, differently
from run to run; **ns/sample** = run_time_ns / samples of the workload in
the tool's output (the rejections' cost included: an upper bound) is the
figure compared.  "share" = workload samples / program runs.  At once:
same ticks, same rejections for all three, so the ns/run ratio is the
per-sample ratio; each warms the caches for the others.

| rate | rep | DWARF runs | ns/run | share | **ns/sample** | fp runs | ns/run | share | **ns/sample** | bpftrace runs | ns/run | share | **ns/sample** | DWARF/bpftrace | DWARF/fp |
|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|
$(cost_rows $HZ)
$(cost_rows "$HZ_HI")
$( [ -n "$ODD" ] && printf '\n**Program run counts off by more than 20%% from HZ × CPUs × S:%s.**\n' "$ODD")

### B. Stack completeness on a frame-pointer-less binary

Workload: one \`build/workloads/nofp split\` (-O2 -fomit-frame-pointer;
main → stage_one → stage_two → work_hot/work_cold, time in loops and in
clock_gettime), the same process for every tool in turn, $COMP_SECS s each at $HZ Hz:

\`\`\`sh
cprof-bpf --duration $COMP_SECS -F $HZ --pid N [--unwind fp] --output-dir DIR
perf record --call-graph dwarf -F $HZ -p N -o perf.data -- sleep $COMP_SECS; perf script
perf record -g -F $HZ -p N -o perf.data -- sleep $COMP_SECS; perf script
bpftrace -e 'profile:hz:$HZ /pid == N/ { @[ustack] = count(); }'   # SIGINT after $COMP_SECS s
\`\`\`

Complete = the stack reaches \`main\` (cprof-bpf: the profile read back with
\`go tool pprof -raw\`; perf: a \`main+0x…\` line in the sample's callchain;
bpftrace: a \`main+N\` line in the printed stack).  Bytes per sample:
cprof-bpf, the gzipped pprof file (each distinct stack once, with its
count: it grows with distinct stacks, and this workload has few, so the
map traffic below is the fairer figure); perf, perf.data (a copy of 8 KiB
of user stack and the registers in every sample).

| tool | samples | reach main | complete | output bytes | bytes/sample |
|---|---:|---:|---:|---:|---:|
$(comp_row comp-cprof-dwarf "cprof-bpf (DWARF)")
$(comp_row comp-cprof-fp "cprof-bpf --unwind fp")
$(comp_row comp-perf-dwarf "perf record --call-graph dwarf")
$(comp_row comp-perf-fp "perf record -g")
$(comp_row comp-bpftrace "bpftrace @[ustack]" "n/a (counted in the kernel; printed text)")

cprof-bpf (DWARF) user stacks: $(g comp-cprof-dwarf:cfi) by CFI, $(g comp-cprof-dwarf:fponly) by frame
pointers only (the first samples of a process, before its tables are built).
Data cprof-bpf copied out of its BPF maps over the run (its drains,
\`BPF_MAP_LOOKUP_AND_DELETE_BATCH\` entries × (key + value size), from
\`strace -e trace=bpf\`; a stack value is a fixed 4104 bytes, and a stack
seen again in a later 1 s drain is copied again): $(g comp-cprof-dwarf:traffic) bytes,
**$(g comp-cprof-dwarf:tps) bytes/sample**; file plus map traffic:
${CPROF_BPS:-n/a} bytes/sample vs perf --call-graph dwarf's $(g comp-perf-dwarf:bps)
($(ratio "$CPROF_BPS" "$(g comp-perf-dwarf:bps)")×).

### C. Unwind tables: build time and size

\`build/tests/bench_unwind -n $TABLE_RUNS FILE\` (the loader's own
\`unwind_build_fd()\`: .eh_frame → sorted rows; userspace only, page cache
warm; best / median of $TABLE_RUNS builds).  The largest shared library is the
biggest \`*.so*\` ELF file on the root filesystem.

| object | file MiB | .eh_frame MiB | build ms best / **median** | FDEs | rows | table MiB | bytes/row | ms per 100 MiB of file |
|---|---:|---:|---:|---:|---:|---:|---:|---:|
$(table_rows)

### D. Whole-host run: agent memory

\`/usr/bin/time -f '%e %U %S %M' cprof-bpf --duration $HOST_SECS -F $HZ --output-dir DIR\` with 2 × busy (depth 20) and
1 × nofp split running, plus whatever else ran: $HOST_SUMMARY.
BPF map memory = the sum of \`bytes_memlock\` (\`bpftool map show --json\`) of
the ${R[host:maps]:-?} maps the agent holds (their ids from /proc/PID/fdinfo), 1 s
before the end of sampling; hash maps without preallocation count what they
hold at that moment.

| figure | value |
|---|---:|
| agent peak RSS (GNU time maxrss)$([ -n "${R[host:timedout]:-}" ] && echo ", stopped after $FINISH_MAX s of writing") | **$(calc "${R[host:rss]:-0} / 1024" %.1f) MiB** |
| agent VmHWM 1 s before the end of sampling | $(calc "${R[host:vmhwm]:-0} / 1024" %.1f) MiB |
| agent CPU (user+sys) | ${R[host:cpu]:-n/a} s |
| BPF map memory (bytes_memlock, ${R[host:maps]:-?} maps) | **$(mib "${R[host:memlock]:-}") MiB** |

Largest maps: ${R[host:topmaps]:-n/a}.
Unwind tables (its summary): ${R[host:tables]:-n/a}.

### Targets

| target | figure | |
|---|---|---|
| DWARF ns/sample within 1.5× of bpftrace's frame-pointer walk, $HZ Hz, median of $REPS | $(g dwarf-$HZ:med) vs $(g bpftrace-$HZ:med) ns ($(ratio "$(g dwarf-$HZ:med)" "$(g bpftrace-$HZ:med)")×) | **$(passif "$(ratio "$(g dwarf-$HZ:med)" "$(g bpftrace-$HZ:med)")" "<=" 1.5)** |
| … at $HZ_HI Hz | $(g dwarf-$HZ_HI:med) vs $(g bpftrace-$HZ_HI:med) ns ($(ratio "$(g dwarf-$HZ_HI:med)" "$(g bpftrace-$HZ_HI:med)")×) | **$(passif "$(ratio "$(g dwarf-$HZ_HI:med)" "$(g bpftrace-$HZ_HI:med)")" "<=" 1.5)** |
| … at once, $HZ Hz / $HZ_HI Hz | $(ratio "$(g together-$HZ:dwarf-ns)" "$(g together-$HZ:bpftrace-ns)")× / $(ratio "$(g together-$HZ_HI:dwarf-ns)" "$(g together-$HZ_HI:bpftrace-ns)")× | $(passif "$(ratio "$(g together-$HZ:dwarf-ns)" "$(g together-$HZ:bpftrace-ns)")" "<=" 1.5) / $(passif "$(ratio "$(g together-$HZ_HI:dwarf-ns)" "$(g together-$HZ_HI:bpftrace-ns)")" "<=" 1.5) |
| DWARF within 1.5× of cprof-bpf --unwind fp, $HZ Hz, median of $REPS | $(g dwarf-$HZ:med) vs $(g fp-$HZ:med) ns ($(ratio "$(g dwarf-$HZ:med)" "$(g fp-$HZ:med)")×) | **$(passif "$(ratio "$(g dwarf-$HZ:med)" "$(g fp-$HZ:med)")" "<=" 1.5)** |
| … at $HZ_HI Hz | $(g dwarf-$HZ_HI:med) vs $(g fp-$HZ_HI:med) ns ($(ratio "$(g dwarf-$HZ_HI:med)" "$(g fp-$HZ_HI:med)")×) | **$(passif "$(ratio "$(g dwarf-$HZ_HI:med)" "$(g fp-$HZ_HI:med)")" "<=" 1.5)** |
| … at once, $HZ Hz / $HZ_HI Hz | $(ratio "$(g together-$HZ:dwarf-ns)" "$(g together-$HZ:fp-ns)")× / $(ratio "$(g together-$HZ_HI:dwarf-ns)" "$(g together-$HZ_HI:fp-ns)")× | $(passif "$(ratio "$(g together-$HZ:dwarf-ns)" "$(g together-$HZ:fp-ns)")" "<=" 1.5) / $(passif "$(ratio "$(g together-$HZ_HI:dwarf-ns)" "$(g together-$HZ_HI:fp-ns)")" "<=" 1.5) |
| bytes/sample, file + map traffic, below perf --call-graph dwarf's (≈ 8.4 KB) | ${CPROF_BPS:-n/a} vs $(g comp-perf-dwarf:bps) | $(passif "$CPROF_BPS" "<" "$(g comp-perf-dwarf:bps)") |
| libc table build < 30 ms (median) | $(g "table:$LIBC:med") ms | **$T_LIBC** |
| 100 MB library < 1 s (median, each ≥ 100 MB above) | ${T_BIG:- none of 100 MB found} | **$T_HI_PASS** |

<!-- END unwind -->
EOF
}

NEW=$RAW/section.md
section >"$NEW"
publish_section unwind "$NEW"
sed -n '/^### Targets/,/^<!-- END unwind/p' "$NEW" >&2
