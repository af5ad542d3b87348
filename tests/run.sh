#!/bin/sh
# Runs every test and prints one closing line: "N passed, N failed, N skipped".
#
# A test is an executable build/tests/test_* (C unit tests) or a script
# tests/*/test_*.sh.  Each prints lines "ok - NAME", "not ok - NAME: WHY" or
# "skip - NAME: WHY"; a test that exits non-zero without a "not ok" line, or
# prints no result at all, counts as one failure.
#
# Each test also prints its plan, TAP's "1..N": the number of results it
# will report.  A test that reports another number fails once more, so a
# script that ends early cannot lose its checks unseen.  Only a test that
# skipped as a whole before it knew its plan (no root, a tool missing)
# may print none, and then nothing but skips.  Set TESTS=pattern to run
# only the tests whose path contains it.
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
export BUILD
log=$(mktemp)
failed=$(mktemp)
trap 'rm -f "$log" "$failed"' EXIT
pass=0 fail=0 skip=0

# A failure of the test as a whole, found here.
test_failed() {
	echo "not ok - $t: $1"
	echo "$t: not ok - $t: $1" >>"$failed"
}

for t in "$BUILD"/tests/test_* tests/unit/test_*.sh tests/e2e/test_*.sh; do
	[ -e "$t" ] || continue
	case "$t" in *"${TESTS:-}"*) ;; *) continue ;; esac
	echo "== $t"
	case "$t" in
	*.sh) sh "$t" >"$log" 2>&1 ;;
	*) "$t" >"$log" 2>&1 ;;
	esac
	rc=$?
	cat "$log"
	p=$(grep -c '^ok - ' "$log")
	f=$(grep -c '^not ok - ' "$log")
	s=$(grep -c '^skip - ' "$log")
	n=$(sed -n 's/^1\.\.\([0-9][0-9]*\)$/\1/p' "$log")
	if [ "$(printf '%s\n' "$n" | grep -c .)" -gt 1 ]; then
		test_failed "more than one plan ($(echo $n))"
		f=$((f + 1))
	elif [ -n "$n" ] && [ "$((p + f + s))" -ne "$n" ]; then
		test_failed "planned $n results, reported $((p + f + s))"
		f=$((f + 1))
	elif [ -z "$n" ] && [ "$((p + f))" -gt 0 ]; then
		test_failed "no plan (1..N) printed"
		f=$((f + 1))
	fi
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		test_failed "exited with status $rc"
		f=1
	elif [ "$p" -eq 0 ] && [ "$f" -eq 0 ] && [ "$s" -eq 0 ]; then
		test_failed "reported no result"
		f=1
	fi
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
	# every failure again at the end, where a log cut to its tail shows it
	grep '^not ok - ' "$log" | sed "s|^|$t: |" >>"$failed"
done
echo
if [ -s "$failed" ]; then
	echo "== the failures again"
	cut -c1-400 "$failed"
	echo
fi
if [ "$skip" -gt 0 ]; then
	echo "$pass passed, $fail failed, $skip skipped"
else
	echo "$pass passed, $fail failed"
fi
[ "$fail" -eq 0 ]
