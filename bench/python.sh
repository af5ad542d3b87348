#!/bin/bash
# bench/python.sh: what reading Python frames costs in BPF (issue 16).
#
#   sudo sh bench/python.sh                  # ~12 minutes; `make bench` runs it last
#   sudo PY_SECS=3 PY_REPS=1 sh bench/python.sh   # quick check of the script
#   sudo BENCH_CPROF=/tmp/old/cprof-bpf sh bench/python.sh   # another build
#
# Each Python workload runs at the same time as the native reference, each
# pinned to a CPU of its own and profiled by an instance of cprof-bpf that
# samples only that CPU (--cpu, --pid), at 999 Hz for PY_SECS (8) each, in
# PY_REPS (4) repetitions that swap the CPUs (the CPUs differ: the ratio of
# one placement was 2.09 where the other's was 1.52, so each is taken as
# often, and the median of an even count is the middle two's mean):
#   - tests/workloads/pysplit.py on pyenv's CPython 3.8 to 3.13 and on
#     Debian's /usr/bin/python3.11 (PY_VERSIONS="3.12 deb3.11": some of
#     them), with Python frames (the default) and with --no-python, and on
#     3.12 run with -X perf (a perf trampoline between each function's
#     frames);
#   - beside each, `nofp split` (-O2 -fomit-frame-pointer): native DWARF
#     unwinding only, the reference the issue's bar names (a Python sample
#     <= 2x that).  The bar is judged by each run's ratio to the native run
#     beside it, the median over the repetitions.
# Figures: BPF ns/sample = run_time_ns / run_cnt of each instance's own
# perf_event programs (kernel.bpf_stats_enabled, /proc/PID/fdinfo), read
# from its first sample to near its end, and how many of those runs were
# samples of the workload (--json-summary: sampled of sampled + idle +
# filtered; nearly all, as the workload has its CPU to itself); the share
# of samples with Python frames and of stacks that stopped early from its
# summary (-v).  Written between the "python" markers of bench/RESULTS.md.

if [ -z "${BASH_VERSION:-}" ]; then exec bash "$0" "$@"; fi
. "$(dirname "$0")/env.sh"
NOFP=$ROOT/build/workloads/nofp
PYSPLIT=$ROOT/tests/workloads/pysplit.py
PYENV=${PYENV_ROOT:-/root/.pyenv}/versions
SECS=${PY_SECS:-8}
REPS=${PY_REPS:-4}
HZ=999
NCPU=$(nproc)
FINISH_MAX=60
BPF_PROG_TYPE_PERF_EVENT=7

bench_require "$CPROF" "$NOFP" -- taskset
[ "$NCPU" -ge 2 ] || die "needs 2 CPUs: the workloads compared run at once, a CPU each"
. "$ROOT/bench/lib.sh"
bench_init cprof-bench-python

OLD_STATS=$(sysctl -n kernel.bpf_stats_enabled)
WL=""
cleanup() {
	# shellcheck disable=SC2086
	[ -n "$WL" ] && kill $WL 2>/dev/null
	sysctl -q -w kernel.bpf_stats_enabled="$OLD_STATS" >/dev/null
}
trap cleanup EXIT
sysctl -q -w kernel.bpf_stats_enabled=1 >/dev/null || die "cannot enable kernel.bpf_stats_enabled"

# at_once SPEC...: runs each SPEC at the same time, each "NAME CPU [ARGS...]
# -- WORKLOAD...": WORKLOAD pinned to CPU, profiled by cprof-bpf --cpu CPU
# --pid (its pid) ARGS.  A sample's cost here drifts by a quarter from one
# minute to the next (the native sample: 1280, 1501 and 1831 ns in three
# runs of this script within an hour), so the workloads compared run at
# once, each on its own CPU with its own instance sampling only that CPU:
# both see the same host.  Appends "NAME ns share stopped runs rep" to
# $RAW/rows for each.
at_once() {
	local spec words name cpu args wl names=() tools=() fds=() rt0=() cnt0=() nss=() t0="" i pid
	WL=""
	for spec; do
		read -ra words <<<"$spec"
		name=${words[0]} cpu=${words[1]} args=() wl=()
		for ((i = 2; i < ${#words[@]}; i++)); do
			[ "${words[i]}" = -- ] && break
			args+=("${words[i]}")
		done
		wl=("${words[@]:i+1}")
		$NORMAL taskset -c "$cpu" "${wl[@]}" >"$RAW/$name.wl" &
		pid=$!
		WL="$WL $pid"
		names+=("$name")
		ARGS_OF[$name]="--cpu $cpu --pid $pid ${args[*]}"
	done
	# again each run: another bench on the host may have turned it off at its end
	sysctl -q -w kernel.bpf_stats_enabled=1 >/dev/null
	sleep 1
	for name in "${names[@]}"; do
		# shellcheck disable=SC2086
		$NORMAL "$CPROF" ${ARGS_OF[$name]} -F $HZ --duration "$SECS" \
			--output-dir "$RAW/$name.out" -v --json-summary "$RAW/$name.json" \
			2>"$RAW/$name.err" &
		tools+=($!)
	done
	for i in "${!tools[@]}"; do
		if ! wait_first_sample "${tools[i]}"; then
			log "${names[i]}: no run of cprof-bpf's programs seen (bpf_stats turned off meanwhile?): left out"
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
declare -A ARGS_OF

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
	echo "$name $ns ${share:--} ${stopped:--} ${runs:--} $rep" >>"$RAW/rows"
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
	# the workloads swap CPUs from one repetition to the next
	c1=$((rep % 2)) c2=$(((rep + 1) % 2))
	# a tick of no profiled thread (the programs run on every tick of their CPU)
	at_once "others@$c1 $c1 -- sleep 600" "others@$c2 $c2 -- sleep 600"
	for v in $PYS; do
		py=$(python_of "$v")
		[ -n "$py" ] || { log "CPython $v not installed: left out"; continue; }
		for mode in "" -nopy -perf; do
			[ "$mode" = -perf ] && [ "$v" != 3.12 ] && continue
			args=""
			[ "$mode" = -nopy ] && args=--no-python
			pyargs=""
			[ "$mode" = -perf ] && pyargs="-X perf"
			at_once "py$v$mode $c1 $args -- $py $pyargs $PYSPLIT split 600" \
				"native@py$v$mode $c2 -- $NOFP split 600"
		done
	done
done

# the rows of config $1 (awk): "others" is every others@CPU run
ROWS_OF='function is(name, n) { return name == n || (n == "others" && name ~ /^others@/) }'
# median of a config's ns over the repetitions
med() {
	local v
	# shellcheck disable=SC2046
	v=$(median_fmt %.0f $(awk -v n="$1" "$ROWS_OF"' is($1, n) { print $2 }' "$RAW/rows"))
	echo "${v:--}"
}
shares() { awk -v n="$1" -v f="${2:-3}" -v u="${3:-}" "$ROWS_OF"' is($1, n) { printf "%s%s%s", s, $f, u; s = ", " }' "$RAW/rows"; }
label() { [ "$1" = deb3.11 ] && echo "Debian's python3.11" || echo "CPython $1"; }
# a workload sample's cost, estimated: the runs less the other ticks'
# share at the cost of a tick of no profiled thread, over the runs' share
est() {
	local r
	# shellcheck disable=SC2046
	r=$(median_fmt %.3f $(awk -v n="$1" "$ROWS_OF"' is($1, n) && $5 != "-" { print $5 / 100 }' "$RAW/rows"))
	[ -n "$r" ] && [ "$(med "$1")" != - ] && [ "$(med others)" != - ] &&
		calc "$r > 0 ? ($(med "$1") - (1 - $r) * $(med others)) / $r : 0" %.0f || echo -
}
# ratio P: the median over the repetitions of config P's sample over the
# sample of the native run beside it (native@P), each estimated as est() does;
# then the repetitions' own ratios in parentheses
ratio() {
	python3 - "$RAW/rows" "$1" "native@$1" "$(med others)" <<'PY'
import statistics, sys
rows, p, n, others = sys.argv[1:5]
est = {}
for line in open(rows):
    f = line.split()
    if len(f) < 6 or "-" in (f[1], f[4], others) or float(f[4]) <= 0:
        continue
    r = float(f[4]) / 100
    est[(f[0], f[5])] = (float(f[1]) - (1 - r) * float(others)) / r
ratios = [v / est[(n, rep)] for (name, rep), v in est.items()
          if name == p and est.get((n, rep), 0) > 0]
print("%.2f (%s)" % (statistics.median(ratios), ", ".join("%.2f" % x for x in ratios))
      if ratios else "-")
PY
}

# row LABEL NAME [PY]: the table's row of NAME (PY: it has Python frames)
row() {
	local py=-
	[ -n "${3:-}" ] && py=$(shares "$2")
	echo "| $1 | $(med "$2") | $(shares "$2" 5 %) | $(est "$2") | $(est "native@$2") | $(ratio "$2") | $py | $(shares "$2" 4) |"
}

NEW=$RAW/section.md
{
	echo "<!-- BEGIN python -->"
	echo "## Python frames: BPF cost per sample (issue 16)"
	echo
	echo "Written by \`bench/python.sh\` ($(date -u '+%Y-%m-%d %H:%M UTC'); build $BUILD_DESC;"
	echo "$NCPU CPUs, load average $(cut -d' ' -f1 /proc/loadavg) at the end).  Each Python workload"
	echo "(pysplit.py, one busy thread) runs at the same time as the native reference (nofp split,"
	echo "one busy thread), each pinned to a CPU of its own and profiled by a cprof-bpf that samples"
	echo "only that CPU (--cpu N --pid), $HZ Hz, $SECS s, $REPS repetitions that swap the CPUs"
	echo "(medians shown).  BPF ns/sample = run_time_ns / run_cnt of that instance's perf_event"
	echo "programs (kernel.bpf_stats_enabled), from its first sample to near its end; \"runs\": how"
	echo "many of those runs were the workload's samples (the rest, other processes' ticks, cost"
	echo "a fraction of one: $(med others) ns on a CPU running no profiled thread); \"a sample\": the"
	echo "workload's sample so estimated, (ns/sample - (1 - runs) x $(med others)) / runs; \"ratio\":"
	echo "a sample over the native sample measured beside it, the median over the repetitions"
	echo "(each repetition's in parentheses)."
	echo "Raw logs: \`$RAW\`."
	echo
	echo "| workload | BPF ns/sample | runs | a sample | the native sample beside it | ratio | samples with Python frames | stacks stopped early |"
	echo "|---|---|---|---|---|---|---|---|"
	for v in $PYS; do
		[ -n "$(med "py$v")" ] && [ "$(med "py$v")" != - ] || continue
		row "pysplit.py, $(label "$v"), Python frames" "py$v" py
		[ "$(med "py$v-perf")" != - ] && row "pysplit.py, $(label "$v") -X perf, Python frames" "py$v-perf" py
		row "pysplit.py, $(label "$v"), --no-python" "py$v-nopy"
	done
	echo
	echo "The bar: a Python sample at most 2x a native DWARF sample (\"ratio\" of the Python frames rows)."
	for v in $PYS; do
		p=$(est "py$v") np=$(est "py$v-nopy") pp=$(est "py$v-perf")
		[ "$p" != - ] || continue
		echo "$(label "$v"): $(ratio "py$v" | cut -d' ' -f1)x the native sample;"
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
