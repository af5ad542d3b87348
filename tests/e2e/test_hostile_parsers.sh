#!/bin/sh
# End-to-end: hostile input to the agent's parsers, from unprivileged
# processes (setpriv --reuid nobody).
#
#  1. A process whose binary has a .debug_line_str without a single NUL
#     (libdw read past it before: an ASan abort).  The run exits 0, every
#     profile is written, the object's frames are named from its symbols,
#     the corrupted table was read (its run-on file name is in the
#     profile); under `make test SANITIZE=1` the agent's own process has
#     no ASan report.
#  2. Six 100 MB objects with 4M symbols each, mapped and run.  The agent's
#     peak memory stays under a DaemonSet's 128 MiB, the frames are named
#     right, the writing time is reported; with a tiny --symbol-memory the
#     bound is hit, reported, and the run still writes its profile.
# The big objects are generated here (tests/workloads/bigsyms.c) and
# deleted at the end.
. "$(dirname "$0")/lib.sh"

T=$(mktemp -d)
chmod 755 "$T"
BG=
cleanup() {
	for p in $BG; do kill "$p" 2>/dev/null; done
	for p in $BG; do wait "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

plan 8
require_root "hostile DWARF: run exits 0, profiles written" "hostile DWARF: named from symbols" \
	"hostile DWARF: its unterminated .debug_line_str was read" \
	"hostile DWARF: no ASan report from the agent" "4M symbols x 6: memory" \
	"4M symbols x 6: frames named" "4M symbols x 6: writing time reported" \
	"--symbol-memory hit: reported, profile written"

CC=${CC:-cc}
W=$BUILD/workloads
AS_NOBODY="setpriv --reuid nobody --regid nogroup --clear-groups"

# named_mostly NAME PROFILE PATTERN: ok when frames matching PATTERN are in
# at least 80% of PROFILE's samples.
named_mostly() {
	folded "$2" >"$T/folded"
	_total=$(sum_where "$T/folded" '.')
	_part=$(sum_where "$T/folded" "$3")
	if [ "$_total" -gt 0 ] && [ $((_part * 100)) -ge $((_total * 80)) ]; then
		ok "$1 ($_part of $_total samples)"
	else
		fail "$1" "$_part of $_total samples match $3"
	fi
}

# peak_kb PID OUT: until PID exits, every 50 ms, the proportional set size
# (Pss: a page shared by the agent and its forked DWARF worker counts once)
# of PID and its children, summed; writes the largest sum seen to OUT.
peak_kb() {
	_max=0
	while kill -0 "$1" 2>/dev/null; do
		_sum=0
		for _q in $1 $(cat /proc/"$1"/task/*/children 2>/dev/null); do
			_k=$(awk '/^Pss:/ { print $2 }' /proc/"$_q"/smaps_rollup 2>/dev/null)
			_sum=$((_sum + ${_k:-0}))
		done
		[ "$_sum" -gt "$_max" ] && _max=$_sum
		sleep 0.05
	done
	echo "$_max" >"$2"
}

# --- 1. a .debug_line_str without a NUL ----------------------------------------

cat >"$T/hostile.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
static volatile unsigned long sink;
__attribute__((noinline)) void hostile_spin(void)
{
	for (int i = 0; i < 1000000; i++)
		sink += i;
}
int main(int argc, char **argv)
{
	time_t end = time(NULL) + (argc > 1 ? atoi(argv[1]) : 10);

	printf("%d\n", (int)getpid());
	fflush(stdout);
	while (time(NULL) < end)
		hostile_spin();
	return 0;
}
C
if ! $CC -O2 -gdwarf-5 -o "$T/hostile" "$T/hostile.c" 2>"$T/err" ||
	! $CC -O1 -Wall -o "$T/elfpatch" tests/fuzz/elfpatch.c 2>>"$T/err" ||
	! "$T/elfpatch" "$T/hostile" unterminate .debug_line_str 2>>"$T/err"; then
	for n in "hostile DWARF: run exits 0, profiles written" "hostile DWARF: named from symbols" \
		"hostile DWARF: its unterminated .debug_line_str was read" \
		"hostile DWARF: no ASan report from the agent"; do
		skip "$n" "no DWARF 5 .debug_line_str to corrupt: $(head -c 200 "$T/err")"
	done
else
	chmod 755 "$T/hostile"
	start HPID $AS_NOBODY "$T/hostile" 20
	"$W/busy" 20 5 &
	BPID=$!
	BG="$BG $BPID"
	"$CPROF" --pid "$HPID,$BPID" --duration 3 -v --output-dir "$T/out1" >"$T/err1" 2>&1 &
	APID=$!
	wait $APID
	rc=$?
	hf=$(ls "$T/out1"/hostile-*.pb.gz 2>/dev/null | head -n 1)
	bf=$(ls "$T/out1"/busy-*.pb.gz 2>/dev/null | head -n 1)
	check "hostile DWARF: run exits 0, profiles written" \
		sh -c "[ $rc -eq 0 ] && [ -n '$hf' ] && [ -n '$bf' ] && gzip -t '$hf' '$bf'" ||
		sed 's/^/# /' "$T/err1" | head -n 20
	if [ -n "$hf" ]; then
		named_mostly "hostile DWARF: named from symbols (hostile_spin)" "$hf" 'hostile_spin'
	else
		fail "hostile DWARF: named from symbols" "no profile of the hostile process"
	fi
	# The corrupted table was read, not skipped (else no report proves
	# nothing): the file name libdw gave runs from "hostile.c" over the
	# NULs made 'X' to the end of the section (and the image's pad).
	if [ -n "$hf" ] && go tool pprof -raw "$hf" 2>/dev/null | grep -q 'hostile_spin .*hostile\.cX'; then
		ok "hostile DWARF: its unterminated .debug_line_str was read (file name runs into the next strings)"
	else
		fail "hostile DWARF: its unterminated .debug_line_str was read" \
			"no hostile_spin location with a file name 'hostile.cX...': $(grep -m1 'hostile' "$T/err1")"
	fi
	# The agent's own reports carry its pid: "==PID==ERROR: AddressSanitizer"
	# (or LeakSanitizer, ASan's leak check at exit).  The DWARF worker is a
	# forked child with a pid of its own: a fault there costs that object's
	# lines by design, so its reports are shown, not counted here.
	if grep -qE "==$APID==ERROR: (Address|Leak)Sanitizer" "$T/err1"; then
		fail "hostile DWARF: no ASan report from the agent" \
			"$(grep -m1 -A3 -E "==$APID==ERROR: (Address|Leak)Sanitizer" "$T/err1" | tr '\n' ' ')"
	elif [ "${SANITIZE:-0}" = 1 ]; then
		ok "hostile DWARF: no ASan report from the agent (ASan build, pid $APID)"
	else
		skip "hostile DWARF: no ASan report from the agent" "not an ASan build (SANITIZE=1 checks it; exit $rc)"
	fi
	grep -E "^==[0-9]+==ERROR: [A-Za-z]+Sanitizer" "$T/err1" | grep -v "^==$APID==" |
		sed 's/^/# from another process than the agent (its DWARF worker): /'
	stop_all
fi

# --- 2. six 100 MB objects with 4M symbols each ---------------------------------

if [ ! -x "$W/bigsyms" ]; then
	for n in "4M symbols x 6: memory" "4M symbols x 6: frames named" \
		"4M symbols x 6: writing time" "--symbol-memory hit: reported, profile written"; do
		skip "$n" "no $W/bigsyms (make workloads)"
	done
	exit 0
fi
t0=$(date +%s.%N)
files=
for i in 0 1 2 3 4 5; do
	"$W/bigsyms" gen "$T/big$i.so" 4000000 "$i" && files="$files $T/big$i.so"
done
chmod 644 $files
echo "# 6 objects of $(($(wc -c <"$T/big0.so") / 1048576)) MB, 4M symbols each, written in" \
	"$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
# shellcheck disable=SC2086
start GPID $AS_NOBODY "$W/bigsyms" run 120 $files
/usr/bin/time -f '%M' -o "$T/maxrss" "$CPROF" --pid "$GPID" --duration 4 \
	--output-dir "$T/out2" --json-summary "$T/sum2.json" >"$T/err2" 2>&1 &
TPID=$!
sleep 0.2
APID=$(cat /proc/$TPID/task/*/children 2>/dev/null | awk '{ print $1 }')
PEAK=
if [ -n "$APID" ]; then
	peak_kb "$APID" "$T/pss" &
	PEAK=$!
fi
wait $TPID
rc=$?
[ -n "$PEAK" ] && wait "$PEAK"
maxrss=$(tail -n 1 "$T/maxrss" 2>/dev/null)
pss=$(cat "$T/pss" 2>/dev/null)
wtime=$(jget "$T/sum2.json" output.last_write_s)
gf=$(ls "$T/out2"/bigsyms-*.pb.gz 2>/dev/null | head -n 1)
echo "# 4M symbols x 6: peak RSS ${maxrss:-?} KB (GNU time: the larger of agent and DWARF worker)," \
	"peak Pss of agent + worker ${pss:-?} KB (sampled every 50 ms), written in ${wtime:-?} s"
# README's figures: 14 MB of peak RSS, written in under 3 s (bench/RESULTS.md:
# 13.9 MB, 1.4-2.7 s), held by the plain build.  Under ASan the sanitizer's
# runtime, shadow memory and quarantine are in each of the agent and its
# DWARF worker: 48 MB of peak RSS each time, and 54 to 82 MB of Pss for
# the two (four ASan runs of 2026-11-29), against 14 and 15 plain.  Its
# bars (above 1.5x those) stop a blow-up, which is what that build can
# show; the product's figure is the plain run's.
MEM_KB=16384 WRITE_S=3
[ "${SANITIZE:-}" = 1 ] && MEM_KB=131072 WRITE_S=10
if [ -n "$maxrss" ] && [ -n "$pss" ] && [ "$maxrss" -le $MEM_KB ] && [ "$pss" -le $MEM_KB ]; then
	ok "4M symbols x 6: memory under $((MEM_KB / 1024)) MiB (peak RSS $((maxrss / 1024)) MB, Pss of agent + worker $((pss / 1024)) MB)"
else
	fail "4M symbols x 6: memory under $((MEM_KB / 1024)) MiB" "peak RSS ${maxrss:-?} KB, Pss ${pss:-?} KB; $(head -n 3 "$T/err2")"
fi
if [ -n "$gf" ]; then
	named_mostly "4M symbols x 6: frames named (hot_0..3)" "$gf" ';hot_[0-3]$'
else
	fail "4M symbols x 6: frames named" "no profile: $(head -n 3 "$T/err2")"
fi
check "4M symbols x 6: writing time under $WRITE_S s (${wtime:-none} s), exit 0" \
	eval '[ "$rc" -eq 0 ] && [ -n "$wtime" ] && awk -v w="$wtime" -v b="$WRITE_S" "BEGIN { exit !(w <= b) }"'

# The same with room for about two objects' names: the bound holds and says so.
"$CPROF" --pid "$GPID" --duration 2 --symbol-memory 64K --output-dir "$T/out3" >"$T/err3" 2>&1
rc=$?
if [ $rc -eq 0 ] && ls "$T/out3"/bigsyms-*.pb.gz >/dev/null 2>&1 &&
	grep -q 'symbol memory over --symbol-memory (64K)' "$T/err3"; then
	ok "--symbol-memory hit: reported, profile written ($(grep -o 'symbol memory over.*' "$T/err3"))"
else
	fail "--symbol-memory hit: reported, profile written" "exit $rc: $(tail -n 3 "$T/err3")"
fi
stop_all
rm -f $files
