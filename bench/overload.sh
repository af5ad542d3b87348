#!/bin/bash
# bench/overload.sh: the profiler on an overloaded host (issues 13 and 30),
# phase by phase, beside perf record under the same load.
#
#   load      2000 threads spin for LOAD_SECS (40 s: longer than any run)
#             in a session of their own; 2 s later, from a shell in that
#             session, the tool is started as a user would type it
#             (tests/e2e/lib.sh loaded_launch); the load stops once the
#             tool has exited.  exitwatch, outside the load in the
#             real-time class, sees the tool's fork, exec, raise and exit;
#             the profiles say when sampling began and how long it ran;
#             their mtimes when the last was written.  `--duration 5 -F 99`
#             as built (static) and linked dynamically (make STATIC=0),
#             REPS runs each; one with --no-priority-boost.
#   rtfirst   build/workloads/rtfirst (static, raises itself first thing)
#             started the same way: the floor no program can go below.
#   maps      the static build beside a process of 30000 mappings whose
#             thread keeps mapping and running new code.
#   perf      `perf record -a -g -F 99 -- sleep 5` started the same way, as
#             is and under `nice -n -20`.
#   old       the measure before issue 30 (spin starts the tool as its
#             child; the load stops 1.5 s after sampling ends).
#   idle      `--duration 1` on the host as it is: when sampling began.
#
# Results replace the "overload" section of bench/RESULTS.md.  Needs root.
if [ -z "${BASH_VERSION:-}" ]; then exec bash "$0" "$@"; fi
. "$(dirname "$0")/env.sh"
BUILD=build
SPIN=$ROOT/build/workloads/spin
MAPCHURN=$ROOT/build/workloads/mapchurn
RTFIRST=$ROOT/build/workloads/rtfirst
DYN_BIN=$ROOT/build-dyn/cprof-bpf
REPS=${OVERLOAD_REPS:-3}
FLOOR_REPS=${OVERLOAD_FLOOR_REPS:-5}
IDLE_REPS=${OVERLOAD_IDLE_REPS:-5}
LOAD_SECS=${OVERLOAD_LOAD_SECS:-40}
THREADS=${OVERLOAD_THREADS:-2000}
NCPU=$(nproc)
FINISH_MAX=60
BPF_PROG_TYPE_PERF_EVENT=7

bench_require "$CPROF" "$SPIN" "$MAPCHURN" "$RTFIRST" "$ROOT/build/workloads/exitwatch" -- \
	perf go setsid chrt
if [ ! -x "$DYN_BIN" ] || [ "$DYN_BIN" -ot "$CPROF" ]; then
	make -C "$ROOT" STATIC=0 build-dyn/cprof-bpf >&2 || die "could not build the dynamic binary"
fi

. "$ROOT/bench/lib.sh"
bench_init cprof-bench-overload
. "$ROOT/tests/e2e/lib.sh" # folded, sum_where, loaded_launch, profile_field
BUILD=$ROOT/build
export HOME=$RAW
LL_NORMAL=$NORMAL
log "raw logs in $RAW"
MC=""
trap '[ -n "$MC" ] && kill $MC 2>/dev/null' EXIT

# ms A B: B - A rounded, or "-" when either is unknown (-1 or empty).
ms() {
	if [ -z "$1" ] || [ -z "$2" ] || [ "${1%%.*}" -lt 0 ] || [ "${2%%.*}" -lt 0 ]; then
		echo -
	else
		calc "$2 - $1" %.0f
	fi
}

# num VALUE [FORMAT]: VALUE in FORMAT (%.0f), or "-" when it is empty or
# negative (unknown).
num() {
	case "$1" in
	"" | -*) echo - ;;
	*) calc "$1" "${2:-%.0f}" ;;
	esac
}

# samples_of FILE: the samples in a profile, 0 if it is missing.
samples_of() {
	[ -f "$1" ] || { echo 0; return; }
	folded "$1" >"$1.folded"
	sum_where "$1.folded" .
}

# phase_row NAME DIR: a row of the phase table from loaded_launch's LL_*
# and the run's profiles (in DIR/prof) and --json-summary (DIR/s.json).
phase_row() {
	local name=$1 d=$2 prof t0 t0ms dur last began got expect load drain tear life own
	prof=$d/prof/spin-$LL_SPIN.pb.gz
	t0="" t0ms="" dur="" last=""
	if [ -f "$prof" ]; then
		t0=$(profile_field "$prof" Time)
		t0ms=$(calc "$t0 * 1000" %.0f)
		dur=$(profile_field "$prof" Duration)
		last=$(stat -c %.9Y "$d"/prof/* | sort -n | tail -n1)
	fi
	got=$(samples_of "$prof")
	expect=$(num "$(calc "99 * ${dur:-5} * $LL_RATE")")
	began=- sampled=- wrote=- after=-
	if [ -n "$t0" ]; then
		began=$(calc "$t0 * 1000 - $LL_FORK" %.0f)
		sampled=$(calc "$dur" %.2f)
		wrote=$(calc "$last - $t0 - $dur" %.2f)
		after=$(ms "$(calc "$last * 1000" %.0f)" "$LL_EXIT")
	fi
	load=$(num "$(jget "$d/s.json" phases.load_ms)")
	drain=$(num "$(jget "$d/s.json" phases.drain_max_ms)" %.1f)
	tear=$(num "$(jget "$d/s.json" phases.teardown_ms)" %.1f)
	life=$(ms "$LL_FORK" "$LL_EXIT") own=-
	[ "$life" != - ] && [ "${LL_RWAIT%%.*}" -ge 0 ] && own=$(calc "$life - $LL_RWAIT" %.0f)
	log "$name: began $began ms, wrote $wrote s after sampling, exit $(ms "$LL_FORK" "$LL_EXIT") ms after the fork; $got of $expect samples"
	echo "| $name | $(num "$LL_EWAIT") | $(ms "$LL_EXEC" "$LL_RAISED") | $(num "$LL_RCPU" %.1f) | $(num "$LL_RWAIT") | $(ms "$LL_RAISED" "$t0ms") | $load | $began | $sampled | $drain | $wrote | $tear | $after | $life | $own | $got / $expect |"
}

# cprof_run NAME BINARY [OTHER-PID] [ARGS...]: one run of BINARY under the
# load, a row of the phase table.
cprof_run() {
	local name=$1 bin=$2 other=${3:-0}
	shift 3 2>/dev/null || shift $#
	loaded_launch "$RAW/$name" "$THREADS" "$LOAD_SECS" "$other" "$bin" --duration 5 -F 99 -v \
		--json-summary "$RAW/$name/s.json" --output-dir "$RAW/$name/prof" "$@"
	phase_row "$name" "$RAW/$name"
}

ROWS=$RAW/rows.md
FLOOR=$RAW/floor.md
: >"$ROWS"
: >"$FLOOR"
for i in $(seq "$FLOOR_REPS"); do
	loaded_launch "$RAW/rtfirst-$i" "$THREADS" "$LOAD_SECS" 0 "$RTFIRST"
	log "rtfirst-$i: raised $(ms "$LL_FORK" "$LL_RAISED") ms after its fork, $LL_RWAIT ms waiting"
	echo "| rtfirst-$i | $(num "$LL_EWAIT") | $(ms "$LL_EXEC" "$LL_RAISED") | $(num "$LL_RCPU" %.1f) | $(num "$LL_RWAIT") | $(ms "$LL_FORK" "$LL_RAISED") |" >>"$FLOOR"
done
for i in $(seq "$REPS"); do
	cprof_run "static-$i" "$CPROF" >>"$ROWS"
	cprof_run "dynamic-$i" "$DYN_BIN" >>"$ROWS"
done
cprof_run "no-boost" "$CPROF" 0 --no-priority-boost >>"$ROWS"

# --- the same load beside 30000 changing mappings --------------------------------
MAPROWS=$RAW/maprows.md
: >"$MAPROWS"
$NORMAL "$MAPCHURN" 30000 $((REPS * 40 + 30)) >"$RAW/mc.pid" &
MC=$!
sleep 0.5
mcpid=$(head -n1 "$RAW/mc.pid")
for i in $(seq "$REPS"); do
	cprof_run "maps-$i" "$CPROF" "$mcpid" >>"$ROWS"
	out=$RAW/maps-$i
	echo "| maps-$i | $(samples_of "$out/prof/mapchurn-$mcpid.pb.gz") / $(num "$(calc "99 * 5 * $LL_ORATE")") | $(num "$(jget "$out/s.json" output.last_write_s)" %.2f) | $(sed -nE 's/.*re-snapshots: ([0-9]+) taken.*/\1/p' "$out/err" | head -n1) |" >>"$MAPROWS"
done
kill $MC 2>/dev/null
wait $MC 2>/dev/null
MC=""

# --- perf record started the same way ---------------------------------------------
PERFROWS=$RAW/perfrows.md
: >"$PERFROWS"
perf_run() { # NAME [PREFIX...]: a row for `PREFIX perf record` under the load
	local name=$1 got all
	shift
	loaded_launch "$RAW/$name" "$THREADS" "$LOAD_SECS" 0 "$@" perf record -q -a -g -F 99 \
		-o "$RAW/$name.data" -- sleep 5
	perf script -i "$RAW/$name.data" -F pid 2>/dev/null >"$RAW/$name.pids"
	got=$(awk -v p="$LL_SPIN" '$1 == p' "$RAW/$name.pids" | wc -l)
	all=$(wc -l <"$RAW/$name.pids")
	log "$name: $got samples of spin, $all in all, exit $(ms "$LL_FORK" "$LL_EXIT") ms after the fork"
	echo "| $name | $(num "$LL_EWAIT") | $(ms "$LL_FORK" "$LL_EXIT") | $got (of $all) / $(num "$(calc "99 * 5 * $LL_RATE")") |" >>"$PERFROWS"
}
perf_run "perf record -a -g"
perf_run "nice -n -20 perf record -a -g" nice -n -20

# --- the measure before issue 30 ----------------------------------------------------
# spin starts the tool as its child and stops 1.5 s after sampling ends.
OLDROWS=$RAW/oldrows.md
: >"$OLDROWS"
for i in $(seq "$REPS"); do
	t0=$EPOCHREALTIME
	setsid $NORMAL "$SPIN" "$THREADS" 6.5 "$CPROF" --duration 5 -F 99 -v --output-dir "$RAW/old-$i" \
		--json-summary "$RAW/old-$i.json" >"$RAW/old-$i.spin" 2>"$RAW/old-$i.err"
	t1=$EPOCHREALTIME
	echo "| old-$i | $(num "$(jget "$RAW/old-$i.json" start_ms)") | $(num "$(jget "$RAW/old-$i.json" output.last_write_s)" %.2f) | $(calc "$t1 - $t0" %.2f) |" >>"$OLDROWS"
done

# --- idle host: when sampling begins ----------------------------------------------
idle_starts() { # ARGS...: the start figures of IDLE_REPS runs, space-separated
	local i s=""
	for i in $(seq "$IDLE_REPS"); do
		$NORMAL "$CPROF" --duration 1 -v --json-summary "$RAW/idle.json" --output-dir "$RAW/idle" "$@" 2>"$RAW/idle.err"
		s="$s $(jget "$RAW/idle.json" start_ms)"
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
	echo "## Overload: $THREADS busy threads outlasting the run, the tool started among them (issues 13, 30)"
	echo
	echo "Generated by \`bench/overload.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC'); the next run"
	echo "replaces everything between the \"overload\" markers."
	echo
	echo "- Host: $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $NCPU CPUs; kernel $(uname -r)"
	echo "- cprof-bpf $BUILD_DESC (static, as \`make\` builds it); dynamic: \`make STATIC=0\`; $(perf --version)"
	echo "- Load: \`build/workloads/spin $THREADS $LOAD_SECS\` in a session of its own (setsid:"
	echo "  its own autogroup, as a terminal's); 2 s later the tool is started from a"
	echo "  shell in that session (tests/e2e/lib.sh \`loaded_launch\`); the load is"
	echo "  stopped after the tool has exited.  Fork, exec, raise and exit are seen by"
	echo "  \`build/workloads/exitwatch\` (real-time, outside the load, every ms);"
	echo "  sampling's start and length are the profile's; \"written\" the last file's"
	echo "  mtime.  \`--duration 5 -F 99\`."
	echo
	echo "The floor: \`build/workloads/rtfirst\` (static, its first act the raise)"
	echo "started the same way:"
	echo
	echo "| run | runnable, not run, fork to exec (ms) | exec to raise (ms) | CPU by the raise (ms) | runnable, not run, fork to raise (ms) | fork to raise (ms) |"
	echo "|---|---|---|---|---|---|"
	cat "$FLOOR"
	echo
	echo "cprof-bpf, phase by phase (ms unless said; \"agent\" figures from its"
	echo "\`--json-summary\` \`phases\`):"
	echo
	echo "| run | runnable, not run, fork to exec | exec to raise | CPU by the raise | runnable, not run, fork to raise | raise to sampling | BPF load (agent) | launch to sampling | sampled, s | longest drain (agent) | last write after sampling, s | teardown (agent) | last write to exit | launch to exit | launch to exit less the wait before the raise | busy process's samples / for the CPU it had |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
	cat "$ROWS"
	echo
	echo "Beside the process of 30000 mappings (\`build/workloads/mapchurn 30000\`):"
	echo
	echo "| run | its samples / for the CPU it had | last write after sampling (agent), s | re-snapshots |"
	echo "|---|---|---|---|"
	cat "$MAPROWS"
	echo
	echo "perf record, started the same way:"
	echo
	echo "| run | runnable, not run, fork to exec (ms) | launch to exit (ms) | busy process's samples / for the CPU it had |"
	echo "|---|---|---|---|"
	cat "$PERFROWS"
	echo
	echo "The measure before issue 30 (\`setsid spin $THREADS 6.5 cprof-bpf ...\`: the"
	echo "tool is the load's child; the load stops 1.5 s after sampling ends):"
	echo
	echo "| run | sampling began after launch (agent), ms | last write after sampling (agent), s | launch to exit, s |"
	echo "|---|---|---|---|"
	cat "$OLDROWS"
	echo
	echo "Idle host (as shared: other $IDLE_OTHER%), \`--duration 1\`, $IDLE_REPS runs each,"
	echo "sampling began after launch (agent, ms):"
	echo
	echo "- boosted: $IDLE (median $(median_fmt %.0f $IDLE))"
	echo "- --no-priority-boost: $IDLE_NB (median $(median_fmt %.0f $IDLE_NB))"
	echo
	echo "Reading: until it has raised itself a process waits its turn among the"
	echo "load, and most of that wait is the scheduler's: rtfirst, which does"
	echo "nothing before its raise, waited as long (the CPU by its raise is mostly"
	echo "the shell's forked child before the exec).  The static agent's wait is"
	echo "the floor's; the dynamic build's few ms more of CPU (the dynamic loader)"
	echo "cost more rounds of the load.  From the raise on, the agent's own phases"
	echo "are short: the BPF load is most of the start, each drain and the"
	echo "teardown take ms, and the last profile is written well inside a second;"
	echo "\"launch to exit less the wait before the raise\" is what the run cost a"
	echo "user beyond the scheduler's wait.  Without the boost the BPF load alone"
	echo "took as long as the load lasted; perf record, started the same way,"
	echo "sampled nothing of the busy process (under nice -20 it did, but exited"
	echo "seconds after its 5 s)."
	echo "<!-- END overload -->"
} >"$RAW/section.md"
publish_section overload "$RAW/section.md"
cat "$RAW/section.md"
