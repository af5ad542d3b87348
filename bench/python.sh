#!/bin/bash
# bench/python.sh: what reading Python frames costs in BPF (issue 16).
#
#   sudo sh bench/python.sh                  # ~2 minutes; `make bench` runs it last
#   sudo PY_SECS=3 PY_REPS=1 sh bench/python.sh   # quick check of the script
#
# cprof-bpf --pid on one CPU-bound workload at a time, at 999 Hz for
# PY_SECS (8) each, PY_REPS (3) times, in turn:
#   - tests/workloads/pysplit.py on pyenv's CPython 3.12 and 3.9, with
#     Python frames (the default) and with --no-python, and on 3.12 run
#     with -X perf (a perf trampoline between each function's frames);
#   - `nofp split` (-O2 -fomit-frame-pointer): native DWARF unwinding only,
#     the reference the issue's bar names (a Python sample <= 2x that).
# Figures: BPF ns/sample = run_time_ns / run_cnt of cprof-bpf's own
# perf_event programs (kernel.bpf_stats_enabled, /proc/PID/fdinfo), read
# from its first sample to near its end; the share of samples with Python
# frames and of stacks that stopped early from its summary (-v).  Written between the "python" markers of
# bench/RESULTS.md.

if [ -z "${BASH_VERSION:-}" ]; then exec bash "$0" "$@"; fi
. "$(dirname "$0")/env.sh"
NOFP=$ROOT/build/workloads/nofp
PYSPLIT=$ROOT/tests/workloads/pysplit.py
PYENV=${PYENV_ROOT:-/root/.pyenv}/versions
SECS=${PY_SECS:-8}
REPS=${PY_REPS:-3}
HZ=999
NCPU=$(nproc)
FINISH_MAX=60
BPF_PROG_TYPE_PERF_EVENT=7


bench_require "$CPROF" "$NOFP"
. "$ROOT/bench/lib.sh"
bench_init cprof-bench-python

OLD_STATS=$(sysctl -n kernel.bpf_stats_enabled)
WL=""
cleanup() {
	[ -n "$WL" ] && kill "$WL" 2>/dev/null
	sysctl -q -w kernel.bpf_stats_enabled="$OLD_STATS" >/dev/null
}
trap cleanup EXIT
sysctl -q -w kernel.bpf_stats_enabled=1 >/dev/null || die "cannot enable kernel.bpf_stats_enabled"

# measure NAME ARGS -- WORKLOAD...: one run; appends "NAME ns share stopped" to $RAW/rows.
measure() {
	local name=$1 args=() tool rt0 cnt0 ns share stopped
	shift
	while [ "$1" != -- ]; do args+=("$1"); shift; done
	shift
	$NORMAL "$@" >"$RAW/$name.wl" &
	WL=$!
	sleep 1
	$NORMAL "$CPROF" --pid "$WL" -F $HZ --duration "$SECS" --output-dir "$RAW/$name.out" \
		-v "${args[@]}" 2>"$RAW/$name.err" &
	tool=$!
	wait_first_sample "$tool" || die "$name: cprof-bpf never sampled"
	rt0=$P_RT cnt0=$P_CNT
	sleep_until "$(near_end "$T_FIRST" "$SECS")"
	prog_stats "$tool" "$FDS"
	ns=$(ns_since "$rt0" "$cnt0")
	wait "$tool"
	kill "$WL" 2>/dev/null
	wait "$WL" 2>/dev/null
	WL=""
	share=$(awk '/python: [0-9]+ processes, / { for (i = 1; i <= NF; i++) if ($i == "of") { print $(i - 1) "/" $(i + 2); exit } }' "$RAW/$name.err")
	# "unwind: N stacks by CFI (M stopped early: ...), F by frame pointers only"
	stopped=$(awk '/: unwind: [0-9]+ stacks by CFI/ { for (i = 1; i <= NF; i++) if ($i == "stacks") n = $(i - 1); sub(/^\(/, "", $7); print $7 "/" n + $(NF - 4); exit }' "$RAW/$name.err")
	cp "$RAW/$name.err" "$RAW/$name.$rep.err"
	echo "$name $ns ${share:--} ${stopped:--}" >>"$RAW/rows"
	log "$name: $ns ns/sample, Python frames on ${share:--} samples, ${stopped:--} stacks stopped early"
}

for rep in $(seq "$REPS"); do
	for v in 3.12 3.9; do
		dir=$(ls -d "$PYENV/$v".* 2>/dev/null | sort -V | tail -n1)
		[ -n "$dir" ] || { log "CPython $v not installed: left out"; continue; }
		measure "py$v" -- "$dir/bin/python$v" "$PYSPLIT" split 600
		measure "py$v-nopy" --no-python -- "$dir/bin/python$v" "$PYSPLIT" split 600
		[ "$v" = 3.12 ] && measure "py$v-perf" -- "$dir/bin/python$v" -X perf "$PYSPLIT" split 600
	done
	measure native -- "$NOFP" split 600
done

# median of a config's ns over the repetitions
med() {
	local v
	# shellcheck disable=SC2046
	v=$(median_fmt %.0f $(awk -v n="$1" '$1 == n { print $2 }' "$RAW/rows"))
	echo "${v:--}"
}
shares() { awk -v n="$1" -v f="${2:-3}" '$1 == n { printf "%s%s", s, $f; s = ", " }' "$RAW/rows"; }

NEW=$RAW/section.md
{
	echo "<!-- BEGIN python -->"
	echo "## Python frames: BPF cost per sample (issue 16)"
	echo
	echo "Written by \`bench/python.sh\` ($(date -u '+%Y-%m-%d %H:%M UTC'); build $BUILD_DESC;"
	echo "$NCPU CPUs, load average $(cut -d' ' -f1 /proc/loadavg) at the end).  cprof-bpf --pid on one"
	echo "workload, $HZ Hz, $SECS s, $REPS repetitions (median shown).  BPF ns/sample ="
	echo "run_time_ns / run_cnt of cprof-bpf's perf_event programs (kernel.bpf_stats_enabled),"
	echo "from its first sample to near its end.  Raw logs: \`$RAW\`."
	echo
	echo "| workload | BPF ns/sample | samples with Python frames | stacks stopped early |"
	echo "|---|---|---|---|"
	for v in 3.12 3.9; do
		[ -n "$(med "py$v")" ] && [ "$(med "py$v")" != - ] || continue
		echo "| pysplit.py, CPython $v, Python frames | $(med "py$v") | $(shares "py$v") | $(shares "py$v" 4) |"
		[ "$(med "py$v-perf")" != - ] &&
			echo "| pysplit.py, CPython $v -X perf, Python frames | $(med "py$v-perf") | $(shares "py$v-perf") | $(shares "py$v-perf" 4) |"
		echo "| pysplit.py, CPython $v, --no-python | $(med "py$v-nopy") | - | $(shares "py$v-nopy" 4) |"
	done
	echo "| nofp split (native, DWARF unwinding) | $(med native) | - | $(shares native 4) |"
	echo
	echo "The bar: a Python sample at most 2x a native DWARF sample."
	for v in 3.12 3.9; do
		[ -n "$(med "py$v")" ] && [ "$(med "py$v")" != - ] || continue
		echo "CPython $v: $(calc "$(med "py$v") / $(med native)" %.2f)x the native sample;"
		echo "reading its Python frames adds $(calc "$(med "py$v") - $(med "py$v-nopy")" %.0f) ns"
		echo "to the same process's native DWARF walk ($(calc "100 * ($(med "py$v") - $(med "py$v-nopy")) / $(med "py$v-nopy")" %.0f)%)."
		[ "$(med "py$v-perf")" != - ] || continue
		echo "Run with -X perf: $(calc "$(med "py$v-perf") / $(med "py$v")" %.2f)x its plain sample, stacks as complete:"
		echo "each Python call is then a native call of its own (_PyEval_EvalFrameDefault,"
		echo "PyObject_Vectorcall, py_trampoline_evaluator, its trampoline), where the plain run"
		echo "runs Python calls in one loop, so a stack has four more native frames a Python one."
	done
	echo "<!-- END python -->"
} >"$NEW"
cat "$NEW" >&2
publish_section python "$NEW"
