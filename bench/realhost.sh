#!/bin/bash
# bench/realhost.sh: complete stacks, table size and agent memory on real
# programs of this machine (issue 11), for this build and, at the same
# time over the same workloads, an earlier one.
#
#   sudo make bench                        # ~10 minutes on an idle 2-CPU host
#   sudo REALHOST_BEFORE=/path/to/old/cprof-bpf \
#        REALHOST_BEFORE_BENCH=/path/to/old/bench_unwind sh bench/realhost.sh
#   sudo REALHOST_ONLY=make sh bench/realhost.sh  # some workloads (clang make
#        loop), printed and not written to RESULTS.md
#   sudo REALHOST_ONLY=make REALHOST_ARGS=--ld-probe sh bench/realhost.sh
#        # options beside the defaults, for both builds (printed, not written)
#
# Workloads, each in a cgroup of its own (its label selects its samples),
# under whole-host profiles at default settings, started once they sample
# and stopped (SIGINT) after it: clang-14 -O2 -c of a generated file of
# REALHOST_FUNCS (3000) functions; make -j2 of this project from clean (a
# copy of its sources); 40 x (date, cut, a 50 ms spinner).  Both builds
# profile each workload at once, so they see the same run; each figure is
# the share of the workload's samples with user frames that reach _start
# (or __libc_start_call_main, or clone;start_thread) with no [unwind: ...]
# frame (tests/e2e/lib.sh: user_stacks), the share of those also fully
# named, the processes named from exit records (-v), and the agent's peak
# RSS (GNU time).  Tables: build time (best of 5) and bytes a row of the laid-out
# table (build/tests/bench_unwind) for libc, cc1 and libLLVM-14.
# Written to bench/RESULTS.md between the "realhost" markers.

if [ -z "${BASH_VERSION:-}" ]; then exec bash "$0" "$@"; fi
. "$(dirname "$0")/env.sh"
BEFORE=${REALHOST_BEFORE:-}
BENCH_UNWIND=$ROOT/build/tests/bench_unwind
BEFORE_BENCH=${REALHOST_BEFORE_BENCH:-}
FUNCS=${REALHOST_FUNCS:-3000}
ONLY=${REALHOST_ONLY:-}
ARGS=${REALHOST_ARGS:-}
NCPU=$(nproc)
FINISH_MAX=60
BPF_PROG_TYPE_PERF_EVENT=7

# always through make: a bench_unwind left from an older tree lays out old tables
make -s -C "$ROOT" build/tests/bench_unwind || die "no bench_unwind"
bench_require "$CPROF" "$ROOT/build/workloads/shortspin" -- clang-14
. "$ROOT/bench/lib.sh"
. "$ROOT/tests/e2e/lib.sh"
bench_init cprof-bench-realhost
TOOLS="after"
[ -n "$BEFORE" ] && TOOLS="after before"

# wanted NAME: whether workload NAME is to run (REALHOST_ONLY, else all).
wanted() {
	[ -z "$ONLY" ] || [[ " $ONLY " == *" $1 "* ]]
}

# run NAME COMMAND...: COMMAND in cgroup cprof-bench-NAME under each build's
# whole-host profile; leaves $RAW/NAME.TOOL.{folded,err,time}.
run() {
	local n=$1 cg dir t pids=()
	shift
	wanted "$n" || return 0
	cg=cprof-bench-$n-$$
	dir=$(cgroup_new "$cg") || die "no cgroup v2"
	for t in $TOOLS; do
		local bin=$CPROF
		[ "$t" = before ] && bin=$BEFORE
		/usr/bin/time -f '%e %U %S %M' -o "$RAW/$n.$t.time" \
			"$bin" $ARGS -v --duration 3600 --output-dir "$RAW/$n.$t" 2>"$RAW/$n.$t.err" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do
		wait_sampling "$(child_of "$p")" || die "$n: an agent did not start"
	done
	local t0=$EPOCHREALTIME
	in_cgroup "$dir" "$@" >"$RAW/$n.out" 2>&1 || log "$n: exit status $?"
	WALL[$n]=$(calc "$EPOCHREALTIME - $t0" %.1f)
	for p in "${pids[@]}"; do pkill -INT -P "$p"; done
	wait
	cgroup_gone "$dir"
	for t in $TOOLS; do
		folded_of "$RAW/$n.$t" "$cg" >"$RAW/$n.$t.folded"
		set -- $(user_stacks "$RAW/$n.$t.folded" "$cg")
		SHARE[$n.$t]="$(calc "100 * $1 / ($3 ? $3 : 1)" %.1f)% ($1 of $3)"
		NAMED[$n.$t]="$(calc "100 * $2 / ($3 ? $3 : 1)" %.1f)% ($2)"
		EXITS[$n.$t]=$(sed -n 's/^cprof-bpf: exit records: .*; \([0-9]*\) processes gone.*/\1/p' "$RAW/$n.$t.err")
		RSS[$n.$t]=$(( $(awk '{ print $4 }' "$RAW/$n.$t.time") / 1024 ))
		TAB[$n.$t]=$(sed -n 's/^cprof-bpf: unwind tables: //p' "$RAW/$n.$t.err")
		log "$n, $t: incomplete of all by comm: $(incomplete_by_comm "$RAW/$n.$t.folded" "$cg")"
	done
}

# incomplete_by_comm FOLDED CGROUP: "comm M/N ..." of the user stacks of
# CGROUP (as user_stacks counts them), the most incomplete first.
incomplete_by_comm() {
	awk -F '\t' -v cg="cgroup:[/$2]" '
	index($2, cg) == 0 { next }
	$3 ~ /^(entry_SYSCALL|asm_|ret_from_fork|\[lost|\[kernel)/ { next }
	{
		c = $2; sub(/.*comm:\[/, "", c); sub(/\].*/, "", c)
		all[c] += $1
		if ($3 !~ /\[unwind:/ && $3 ~ /^(_start|__libc_start_call_main|__libc_start_main[^;]*;__libc_start_call_main|(__)?clone3?;start_thread)(;|$)/) next
		bad[c] += $1
	}
	END { for (c in all) printf "%d %s %d/%d\n", bad[c], c, bad[c], all[c] }' "$1" |
		sort -rn | awk '{ printf "%s%s %s", (NR > 1 ? ", " : ""), $2, $3 }'
}

declare -A WALL SHARE NAMED EXITS RSS TAB
gen_functions "$FUNCS" >"$RAW/gen.c"
log "clang-14 -O2 -c, $FUNCS functions"
run clang clang-14 -O2 -c "$RAW/gen.c" -o "$RAW/gen.o"
mkdir "$RAW/src"
tar cf - Makefile bpf proto user vmlinux | tar xf - -C "$RAW/src"
log "make -j2 from clean"
run make make -C "$RAW/src" -j2 BUILD=build build/cprof-bpf
cat >"$RAW/loop.sh" <<LOOP
for i in \$(seq 40); do date >/dev/null; cut -d: -f1 /etc/passwd >/dev/null; $ROOT/build/workloads/shortspin 50; done
LOOP
log "40 x (date, cut, spin 50 ms)"
run loop sh "$RAW/loop.sh"

OBJS="/lib/x86_64-linux-gnu/libc.so.6 /usr/lib/gcc/x86_64-linux-gnu/12/cc1 /usr/lib/x86_64-linux-gnu/libLLVM-14.so.1"
"$BENCH_UNWIND" -n 5 $OBJS >"$RAW/tables.after" 2>&1
[ -n "$BEFORE_BENCH" ] && "$BEFORE_BENCH" -n 5 $OBJS >"$RAW/tables.before" 2>&1

{
	echo "<!-- BEGIN realhost -->"
	echo "## Real programs: complete stacks, table size, agent memory (issue 11)"
	echo
	echo "Generated by \`bench/realhost.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC'); the next run"
	echo "replaces everything between the \"realhost\" markers."
	echo
	echo "- Host: $NCPU CPUs; kernel $(uname -r); load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "- after: cprof-bpf $BUILD_DESC"
	[ -n "$BEFORE" ] && echo "- before: $BEFORE (profiling the same runs at the same time)"
	echo "- Default settings (99 Hz, --unwind-memory 16M), whole host; a workload's"
	echo "  samples are those labelled with its cgroup; complete = reaching _start,"
	echo "  __libc_start_call_main or clone;start_thread with no [unwind: ...] frame;"
	echo "  fully named = complete with no bare address (a stripped binary's own"
	echo "  functions are bare addresses); exit records: processes the loader found"
	echo "  gone, named from the mappings BPF sent at their exit (the host-wide count)."
	echo
	echo "| workload (wall s) | build | user stacks complete | complete and fully named | gone from /proc, named by exit records | agent peak RSS MB | unwind tables (summary) |"
	echo "|---|---|---|---|---|---|---|"
	for n in clang make loop; do
		wanted "$n" || continue
		for t in $TOOLS; do
			echo "| $n (${WALL[$n]}) | $t | ${SHARE[$n.$t]} | ${NAMED[$n.$t]} | ${EXITS[$n.$t]:--} | ${RSS[$n.$t]} | ${TAB[$n.$t]} |"
		done
	done
	echo
	echo "Tables (build/tests/bench_unwind -n 5: best and median build time, rows, bytes laid out):"
	echo
	echo '```'
	for t in $TOOLS; do
		[ -f "$RAW/tables.$t" ] || continue
		echo "$t:"
		grep -v '^ ' "$RAW/tables.$t"
	done
	echo '```'
	echo "<!-- END realhost -->"
} >"$RAW/section.md"
cat "$RAW/section.md"
if [ -z "$ONLY" ] && [ -z "$ARGS" ]; then
	publish_section realhost "$RAW/section.md"
else
	log "REALHOST_ONLY=$ONLY REALHOST_ARGS=$ARGS: not written to $RESULTS"
fi
log "raw logs in $RAW"
