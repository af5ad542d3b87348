#!/bin/sh
# End-to-end: the agent's own footprint (issue 36).  A continuous run
# (--interval 2, 999 Hz) beside a CPython whose libpython carries 14 MB of
# DWARF, so that the sandboxed DWARF reader works for a while: no window
# holds a profile of the agent or of any process it started, one reader
# serves the whole run (kept with what it decompressed), and it shows in
# ps as what it is, not as "exe" (its binary is the agent's own, exec'd
# through /proc/self/exe).  Then a standing warning is told once, and the
# JSON names the object it is about.  Needs root.
#
# The agent's children are seen from outside: their pids, command names
# and CPU time, looked at every 50 ms in /proc while the run lasts.
. "$(dirname "$0")/lib.sh"

T=$(mktemp -d)
trap 'kill $W $CP 2>/dev/null; rm -rf "$T"' EXIT
plan 6
require_root "footprint: the reader worked" "footprint: the reader is named cprof-dwarf" \
	"footprint: no profile of the agent's own processes" "footprint: one reader for the run" \
	"footprint: a standing warning told once" \
	"footprint: the JSON names the objects over --dwarf-memory"

# The newest pyenv CPython: a shared libpython with its DWARF.
PY=$(ls -d "${PYENV_ROOT:-/root/.pyenv}"/versions/3.*/bin/python3 2>/dev/null | sort -V | tail -n1)
[ -n "$PY" ] && [ -x "$PY" ] || skip_all "needs a pyenv CPython (a libpython with DWARF)"

"$PY" -c 'while True: sum(range(1000))' &
W=$!
# its libpython, once the loader has mapped it (read at once, it was not
# there yet in one CI run)
for _ in $(seq 100); do
	LIBPY=$(awk '$6 ~ /libpython3/ { print $6; exit }' /proc/$W/maps 2>/dev/null)
	[ -n "$LIBPY" ] && break
	sleep 0.05
done
$CPROF --interval 2 --duration 10 -F 999 --output-dir "$T/out" 2>"$T/err" &
CP=$!
AGENT=$CP
# "PID COMM TICKS" for each child of the agent, every 50 ms.
: >"$T/kids"
while kill -0 $CP 2>/dev/null; do
	for c in $(cat /proc/$CP/task/*/children 2>/dev/null); do
		echo "$c $(cat "/proc/$c/comm" 2>/dev/null) $(cpu_ticks "$c")" >>"$T/kids"
	done
	sleep 0.05
done
wait $CP
rc=$?
CP=
kill $W 2>/dev/null
wait $W 2>/dev/null
W=

# Per child: its last name seen and the most CPU seen (ms).  Under ASan,
# LeakSanitizer's check at exit runs in a task cloned without
# CLONE_THREAD, a child named as the agent is: seen only as "cprof-bpf"
# (never as the reader), it is not one (with detect_leaks=0 it never shows;
# CI's stop 40 and a run of this session caught it in one look of 50 ms).
awk -v tck="$(getconf CLK_TCK)" -v san="${SANITIZE:-}" 'NF == 3 {
		name[$1] = $2; if ($2 != "cprof-bpf") other[$1] = 1; if ($3 > t[$1]) t[$1] = $3 }
	END { for (p in name) if (san != 1 || other[p]) printf "%s %s %d\n", p, name[p], t[p] * 1000 / tck }' \
	"$T/kids" >"$T/last"
nkids=$(wc -l <"$T/last")
kid_ms=$(awk '{ s += $3 } END { print s + 0 }' "$T/last")
names=$(awk '{ print $2 }' "$T/last" | sort | uniq -c | awk '{ printf "%s%s x%s", (NR > 1 ? ", " : ""), $2, $1 }')
windows=$(ls "$T/out" 2>/dev/null | sed -n 's/^\([0-9TZ]*\)-.*/\1/p' | sort -u | wc -l)

# At 999 Hz, 30 ms of CPU is some 30 samples: a profile of the reader
# would be written if it were sampled.
check "footprint: the reader worked: $nkids children of the agent used $kid_ms ms of CPU in $windows windows (exit $rc)" \
	eval '[ "$rc" -eq 0 ] && [ "$nkids" -ge 1 ] && [ "$kid_ms" -ge 30 ]'
# Kept across windows, with what it decompressed: a new reader each window
# read and inflated the same debug sections again.
# When more than one was seen, what the agent said of its reader says why.
said=""
[ "$nkids" -eq 1 ] || said=$(grep -i -m3 'dwarf reader\|sanitizer' "$T/err" | tr '\n' ' ')
check "footprint: one reader for the run: $nkids children in $windows windows${said:+ (the agent: $said)}" \
	eval '[ "$nkids" -eq 1 ] && [ "$windows" -ge 4 ]'
check "footprint: the reader is named cprof-dwarf, last seen as: ${names:-no child seen}" \
	eval '[ "$nkids" -ge 1 ] && [ -z "$(awk '\''$2 != "cprof-dwarf"'\'' "$T/last")" ]'
own=""
for p in $AGENT $(awk '{ print $1 }' "$T/last"); do
	own="$own $(ls "$T/out" | grep -E -- "-$p\\.pb\\.gz\$")"
done
own="$own $(ls "$T/out" | grep -E -- '(^|-)(exe|cprof-dwarf|cprof-bpf)-[0-9]+\.pb\.gz$')"
own=$(printf "%s\n" $own | sort -u | tr "\n" " " | sed "s/ *$//")
check "footprint: no profile of the agent's own processes in $(ls "$T/out" | wc -l) files (${own:-none})" \
	eval '[ "$windows" -ge 4 ] && [ -z "$own" ]'

# --- a standing condition, told once -----------------------------------------
# libpython's DWARF is over a 1 MB --dwarf-memory in every window: the
# window lines say so once, and the JSON names the object.
"$PY" -c 'while True: sum(range(1000))' &
W=$!
sleep 0.3
$CPROF --interval 1 --duration 5 --pid $W --dwarf-memory 1M --json-summary "$T/s.json" \
	--output-dir "$T/told" 2>"$T/told.err"
rc=$?
kill $W 2>/dev/null
wait $W 2>/dev/null
W=
nwin=$(grep -c ': window ' "$T/told.err")
ntold=$(grep ': window ' "$T/told.err" | grep -c 'without source lines: DWARF over --dwarf-memory')
check "footprint: a standing warning told once ($ntold of $nwin window lines; exit $rc)" \
	eval '[ "$rc" -eq 0 ] && [ "$nwin" -ge 4 ] && [ "$ntold" -eq 1 ]'
named=$(python3 -c 'import json, sys; print("\n".join(json.load(open(sys.argv[1]))["symbols"]["dwarf_too_big_objects"]))' \
	"$T/s.json" 2>/dev/null)
check "footprint: the JSON names the objects over --dwarf-memory (${LIBPY:-libpython not seen in maps} among: $(echo $named))" \
	eval '[ -n "$LIBPY" ] && printf "%s\n" "$named" | grep -qxF "$LIBPY"'
