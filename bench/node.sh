#!/bin/bash
# bench/node.sh: what finding and recording JavaScript frames costs in BPF
# (issue 33).
#
#   sudo sh bench/node.sh                       # ~2 minutes; `make bench` runs it
#   sudo NODE_SECS=3 NODE_REPS=1 sh bench/node.sh   # quick check of the script
#
# tests/workloads/node/split.js on Debian's node 20 (one busy thread,
# TurboFan-compiled after its warm-up, no flags) and the native reference,
# `nofp split` (-O2 -fomit-frame-pointer: DWARF unwinding only), take
# turns of TURN s on one CPU, profiled by one cprof-bpf (--cpu that CPU,
# --pid both) running on the other CPU, for 2 x NODE_SECS (5) s;
# NODE_REPS (3) repetitions alternating the CPUs; with JavaScript frames
# (the default) and with --no-node.  Figures as bench/python.sh's
# (bench/turns.sh): BPF ns/sample = what the workload's turns added to
# run_time_ns over what they added to run_cnt of the instance's
# perf_event programs.  Written between the "node" markers of
# bench/RESULTS.md.

if [ -z "${BASH_VERSION:-}" ]; then exec bash "$0" "$@"; fi
. "$(dirname "$0")/env.sh"
NOFP=$ROOT/build/workloads/nofp
NODE=${NODE:-$(command -v node)}
SPLIT=$ROOT/tests/workloads/node/split.js
SECS=${NODE_SECS:-5}
REPS=${NODE_REPS:-3}
HZ=999
LOAD_SLACK=4
TURN=0.25
NCPU=$(nproc)
# node's start and TurboFan's compiles of the script's functions, before the instance
TURNS_WARMUP=2
FINISH_MAX=60
BPF_PROG_TYPE_PERF_EVENT=7

bench_require "$CPROF" "$NOFP" "$NODE" -- taskset
[ "$NCPU" -ge 2 ] || die "needs 2 CPUs: the workloads compared run at once, a CPU each"
. "$ROOT/bench/lib.sh"
. "$ROOT/bench/turns.sh"
turns_init cprof-bench-node

# record NAME NS: the row of one run (turns_row), with its JavaScript frames named.
record() {
	turns_row "$1" "$2" "$(jget "$RAW/$1.json" node.frames.named)" "JavaScript frames named"
}

for rep in $(seq "$REPS"); do
	cpu=$((rep % 2)) TOOLS_CPU=$(((rep + 1) % 2))
	in_turns node $cpu -- "$NODE" "$SPLIT" 600
	in_turns node-nonode $cpu --no-node -- "$NODE" "$SPLIT" 600
done

NEW=$RAW/section.md
r=$(turns_ratio node) rn=$(turns_ratio node-nonode)
{
	echo "<!-- BEGIN node -->"
	echo "## JavaScript frames: BPF cost per sample (issue 33)"
	echo
	echo "Written by \`bench/node.sh\` ($(date -u '+%Y-%m-%d %H:%M UTC'); build $BUILD_DESC;"
	echo "$NCPU CPUs, load average $(cut -d' ' -f1 /proc/loadavg) at the end).  split.js on Debian's"
	echo "node 20 (one busy thread, TurboFan-compiled, no flags) and the native reference (nofp split,"
	echo "one busy thread) take turns of $TURN s on one CPU for 2 x $SECS s, under one cprof-bpf --cpu"
	echo "(that CPU) --pid (both) running on the other CPU, $HZ Hz, node warmed up for"
	echo "$TURNS_WARMUP s first; $REPS repetitions alternating CPUs, medians shown.  BPF ns/sample as in"
	echo "the Python section (bench/turns.sh).  A JavaScript sample walks split.js's stack by frame"
	echo "pointers from its leaf in spinA or spinB through work, stage, main, node's module loader's"
	echo "functions and V8's entry, then node's and glibc's frames by CFI to _start: about 30 frames,"
	echo "a dozen of them JavaScript ones, each checked (3 or 4 reads of V8's heap) and recorded by its"
	echo "SharedFunctionInfo; the native one 7.  With --no-node the same walk records no JavaScript frame."
	echo "Raw logs: \`$RAW\`."
	echo
	echo "| workload | BPF ns/sample | runs | a sample | the native sample of its runs | ratio | JavaScript frames named (the run's) | stacks stopped early (the run's) |"
	echo "|---|---|---|---|---|---|---|---|"
	turns_table_row "split.js, node 20, JavaScript frames" node
	turns_table_row "split.js, node 20, --no-node" node-nonode
	echo
	echo "A JavaScript sample: ${r}x a native DWARF sample"
	[ "$r" != - ] && [ "$rn" != - ] &&
		echo "(${rn}x with --no-node, the same walk without V8's checks: those add $(calc "$r - $rn" %.2f) native samples, ~$(calc "($r - $rn) * $(turns_native node)" %.0f) ns)."
	echo "Earlier builds, the same bench: 5.23x with 9 reads a JavaScript frame (bfb93bf), 3.77x"
	echo "with the frame's slots in two reads."
	echo "<!-- END node -->"
} >"$NEW"
cat "$NEW" >&2
publish_section node "$NEW"
