#!/bin/bash
# bench/python.sh: what reading Python frames costs in BPF (issue 16).
#
#   sudo sh bench/python.sh                  # ~5 minutes; `make bench` runs it last
#   sudo PY_SECS=3 PY_REPS=1 sh bench/python.sh   # quick check of the script
#   sudo PY_BASE=/tmp/old/cprof-bpf sh bench/python.sh   # before and after
#
# PY_BASE: another build of cprof-bpf, profiling each workload at the same
# time as this one, so that both see the same host: on a shared host the
# load moves a figure more than most changes do, and runs one after the
# other differ by more than the builds.  (Each tool's programs run on
# their own timers, so neither runs right after the other's on a tick
# and finds the stack warm.)  Its figures are the table's "a sample,
# PY_BASE" column.
#
# cprof-bpf --pid on one CPU-bound workload at a time, at 999 Hz for
# PY_SECS (8) each, PY_REPS (3) times, in turn:
#   - tests/workloads/pysplit.py on pyenv's CPython 3.8 to 3.13 and on
#     Debian's /usr/bin/python3.11 (PY_VERSIONS="3.12 deb3.11": some of
#     them), with Python frames (the default) and
#     with --no-python, and on 3.12 run with -X perf (a perf trampoline
#     between each function's frames);
#   - `nofp split` (-O2 -fomit-frame-pointer): native DWARF unwinding only,
#     the reference the issue's bar names (a Python sample <= 2x that).
# As many busy threads as CPUs (two pysplit.py processes; two nofp split
# threads): the programs run on every CPU's tick, and a tick of a CPU that
# runs no profiled thread costs a fraction of a sample (a filtered one
# ~0.3 us here), so with one busy thread on two CPUs the figure was near
# half a sample's cost, and moved with whatever else ran.
# Figures: BPF ns/sample = run_time_ns / run_cnt of cprof-bpf's own
# perf_event programs (kernel.bpf_stats_enabled, /proc/PID/fdinfo), read
# from its first sample to near its end, and how many of those runs were
# samples of the workload (--json-summary: sampled of sampled + idle +
# filtered); the share of samples with Python frames and of stacks that
# stopped early from its summary (-v).  Written between the "python"
# markers of bench/RESULTS.md.

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


bench_require "$CPROF" "$NOFP" ${PY_BASE:+"$PY_BASE"}
. "$ROOT/bench/lib.sh"
bench_init cprof-bench-python
BASE=""
if [ -n "${PY_BASE:-}" ]; then
	BASE=$RAW/base-cprof-bpf
	cp "$PY_BASE" "$BASE" || die "cannot copy $PY_BASE"
fi

OLD_STATS=$(sysctl -n kernel.bpf_stats_enabled)
WL=""
cleanup() {
	# shellcheck disable=SC2086
	[ -n "$WL" ] && kill $WL 2>/dev/null
	sysctl -q -w kernel.bpf_stats_enabled="$OLD_STATS" >/dev/null
}
trap cleanup EXIT
sysctl -q -w kernel.bpf_stats_enabled=1 >/dev/null || die "cannot enable kernel.bpf_stats_enabled"

# measure NAME COPIES ARGS -- WORKLOAD...: one run of COPIES copies of
# WORKLOAD, profiled by this build and, when given, by PY_BASE's at the
# same time (as NAME~base): each tool's programs are its own, and both
# see the same host.  Appends "NAME ns share stopped runs" to $RAW/rows
# for each.
measure() {
	local name=$1 copies=$2 args=() names=() tools=() fds=() rt0=() cnt0=() nss=() t0="" bin pids i
	shift 2
	while [ "$1" != -- ]; do args+=("$1"); shift; done
	shift
	WL=""
	for i in $(seq "$copies"); do
		$NORMAL "$@" >"$RAW/$name.wl$i" &
		WL="$WL $!"
	done
	pids=$(echo $WL | tr ' ' ,)
	# again each run: another bench on the host may have turned it off at its end
	sysctl -q -w kernel.bpf_stats_enabled=1 >/dev/null
	sleep 1
	names=("$name")
	[ -n "$BASE" ] && names+=("$name~base")
	for i in "${!names[@]}"; do
		bin=$CPROF
		[ "$i" -gt 0 ] && bin=$BASE
		$NORMAL "$bin" --pid "$pids" -F $HZ --duration "$SECS" \
			--output-dir "$RAW/${names[i]}.out" -v --json-summary "$RAW/${names[i]}.json" \
			"${args[@]}" 2>"$RAW/${names[i]}.err" &
		tools+=($!)
	done
	for i in "${!tools[@]}"; do
		if ! wait_first_sample "${tools[i]}"; then
			log "$name: no run of cprof-bpf's programs seen (bpf_stats turned off meanwhile?): left out"
			wait "${tools[@]}"
			# shellcheck disable=SC2086
			kill $WL 2>/dev/null
			WL=""
			return
		fi
		fds+=("$FDS") rt0+=("$P_RT") cnt0+=("$P_CNT")
		[ -n "$t0" ] || t0=$T_FIRST
	done
	sleep_until "$(near_end "$t0" "$SECS")"
	for i in "${!tools[@]}"; do
		prog_stats "${tools[i]}" "${fds[i]}"
		nss[i]=$(ns_since "${rt0[i]}" "${cnt0[i]}")
	done
	wait "${tools[@]}"
	# shellcheck disable=SC2086
	kill $WL 2>/dev/null
	# shellcheck disable=SC2086
	wait $WL 2>/dev/null
	WL=""
	for i in "${!names[@]}"; do
		record "${names[i]}" "${nss[i]}"
	done
}

# record NAME NS: the row of one tool's run, from its summaries.
record() {
	local name=$1 ns=$2 share stopped runs
	# the programs' runs that were the workload's samples, in percent
	runs=$(python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))["samples"]
n = s["sampled"] + s["idle"] + s["filtered"]
print("%.0f" % (100.0 * s["sampled"] / n) if n else "-")' "$RAW/$name.json" 2>/dev/null)
	share=$(awk '/python: [0-9]+ processes, / { for (i = 1; i <= NF; i++) if ($i == "of") { print $(i - 1) "/" $(i + 2); exit } }' "$RAW/$name.err")
	# "unwind: N stacks by CFI (M stopped early: ...), F by frame pointers only"
	stopped=$(awk '/: unwind: [0-9]+ stacks by CFI/ { for (i = 1; i <= NF; i++) if ($i == "stacks") n = $(i - 1); sub(/^\(/, "", $7); print $7 "/" n + $(NF - 4); exit }' "$RAW/$name.err")
	cp "$RAW/$name.err" "$RAW/$name.$rep.err"
	echo "$name $ns ${share:--} ${stopped:--} ${runs:--}" >>"$RAW/rows"
	log "$name: $ns ns/sample (${runs:--}% of the runs the workload's), Python frames on ${share:--} samples, ${stopped:--} stacks stopped early"
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
	# a tick of no profiled thread (the programs run on every CPU's)
	measure others 1 -- sleep 600
	for v in $PYS; do
		py=$(python_of "$v")
		[ -n "$py" ] || { log "CPython $v not installed: left out"; continue; }
		measure "py$v" 2 -- "$py" "$PYSPLIT" split 600
		measure "py$v-nopy" 2 --no-python -- "$py" "$PYSPLIT" split 600
		[ "$v" = 3.12 ] && measure "py$v-perf" 2 -- "$py" -X perf "$PYSPLIT" split 600
	done
	measure native 2 -- "$NOFP" split 600
done

# median of a config's ns over the repetitions
med() {
	local v
	# shellcheck disable=SC2046
	v=$(median_fmt %.0f $(awk -v n="$1" '$1 == n { print $2 }' "$RAW/rows"))
	echo "${v:--}"
}
shares() { awk -v n="$1" -v f="${2:-3}" -v u="${3:-}" '$1 == n { printf "%s%s%s", s, $f, u; s = ", " }' "$RAW/rows"; }
label() { [ "$1" = deb3.11 ] && echo "Debian's python3.11" || echo "CPython $1"; }
# a workload sample's cost, estimated: the runs less the other ticks'
# share at the cost of a tick of no profiled thread, over the runs' share
est() {
	local r
	# shellcheck disable=SC2046
	r=$(median_fmt %.3f $(awk -v n="$1" '$1 == n && $5 != "-" { print $5 / 100 }' "$RAW/rows"))
	[ -n "$r" ] && [ "$(med "$1")" != - ] && [ "$(med others)" != - ] &&
		calc "$r > 0 ? ($(med "$1") - (1 - $r) * $(med others)) / $r : 0" %.0f || echo -
}

# row LABEL NAME [PY]: the table's row of NAME (PY: it has Python frames)
row() {
	local py=- base=""
	[ -n "${3:-}" ] && py=$(shares "$2")
	[ -n "$BASE" ] && base=" $(est "$2~base") |"
	echo "| $1 | $(med "$2") | $(shares "$2" 5 %) | $(est "$2") |$base $py | $(shares "$2" 4) |"
}
# ratio_line WHAT P N: "WHAT: Rx the native sample" (and PY_BASE's ratio)
ratio_line() {
	local b="" pb nb
	if [ -n "$BASE" ]; then
		pb=$(est "$2~base") nb=$(est "native~base")
		[ "$pb" != - ] && [ "$nb" != - ] && b=" (PY_BASE: $(calc "$pb / $nb" %.2f)x)"
	fi
	echo "$1: $(calc "$(est "$2") / $(est native)" %.2f)x the native sample$b;"
}

NEW=$RAW/section.md
{
	echo "<!-- BEGIN python -->"
	echo "## Python frames: BPF cost per sample (issue 16)"
	echo
	echo "Written by \`bench/python.sh\` ($(date -u '+%Y-%m-%d %H:%M UTC'); build $BUILD_DESC;"
	echo "$NCPU CPUs, load average $(cut -d' ' -f1 /proc/loadavg) at the end).  cprof-bpf --pid on one"
	echo "workload (two pysplit.py processes, or two nofp split processes: a busy thread a CPU),"
	echo "$HZ Hz, $SECS s, $REPS repetitions (median shown).  BPF ns/sample ="
	echo "run_time_ns / run_cnt of cprof-bpf's perf_event programs (kernel.bpf_stats_enabled),"
	echo "from its first sample to near its end; \"runs\": how many of those runs were the"
	echo "workload's samples (the rest, other processes' ticks, cost a fraction of one:"
	echo "$(med others) ns with no profiled thread running); \"a sample\": the workload's"
	echo "sample so estimated, (ns/sample - (1 - runs) x $(med others)) / runs."
	[ -n "$BASE" ] &&
		echo "\"a sample, PY_BASE\": the same of $PY_BASE, profiling each workload at the same time as this build."
	echo "Raw logs: \`$RAW\`."
	echo
	if [ -n "$BASE" ]; then
		echo "| workload | BPF ns/sample | runs | a sample | a sample, PY_BASE | samples with Python frames | stacks stopped early |"
		echo "|---|---|---|---|---|---|---|"
	else
		echo "| workload | BPF ns/sample | runs | a sample | samples with Python frames | stacks stopped early |"
		echo "|---|---|---|---|---|---|"
	fi
	for v in $PYS; do
		[ -n "$(med "py$v")" ] && [ "$(med "py$v")" != - ] || continue
		row "pysplit.py, $(label "$v"), Python frames" "py$v" py
		[ "$(med "py$v-perf")" != - ] && row "pysplit.py, $(label "$v") -X perf, Python frames" "py$v-perf" py
		row "pysplit.py, $(label "$v"), --no-python" "py$v-nopy"
	done
	row "nofp split (native, DWARF unwinding)" native
	echo
	echo "The bar: a Python sample at most 2x a native DWARF sample (by \"a sample\")."
	n=$(est native)
	for v in $PYS; do
		p=$(est "py$v") np=$(est "py$v-nopy") pp=$(est "py$v-perf")
		[ "$p" != - ] && [ "$n" != - ] || continue
		ratio_line "$(label "$v")" "py$v"
		[ "$np" != - ] &&
			echo "reading its Python frames adds $(calc "$p - $np" %.0f) ns to the same" \
				"process's native DWARF walk ($(calc "100 * ($p - $np) / $np" %.0f)%)."
		[ "$pp" != - ] || continue
		echo "Run with -X perf: $(calc "$pp / $p" %.2f)x its plain sample, stacks as complete:"
		echo "each Python call is then a native call of its own (_PyEval_EvalFrameDefault,"
		echo "PyObject_Vectorcall, py_trampoline_evaluator, its trampoline), where the plain run"
		echo "runs Python calls in one loop, so a stack has four more native frames a Python one."
	done
	echo "<!-- END python -->"
} >"$NEW"
cat "$NEW" >&2
publish_section python "$NEW"
