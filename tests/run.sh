#!/bin/sh
# Runs every test and prints one closing line: "N passed, N failed, N skipped".
#
# A test is an executable build/tests/test_* (C unit tests) or a script
# tests/*/test_*.sh.  Each prints lines "ok - NAME", "not ok - NAME: WHY" or
# "skip - NAME: WHY"; a test that exits non-zero without a "not ok" line, or
# prints no result at all, counts as one failure.  Set TESTS=pattern to run
# only the tests whose path contains it.
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
export BUILD
log=$(mktemp)
trap 'rm -f "$log"' EXIT
pass=0 fail=0 skip=0

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
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "not ok - $t: exited with status $rc"
		f=1
	elif [ "$p" -eq 0 ] && [ "$f" -eq 0 ] && [ "$s" -eq 0 ]; then
		echo "not ok - $t: reported no result"
		f=1
	fi
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
done
echo
if [ "$skip" -gt 0 ]; then
	echo "$pass passed, $fail failed, $skip skipped"
else
	echo "$pass passed, $fail failed"
fi
[ "$fail" -eq 0 ]
