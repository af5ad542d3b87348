# bench/turns.sh: sourced by bench/python.sh, bench/java.sh and bench/node.sh.  A
# runtime's workload and the native reference (nofp split) take turns on
# one CPU under one cprof-bpf, so that a sample of each is measured by the
# same instance a fraction of a second apart.  The sourcing script sets
# NOFP, SECS, HZ, LOAD_SLACK, TURN, RAW, rep and TOOLS_CPU, and defines
# record NAME NS (its row of a run); TURNS_WARMUP (s, default 1) is how
# long the workloads run before the instance starts.  Sourced after
# bench/lib.sh; turns_init first.

# turns_init NAME: the bench's raw logs (bench_init NAME), and the kernel's
# BPF statistics on for the run, as they were again at its end, when the
# workloads in $WL are stopped too.
turns_init() {
	bench_init "$1"
	OLD_STATS=$(sysctl -n kernel.bpf_stats_enabled)
	WL=""
	trap turns_cleanup EXIT
	sysctl -q -w kernel.bpf_stats_enabled=1 >/dev/null || die "cannot enable kernel.bpf_stats_enabled"
}
turns_cleanup() {
	# shellcheck disable=SC2086
	[ -n "$WL" ] && kill $WL 2>/dev/null
	sysctl -q -w kernel.bpf_stats_enabled="$OLD_STATS" >/dev/null
}

# turns_row NAME NS FIGURE WHAT: the row of one run (NAME at NS ns/sample,
# FIGURE its runtime's count, WHAT what that counts) with the share of the
# instance's runs that were the workloads' samples and the stacks that
# stopped early, from its summaries; repetition $rep.
turns_row() {
	local name=$1 ns=$2 figure=$3 what=$4 runs stopped
	runs=$(turns_runs "$name")
	stopped=$(turns_stopped "$name")
	cp "$RAW/$name.err" "$RAW/$name.$rep.err"
	echo "$name $ns ${figure:--} ${stopped:--} ${runs:--} $rep" >>"$RAW/rows"
	log "$name: $ns ns/sample (${runs:--}% of the runs the workload's), ${figure:--} $what, ${stopped:--} stacks stopped early"
}

# turns_runs NAME: the percent of run NAME's program runs that were the
# workloads' samples (the rest cost less: idle or others' ticks), from
# its summary; turns_stopped NAME: "STOPPED/STACKS" of its -v summary
# ("unwind: N stacks by CFI (M stopped early: ...), F by frame pointers only").
turns_runs() {
	python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))["samples"]
n = s["sampled"] + s["idle"] + s["filtered"]
print("%.0f" % (100.0 * s["sampled"] / n) if n else "-")' "$RAW/$1.json" 2>/dev/null
}
turns_stopped() {
	awk '/: unwind: [0-9]+ stacks by CFI/ { for (i = 1; i <= NF; i++) if ($i == "stacks") n = $(i - 1); sub(/^\(/, "", $7); print $7 "/" n + $(NF - 4); exit }' "$RAW/$1.err"
}

# turn RUN STOPPED: RUN runs alone for TURN s, STOPPED stopped; TURN_RT and
# TURN_CNT: what in_turns' instance ($tool, $fds) ran meanwhile
turn() {
	local rt cnt
	kill -STOP "$2"
	kill -CONT "$1"
	prog_stats "$tool" "$fds"
	rt=$P_RT cnt=$P_CNT
	sleep "$TURN"
	prog_stats "$tool" "$fds"
	TURN_RT=$((P_RT - rt)) TURN_CNT=$((P_CNT - cnt))
}

# in_turns NAME CPU [ARGS...] -- WORKLOAD...: WORKLOAD (the Python one) and
# the native reference (nofp split) take turns on CPU, TURN s each, under
# one cprof-bpf --cpu CPU --pid (both) ARGS running on another CPU, and
# its programs' run_time_ns and run_cnt are read at each turn's start and
# end: what a turn adds is a sample of the workload that ran in it.  So
# the two are measured by the same instance at moments a fraction of a
# second apart, each running alone on its CPU as it would on a host; a
# sample's cost here drifts by a quarter from one minute to the next (the
# native sample 1280, 1501 and 1831 ns in three runs of this script
# within an hour), more than a ratio of runs minutes apart can bear.
# Appends "NAME ns share stopped runs rep" to $RAW/rows for NAME and
# native@NAME.
in_turns() {
	local name=$1 cpu=$2 args=() a b tool fds end ra=0 ca=0 rb=0 cb=0
	shift 2
	while [ "$1" != -- ]; do args+=("$1"); shift; done
	shift
	$NORMAL taskset -c "$cpu" "$@" >"$RAW/$name.wl" &
	a=$!
	$NORMAL taskset -c "$cpu" "$NOFP" split 600 >"$RAW/native@$name.wl" &
	b=$!
	WL="$a $b"
	# again each run: another bench on the host may have turned it off at its end
	sysctl -q -w kernel.bpf_stats_enabled=1 >/dev/null
	sleep "${TURNS_WARMUP:-1}"
	$NORMAL taskset -c "$TOOLS_CPU" "$CPROF" --cpu "$cpu" --pid "$a,$b" "${args[@]}" -F $HZ \
		--duration "$((2 * SECS + LOAD_SLACK))" --output-dir "$RAW/$name.out" -v \
		--json-summary "$RAW/$name.json" 2>"$RAW/$name.err" &
	tool=$!
	if ! wait_first_sample "$tool"; then
		log "$name: no run of cprof-bpf's programs seen (bpf_stats turned off meanwhile?): left out"
		kill $WL 2>/dev/null
		wait $WL "$tool" 2>/dev/null
		WL=""
		return
	fi
	fds=$FDS
	sleep 1 # its first tables built
	usec
	end=$((US + 2 * SECS * 1000000))
	while usec && [ "$US" -lt "$end" ]; do
		turn "$a" "$b"
		ra=$((ra + TURN_RT)) ca=$((ca + TURN_CNT))
		turn "$b" "$a"
		rb=$((rb + TURN_RT)) cb=$((cb + TURN_CNT))
	done
	kill -CONT "$a" "$b"
	kill -INT "$tool" 2>/dev/null
	wait "$tool"
	kill $WL 2>/dev/null
	wait $WL 2>/dev/null
	WL=""
	rm -f "/tmp/perf-$a.map" # what -X perf leaves behind
	cp "$RAW/$name.json" "$RAW/native@$name.json"
	cp "$RAW/$name.err" "$RAW/native@$name.err"
	record "$name" "$(calc "$ra / ($ca > 0 ? $ca : 1)" %.0f)"
	record "native@$name" "$(calc "$rb / ($cb > 0 ? $cb : 1)" %.0f)"
}

# figures NAME: "ns runs sample native ratio" of config NAME, medians over
# the repetitions (ratio: of each repetition's own, listed after it), or "-"
figures() {
	python3 - "$RAW/rows" "$1" <<'PY'
import statistics, sys
rows, name = sys.argv[1], sys.argv[2]
ns, runs = {}, {}
for line in open(rows):
    f = line.split()
    if len(f) >= 6 and f[1] != "-":
        ns[(f[0], f[5])] = float(f[1])
        runs[(f[0], f[5])] = float(f[4]) / 100 if f[4] != "-" else None
def sample(n, rep):
    return ns.get((n, rep))
reps = sorted({rep for (n, rep) in ns if n == name})
own = [x for x in (sample(name, r) for r in reps) if x]
nat = [x for x in (sample("native@" + name, r) for r in reps) if x]
ratios = [a / b for a, b in ((sample(name, r), sample("native@" + name, r)) for r in reps) if a and b]
med = lambda xs, fmt: fmt % statistics.median(xs) if xs else "-"
print(med([ns[(name, r)] for r in reps], "%.0f"),
      ", ".join("%.0f%%" % (100 * runs[(name, r)]) for r in reps if runs[(name, r)] is not None) or "-",
      med(own, "%.0f"), med(nat, "%.0f"),
      med(ratios, "%.2f") + (" (" + ", ".join("%.2f" % x for x in ratios) + ")" if ratios else ""),
      sep="|")
PY
}

# turns_shares NAME [FIELD]: field FIELD (3) of NAME's rows, a repetition
# each, comma-separated.
turns_shares() { awk -v n="$1" -v f="${2:-3}" '$1 == n { printf "%s%s", s, $f; s = ", " }' "$RAW/rows"; }

# turns_native NAME, turns_ratio NAME: the median native sample of NAME's
# runs, the median of its runs' ratios; or -
turns_native() { figures "$1" | cut -d'|' -f4; }
turns_ratio() { figures "$1" | cut -d'|' -f5 | cut -d' ' -f1; }

# turns_table_row LABEL NAME: NAME's row of a runtime's table: its figures,
# its runtime's count (field 3 of its rows) and its stacks stopped early.
turns_table_row() { echo "| $1 | $(figures "$2" | sed 's/|/ | /g') | $(turns_shares "$2") | $(turns_shares "$2" 4) |"; }
