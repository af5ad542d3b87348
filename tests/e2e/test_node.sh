#!/bin/sh
# End-to-end: JavaScript frames of Debian's Node.js 20, started with no
# flag (issue 33): named from V8's own heap, no --perf-basic-prof.
# tests/workloads/node/split.js splits its thread's CPU time between spinA
# and spinB by its own clock (the kernel's count for the thread), under
# main -> stage -> work; in a worker_threads worker with "worker"; with
# "tiers" (and --allow-natives-syntax) coldC, kept from TurboFan, takes
# spinB's place.  The profiles are read by go tool pprof.  Needs root and
# node (make deps installs nodejs).
. "$(dirname "$0")/lib.sh"

T=$(mktemp -d)
trap 'stop_all; rm -rf "$T"' EXIT
WL=tests/workloads/node/split.js
NODE=${NODE:-$(command -v node)}

plan 14
require_root "node: hot functions named" "node: split as its own clock" "node: main below them" \
	"node: stacks to the process's start" "node: JavaScript frames with file.js:line" \
	"node worker: hot functions named" "node worker: split as its own clock" \
	"node worker: stacks to the thread root" "node tiers: TurboFan's spinA and interpreted coldC" \
	"node tiers: TurboFan's spinA and baseline coldC" "--no-node: no JavaScript names" \
	"node: the summary counts V8s and frames" "node: another V8 refused" \
	"node: a frame whose heap lies"
[ -n "$NODE" ] && [ -x "$NODE" ] || skip_all "needs node (make deps installs nodejs)"
# the V8 release the reader knows: Node.js 20's (Debian 12's own nodejs is 18, V8 10.2)
V8V=$("$NODE" -p process.versions.v8 2>/dev/null)
case "$V8V" in 11.3.*) ;; *) skip_all "needs Node.js 20 (V8 11.3); this node's V8 is ${V8V:-unknown}" ;; esac

# run NAME SECS CPROF-ARGS -- NODE-ARGS...: runtime_run (lib.sh) of node.
run() {
	_rn=$1 _rs=$2
	shift 2
	_ra=
	while [ "$1" != "--" ]; do _ra="$_ra $1"; shift; done
	shift
	# shellcheck disable=SC2086
	runtime_run "$_rn" "$_rs" $_ra -- "$NODE" "$@"
}

# own_a OUT: spinA's % of the CPU time of the "own split A:B" line in OUT.
own_a() {
	grep '^own split' "$1" | tail -n 1 | awk -F '[ :]' '{ a += $3; b += $4 }
		END { printf "%.1f", a + b ? 100 * a / (a + b) : -100 }'
}

# share_a FOLDED: spinA's % of the samples in spinA or spinB.
share_a() {
	awk -F '\t' '$3 ~ /;spinA(;|$)/ { a += $1 } $3 ~ /;spin[AB](;|$)/ { t += $1 }
		END { printf "%.1f", t ? 100 * a / t : -100 }' "$1"
}

# rooted FOLDED ROOT PATTERN: samples matching PATTERN whose stack starts
# with ROOT and has no unwind stop or unread JavaScript frame.
rooted() {
	awk -F '\t' -v r="$2" -v p="$3" '$3 ~ r && $3 ~ p && $3 !~ /\[(unwind|js):/ { s += $1 }
		END { print s + 0 }' "$1"
}

MAIN_ROOT='^_start;__libc_start_main;__libc_start_call_main;node::Start'
# A thread's start; a sample walked by frame pointers before node's table
# was loaded (the agent's first second, longer under ASan: 51 of 3861 in a
# CI run) ends there too, clone3 keeping no frame pointer to its caller.
THREAD_ROOT='^((__GI___)?clone3;)?start_thread;'
HOT=';spin[AB](;|$)'

run one 8 -- "$WL" 16
all=$(sum_where "$T/one.folded" .)
hot=$(sum_where "$T/one.folded" "$HOT")
check "node: hot functions named: >= 90% of node's samples in spinA or spinB ($hot of $all)" \
	at_least "$hot $all" 0.9 1000
own=$(own_a "$T/one.out") ours=$(share_a "$T/one.folded")
check "node: split as its own clock: spinA $ours% of the hot samples, its clock $own%, within 5 points" \
	within5 "$ours" "$own"
below=$(sum_where "$T/one.folded" ';main;stage;work;spin[AB](;|$)')
check "node: main below them: >= 99% of the hot samples through main;stage;work ($below of $hot)" \
	at_least "$below $hot" 0.99 1000
r=$(rooted "$T/one.folded" "$MAIN_ROOT" "$HOT")
check "node: stacks to the process's start: >= 99% of the hot samples from _start through node::Start ($r of $hot)" \
	at_least "$r $hot" 0.99 1000

# js_lines RAW: "WITH ALL": of the samples' JavaScript frames (locations
# with no address, in a .js script or one of node's own: node:fs,
# node:internal/...), those with a line, weighted by samples.
js_lines() {
	awk '
	/^Samples:/ { s = 1; next }
	/^Locations/ { s = 0; l = 1; next }
	/^Mappings/ { l = 0; next }
	s && /^ *[0-9]+( +[0-9]+)+: / { n++; c[n] = $1; sub(/^ *[0-9]+( +[0-9]+)+: */, ""); ids[n] = $0; next }
	l && /^ +[0-9]+: 0x0 / {
		id = $1; sub(/:$/, "", id); fl = $(NF - 1)
		if (fl ~ /\.js:|^node:/) { all[id] = 1; if (fl ~ /:[1-9][0-9]*$/) with[id] = 1 }
	}
	END {
		for (i = 1; i <= n; i++) {
			m = split(ids[i], a, " ")
			for (j = 1; j <= m; j++) { W += c[i] * with[a[j]]; A += c[i] * all[a[j]] }
		}
		print W + 0, A + 0
	}' "$1"
}
jl=$(js_lines "$T/one.raw")
check "node: JavaScript frames with file.js:line: >= 80% of those in .js scripts and node's own modules ($jl)" \
	at_least "$jl" 0.8 1000

# A worker_threads worker, main waiting: its thread is the worker's.
run worker 8 -- "$WL" 16 worker
wall=$(sum_where "$T/worker.folded" .)
whot=$(sum_where "$T/worker.folded" "$HOT")
check "node worker: hot functions named: >= 90% of node's samples in the worker's spinA or spinB ($whot of $wall)" \
	at_least "$whot $wall" 0.9 1000
wown=$(own_a "$T/worker.out") wours=$(share_a "$T/worker.folded")
check "node worker: split as its own clock: spinA $wours% of the hot samples, its clock $wown%, within 5 points" \
	within5 "$wours" "$wown"
wr=$(rooted "$T/worker.folded" "$THREAD_ROOT" ';stage;work;spin[AB](;|$)')
check "node worker: stacks to the thread root: >= 99% of the hot samples from start_thread through stage;work ($wr of $whot)" \
	at_least "$wr $whot" 0.99 1000

# tiers_check NAME TIER BIT NODE-ARGS...: spinA run by TurboFan (status
# bit 64) and coldC by TIER (its BIT), as the program says
# (%GetOptimizationStatus), each named in >= 10% of the samples.
tiers_check() {
	_tn=$1 _tt=$2 _tb=$3
	shift 3
	run "$_tn" 5 -- --allow-natives-syntax "$@" "$WL" 10 tiers
	read -r sa sc <<EOF
$(awk '/^tiers/ { print $3, $5 }' "$T/$_tn.out")
EOF
	na=$(sum_where "$T/$_tn.folded" ';spinA(;|$)') nc=$(sum_where "$T/$_tn.folded" ';coldC(;|$)')
	nt=$(sum_where "$T/$_tn.folded" .)
	check "node tiers: TurboFan's spinA and $_tt coldC both named (statuses ${sa:-none} ${sc:-none}: TurboFan 64, $_tt $_tb; $na and $nc of $nt samples)" \
		eval '[ $((${sa:-0} & 64)) -ne 0 ] && [ $((${sc:-0} & _tb)) -ne 0 ] && at_least "$na $nt" 0.1 300 && at_least "$nc $nt" 0.1 300'
}
tiers_check interp interpreted 128 --no-sparkplug
tiers_check baseline baseline 32768

run nonode 3 --no-node -- "$WL" 10
nt=$(sum_where "$T/nonode.folded" .)
nn=$(sum_where "$T/nonode.folded" '(^|;)(spin[AB]|work|stage|main|\[js:)(;|$)')
check "--no-node: no JavaScript names ($nn of $nt samples name a function of the script; its samples all kept)" \
	eval '[ "$nt" -ge 300 ] && [ "$nn" -eq 0 ]'

vs=$(jget "$T/one.json" node.v8s) vn=$(jget "$T/one.json" node.frames.named)
check "node: the summary counts V8s and frames (--json-summary: node.v8s $vs, node.frames.named $vn; --no-node: $(jget "$T/nonode.json" node.v8s) V8s)" \
	eval '[ "$vs" = 1 ] && [ "${vn:-0}" -ge 5 ] && [ "$(jget "$T/nonode.json" node.v8s)" = 0 ]'

# A process exporting V8's metadata for a release this does not read
# (tests/workloads/fakenode): refused, said once with the release, counted,
# its frames native.
FAKE=$BUILD/workloads/fakenode/fakenode
if [ -x "$FAKE" ]; then
	"$FAKE" unknown 3 >"$T/fake.out" 2>&1 &
	F=$!
	BG="$BG $F"
	sleep 0.3
	$CPROF --pid "$F" -F 499 --duration 2 --output-dir "$T/fake" --json-summary "$T/fake.json" \
		2>"$T/fake.err"
	wait "$F"
	folded "$T/fake/fakenode-$F.pb.gz" >"$T/fake.folded"
	fs=$(sum_where "$T/fake.folded" ';fake_spin(;|$)') ft=$(sum_where "$T/fake.folded" .)
	check "node: another V8 refused: said once with its release, counted (node.v8s_refused $(jget "$T/fake.json" node.v8s_refused)), native frames ($fs of $ft in fake_spin)" \
		eval 'grep -q "a V8 this does not know: .*V8 99\.0" "$T/fake.err" &&
			[ "$(grep -c "a V8 this does not know" "$T/fake.err")" -eq 1 ] &&
			[ "$(jget "$T/fake.json" node.v8s_refused)" = 1 ] && at_least "$fs $ft" 0.9 300'
else
	fail "node: another V8 refused" "$FAKE not built (make workloads)"
fi

# node 20's metadata, and a frame (no CFI, by rbp) whose context and
# function are objects and whose function's shared has the map of a
# SharedFunctionInfo, and nothing more: BPF takes it, the loader refuses
# to name it and counts it; the stack goes on below it.
LYING=$BUILD/workloads/fakenode/fakenode-lying
if [ -x "$LYING" ]; then
	"$LYING" lying 3 >"$T/lying.out" 2>&1 &
	F=$!
	BG="$BG $F"
	sleep 0.3
	$CPROF --pid "$F" -F 499 --duration 2 --output-dir "$T/lying" --json-summary "$T/lying.json" \
		2>"$T/lying.err"
	wait "$F"
	folded "$T/lying/fakenode-lying-$F.pb.gz" >"$T/lying.folded"
	lt=$(sum_where "$T/lying.folded" .)
	ln=$(sum_where "$T/lying.folded" ';main;fake_js;\[js: function not read\](;|$)')
	lu=$(jget "$T/lying.json" node.frames.unreadable) lv=$(jget "$T/lying.json" node.v8s)
	check "node: a frame whose heap lies: not named, counted (node.frames.unreadable ${lu:-?}, node.v8s ${lv:-?}), its callers whole ($ln of $lt through main;fake_js)" \
		eval '[ "${lu:-0}" -ge 1 ] && [ "$lv" = 1 ] && at_least "$ln $lt" 0.9 300'
else
	fail "node: a frame whose heap lies" "$LYING not built (make workloads)"
fi
