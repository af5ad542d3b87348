#!/bin/sh
# Replays, once each, every input under tests/fuzz/regress/<target>/ (what
# the fuzzers found, kept so the bugs stay fixed) and the committed seeds
# under tests/fuzz/seeds/<target>/, through the fuzz targets built without
# libFuzzer but with ASan and UBSan (tests/fuzz/fuzz.mk: replay-<target>).
# A finding aborts the replay: the target's line says which file.
#
#   sh tests/unit/test_fuzz_regress.sh [--no-build]
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
log=$(mktemp)
trap 'rm -f "$log"' EXIT

if [ "${1:-}" != --no-build ]; then
	# The replays are part of `make test`, sanitizer build or not: build
	# them into this build tree (quick: a few small sources each).
	if ! make -s --no-print-directory BUILD="$BUILD" fuzz-replay-bins >"$log" 2>&1; then
		echo "1..1"
		echo "not ok - fuzz regress: building the replay targets failed: $(tail -n 3 "$log" | tr '\n' ' ')"
		exit 1
	fi
fi

targets=$(ls tests/fuzz/regress tests/fuzz/seeds 2>/dev/null | grep -v -e ':$' -e '^$' | sort -u)
[ -n "$targets" ] || { echo "skip - fuzz regress: no inputs under tests/fuzz/regress or seeds"; exit 0; }
# One result per target, whatever its replays do.
echo "1..$(echo "$targets" | wc -l)"
for t in $targets; do
	bin=$BUILD/fuzz/replay-$t
	if [ ! -x "$bin" ]; then
		echo "skip - fuzz regress $t: no replay-$t (its parser's sources are not in this tree)"
		continue
	fi
	n=0 bad=
	for f in tests/fuzz/regress/"$t"/* tests/fuzz/seeds/"$t"/*; do
		[ -f "$f" ] || continue
		n=$((n + 1))
		# One file per run, so a failure names its input.
		"$bin" "$f" >"$log" 2>&1
		rc=$?
		if [ "$rc" -ne 0 ]; then
			why=$(grep -aE 'invariant violated|runtime error|ERROR: AddressSanitizer|SUMMARY' "$log" |
				head -n 1)
			bad="$bad $f (${why:-exit status $rc})"
		fi
	done
	if [ -n "$bad" ]; then
		echo "not ok - fuzz regress $t: $n inputs, failing:$bad"
	else
		echo "ok - fuzz regress $t: $n inputs replayed clean under ASan/UBSan"
	fi
done
exit 0
