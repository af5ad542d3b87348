#!/bin/sh
# bench/symbols.sh: what symbolization costs, against perf on the same host.
#
# A mix of workloads runs (C with DWARF and inlines, C++ with DWARF, a
# dlopen'd library, a static-free syscall loop, Python, Node with a perf map
# when installed); the whole host is sampled and written:
#   cprof, cold   page cache dropped first (SYMBENCH_DROP_CACHES=0 to skip)
#   cprof, warm   right after
#   cprof, none   --symbolize=none (when the binary has the option): the same
#                 run without user symbolization, so the difference is its cost
# while `perf record -a -g` samples alongside the warm run (same host, same
# time, same rate: the same samples, as near as two samplers get); then
# `perf report` (cold and warm) and `perf script` read its perf.data.
# Time = wall time from the end of sampling to the files written (cprof's
# --json-summary) or of the perf command; RSS = peak resident set of the
# whole process (GNU time %M).  Results replace the "symbols" section of
# bench/RESULTS.md.  Needs root.
set -u
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
CPROF=${CPROF:-$BUILD/cprof-bpf}
SECS=${SECS:-10}
HZ=${HZ:-99}
DROP=${SYMBENCH_DROP_CACHES:-1}
RESULTS=${RESULTS:-bench/RESULTS.md}
TIME=/usr/bin/time
W=$BUILD/workloads

if [ "$(id -u)" -ne 0 ]; then
	echo "symbols bench: needs root" >&2
	exit 1
fi
for t in "$TIME" perf go; do
	command -v "$t" >/dev/null || { echo "symbols bench: $t not installed" >&2; exit 1; }
done
T=$(mktemp -d)
PIDS=""
NODE_PID=""
cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	# Node leaves its perf map behind.
	[ -n "$NODE_PID" ] && rm -f "/tmp/perf-$NODE_PID.map"
	rm -rf "$T"
}
trap cleanup EXIT INT TERM
export HOME=$T # go tool pprof keeps state in $HOME

# --- workloads ----------------------------------------------------------------
bg() {
	"$@" >/dev/null 2>&1 &
	PIDS="$PIDS $!"
}
LONG=$((SECS * 6 + 120))
g++ -O2 -g -fno-omit-frame-pointer -o "$T/sym_cpp" tests/workloads/sym_cpp.cc
bg "$W/busy" "$LONG" 20
bg "$W/syscalls" "$LONG"
bg "$W/sym_inline" "$LONG"
bg "$T/sym_cpp" "$LONG"
bg "$W/nofp" dlopen "$LONG" "$PWD/$W/libplugin.so"
bg python3 -c "
import time
def fib(n): return n if n < 2 else fib(n - 1) + fib(n - 2)
end = time.time() + $LONG
while time.time() < end: fib(18)"
NODE=""
if command -v node >/dev/null; then
	NODE=$(node --version)
	# In $T: --perf-basic-prof also leaves a V8 log in the working directory.
	(cd "$T" && exec node --perf-basic-prof -e "
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
const end = Date.now() + $LONG * 1000;
while (Date.now() < end) fib(20);") >/dev/null 2>&1 &
	NODE_PID=$!
	PIDS="$PIDS $NODE_PID"
fi
sleep 2

drop_caches() {
	[ "$DROP" = 1 ] || return 0
	sync
	echo 3 >/proc/sys/vm/drop_caches
}

# cprof RUN [ARGS...]: one whole-host run; prints "write_s rss_kb files samples".
cprof() {
	_run=$1
	shift
	$TIME -o "$T/$_run.time" -f '%e %M %U %S' "$CPROF" --duration "$SECS" -F "$HZ" "$@" \
		--output-dir "$T/$_run" --json-summary "$T/$_run.json" 2>"$T/$_run.err"
	_w=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(d["output"]["last_write_s"], d["output"]["profiles"], d["samples"]["written"])' \
		"$T/$_run.json" 2>/dev/null)
	# seconds, peak RSS, CPU (user + system, the whole run), files, samples
	echo "$(echo "$_w" | cut -d' ' -f1) $(tail -n1 "$T/$_run.time" | awk '{ print $2, $3 + $4 }') $(echo "$_w" | cut -d' ' -f2,3)"
}

# timed NAME CMD...: prints "seconds rss_kb cpu_s" of CMD (output discarded).
timed() {
	_n=$1
	shift
	$TIME -o "$T/$_n.time" -f '%e %M %U %S' "$@" >"$T/$_n.out" 2>"$T/$_n.err"
	# GNU time puts "Command exited with non-zero status N" first when it
	# did; 124 is timeout(1) stopping it: then the seconds read ">N".
	_stop=
	grep -q 'non-zero status 124$' "$T/$_n.time" && _stop='>'
	tail -n1 "$T/$_n.time" | awk -v stop="$_stop" '{ print (stop != "" ? stop int($1) : $1), $2, $3 + $4 }'
}

drop_caches
COLD=$(cprof cold)
# Warm, with perf record sampling the same host at the same time.
perf record -a -g -F "$HZ" -o "$T/perf.data" -- sleep "$((SECS + 1))" >"$T/record.out" 2>&1 &
PREC=$!
sleep 1
WARM=$(cprof warm)
wait $PREC
PSAMPLES=$(perf report -i "$T/perf.data" --stdio --header-only 2>/dev/null |
	sed -n 's/.*sample duration.*//; s/^# Samples: *\([0-9]*\).*/\1/p' | head -n1)
[ -n "$PSAMPLES" ] || PSAMPLES=$(perf script -i "$T/perf.data" -F period 2>/dev/null | wc -l)
NONE=""
if "$CPROF" --help 2>&1 | grep -q -- '--symbolize'; then
	NONE=$(cprof none --symbolize=none)
fi

drop_caches
REPORT_COLD=$(timed report_cold perf report -i "$T/perf.data" --stdio)
REPORT_WARM=$(timed report_warm perf report -i "$T/perf.data" --stdio)
SCRIPT_WARM=$(timed script perf script -i "$T/perf.data")
SRCLINE_WARM=$(timed srcline timeout 600 perf script -i "$T/perf.data" -F +srcline)

# What the warm run's files hold: mappings with names / lines / inlines.
flags() {
	for f in "$T/warm"/*.pb.gz; do
		go tool pprof -symbolize=none -raw "$f" 2>/dev/null | sed -n '/^Mappings/,$p'
	done | awk '
		/^[0-9]+: / { n++ }
		/\[FN\]/ { fn++ }
		/\[LN\]/ { ln++ }
		/\[IN\]/ { inl++ }
		END { printf "%d mappings, %d with all functions named, %d with line numbers, %d with inline frames", n, fn, ln, inl }'
}
FLAGS=$(flags)

w() { echo "$1" | cut -d' ' -f"$2"; }
mb() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
row() { # name "seconds rss_kb cpu_s"
	printf '| %s | %s | %s | %s |\n' "$1" "$(w "$2" 1)" "$(w "$2" 3)" "$(mb "$(w "$2" 2)")"
}
{
	echo "<!-- BEGIN symbols -->"
	echo "## Symbols: the cost of naming frames, against perf"
	echo
	echo "Generated by \`bench/symbols.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC'); the next run"
	echo "replaces everything between the \"symbols\" markers."
	echo
	echo "- Host: $(nproc) CPUs; kernel $(uname -r); $(perf version 2>/dev/null); cprof-bpf $("$CPROF" --version 2>/dev/null | awk '{print $2}') ($CPROF)"
	echo "- Load average before: $(cut -d' ' -f1-3 /proc/loadavg).  Whole host, ${SECS} s at ${HZ} Hz."
	echo "- Workloads: busy (20 frames), syscalls, sym_inline (C, -g, inlined calls),"
	echo "  sym_cpp (C++ -g), nofp with a dlopen'd plugin (-g), python3 (libpython),"
	echo "  ${NODE:+node $NODE --perf-basic-prof (JIT perf map), }plus whatever else ran on the host."
	echo "  libc has its debug file (libc6-dbg) where installed: $(ls /usr/lib/debug/.build-id 2>/dev/null | wc -l) build-id dirs."
	echo "- Page cache dropped before the cold runs: $([ "$DROP" = 1 ] && echo yes || echo no)."
	echo "- cprof runs: cold $(w "$COLD" 4) files / $(w "$COLD" 5) samples, warm $(w "$WARM" 4) files / $(w "$WARM" 5) samples;"
	echo "  perf record alongside the warm run: $PSAMPLES samples."
	echo "- Warm run's files: $FLAGS."
	echo
	echo "| what | seconds | CPU s | peak RSS, MB |"
	echo "|---|---|---|---|"
	row "cprof, cold: symbolize + write every profile" "$COLD"
	row "cprof, warm: symbolize + write every profile" "$WARM"
	if [ -n "$NONE" ]; then
		row "cprof, --symbolize=none: write every profile" "$NONE"
	else
		echo "| cprof, --symbolize=none | (option not in this build) | | |"
	fi
	row "perf report --stdio, cold" "$REPORT_COLD"
	row "perf report --stdio, warm" "$REPORT_WARM"
	row "perf script, warm" "$SCRIPT_WARM"
	row "perf script -F +srcline, warm" "$SRCLINE_WARM"
	echo
	echo "cprof's seconds are from the end of sampling to the last file written"
	echo "(its --json-summary), for every process of the host; its CPU and RSS are"
	echo "the whole agent's (sampling included, the same in every run).  perf's"
	echo "are the whole command on the perf.data of the warm run.  What"
	echo "symbolization itself adds to cprof (ELF symbols, DWARF lines and"
	echo "inlines, demangling, perf maps): the warm row minus the"
	if [ -n "$NONE" ]; then
		echo "--symbolize=none row:"
		awk -v a="$(w "$WARM" 1)" -v b="$(w "$NONE" 1)" -v ca="$(w "$WARM" 3)" -v cb="$(w "$NONE" 3)" \
			-v ra="$(w "$WARM" 2)" -v rb="$(w "$NONE" 2)" \
			'BEGIN { printf "**%.2f s of wall time, %.2f s of CPU, %.1f MB of peak RSS**.\n", a - b, ca - cb, (ra - rb) / 1024 }'
	else
		echo "--symbolize=none run (not available in this build)."
	fi
	echo
	echo "Where symbolization's memory goes: objects are resolved one at a time,"
	echo "and libdw loads an object's debug sections whole (decompressed), so"
	echo "the peak is about the largest sampled object's DWARF: with libc6-dbg,"
	echo "libc's is 10 MB.  struct symbolizer.dwarf_max_bytes caps it (objects"
	echo "over the cap keep names, lose lines); --symbolize=none opens none."
	echo "<!-- END symbols -->"
} >"$T/section.md"

# Replace (or append) our section, leaving the others alone.
if grep -q '^<!-- BEGIN symbols -->' "$RESULTS" 2>/dev/null; then
	awk -v sec="$T/section.md" '
		/^<!-- BEGIN symbols -->/ { while ((getline l < sec) > 0) print l; skip = 1; next }
		/^<!-- END symbols -->/ { skip = 0; next }
		!skip' "$RESULTS" >"$T/results.md" && cat "$T/results.md" >"$RESULTS"
else
	{ echo; cat "$T/section.md"; } >>"$RESULTS"
fi
cat "$T/section.md"
