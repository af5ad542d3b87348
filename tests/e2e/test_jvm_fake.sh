#!/bin/sh
# End-to-end: a process that maps a libjvm.so which is no JVM (issue 32's
# bad input).  tests/workloads/fakejvm exports HotSpot's serviceability
# symbols with tables that lie: members outside their types and missing
# ones, a table with no end running into an unreadable page, a megabyte
# stride, tables never filled in, tables whose strides are 0 (a libjvm.so
# between its relocation and its constructors), and those filled in with
# lies a second late (looked for again, then refused).  Each run must end well (status 0), keep
# the process's native frames whole, name no Java frame, and, where the
# tables are there but wrong, say so once with the reason, counted in
# --json-summary's java.jvms_refused.  Needs root.
. "$(dirname "$0")/lib.sh"

T=$(mktemp -d)
trap 'stop_all; rm -rf "$T"' EXIT
FAKE=$BUILD/workloads/fakejvm/fakejvm
MODES="lying endless stride empty zero late"

plan 6
require_root "fake JVM: lying" "fake JVM: endless" "fake JVM: stride" "fake JVM: empty" \
	"fake JVM: zero" "fake JVM: late"
[ -x "$FAKE" ] || skip_all "needs $FAKE (make workloads)"

for m in $MODES; do
	"$FAKE" "$m" 5 >"$T/$m.out" &
	BG="$BG $!"
	pid=$(wait_pid_file "$T/$m.out")
	$CPROF --pid "${pid:-0}" -F 199 --duration 2 --output-dir "$T/$m" --json-summary "$T/$m.json" \
		2>"$T/$m.err"
	rc=$?
	stop_all
	f=$T/$m/fakejvm-$pid.pb.gz
	[ -f "$f" ] && folded "$f" >"$T/$m.folded" || : >"$T/$m.folded"
	all=$(sum_where "$T/$m.folded" .)
	whole=$(sum_where "$T/$m.folded" '	(_start;)?(__libc_start_main[^;]*;)?__libc_start_call_main;main;fake_spin(;|$)')
	java=$(sum_where "$T/$m.folded" '\[(jvm|java)')
	refused=$(jget "$T/$m.json" java.jvms_refused)
	said=$(grep -c "a JVM this does not know" "$T/$m.err")
	# tables not filled in (no pointer, or strides 0) are a JVM still
	# starting: looked for again, never refused; filled in a second late,
	# they are read then (and refused)
	want=1
	[ "$m" = empty ] || [ "$m" = zero ] && want=0
	# the reason said: what the tables lie about, never a start not yet done
	case $m in
	lying | late) why="not in the JVM's tables" ;;
	endless) why="entry [0-9]+ unreadable" ;;
	stride) why="is 1048576" ;;
	*) why=. ;;
	esac
	reason=$(grep -cE "does not know: .*$why" "$T/$m.err")
	check "fake JVM: $m: exit $rc, $whole of $all samples main;fake_spin, $java Java frames; refused $refused (said $said times: $(grep -m1 'does not know' "$T/$m.err" | cut -c1-160))" \
		eval '[ "$rc" -eq 0 ] && at_least "$whole $all" 0.95 100 && [ "$java" -eq 0 ] &&
		      [ "$refused" = "$want" ] && [ "$said" -eq "$want" ] && [ "$reason" -eq "$want" ]'
done
