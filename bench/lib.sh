#!/bin/bash
# bench/lib.sh: the measuring helpers bench/run.sh, unwind.sh and scale.sh
# share, and how they report and publish; sourced by them (bash) after
# bench/env.sh.  The caller sets NCPU, FINISH_MAX and
# BPF_PROG_TYPE_PERF_EVENT before using the helpers that need them, and
# keeps its figures in the associative array R.

# jget FILE KEY[.KEY...]: a value from cprof-bpf's --json-summary FILE (the
# helper of tests/e2e/lib.sh).
jget() {
	sh -c '. "$1/tests/e2e/lib.sh"; jget "$2" "$3"' _ "$ROOT" "$1" "$2"
}

# Measure on time: with CPU-bound processes on every CPU (and whatever else
# runs), a normal-priority poller can wait hundreds of ms for a CPU and
# would see sampling start or stop late.  So the scripts and their helpers
# (sleep, awk, bpftool) run SCHED_FIFO -- they sleep nearly all the time --
# and everything measured is started back at normal priority ($NORMAL).
NORMAL=""
if chrt -f -p 10 $$ >/dev/null 2>&1; then
	NORMAL="chrt -o 0"
else
	log "warning: cannot run SCHED_FIFO; timings may be late on a loaded host"
fi


now() { echo "$EPOCHREALTIME"; }

# Float arithmetic: calc 'expr' [printf-format]
calc() { awk "BEGIN { printf \"${2:-%.3f}\", ($1) }"; }
# median_fmt FORMAT VALUES...: their median in FORMAT; empty values (a run
# that failed) are left out, and nothing is printed when none is left.
median_fmt() {
	local fmt=$1
	shift
	printf '%s\n' "$@" | grep . | sort -g | awk -v f="$fmt" '{ v[NR] = $1 }
		END { if (NR) printf f, NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# g KEY: the figure R[KEY], empty if the run failed
g() { echo "${R[$1]:-}"; }
# ratio A B: A / B; a figure may read ">N" (a run stopped at N); n/a if
# either is missing
ratio() {
	local x=${1#>} y=${2#>} pre=""
	[ -n "$x" ] && [ -n "$y" ] || { echo n/a; return; }
	[ "$y" != "$2" ] && pre="<"
	[ "$x" != "$1" ] && pre=">"
	echo "$pre$(calc "$x / ($y > 0 ? $y : 1)" %.2f)"
}
# pct PART WHOLE: PART in percent of WHOLE, n/a if either is missing
pct() { [ -n "$1" ] && [ -n "$2" ] && [ "$2" -gt 0 ] && calc "100 * $1 / $2" %.1f || echo n/a; }
# mib BYTES [FORMAT] and kmib KIB: in MiB (a ">" kept), n/a if missing
mib() { local v=${1#>}; [ -n "$v" ] && echo "${1%%[0-9]*}$(calc "$v / 1048576" "${2:-%.1f}")" || echo n/a; }
kmib() { [ -n "$1" ] && calc "$1 / 1024" %.1f || echo n/a; }
# pass EXPR-over-numbers: PASS or FAIL (FAIL too when a figure is missing)
pass() { [ "$(calc "$1" %d 2>/dev/null)" = 1 ] && echo PASS || echo FAIL; }
# passif A OP B: pass "A OP B", n/a when A or B is missing
passif() {
	[ -n "$1" ] && [ -n "$3" ] || { echo n/a; return; }
	pass "$1 $2 $3"
}

sleep_until() {
	local d
	d=$(calc "$1 - $EPOCHREALTIME")
	case $d in -*) ;; *) sleep "$d" ;; esac
}

# near_end START SECS: a moment safely before the end of sampling (1 s, or
# a fifth of a short run), for the bpftool snapshot and the load figure.
near_end() { calc "$1 + $2 - ($2 >= 5 ? 1 : $2 / 5)"; }

# child_of PPID: the process GNU time started (polls: it may not exist yet).
child_of() {
	local c
	for _ in $(seq 200); do
		c=$(pgrep -P "$1" | head -n1)
		[ -n "$c" ] && { echo "$c"; return 0; }
		sleep 0.01
	done
	return 1
}

# prog_stats PID [FDS]: sums run_time_ns and run_cnt over the perf_event
# programs that process holds open (the same counters `bpftool prog show`
# reports).  Picking programs by owner rather than by name or by "new id"
# stays right even if someone else is profiling the host meanwhile.  Sets
# P_IDS P_RT P_CNT, and P_FDS, the fds that hold them: pass those back as
# FDS to read only them, as a tool may hold hundreds of fds (ELF files,
# maps) and a poll must take well under its 10 ms.  Bash builtins only.
prog_stats() {
	local pid=$1 f k v type id rt cnt seen=" "
	P_IDS="" P_RT=0 P_CNT=0 P_FDS=""
	if [ -n "${2:-}" ]; then
		set -- $2
		set -- "${@/#//proc/$pid/fdinfo/}"
	else
		set -- /proc/"$pid"/fdinfo/*
	fi
	for f; do
		type="" id="" rt=0 cnt=0
		while read -r k v; do
			case $k in
			prog_type:) type=$v ;;
			prog_id:) id=$v ;;
			run_time_ns:) rt=$v ;;
			run_cnt:) cnt=$v ;;
			esac
		done 2>/dev/null <"$f"
		# link fds name a prog_id too, but have no prog_type line
		[ "$type" = $BPF_PROG_TYPE_PERF_EVENT ] && [ -n "$id" ] || continue
		case $seen in *" $id "*) continue ;; esac
		seen="$seen$id "
		P_IDS=${P_IDS:+$P_IDS,}$id P_FDS="$P_FDS ${f##*/}"
		P_RT=$((P_RT + rt)) P_CNT=$((P_CNT + cnt))
	done
}

# Microseconds since the epoch, without a fork (LC_ALL=C: a "." in it).
usec() { US=${EPOCHREALTIME/./}; }

# ns_since RT0 CNT0: ns per run since prog_stats last gave RT0 and CNT0
# (P_RT and P_CNT now, from the latest prog_stats).
ns_since() { calc "($P_RT - $1) / ($P_CNT > $2 ? $P_CNT - $2 : 1)" %.0f; }

# wait_first_sample PID: waits until the tool's perf_event program has run
# once, i.e. sampling has begun.  Sets T_FIRST, and FDS (see prog_stats).
wait_first_sample() {
	local deadline
	usec; deadline=$((US + 120000000))
	FDS=""
	while :; do
		prog_stats "$1" "$FDS"
		FDS=$P_FDS
		[ "$P_CNT" -gt 0 ] && { T_FIRST=$EPOCHREALTIME; return 0; }
		kill -0 "$1" 2>/dev/null || return 1
		usec; [ "$US" -gt "$deadline" ] && return 1
		sleep 0.01
	done
}

# foreign IDS: perf_event BPF programs loaded that are not IDS (someone
# else profiling the host or testing meanwhile).  Sets FOREIGN_NOW.
foreign() {
	local n
	n=$(bpftool prog show --json 2>/dev/null | grep -o '"type":"perf_event"' | wc -l)
	FOREIGN_NOW=$((n - $(echo "${1//,/ }" | wc -w)))
	[ "$FOREIGN_NOW" -lt 0 ] && FOREIGN_NOW=0
}

# stop_bpftrace PID FDS [SENT]: SIGINT (unless SENT), until its programs
# are unloaded (it then prints and exits), keeping the last counters
# (P_*_LAST).  bpftrace 0.17 can miss a SIGINT (seen once here: it sampled
# on for 14 minutes), so it is sent again every second, for at most
# FINISH_MAX s.
stop_bpftrace() {
	local n=0 end
	usec; end=$((US + FINISH_MAX * 1000000))
	[ -n "${3:-}" ] || kill -INT "$1" 2>/dev/null
	while :; do
		prog_stats "$1" "$2"
		[ -z "$P_IDS" ] && return 0
		P_IDS_LAST=$P_IDS P_RT_LAST=$P_RT P_CNT_LAST=$P_CNT
		usec; [ "$US" -ge "$end" ] && return 1
		n=$((n + 1))
		[ $((n % 100)) -eq 0 ] && kill -INT "$1" 2>/dev/null
		sleep 0.01
	done
}

# Other users of the host (builds, tests) compete with the workload and
# the tool and skew every figure; we cannot stop them, so each run reports
# how much CPU went to processes other than the workload and the tool over
# its sampling window: load_mark PIDS... at the start, load_other PIDS... at
# the end sets OTHER_PCT (% of all CPUs).  Busy jiffies from /proc/stat
# minus the utime+stime of the given processes; bash builtins only.
CLK_TCK=$(getconf CLK_TCK 2>/dev/null || echo 100)
cpu_jiffies() {	# sets J_HOST (busy, all CPUs) and J_PIDS (the given pids)
	local u n sy irq sirq st p a
	read -r _ u n sy _ _ irq sirq st _ </proc/stat
	J_HOST=$((u + n + sy + irq + sirq + st)) J_PIDS=0
	for p; do
		# fields 14, 15: utime, stime (our comms have no spaces)
		read -r -a a 2>/dev/null </proc/"$p"/stat || continue
		J_PIDS=$((J_PIDS + a[13] + a[14]))
	done
}

load_mark() { cpu_jiffies "$@"; L_HOST=$J_HOST L_PIDS=$J_PIDS L_T=$EPOCHREALTIME; }

load_other() {
	cpu_jiffies "$@"
	OTHER_PCT=$(calc "100 * (($J_HOST - $L_HOST) - ($J_PIDS - $L_PIDS)) / ($NCPU * $CLK_TCK * ($EPOCHREALTIME - $L_T))" %.0f)
	case $OTHER_PCT in -*) OTHER_PCT=0 ;; esac
	# Who was it?  Kept in the raw logs (top's second pass covers 0.3 s);
	# in the background, as we are timing the end of sampling.
	if [ "$OTHER_PCT" -gt 10 ]; then
		{ $NORMAL top -b -n2 -d0.3 -w 200 2>/dev/null |
			awk '/^top -/ { n++ } n == 2' | head -n 25 >>"$RAW/busy-host.txt"; } &
	fi
}

# wait_bounded PID SECS [VICTIM]: waits for our child PID (GNU time, or
# the tool) at most SECS, then stops VICTIM (the tool; default PID) with
# SIGTERM, and SIGKILL 5 s later.  bpftrace can take minutes to print its
# map when the host runs big processes (it loads every binary's symbols),
# and the bench must end.  Sets TIMED_OUT; returns PID's exit status.
wait_bounded() {
	local deadline a
	usec; deadline=$((US + $2 * 1000000)) TIMED_OUT=""
	# a child that has exited stays a zombie (state Z) until we wait
	while read -r -a a 2>/dev/null </proc/"$1"/stat && [ "${a[2]}" != Z ]; do
		usec
		if [ "$US" -gt "$deadline" ]; then
			if [ -z "$TIMED_OUT" ]; then
				TIMED_OUT=1 deadline=$((US + 5000000))
				kill -TERM "${3:-$1}" 2>/dev/null
			else
				kill -KILL "${3:-$1}" 2>/dev/null
			fi
		fi
		sleep 0.01
	done
	wait "$1"
}

# poll_until PID FDS [DEADLINE] [QUIET]: polls the tool's BPF counters
# (prog_stats) every 10 ms until DEADLINE (epoch s with 6 decimals) or its
# programs are gone.  Keeps the last values seen (P_*_LAST; call
# poll_reset first) and the time the count last moved (T_FREEZE: sampling
# had ended by then, to within a poll; FREEZE_SEEN once it was seen moving
# after the first poll).  With QUIET (microseconds), also returns once the
# count has not moved for that long.  With POLL_LOG set, writes each change
# of the count ("TIME COUNT") and the programs' end ("TIME gone") there.
poll_reset() { P_IDS_LAST="" P_RT_LAST=0 P_CNT_LAST=-1 T_FREEZE="" FREEZE_SEEN=""; }
poll_until() {
	local t deadline="" quiet=${4:-} log=${POLL_LOG:-/dev/null}
	[ -n "${3:-}" ] && deadline=${3/./}
	while :; do
		t=$EPOCHREALTIME
		prog_stats "$1" "$2"
		[ -z "$P_IDS" ] && { echo "$EPOCHREALTIME gone" >>"$log"; break; }
		if [ "$P_CNT" -ne "$P_CNT_LAST" ]; then
			[ -n "$T_FREEZE" ] && FREEZE_SEEN=1
			T_FREEZE=$t
			echo "$t $P_CNT" >>"$log"
		fi
		P_IDS_LAST=$P_IDS P_RT_LAST=$P_RT P_CNT_LAST=$P_CNT
		usec
		[ -n "$deadline" ] && [ "$US" -ge "$deadline" ] && break
		[ -n "$quiet" ] && [ $((US - ${T_FREEZE/./})) -ge "$quiet" ] && break
		sleep 0.01
	done
}

# stop_tools PIDS...: SIGINT (every tool here stops cleanly on it), up to
# 5 s to end, then SIGKILL.
stop_tools() {
	local p alive
	[ $# -gt 0 ] || return 0
	kill -INT "$@" 2>/dev/null
	for _ in $(seq 50); do
		alive=""
		for p in "$@"; do kill -0 "$p" 2>/dev/null && alive=1; done
		[ -z "$alive" ] && return 0
		sleep 0.1
	done
	kill -KILL "$@" 2>/dev/null
}

# stop_workload: ends the processes in WL_PIDS (stopped ones too) and
# waits for them.
WL_PIDS=""
stop_workload() {
	local p
	# shellcheck disable=SC2086
	[ -n "$WL_PIDS" ] && kill -TERM $WL_PIDS 2>/dev/null && kill -CONT $WL_PIDS 2>/dev/null
	for p in $WL_PIDS; do wait "$p" 2>/dev/null; done
	WL_PIDS=""
}

# noisy_runs [SKIP]: from the runs' R[TAG:other] (% of the CPUs others
# used) and R[TAG:foreign] (someone else's BPF perf_event programs),
# OTHERS to print and NOISY, the tags over 10% or with foreign programs;
# tags matching the regex SKIP are left out.
noisy_runs() {
	local k
	NOISY="" OTHERS=""
	for k in $(printf '%s\n' "${!R[@]}" | grep ':other$' | grep -v "${1:-^$}" | sort -V); do
		k=${k%:other}
		OTHERS="${OTHERS:+$OTHERS, }$k ${R[$k:other]}%"
		[ "${R[$k:foreign]:-0}" -gt 0 ] && OTHERS="$OTHERS (+${R[$k:foreign]} foreign BPF)"
		if [ "${R[$k:other]}" -gt 10 ] || [ "${R[$k:foreign]:-0}" -gt 0 ]; then
			NOISY="$NOISY $k"
		fi
	done
}

# read_time FILE: "wall user sys maxrss_kib" from GNU time's -o file (its
# last line: a killed command gets a "Command terminated" line first).
read_time() { tail -n1 "$1"; }

# bench_init NAME: RAW, a new raw-log directory /tmp/NAME.XXXXXX; BUILD_DESC,
# which build is measured; and CPROF pointed at a private copy of it, as
# the tree's binary may be rebuilt during the minutes a benchmark takes and
# every run must measure the same build.
bench_init() {
	RAW=$(mktemp -d "/tmp/$1.XXXXXX") || die "mktemp failed"
	if [ -n "${BENCH_CPROF:-}" ]; then
		BUILD_DESC="$CPROF"
	else
		BUILD_DESC="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
		[ -n "$(git status --porcelain -- user bpf proto 2>/dev/null)" ] &&
			BUILD_DESC="$BUILD_DESC + uncommitted changes"
	fi
	BUILD_DESC="$BUILD_DESC, built $(date -u -r "$CPROF" '+%Y-%m-%d %H:%M UTC')"
	cp "$CPROF" "$RAW/cprof-bpf" || die "cannot copy $CPROF"
	CPROF=$RAW/cprof-bpf
}

# publish_section NAME FILE: FILE (from "<!-- BEGIN NAME -->" to its END
# marker) replaces NAME's section of $RESULTS, or is appended to it; the
# other benchmarks' sections stay as they are.  The file is given back to
# the tree's owner (we run as root under `sudo make bench`).
publish_section() {
	if [ -f "$RESULTS" ] && grep -q "^<!-- BEGIN $1 -->" "$RESULTS"; then
		awk -v new="$2" -v begin="<!-- BEGIN $1 -->" -v end="<!-- END $1 -->" '
			$0 == begin { while ((getline l < new) > 0) print l; skip = 1; next }
			$0 == end { skip = 0; next }
			!skip { print }' "$RESULTS" >"$RAW/RESULTS.md" && cat "$RAW/RESULTS.md" >"$RESULTS"
	else
		{
			[ -s "$RESULTS" ] || printf '# cprof-bpf benchmarks\n\nWritten by `sudo make bench`; each benchmark owns the\nsection between its markers.\n\n'
			[ -s "$RESULTS" ] && echo
			cat "$2"
		} >>"$RESULTS"
	fi
	chown --reference="$ROOT/bench" "$RESULTS" 2>/dev/null
	log "results in $RESULTS (raw logs: $RAW)"
}
