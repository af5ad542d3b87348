#!/bin/sh
# End-to-end: the files of a process gone before the loader read it are
# opened by the path BPF sent after its exit record (struct
# cprof_exit_file), numbered, and their tables serve the next processes
# that run them (issue 11: `as` in a build, a few milliseconds each).
#
# The loader is held back with SIGSTOP while a fresh copy of a program
# without frame pointers (a new inode, bytes of its own: no object the
# agent holds can stand for it) runs and exits, so no read of /proc finds
# it: only the exit record's path can open it.  A second run, also unread,
# asks for the table its first samples missed; then ten more runs, unread
# too, must unwind through it from their first samples.  Without the path
# the copy is never opened, and those runs stop in it (frame pointers of
# a program built without them).
#
# Hostile: three more fresh copies whose path, once they exited and before
# the loader looks, is a FIFO, a symlink to the good copy, or another file;
# and one run chrooted (another root): none is opened, each is counted,
# and the agent still stops at once on SIGINT.
. "$(dirname "$0")/lib.sh"

T=$(mktemp -d)
CP= CGS=
cleanup() {
	[ -n "$CP" ] && kill -CONT "$CP" 2>/dev/null && kill "$CP" 2>/dev/null && wait "$CP"
	for c in $CGS; do cgroup_gone "$c"; done
	rm -rf "$T"
}
trap cleanup EXIT
NAMES="numbered from the exit path|later runs complete|hostile paths refused|other root skipped|agent stops"
plan 5

[ "$(id -u)" -eq 0 ] || skip_all "needs root (CAP_BPF, CAP_PERFMON)"
CG=cprof-e2e-exitf-$$
dir=$(cgroup_new "$CG") || skip_all "no writable cgroup v2 hierarchy"
CGS="$dir"
SPIN=$BUILD/workloads/shortspin
STATIC=$BUILD/workloads/nofp-static
[ -x "$SPIN" ] && [ -x "$STATIC" ] || skip_all "workloads not built"

# fresh NAME: a copy of the spinner at $T/NAME, its own bytes at the end
fresh() {
	mkdir -p "$(dirname "$T/$1")"
	{ cat "$SPIN"; echo "exitfiles $$ $1"; } >"$T/$1"
	chmod +x "$T/$1"
}
fresh bin/spin
for h in fifo link other; do fresh "h/$h"; done
mkdir -p "$T/root"
cp "$STATIC" "$T/root/static"

# held NAME CMD...: CMD runs in the cgroup while the loader is stopped
held() {
	kill -STOP "$CP"
	in_cgroup "$dir" "$@"
	kill -CONT "$CP"
	sleep 1 # the loader takes its exit records and builds what was asked
}

$CPROF -v -F 499 --duration 3600 --output-dir "$T/out" --json-summary "$T/sum.json" 2>"$T/err" &
CP=$!
wait_sampling "$CP" || fail_all "the agent did not start: $(tail -n1 "$T/err")"

held "$T/bin/spin" 150
held "$T/bin/spin" 150
kill -STOP "$CP"
in_cgroup "$dir" sh -c 'for i in 1 2 3 4 5 6 7 8 9 10; do echo $$ >/dev/null; "$1" 60; done' sh "$T/bin/spin" &
wait $!
# the hostile three: swapped after their exit, before the loader looks
for h in fifo link other; do in_cgroup "$dir" "$T/h/$h" 100; done
rm "$T/h/fifo" "$T/h/link" "$T/h/other"
mkfifo "$T/h/fifo"
ln -s "$T/bin/spin" "$T/h/link"
cp "$SPIN" "$T/h/other"
in_cgroup "$dir" chroot "$T/root" /static split 0.3 >/dev/null
kill -CONT "$CP"
sleep 1
stop_agent "$CP"
finished=$STOPPED rc=$STOP_RC
CP=

opened=$(jget "$T/sum.json" exit_records.files_opened)
refused=$(jget "$T/sum.json" exit_records.files_refused)
other=$(jget "$T/sum.json" exit_records.files_other_root)
sent=$(jget "$T/sum.json" exit_records.paths_sent)
check "numbered from the exit path: the copy, never read alive, was opened by the path its exit sent ($opened opened of $sent paths sent)" \
	eval '[ "${opened:-0}" -ge 1 ]'

# the ten later runs: profiles of processes whose pid came after the second run's
for f in "$T"/out/spin-*.pb.gz; do folded "$f"; done >"$T/spin.folded"
pids=$(awk -F '\t' '{ if (match($2, /pid:\[[0-9]+\]/)) print substr($2, RSTART + 5, RLENGTH - 6) }' \
	"$T/spin.folded" | sort -un)
late=$(echo "$pids" | tail -n +3 | tr '\n' '|' | sed 's/|$//')
awk -F '\t' -v re="pid:\\\\[($late)\\\\]" '$2 ~ re' "$T/spin.folded" >"$T/late.folded"
set -- $(user_stacks "$T/late.folded" "$CG")
good=$1 all=$3
inner=$(sum_where "$T/late.folded" 'main;spin_outer;spin_inner')
check "later runs complete: $(echo "$pids" | wc -l) runs, the last ones' user stacks reach _start through the copy's table ($good of $all complete, $inner through main;spin_outer;spin_inner)" \
	eval 'at_least "$good $all" 0.90 100 && [ "$inner" -ge $((all / 2)) ]'

for h in fifo link other; do
	for f in "$T"/out/$h-*.pb.gz; do [ -e "$f" ] && folded "$f"; done
done >"$T/hostile.folded"
total=$(sum_where "$T/hostile.folded" '.')
wrong=$(sum_where "$T/hostile.folded" 'spin_inner|spin_outer|now_ms')
check "hostile paths refused: a FIFO, a symlink, another file at the path ($refused refused), their frames unnamed ($wrong of $total)" \
	eval '[ "${refused:-0}" -ge 3 ] && [ "$total" -ge 20 ] && [ "$wrong" -eq 0 ]'
check "other root skipped: a chrooted program's files are not looked up in ours ($other counted)" \
	eval '[ "${other:-0}" -ge 1 ]'
check "agent stops: ended on SIGINT ($finished, status $rc)" \
	eval '[ "$finished" = yes ] && [ "$rc" -eq 0 ]'
