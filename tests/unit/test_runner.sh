#!/bin/sh
# tests/run.sh itself: a test that reports fewer results than its plan, or
# results without a plan, fails; one skipped whole before its plan passes;
# every failure is repeated at the end of the log.  Run on made-up tests
# in a directory of their own (run.sh's BUILD/tests/test_*).
cd "$(dirname "$0")/../.." || exit 1
echo "1..6"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/tests"

# fake NAME BODY: a test program printing BODY (printf's escapes).
fake() {
	printf '#!/bin/sh\nprintf "%s"\n' "$2" >"$T/tests/test_$1"
	chmod +x "$T/tests/test_$1"
}
# runs ONE of the fakes through run.sh: its output in $T/out, status in $rc
run_one() {
	BUILD=$T TESTS="$T/tests/test_$1" sh tests/run.sh >"$T/out" 2>&1
	rc=$?
}
verdict() { # NAME OK-CONDITION...
	_n=$1
	shift
	if "$@"; then echo "ok - runner: $_n"; else echo "not ok - runner: $_n: $(tr '\n' '|' <"$T/out")"; fi
}

fake whole '1..3\nok - a\nok - b\nskip - c: lacks it\n'
run_one whole
verdict "a test reporting its plan passes" eval '[ $rc -eq 0 ] && tail -n1 "$T/out" | grep -qx "2 passed, 0 failed, 1 skipped"'

fake short '1..3\nok - a\nok - b\n'
run_one short
verdict "a test reporting fewer results than its plan fails" \
	eval '[ $rc -ne 0 ] && grep -q "planned 3 results, reported 2" "$T/out" && tail -n1 "$T/out" | grep -qx "2 passed, 1 failed"'

fake long '1..1\nok - a\nok - b\n'
run_one long
verdict "a test reporting more results than its plan fails" eval '[ $rc -ne 0 ] && grep -q "planned 1 results, reported 2" "$T/out"'

fake noplan 'ok - a\n'
run_one noplan
verdict "results without a plan fail" eval '[ $rc -ne 0 ] && grep -q "no plan (1..N) printed" "$T/out"'

fake skipped 'skip - a: no root\nskip - b: no root\n'
run_one skipped
verdict "a test skipped whole before its plan passes, its skips counted" \
	eval '[ $rc -eq 0 ] && tail -n1 "$T/out" | grep -qx "0 passed, 0 failed, 2 skipped"'

fake failing '1..2\nnot ok - a: broke\nok - b\n'
run_one failing
verdict "failures repeated at the end of the log" \
	eval '[ $rc -ne 0 ] && sed -n "/^== the failures again/,\$p" "$T/out" | grep -q "test_failing: not ok - a: broke"'
