#!/bin/sh
# End-to-end: processes that live milliseconds, gone from /proc when the
# loader looks, still named (issue 11, deliverable 3): the exit records
# BPF sends with their mappings name their files by identity among the
# objects the loader holds.
#
# The loader is held back with SIGSTOP while BPF samples on: 20 runs of a
# 25 ms spinner start and are reaped meanwhile, so every read of their
# /proc finds them gone (the -v counter and --json-summary's
# exit_records.processes_named count exactly those).  A copy of the same
# program ran long enough before to be read, so its object is held.
# Bad input: a copy rewritten in place with another program before its
# runs (same device and inode, other size and mtime), and a file that
# is a FIFO by the time the loader looks: neither blocks the agent, and
# neither is named with the object held for the old file.
. "$(dirname "$0")/lib.sh"

T=$(mktemp -d)
CP= LONG= LONG2= CGS=
cleanup() {
	[ -n "$LONG" ] && kill "$LONG" 2>/dev/null
	[ -n "$LONG2" ] && kill "$LONG2" 2>/dev/null
	[ -n "$CP" ] && kill -CONT "$CP" 2>/dev/null && kill "$CP" 2>/dev/null && wait "$CP"
	for c in $CGS; do cgroup_gone "$c"; done
	rm -rf "$T"
}
trap cleanup EXIT
NAMES="short-lived named|replaced in place|replaced by a FIFO"
plan 3

[ "$(id -u)" -eq 0 ] || skip_all "needs root (CAP_BPF, CAP_PERFMON)"
CG=cprof-e2e-exit-$$
CGR=cprof-e2e-exitr-$$
dir=$(cgroup_new "$CG") && dirr=$(cgroup_new "$CGR") || skip_all "no writable cgroup v2 hierarchy"
CGS="$dir $dirr"

SPIN=$BUILD/workloads/shortspin
cp "$SPIN" "$T/spin"
cp "$SPIN" "$T/spin2"
chown nobody "$T/spin2" # a user's file: never shared with the root-owned copy by content
cp "$SPIN" "$T/fifo-spin"

$CPROF -v -F 499 --duration 3600 --output-dir "$T/out" --json-summary "$T/sum.json" 2>"$T/err" &
CP=$!
wait_sampling "$CP" || fail_all "the agent did not start: $(tail -n1 "$T/err")"
"$T/spin" 30000 &
LONG=$!
"$T/spin2" 30000 &
LONG2=$!
sleep 2 # read while they run: their objects are held from now on

kill -STOP "$CP"
in_cgroup "$dir" sh -c 'for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do "$1" 25; done' \
	sh "$T/spin"
kill "$LONG2"
wait "$LONG2" 2>/dev/null
LONG2=
# the same inode, another program's bytes
cat "$BUILD/workloads/busy" >"$T/spin2"
in_cgroup "$dirr" sh -c 'for i in 1 2 3 4 5 6 7 8 9 10; do "$1" 0.025 3; done' sh "$T/spin2"
"$T/fifo-spin" 200
rm "$T/fifo-spin"
mkfifo "$T/fifo-spin"
kill -CONT "$CP"
sleep 1
kill "$LONG"
wait "$LONG" 2>/dev/null
LONG=
stop_agent "$CP"
finished=$STOPPED rc=$STOP_RC
CP=

folded_of "$T/out" "$CG" >"$T/short.folded"
set -- $(user_stacks "$T/short.folded" "$CG")
good=$2 all=$3
named=$(jget "$T/sum.json" exit_records.processes_named)
spun=$(sum_where "$T/short.folded" 'main;spin_outer;spin_inner')
check "short-lived named: the loader's reads found them gone ($named processes named from exit records) and >=90% of their samples are complete and fully named ($good of $all; through spin_outer;spin_inner: $spun), their cgroup labelled" \
	eval '[ "${named:-0}" -ge 15 ] && at_least "$good $all" 0.90 50 && [ "$spun" -ge $((all / 2)) ]'

folded_of "$T/out" "$CGR" >"$T/replaced.folded"
total=$(sum_where "$T/replaced.folded" '.')
wrong=$(sum_where "$T/replaced.folded" 'spin_inner|spin_outer|now_ms')
unknown=$(jget "$T/sum.json" exit_records.files_unknown)
check "replaced in place: no frame named with the old file's object ($wrong of $total samples), its file counted unknown ($unknown)" \
	eval '[ "$total" -ge 10 ] && [ "$wrong" -eq 0 ] && [ "${unknown:-0}" -ge 1 ]'

for f in "$T"/out/fifo-spin-*.pb.gz; do [ -e "$f" ] && folded "$f"; done >"$T/fifo.folded"
total=$(sum_where "$T/fifo.folded" '.')
wrong=$(sum_where "$T/fifo.folded" 'spin_inner|spin_outer|now_ms')
check "replaced by a FIFO: the agent ended on SIGINT ($finished, status $rc), the program profiled ($total samples) and unnamed, its file never opened ($wrong named)" \
	eval '[ "$finished" = yes ] && [ "$rc" -eq 0 ] && [ "$total" -ge 10 ] && [ "$wrong" -eq 0 ]'
