#!/bin/sh
# End-to-end: complete user stacks without frame pointers, by the BPF DWARF
# unwinder, on workloads built -O2 -fomit-frame-pointer, on Debian's python3,
# and against an oracle (glibc's own DWARF backtrace()).  Needs root.
. "$(dirname "$0")/lib.sh"

T=$(mktemp -d)
trap 'kill $W 2>/dev/null; rm -rf "$T"' EXIT
NOFP=$BUILD/workloads/nofp

plan 15
require_root "complete stacks (PIE)" "CPU split" "oracle" "summary reports unwinding" \
	"complete stacks (non-PIE)" "qsort callback" "static binary" \
	"dlopen after start: complete" "dlopen after start: build id" "300-deep recursion" \
	"700-deep recursion" "signal frames" "python3" "a 256 KB table budget" \
	"frame-pointer mode is incomplete"

# profile NAME SECS WORKLOAD-ARGS...: runs the workload, profiles its pid for
# SECS at 499 Hz, leaves "$T/NAME.folded" and the summary in "$T/NAME.err".
profile() {
	_n=$1 _s=$2
	shift 2
	"$@" >"$T/$_n.pid" &
	W=$!
	_pid=$(wait_pid_file "$T/$_n.pid")
	sleep 0.3
	$CPROF --pid "$_pid" -F 499 --duration "$_s" --output-dir "$T/$_n" ${CPROF_ARGS:-} \
		--json-summary "$T/$_n.json" 2>"$T/$_n.err"
	kill $W 2>/dev/null
	wait $W 2>/dev/null
	folded "$T/$_n"/*.pb.gz >"$T/$_n.folded"
}

# frac FILE PATTERN [OF-PATTERN]: samples matching PATTERN among those
# matching OF-PATTERN (default: all), as "matched total".
frac() {
	echo "$(sum_where "$1" "$2") $(sum_where "$1" "${3:-.}")"
}

# A complete stack reaches main from the outermost frame (_start) with no
# unwind pseudo-frame.
COMPLETE='	_start;__libc_start_main;__libc_start_call_main;main;'

profile split 4 $NOFP split 20
r=$(frac "$T/split.folded" "$COMPLETE")
check "complete stacks (PIE): >=99% of samples from _start through main ($r)" at_least "$r" 0.99 300

hot=$(sum_where "$T/split.folded" 'main;stage_one;stage_two;work_hot(;|$)')
cold=$(sum_where "$T/split.folded" 'main;stage_one;stage_two;work_cold(;|$)')
check "CPU split work_hot:work_cold is 75:25 within 3 points ($hot:$cold)" \
	awk -v a="$hot" -v b="$cold" 'BEGIN { exit !(a + b > 300 && (a / (a + b) - 0.75)^2 < 0.03^2) }'

# The oracle: glibc's backtrace() from work_hot's frame, executable frames only.
chain=$($NOFP oracle | awk '{ a[NR] = $0 } END { for (i = NR; i >= 1; i--) if (a[i] != "_start" && a[i] !~ /^__libc/) s = s (s == "" ? "" : ";") a[i]; print s }')
r=$(frac "$T/split.folded" ";$chain(;|\$)" ';work_hot(;|$)')
oracle_ok() { [ "$chain" = 'main;stage_one;stage_two;work_hot' ] && at_least "$r" 0.99 300; }
check "oracle: backtrace() says '$chain'; >=99% of work_hot samples agree ($r)" oracle_ok
cfi=$(jget "$T/split.json" unwind.cfi) built=$(jget "$T/split.json" unwind_tables.built)
check "summary reports unwinding and table figures (--json-summary: ${cfi:-?} stacks by CFI, ${built:-?} tables built)" \
	sh -c "[ '${cfi:-0}' -gt 0 ] && [ '${built:-0}' -ge 1 ]"

profile nopie 3 $BUILD/workloads/nofp-nopie split 20
r=$(frac "$T/nopie.folded" "$COMPLETE")
check "complete stacks (non-PIE): >=99% ($r)" at_least "$r" 0.99 300

profile qsort 3 $NOFP qsort 20
r=$(frac "$T/qsort.folded" "${COMPLETE}sort_many;.*compare_slowly(;|\$)" 'compare_slowly(;|$)')
check "qsort callback: >=99% of compare_slowly samples reach main through libc's qsort ($r)" \
	at_least "$r" 0.99 300

profile static 3 $BUILD/workloads/nofp-static split 20
r=$(frac "$T/static.folded" '	_start;__libc_start_main(_impl)?;__libc_start_call_main;main;stage_one;stage_two;work_(hot|cold)')
check "static binary: >=99% of samples complete and named ($r)" at_least "$r" 0.99 300

# A library loaded after the process was first seen: the unwinder asks for
# a new snapshot and its frames are unwound and named from then on.
profile dlopen 3 $NOFP dlopen 20 "$PWD/$BUILD/workloads/libplugin.so"
r=$(frac "$T/dlopen.folded" "${COMPLETE}(dlopen_mode;)?run_plugin;plugin_work;plugin_inner\$" 'plugin_inner$|	\[unwind')
check "dlopen after start: >=95% of the library's samples complete ($r)" at_least "$r" 0.95 700
bid=$(readelf -n "$BUILD/workloads/libplugin.so" | awk '/Build ID/ { print $3 }')
check "dlopen after start: the library's mapping carries its build id" \
	sh -c "go tool pprof -raw '$T/dlopen'/*.pb.gz 2>/dev/null | sed -n '/^Mappings/,\$p' | grep libplugin.so | grep -q '$bid'"

profile deep 3 $NOFP deep 20 300
# (mawk has no regex intervals: count the frames instead)
deepest=$(awk -F '\t' '{ n = gsub(/recurse/, "&", $3); if (n > m) m = n } END { print m + 0 }' "$T/deep.folded")
r=$(awk -F '\t' -v c="$COMPLETE" '{ t += $1; s = "\t" $3; if (index(s, c) == 1 && gsub(/;recurse/, "&", s) >= 300) m += $1 }
	END { print m + 0, t + 0 }' "$T/deep.folded")
deep_ok() { [ "$deepest" -ge 300 ] && at_least "$r" 0.95 300; }
check "300-deep recursion: stacks hold all 300 frames down to _start (deepest $deepest; $r)" deep_ok

profile deeper 2 $NOFP deep 20 700
r=$(awk -F '\t' '{ t += $1; if ($3 ~ /^\[unwind: truncated\];/ && gsub(/recurse/, "&", $3) >= 500) m += $1 }
	END { print m + 0, t + 0 }' "$T/deeper.folded")
check "700-deep recursion: 512 frames kept, marked [unwind: truncated] at the root ($r)" \
	at_least "$r" 0.95 300

profile signal 3 $NOFP signal 20
r=$(frac "$T/signal.folded" "${COMPLETE}signal_loop;.*on_sigprof(;|\$)" 'on_sigprof(;|$)')
check "signal frames: >=95% of handler samples unwind through __restore_rt into signal_loop ($r)" \
	at_least "$r" 0.95 200

if [ -x /usr/bin/python3 ]; then
	cat >"$T/loop.py" <<'PY'
import os, sys, time
print(os.getpid(), flush=True)
end = time.time() + float(sys.argv[1])
def spin():
    n = 0
    while time.time() < end:
        n += 1
spin()
PY
	profile python 3 /usr/bin/python3 "$T/loop.py" 20
	# Debian's python3 main() tail-calls Py_BytesMain, so main has no frame.
	r=$(frac "$T/python.folded" '	_start;__libc_start_main;__libc_start_call_main;Py_BytesMain;')
	check "python3: >=95% of samples reach _start through Py_BytesMain ($r)" at_least "$r" 0.95 300
else
	skip "python3" "/usr/bin/python3 not installed"
fi

# A budget too small for python3's tables: they go without, frames fall back
# to frame pointers, nothing is lost and the summary says so.
if [ -x /usr/bin/python3 ]; then
	CPROF_ARGS="--unwind-memory 256K" profile small 2 /usr/bin/python3 "$T/loop.py" 20
	n=$(sum_where "$T/small.folded" .)
	room() { [ "$(jget "$T/small.json" unwind_tables.no_room)" -ge 1 ] && [ "$n" -ge 200 ]; }
	check "a 256 KB table budget: tables left out are reported, samples all written ($n)" room
else
	skip "a 256 KB table budget" "/usr/bin/python3 not installed"
fi

CPROF_ARGS="--unwind fp" profile fp 2 $NOFP split 20
r=$(frac "$T/fp.folded" "$COMPLETE")
fp_incomplete() { ! at_least "$r" 0.5 100 && at_least "$(frac "$T/fp.folded" .) " 0 100; }
check "frame-pointer mode on the same binary is incomplete (<50%: $r), so CFI is what completes stacks" fp_incomplete
exit 0
