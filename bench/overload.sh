#!/bin/bash
# bench/overload.sh: the profiler on an overloaded host (issue 13), beside
# perf record under the same load.
#
#   load      2000 threads spin for LOAD_SECS in the profiler's own session
#             (build/workloads/spin starts the tool as its child, as
#             `spin & cprof-bpf` from a terminal would), at the priority a
#             user's would have; `--duration 5 -F 99`: the busy process's
#             samples, when sampling began after launch, when the last
#             profile was written after the end of sampling, launch to exit.
#             With the priority boost (REPS runs) and without (1 run).
#   maps      the same load beside a process of 30000 mappings whose thread
#             keeps mapping and running new code: the write time.
#   perf      `perf record -a -g -F 99 -- sleep 5` under the same load, as
#             started and with `nice -n -20`.
#   idle      `--duration 1` on the host as it is: when sampling began.
#   before    with OVERLOAD_BEFORE=BINARY, one load run of that build (one
#             from before the boost: it tells no start, "-").
#
# Results replace the "overload" section of bench/RESULTS.md.  Needs root.
if [ -z "${BASH_VERSION:-}" ]; then exec bash "$0" "$@"; fi
. "$(dirname "$0")/env.sh"
SPIN=$ROOT/build/workloads/spin
MAPCHURN=$ROOT/build/workloads/mapchurn
REPS=${OVERLOAD_REPS:-3}
IDLE_REPS=${OVERLOAD_IDLE_REPS:-5}
LOAD_SECS=${OVERLOAD_LOAD_SECS:-6.5}
THREADS=${OVERLOAD_THREADS:-2000}
NCPU=$(nproc)
FINISH_MAX=60
BPF_PROG_TYPE_PERF_EVENT=7


bench_require "$CPROF" "$SPIN" "$MAPCHURN" -- perf go setsid

. "$ROOT/bench/lib.sh"
bench_init cprof-bench-overload
. "$ROOT/tests/e2e/lib.sh" # folded, sum_where
export HOME=$RAW
log "raw logs in $RAW"
MC=""
trap '[ -n "$MC" ] && kill $MC 2>/dev/null' EXIT

# summary FILE REGEX: the first group of REGEX in the summary FILE, or "-".
summary() {
	local v
	v=$(sed -nE "s/.*$2.*/\\1/p" "$1" | head -n1)
	echo "${v:--}"
}

# spin_samples DIR SPINOUT: the samples of spin's process in DIR's profiles.
spin_samples() {
	local pid
	pid=$(sed -n 's/^pid //p' "$2")
	[ -f "$1/spin-$pid.pb.gz" ] || { echo 0; return; }
	folded "$1/spin-$pid.pb.gz" >"$1.folded"
	sum_where "$1.folded" .
}

# other_pct H0 T0 T1 CPU: % of all CPUs used between T0 and T1 by other
# than the busy process (whose CPU is CPU s; the tool is counted in),
# from the host's busy jiffies H0 at T0 and now.  (The busy process has
# exited: its jiffies cannot be read.)
other_pct() {
	cpu_jiffies
	calc "100 * (($J_HOST - $1) / $CLK_TCK - $4) / ($NCPU * ($3 - $2))" %.0f
}

# load_run NAME [CPROF ARGS...]: one run of the tool under the load; prints
# a table row.  The bench itself runs SCHED_FIFO (bench/lib.sh), so its
# clock readings are on time; what it starts runs at normal priority.
load_run() {
	local name=$1 out=$RAW/$1 t0 t1 h0 cpu wall got expect began sampled wrote done
	shift
	cpu_jiffies
	h0=$J_HOST t0=$EPOCHREALTIME
	setsid $NORMAL "$SPIN" "$THREADS" "$LOAD_SECS" "${BIN:-$CPROF}" --duration 5 -F 99 -v \
		--output-dir "$out" "$@" >"$out.spin" 2>"$out.err"
	t1=$EPOCHREALTIME
	cpu=$(sed -n 's/^cpu //p' "$out.spin")
	wall=$(sed -n 's/^wall //p' "$out.spin")
	got=$(spin_samples "$out" "$out.spin")
	expect=$(calc "99 * 5 * $cpu / $wall" %.0f)
	began=$(summary "$out.err" 'sampling began ([0-9]+) ms after launch')
	sampled=$(summary "$out.err" 'sampled ([0-9.]+) s at')
	wrote=$(summary "$out.err" 'profiles \([0-9]+ samples\) to .* in ([0-9.]+) s')
	done=-
	[ "$began" != - ] && done=$(calc "($began / 1000) + $sampled + $wrote" %.2f)
	log "$name: $got samples of spin (its CPU: $cpu s in $wall s), began $began ms, wrote $wrote s"
	echo "| $name | $got | $(calc "$NCPU * 99 * 5" %.0f) / $expect | $began | $sampled | $wrote | $done | $(calc "$t1 - $t0" %.2f) | $(other_pct "$h0" "$t0" "$t1" "$cpu")% |"
}

ROWS=$RAW/rows.md
: >"$ROWS"
for i in $(seq "$REPS"); do
	load_run "boost-$i" >>"$ROWS"
done
load_run "no-boost" --no-priority-boost >>"$ROWS"
# OVERLOAD_BEFORE=BINARY: a build from before the boost, for comparison.
if [ -n "${OVERLOAD_BEFORE:-}" ]; then
	BIN=$OVERLOAD_BEFORE load_run "before" >>"$ROWS"
fi

# --- the same load beside 30000 changing mappings --------------------------------
MAPROWS=$RAW/maprows.md
: >"$MAPROWS"
$NORMAL "$MAPCHURN" 30000 $((REPS * 12 + 30)) >"$RAW/mc.pid" &
MC=$!
sleep 0.5
for i in $(seq "$REPS"); do
	load_run "maps-$i" >>"$ROWS"
	out=$RAW/maps-$i
	mcpid=$(head -n1 "$RAW/mc.pid")
	mcgot=0
	if [ -f "$out/mapchurn-$mcpid.pb.gz" ]; then
		folded "$out/mapchurn-$mcpid.pb.gz" >"$out.mc.folded"
		mcgot=$(sum_where "$out.mc.folded" .)
	fi
	echo "| maps-$i | $(summary "$out.err" 'profiles \([0-9]+ samples\) to .* in ([0-9.]+) s') | $(summary "$out.err" 're-snapshots: ([0-9]+) taken') | $mcgot | $(summary "$out.err" 'wrote ([0-9]+) profiles') |" >>"$MAPROWS"
done
kill $MC 2>/dev/null
wait $MC 2>/dev/null
MC=""

# --- perf record under the same load, as started and at nice -20 ------------------
# perf_run NAME [PREFIX...]: a table row for `PREFIX perf record` under the load.
perf_run() {
	local name=$1 t0 t1 h0 spid got all cpu wall
	shift
	cpu_jiffies
	h0=$J_HOST t0=$EPOCHREALTIME
	setsid $NORMAL "$SPIN" "$THREADS" "$LOAD_SECS" "$@" perf record -q -a -g -F 99 \
		-o "$RAW/$name.data" -- sleep 5 >"$RAW/$name.spin" 2>"$RAW/$name.err"
	t1=$EPOCHREALTIME
	spid=$(sed -n 's/^pid //p' "$RAW/$name.spin")
	cpu=$(sed -n 's/^cpu //p' "$RAW/$name.spin")
	wall=$(sed -n 's/^wall //p' "$RAW/$name.spin")
	perf script -i "$RAW/$name.data" -F pid 2>/dev/null >"$RAW/$name.pids"
	got=$(awk -v p="$spid" '$1 == p' "$RAW/$name.pids" | wc -l)
	all=$(wc -l <"$RAW/$name.pids")
	log "$name: $got samples of spin, $all in all"
	echo "| $name | $got (of $all) | $(calc "$NCPU * 99 * 5" %.0f) / $(calc "99 * 5 * $cpu / $wall" %.0f) | | 5 | | | $(calc "$t1 - $t0" %.2f) | $(other_pct "$h0" "$t0" "$t1" "$cpu")% |"
}
perf_run "perf record -a -g" >>"$ROWS"
perf_run "nice -n -20 perf record -a -g" nice -n -20 >>"$ROWS"

# --- idle host: when sampling begins ----------------------------------------------
idle_starts() { # ARGS...: the start figures of IDLE_REPS runs, space-separated
	local i s=""
	for i in $(seq "$IDLE_REPS"); do
		$NORMAL "$CPROF" --duration 1 -v --output-dir "$RAW/idle" "$@" 2>"$RAW/idle.err"
		s="$s $(summary "$RAW/idle.err" 'sampling began ([0-9]+) ms after launch')"
		rm -rf "$RAW/idle"
	done
	echo $s
}
load_mark
IDLE=$(idle_starts)
IDLE_NB=$(idle_starts --no-priority-boost)
load_other
IDLE_OTHER=$OTHER_PCT

{
	echo "<!-- BEGIN overload -->"
	echo "## Overload: $THREADS busy threads in the profiler's session (issue 13)"
	echo
	echo "Generated by \`bench/overload.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC'); the next run"
	echo "replaces everything between the \"overload\" markers."
	echo
	echo "- Host: $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $NCPU CPUs; kernel $(uname -r)"
	echo "- cprof-bpf $BUILD_DESC; $(perf --version)"
	echo "- Load: \`setsid build/workloads/spin $THREADS $LOAD_SECS TOOL...\`: $THREADS threads made,"
	echo "  then spinning for $LOAD_SECS s while the tool, started as they are made, runs"
	echo "  in their session (its autogroup) at their priority.  The machine is"
	echo "  shared: \"other\" is the CPU used by all but the busy process (the tool"
	echo "  and, in the maps runs, mapchurn included), % of all CPUs."
	echo
	echo "| run | busy process's samples | expected: host to itself / for the CPU it had | sampling began, ms after launch | sampled, s | profiles written, s after sampling | launch to written, s | launch to exit (load included), s | other |"
	echo "|---|---|---|---|---|---|---|---|---|"
	cat "$ROWS"
	echo
	echo "Expected samples: 99 Hz x 5 s x the CPUs the busy process had, from its"
	echo "own CPU time over its spinning (\`cpu\` / \`wall\` that spin prints):"
	echo "$NCPU x 99 x 5 when nothing else runs.  Launch to written = the"
	echo "summary's start, sampled and write figures added.${OVERLOAD_BEFORE:+  \"before\": $OVERLOAD_BEFORE_DESC.}"
	echo
	echo "Beside a process of 30000 mappings (\`build/workloads/mapchurn 30000\`)"
	echo "whose thread keeps mapping, running and unmapping code, under the same load:"
	echo
	echo "| run | profiles written, s after sampling | re-snapshots | its samples | profiles |"
	echo "|---|---|---|---|---|"
	cat "$MAPROWS"
	echo
	echo "Idle host (as shared: other $IDLE_OTHER%), \`--duration 1\`, $IDLE_REPS runs each,"
	echo "sampling began after launch (ms):"
	echo
	echo "- boosted: $IDLE (median $(median_fmt %.0f $IDLE))"
	echo "- --no-priority-boost: $IDLE_NB (median $(median_fmt %.0f $IDLE_NB))"
	echo
	echo "Reading: started among the load at the load's priority, a tool waits for"
	echo "a CPU before it can do anything, its own start-up included: without the"
	echo "boost (and in the build from before it) cprof-bpf began sampling only"
	echo "once the load had gone.  perf record, started the same way, did no"
	echo "better here, nor under \`nice -n -20\` (its start-up among the load at"
	echo "nice -20 still took seconds).  The boosted agent needs a few ms of CPU"
	echo "at the load's priority (exec, the dynamic loader, its options) before"
	echo "it raises itself; then the BPF verifier runs in the real-time class."
	echo
	echo "Launch is the fork of the process (its start time in /proc/PID/stat);"
	echo "sampling begins when its perf events have the BPF program attached."
	echo "Most of the start is the BPF verifier (about 0.3-0.5 s of CPU here),"
	echo "run in the real-time class when boosted."
	echo "<!-- END overload -->"
} >"$RAW/section.md"
publish_section overload "$RAW/section.md"
cat "$RAW/section.md"
