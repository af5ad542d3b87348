#!/bin/bash
# bench/python.sh: what reading Python frames costs in BPF (issue 16).
#
#   sudo sh bench/python.sh                  # ~11 minutes; `make bench` runs it last
#   sudo PY_SECS=3 PY_REPS=1 sh bench/python.sh   # quick check of the script
#   sudo BENCH_CPROF=/tmp/old/cprof-bpf sh bench/python.sh   # another build
#
# Each Python workload and the native reference take turns of TURN s on
# one CPU, profiled by one cprof-bpf (--cpu that CPU, --pid both) running
# on the other CPU, for 2 x PY_SECS (5) s; PY_REPS (3) repetitions that
# alternate the CPUs (see in_turns for why):
#   - tests/workloads/pysplit.py on pyenv's CPython 3.8 to 3.13 and on
#     Debian's /usr/bin/python3.11 (PY_VERSIONS="3.12 deb3.11": some of
#     them), with Python frames (the default) and with --no-python, and on
#     3.12 run with -X perf (a perf trampoline between each function's
#     frames);
#   - taking turns with each, `nofp split` (-O2 -fomit-frame-pointer):
#     native DWARF unwinding only, the reference the issue's bar names (a
#     Python sample <= 2x that).  The bar is judged by each run's ratio,
#     the median over the repetitions.
# Figures: BPF ns/sample = what the workload's turns added to run_time_ns
# over what they added to run_cnt of the instance's perf_event programs
# (kernel.bpf_stats_enabled, /proc/PID/fdinfo); how many of its runs were
# samples of the two (--json-summary: sampled of sampled + idle +
# filtered); the share of samples with Python frames and of stacks that
# stopped early from its summary (-v).  Written between the "python"
# markers of bench/RESULTS.md.

if [ -z "${BASH_VERSION:-}" ]; then exec bash "$0" "$@"; fi
. "$(dirname "$0")/env.sh"
NOFP=$ROOT/build/workloads/nofp
PYSPLIT=$ROOT/tests/workloads/pysplit.py
PYENV=${PYENV_ROOT:-/root/.pyenv}/versions
SECS=${PY_SECS:-5}
REPS=${PY_REPS:-3}
HZ=999
LOAD_SLACK=4 # s the instance may sample past the turns (it is stopped then)
TURN=0.25    # s the Python workload and the native one run in turn
NCPU=$(nproc)
FINISH_MAX=60
BPF_PROG_TYPE_PERF_EVENT=7

bench_require "$CPROF" "$NOFP" -- taskset
[ "$NCPU" -ge 2 ] || die "needs 2 CPUs: the workloads compared run at once, a CPU each"
. "$ROOT/bench/lib.sh"
. "$ROOT/bench/turns.sh"
turns_init cprof-bench-python

# record NAME NS: the row of one run (turns_row), with the samples that had Python frames.
record() {
	turns_row "$1" "$2" "$(awk '/python: [0-9]+ processes, / { for (i = 1; i <= NF; i++) if ($i == "of") { print $(i - 1) "/" $(i + 2); exit } }' "$RAW/$1.err")" \
		"samples with Python frames"
}

# the interpreters: pyenv's by version, Debian's 3.11 by path
python_of() {
	local dir
	if [ "$1" = deb3.11 ]; then
		[ -x /usr/bin/python3.11 ] && echo /usr/bin/python3.11
		return
	fi
	dir=$(ls -d "$PYENV/$1".* 2>/dev/null | sort -V | tail -n1)
	[ -n "$dir" ] && echo "$dir/bin/python$1"
}
# PY_VERSIONS: which of them, in this order (default every CPython the
# issue names; one missing is left out and said so)
PYS=${PY_VERSIONS:-3.8 3.9 3.10 3.11 3.12 3.13 deb3.11}

for rep in $(seq "$REPS"); do
	# the workloads' CPU alternates; the instance runs on the other
	cpu=$((rep % 2)) TOOLS_CPU=$(((rep + 1) % 2))
	for v in $PYS; do
		py=$(python_of "$v")
		[ -n "$py" ] || { log "CPython $v not installed: left out"; continue; }
		in_turns "py$v" $cpu -- "$py" "$PYSPLIT" split 600
		in_turns "py$v-nopy" $cpu --no-python -- "$py" "$PYSPLIT" split 600
		[ "$v" = 3.12 ] && in_turns "py$v-perf" $cpu -- "$py" -X perf "$PYSPLIT" split 600
	done
done

label() { [ "$1" = deb3.11 ] && echo "Debian's python3.11" || echo "CPython $1"; }

# row LABEL NAME [PY]: the table's row of NAME (PY: it has Python frames)
row() {
	local py=-
	[ -n "${3:-}" ] && py=$(turns_shares "$2")
	echo "| $1 | $(figures "$2" | sed 's/|/ | /g') | $py | $(turns_shares "$2" 4) |"
}
# sample NAME: its median sample; or - (turns_native, turns_ratio: the rest)
sample() { figures "$1" | cut -d'|' -f3; }

NEW=$RAW/section.md
{
	echo "<!-- BEGIN python -->"
	echo "## Python frames: BPF cost per sample (issue 16)"
	echo
	echo "Written by \`bench/python.sh\` ($(date -u '+%Y-%m-%d %H:%M UTC'); build $BUILD_DESC;"
	echo "$NCPU CPUs, load average $(cut -d' ' -f1 /proc/loadavg) at the end).  Each Python workload"
	echo "(pysplit.py, one busy thread) and the native reference (nofp split, one busy thread) take"
	echo "turns of $TURN s on one CPU for 2 x $SECS s, under one cprof-bpf --cpu (that CPU) --pid (both)"
	echo "running on the other CPU, $HZ Hz; $REPS repetitions alternating CPUs, medians shown.  BPF"
	echo "ns/sample = what a turn adds to run_time_ns over what it adds to run_cnt of the instance's"
	echo "perf_event programs (kernel.bpf_stats_enabled), summed over the turns of the workload: the"
	echo "two are measured by one instance a fraction of a second apart, each alone on its CPU (a"
	echo "sample's cost drifts here by a quarter from one minute to the next).  \"runs\": how many"
	echo "of the instance's runs were the two workloads' samples (the rest cost less: idle or"
	echo "others' ticks, left in).  \"ratio\": a sample over the native sample of the same run,"
	echo "the median over the repetitions (each one's in parentheses)."
	echo "Raw logs: \`$RAW\`."
	echo
	echo "| workload | BPF ns/sample | runs | a sample | the native sample of its runs | ratio | samples with Python frames | stacks stopped early (the run's) |"
	echo "|---|---|---|---|---|---|---|---|"
	for v in $PYS; do
		[ "$(sample "py$v")" != - ] || continue
		row "pysplit.py, $(label "$v"), Python frames" "py$v" py
		[ "$(sample "py$v-perf")" != - ] && row "pysplit.py, $(label "$v") -X perf, Python frames" "py$v-perf" py
		row "pysplit.py, $(label "$v"), --no-python" "py$v-nopy"
	done
	echo
	echo "The bar: a Python sample at most 2x a native DWARF sample (\"ratio\" of the Python frames rows)."
	for v in $PYS; do
		r=$(turns_ratio "py$v") rn=$(turns_ratio "py$v-nopy") rp=$(turns_ratio "py$v-perf")
		[ "$r" != - ] || continue
		echo "$(label "$v"): ${r}x the native sample;"
		# Each against the native sample of its own runs: separate runs drift.
		[ "$rn" != - ] &&
			echo "reading its Python frames adds $(calc "$r - $rn" %.2f) native samples to the" \
				"same process's own DWARF walk (${rn}x with --no-python)," \
				"~$(calc "($r - $rn) * $(turns_native "py$v")" %.0f) ns at its runs' native sample."
		[ "$rp" != - ] || continue
		echo "Run with -X perf: $(calc "$rp / $r" %.2f)x its plain sample, stacks as complete:"
		echo "each Python call is then a native call of its own (_PyEval_EvalFrameDefault,"
		echo "PyObject_Vectorcall, py_trampoline_evaluator, its trampoline), where the plain run"
		echo "runs Python calls in one loop, so a stack has four more native frames a Python one."
	done
	echo "<!-- END python -->"
} >"$NEW"
cat "$NEW" >&2
publish_section python "$NEW"
