#!/bin/sh
# fuzz.sh NAME [LIBFUZZER-OPTION...]: runs fuzz target NAME (make fuzz calls
# this) for FUZZ_SECS seconds of wall time, then, if FUZZ_MIN_CPU is set,
# again until the fuzzer has had that many CPU seconds in all: on a shared
# machine wall time says little about how much fuzzing was done.
#
# Prints one line: sessions, wall and CPU seconds, executions (and per CPU
# second: libFuzzer's own exec/s is per wall second), coverage ("cov": edges,
# "ft": features) and corpus size at the end.  Exits non-zero when the
# target found a crash, a leak, a timeout or a broken invariant; the input
# is then in $FUZZ_DIR/artifacts/NAME/ and the log says what happened.
set -u
name=$1
shift
dir=${FUZZ_DIR:-build/fuzz}
secs=${FUZZ_SECS:-60}
min_cpu=${FUZZ_MIN_CPU:-0}
bin=$dir/fuzz-$name
corpus=$dir/corpus-$name
art=$dir/artifacts/$name
log=$dir/log-$name.txt

mkdir -p "$corpus" "$art"
[ -n "$(ls -A "$corpus")" ] || sh tests/fuzz/seed.sh "$name" "$corpus" "$dir/seedgen"
# New inputs go to the first directory only: the committed ones stay as they are.
extra=
for d in tests/fuzz/seeds/$name tests/fuzz/regress/$name; do
	[ -d "$d" ] && extra="$extra $d"
done

# CPU seconds (user + system) of this shell's finished children, from
# `times` (run in this shell, not in a $(...) subshell, which has no children).
timesf=$dir/.times-$name
child_cpu() {
	times >"$timesf"
	awk 'NR == 2 {
		s = 0
		for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); s += a[1] * 60 + a[2] }
		printf "%.1f\n", s }' "$timesf"
}

: >"$log"
sessions=0 wall=0 execs=0 rc=0
child_cpu >"$timesf.0"
cpu0=$(cat "$timesf.0")
cpu=0
while :; do
	t0=$(date +%s)
	# -timeout: one input taking 25 s is a hang worth reporting.
	# shellcheck disable=SC2086
	"$bin" -max_total_time="$secs" -timeout=25 -print_final_stats=1 \
		-artifact_prefix="$art/" "$@" "$corpus" $extra >>"$log" 2>&1
	rc=$?
	sessions=$((sessions + 1))
	wall=$((wall + $(date +%s) - t0))
	n=$(grep -a '^stat::number_of_executed_units:' "$log" | tail -n 1 | tr -dc 0-9)
	execs=$((execs + ${n:-0}))
	child_cpu >"$timesf.1"
	cpu=$(awk -v a="$(cat "$timesf.1")" -v b="$cpu0" 'BEGIN { printf "%.0f", a - b }')
	[ "$rc" -eq 0 ] || break
	left=$(awk -v m="$min_cpu" -v c="$cpu" 'BEGIN { printf "%.0f", m - c }')
	[ "$left" -gt 0 ] || break
	# At most the CPU still owed, in wall seconds: a busy machine takes longer.
	secs=$((left > 10 ? left : 10))
done

rm -f "$timesf" "$timesf.0" "$timesf.1"

# The last status line ("#N DONE cov: C ft: F corp: K/... exec/s: E ...").
last=$(grep -aE '^#[0-9]+.* cov: ' "$log" | tail -n 1)
field() { echo "$last" | sed -n "s/.* $1: \([^ ]*\).*/\1/p"; }
per_cpu=$(awk -v e="$execs" -v c="$cpu" 'BEGIN { printf "%.0f", (c > 0 ? e / c : 0) }')
echo "fuzz $name: $sessions session(s), ${wall} s wall, ${cpu} CPU-s, $execs execs" \
	"(${per_cpu}/CPU-s), cov: $(field cov) ft: $(field ft), corpus: $(field corp); log $log"
if [ "$rc" -ne 0 ]; then
	echo "fuzz $name: FOUND A BUG (exit $rc); inputs in $art/:" >&2
	ls "$art" >&2
	grep -aE 'ERROR|invariant violated|runtime error|SUMMARY' "$log" | head -n 5 >&2
	exit 1
fi
