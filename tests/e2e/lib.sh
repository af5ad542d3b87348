# Shared helpers for the end-to-end tests (sourced, POSIX sh).
#
# Each check prints "ok - NAME", "not ok - NAME: WHY" or "skip - NAME: WHY"
# for tests/run.sh to count.  The files are read back with `go tool pprof`,
# an independent reader of the format.

BUILD=${BUILD:-build}
CPROF=${CPROF:-./cprof-bpf}
export HOME=${E2E_HOME:-${TMPDIR:-/tmp}}   # go tool pprof keeps state in $HOME/pprof
export PPROF_TMPDIR=${TMPDIR:-/tmp}

# plan N: the number of results this script reports (TAP's "1..N"),
# printed before any; tests/run.sh fails a script that reports another
# number.  $NAMES, the checks a skip_all or fail_all reports, must then
# name all that are left: checked here and by require_root.
plan() {
	echo "1..$1"
	_PLAN=$1
	plan_names
}

# Fails (once) when $NAMES and the plan disagree on the checks left.
_NRES=0
plan_names() {
	[ -n "${_PLAN:-}" ] && [ -n "${NAMES:-}" ] || return 0
	_left=$((_PLAN - _NRES))
	_named=$(echo "$NAMES" | tr '|' '\n' | grep -c .)
	[ "$_named" -eq "$_left" ] || fail "plan" "NAMES lists $_named checks, $_left are left of the plan"
}

# (a result reported in a subshell is not counted in $_NRES: plan_names
# is for the results before a skip list, reported in the script's shell)
ok() { echo "ok - $1"; _NRES=$((_NRES + 1)); }
fail() { echo "not ok - $1: $2"; _NRES=$((_NRES + 1)); }
skip() { echo "skip - $1: $2"; _NRES=$((_NRES + 1)); }

# skip_each REASON LABEL NAME...: a skip for each check "LABEL: NAME", where
# a part of a script cannot run: one result per check, as its plan counts.
skip_each() {
	_why=$1 _label=$2
	shift 2
	for _n in "$@"; do skip "$_label: $_n" "$_why"; done
}

# skip_all REASON: every check named in $NAMES (|-separated) skipped for
# REASON, and the script ends: a run that cannot check still says what.
skip_all() {
	echo "$NAMES" | tr '|' '\n' | while read -r n; do skip "$n" "$1"; done
	exit 0
}

# fail_all REASON: every check named in $NAMES failed for REASON, and the
# script ends: the product failing before it could be checked (an agent
# that never sampled) is a failure of each check, never a skip.
fail_all() {
	echo "$NAMES" | tr '|' '\n' | while read -r n; do fail "$n" "$1"; done
	exit 1
}

# check NAME CONDITION-COMMAND... : runs the command; ok when it succeeds.
check() {
	_name=$1
	shift
	if "$@"; then ok "$_name"; else fail "$_name" "$*"; fi
}

# Prints a skip for each NAME and exits when not root: the tests need BPF.
# The NAMEs become $NAMES (unless set), the checks a later skip_all or
# fail_all reports.
require_root() {
	[ -n "${NAMES:-}" ] || NAMES=$(printf '%s|' "$@" | sed 's/|$//')
	plan_names
	[ "$(id -u)" -eq 0 ] || skip_all "needs root (CAP_BPF, CAP_PERFMON)"
}

# For the tests of what gets installed (test_install.sh, test_image.sh):
# prints a skip for each line of NAMES (they become $NAMES, as with
# require_root) and exits unless this is root, not
# a SANITIZE=1 run (nothing installed is sanitized: the plain run tests it),
# and tools/deps.sh installs its GROUPS.
require_install_deps() { # NAMES GROUP...
	[ -n "${NAMES:-}" ] || NAMES=$(echo "$1" | tr '\n' '|' | sed 's/|$//')
	plan_names
	shift
	_why=""
	if [ "$(id -u)" -ne 0 ]; then
		_why="needs root"
	elif [ "${SANITIZE:-}" = 1 ]; then
		_why="SANITIZE=1: nothing installed is sanitized (the plain run tests it)"
	elif ! _out=$(sh tools/deps.sh "$@" 2>&1); then
		_why="tools/deps.sh $* failed: $(echo "$_out" | tail -n1)"
	fi
	[ -z "$_why" ] && return 0
	skip_all "$_why"
}

# jget FILE KEY[.KEY...]: a value from a --json-summary file (list items
# by index: top.0.pid); nothing when the file or the key is missing.
jget() {
	python3 -c 'import json, sys
v = json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."):
    v = v[int(k)] if isinstance(v, list) else v[k]
print(v)' "$1" "$2" 2>/dev/null
}

# folded FILE [N]: one line per sample, "COUNT<TAB>LABELS<TAB>root;...;leaf",
# from `go tool pprof -raw`; COUNT is the sample's Nth value (default 1:
# samples/count; 3: off_cpu/nanoseconds of an --off-cpu profile).  LABELS
# is the sample's label text as printed.  A location with inlined
# functions contributes all of them, outermost first, as separate frames.
folded() {
	go tool pprof -raw "$1" 2>/dev/null | awk -v col="${2:-1}" '
	/^Samples:/ { insamples = 1; next }
	/^Locations/ { insamples = 0; inloc = 1; next }
	/^Mappings/ { inloc = 0; next }
	insamples && /^ *[0-9]+( +[0-9]+)+: / {
		n++; cnt[n] = $col; sub(/^ *[0-9]+( +[0-9]+)+: */, ""); ids[n] = $0; lab[n] = ""; next
	}
	insamples && n && /^ +[a-z_]+:/ { sub(/^ +/, ""); lab[n] = lab[n] $0 " "; next }
	inloc && /^ +[0-9]+: / {
		id = $1; sub(/:$/, "", id)
		# "1: 0x401136 M=1 func file.c:0 s=0", "7: 0x0 [unwind: bad CFA] :0 s=0",
		# unnamed: "1: 0x401136 M=1 "
		line = $0
		sub(/^ *[0-9]+: +0x[0-9a-f]+ +/, "", line)
		sub(/^M=[0-9]+ */, "", line)
		sub(/ +[^ ]*:[0-9]+ +s=[0-9]+(\(.*\))? *$/, "", line)
		locname[id] = (line != "" ? line : $2)
		last = id; next
	}
	inloc && /^ +[^ 0-9]/ && last != "" {
		# an inlining caller of the line above: it goes on the root side
		line = $0
		sub(/^ +/, "", line)
		sub(/ +[^ ]*:[0-9]+ +s=[0-9]+(\(.*\))? *$/, "", line)
		locname[last] = line ";" locname[last]
		next
	}
	END {
		for (i = 1; i <= n; i++) {
			m = split(ids[i], a, " "); s = ""
			for (j = m; j >= 1; j--) s = s (s == "" ? "" : ";") locname[a[j]]
			printf "%s\t%s\t%s\n", cnt[i], lab[i], s
		}
	}'
}

# sum_where FOLDED PATTERN: total count of samples whose line matches PATTERN.
sum_where() {
	awk -F '\t' -v pat="$2" '$0 ~ pat { s += $1 } END { print s + 0 }' "$1"
}

# split_named FOLDED: "NAMED TOTAL" for a profile of `nofp split`: the
# samples whose stack runs main;stage_one;stage_two;work_hot or work_cold
# (unwound whole and named from the binary), and all of them.
split_named() {
	echo "$(sum_where "$1" 'main;stage_one;stage_two;work_(hot|cold)') $(sum_where "$1" '.')"
}

# mostly_named NAMED TOTAL: enough samples, and at least 90% named (the
# first ones of a process may come before its unwind tables).
mostly_named() {
	[ "$2" -ge 30 ] && [ $(($1 * 10)) -ge $(($2 * 9)) ]
}

# Waits up to 5 s for a process to print its pid on stdout into FILE.
wait_pid_file() {
	_i=0
	while [ $_i -lt 50 ]; do
		[ -s "$1" ] && head -n1 "$1" && return 0
		sleep 0.1
		_i=$((_i + 1))
	done
	return 1
}

# start VAR COMMAND...: starts a workload that prints its pid first, in the
# background (its pid added to $BG); sets VAR to the pid it printed (empty
# if it printed none in 5 s).  Needs $T, a directory of the test's own.
start() {
	_var=$1
	shift
	_out=$T/pid.$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
	"$@" >"$_out" &
	BG="$BG $!"
	_p=$(wait_pid_file "$_out") || _p=
	eval "$_var=\$_p"
}

# stop_agent PID: SIGINT to the agent PID, waited for up to 30 s; sets
# STOPPED (yes: it ended by itself, no: it did not) and STOP_RC (its status).
stop_agent() {
	kill -INT "$1"
	_i=0
	while kill -0 "$1" 2>/dev/null && [ $_i -lt 300 ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
	STOPPED=no
	kill -0 "$1" 2>/dev/null || STOPPED=yes
	wait "$1"
	STOP_RC=$?
}

# stop_all: kills and reaps every process in $BG.
stop_all() {
	for p in $BG; do kill "$p" 2>/dev/null; done
	for p in $BG; do wait "$p" 2>/dev/null; done
	BG=
}

# --- managed runtimes (test_java.sh, test_node.sh) ---

# runtime_run NAME SECS CPROF-ARGS -- CMD...: starts CMD (a runtime's
# workload, which prints "ready" once warm), waits for that (15 s at
# most), profiles its pid at 499 Hz for SECS and waits for it to end.
# Leaves in $T: NAME.out (what it printed), NAME.err, NAME.json (the
# summary), NAME.folded, NAME.raw (as go tool pprof -raw prints it).
runtime_run() {
	_n=$1 _s=$2
	shift 2
	_args=
	while [ "$1" != "--" ]; do _args="$_args $1"; shift; done
	shift
	"$@" >"$T/$_n.out" 2>&1 &
	_j=$!
	BG="$BG $_j"
	for _ in $(seq 150); do
		grep -q '^ready' "$T/$_n.out" && break
		sleep 0.1
	done
	# shellcheck disable=SC2086
	$CPROF --pid "$_j" -F 499 --duration "$_s" --output-dir "$T/$_n" \
		--json-summary "$T/$_n.json" $_args 2>"$T/$_n.err"
	wait "$_j"
	for _f in "$T/$_n"/*-"$_j".pb.gz; do
		folded "$_f" >"$T/$_n.folded"
		go tool pprof -raw "$_f" >"$T/$_n.raw" 2>/dev/null
	done
}

# within5 A B: |A - B| <= 5 points, both real.
within5() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a >= 0 && b >= 0 && d <= 5) }'; }

# --- real programs of the host (issue 11): test_realhost.sh, bench/realhost.sh ---

# cgroup_new NAME: makes a cgroup v2 NAME under the v2 root and prints its
# directory (nothing when there is no writable v2 hierarchy).  Samples of
# processes in it carry the label cgroup:[/NAME].
cgroup_new() {
	_root=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
	[ -n "$_root" ] && mkdir "$_root/$1" 2>/dev/null && echo "$_root/$1"
}

# in_cgroup DIR COMMAND...: runs COMMAND (and all it starts) in cgroup DIR.
in_cgroup() {
	in_cgroup_on "" "$@"
}

# in_cgroup_on CPUS DIR COMMAND...: the same, on CPUS (taskset's list; ""
# for any), pinned before it joins DIR: taskset is not counted there.
in_cgroup_on() {
	_cpus=$1 _cg=$2
	shift 2
	sh -c '{ [ -z "$1" ] || taskset -p -c "$1" $$ >/dev/null; } && echo $$ >"$2/cgroup.procs" &&
		shift 2 && exec "$@"' sh "$_cpus" "$_cg" "$@"
}

# cgroup_gone DIR: removes the cgroup once its processes are gone.
cgroup_gone() {
	[ -n "$1" ] && rmdir "$1" 2>/dev/null
	return 0
}

# wait_sampling PID: waits (up to 120 s) until the agent PID samples (its
# perf events are open) and, a moment later, takes SIGINT: a loaded host
# may take seconds to load the BPF program and read every process, and a
# background job ignores SIGINT until the agent sets its handler.
wait_sampling() {
	_i=0
	while [ $_i -lt 1200 ] && kill -0 "$1" 2>/dev/null; do
		if ls -l /proc/"$1"/fd 2>/dev/null | grep -q 'perf_event'; then
			sleep 1
			return 0
		fi
		sleep 0.1
		_i=$((_i + 1))
	done
	return 1
}

# gen_functions N: a C file of N functions, each a loop over a switch
# calling the one before (clang -O2 takes about 5 ms a function).
gen_functions() {
	awk -v n="$1" 'BEGIN {
	for (i = 0; i < n; i++) {
		printf "int f%d(int *a, int n) {\n\tint s = %d;\n\tfor (int i = 0; i < n; i++) {\n\t\tswitch ((a[i] + s) & 7) {\n", i, i
		for (k = 0; k < 8; k++)
			printf "\t\tcase %d: s = s * %d + a[(i + %d) %% n]; break;\n", k, k + i % 13 + 2, k
		printf "\t\t}\n\t\tif (s > %d) s -= a[i] / (n + 1);\n\t}\n\treturn s%s;\n}\n", 1000 + i, i ? sprintf(" + f%d(a, n / 2)", i - 1) : ""
	} }'
}

# user_stacks FOLDED CGROUP-NAME: "COMPLETE NAMED TOTAL" over the samples
# of processes in /CGROUP-NAME that have user frames (a root frame that is
# not a kernel entry): COMPLETE reach the program's start (_start,
# __libc_start_call_main, or a thread's clone;start_thread) with no
# [unwind: ...] frame; NAMED are complete with every frame named (none a
# bare address).  A lost sample ([lost ...]: no room to count it) is one of
# the TOTAL, never complete: its stack is gone.
user_stacks() {
	awk -F '\t' -v cg="cgroup:[/$2]" '
	index($2, cg) == 0 { next }
	$3 ~ /^(entry_SYSCALL|asm_|ret_from_fork|\[kernel)/ { next }
	{
		total += $1
		if ($3 ~ /\[unwind:/) next
		if ($3 !~ /^(_start|__libc_start_call_main|__libc_start_main[^;]*;__libc_start_call_main|(__)?clone3?;start_thread)(;|$)/) next
		complete += $1
		if ($3 !~ /(^|;)0x[0-9a-f]+(;|$)/) named += $1
	}
	END { print complete + 0, named + 0, total + 0 }' "$1"
}

# folded_of DIR NAME: the folded samples of the profiles in DIR that name
# NAME (a cgroup's, say) anywhere in their strings: a whole-host run of a
# busy host may write thousands of profiles, and go tool pprof takes a
# while for each.
folded_of() {
	for _f in "$1"/*.pb.gz; do
		gzip -dc "$_f" 2>/dev/null | grep -aqF "$2" && folded "$_f"
	done
}

# at_least "M N" MIN-SHARE MIN-N: M >= MIN-SHARE * N, and N >= MIN-N.
at_least() {
	set -- $1 "$2" "$3"
	awk -v m="$1" -v n="$2" -v f="$3" -v min="$4" 'BEGIN { exit !(n >= min && m >= f * n) }'
}

# cpu_ticks PID: the process's CPU time so far (utime + stime), in clock
# ticks; empty once it is gone.
cpu_ticks() {
	sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | awk '{ print $12 + $13 }'
}

# loaded_launch DIR THREADS SECONDS OTHER-PID COMMAND...: COMMAND started
# as a user would start it on an overloaded host (issue 30).  A session
# of its own (setsid: its own autogroup, as a terminal's) holds a shell
# that starts `spin THREADS SECONDS` (the load, outlasting COMMAND) and 2 s
# later, from that shell, COMMAND -- its output to DIR/out, its errors to
# DIR/err, its status to DIR/rc.  build/workloads/exitwatch, outside the
# load and in the real-time class (chrt -f 20), sees COMMAND's fork, exec,
# raise and exit.  The load is stopped once COMMAND has exited.  Sets
#   LL_FORK LL_EXEC LL_RAISED LL_EXIT  Unix ms (exitwatch; -1: not seen)
#   LL_EWAIT LL_RWAIT  ms COMMAND was runnable but not run by its exec, by
#                      its raise (schedstat); LL_ECPU LL_RCPU: ms it ran
#   LL_SPIN            spin's pid; LL_RATE: the CPUs it had meanwhile
#   LL_ORATE           the CPUs OTHER-PID had meanwhile (0 when OTHER-PID is 0)
#   LL_RC              COMMAND's status ("" if none)
#   DIR/watch          exitwatch's log: lines "cpu MS PID TICKS" every 50 ms
#                      for spin and OTHER-PID (cpus_between reads them), then
#                      its account of COMMAND
# Needs bash, setsid and chrt; the caller runs as root.  LL_NORMAL: a
# prefix that starts the session at normal priority (bench/lib.sh's
# $NORMAL, for a caller running in the real-time class).
loaded_launch() {
	_ld=$1 _lthreads=$2 _lsecs=$3 _lother=$4
	shift 4
	mkdir -p "$_ld"
	rm -f "$_ld/go" "$_ld/shell.pid" "$_ld/spin.pid" "$_ld/rc"
	mkfifo "$_ld/go"
	# The shell waits on a read (no child of its own) for the word to
	# start COMMAND, so that its only children are spin and COMMAND.
	${LL_NORMAL:-} setsid bash -c 'd=$1; echo $$ >"$d/shell.pid"; "$2" "$3" "$4" >"$d/spin.out" & echo $! >"$d/spin.pid"
		read -r _ <"$d/go"; shift 4; "$@" >"$d/out" 2>"$d/err"; echo $? >"$d/rc"' \
		sh "$_ld" "$BUILD/workloads/spin" "$_lthreads" "$_lsecs" "$@" &
	_lsess=$!
	_lshell=$(wait_pid_file "$_ld/shell.pid")
	LL_SPIN=$(wait_pid_file "$_ld/spin.pid")
	sleep 2
	_lc0=$(cpu_ticks "$LL_SPIN") _lo0=0 _lw0=$(date +%s.%N)
	[ "$_lother" != 0 ] && _lo0=$(cpu_ticks "$_lother")
	_lcpu=$LL_SPIN
	[ "$_lother" != 0 ] && _lcpu="$_lcpu $_lother"
	# shellcheck disable=SC2086
	chrt -f 20 "$BUILD/workloads/exitwatch" "$_lshell" "$LL_SPIN" 300 $_lcpu >"$_ld/watch" 2>"$_ld/watch.err" &
	_lew=$!
	echo go >"$_ld/go"
	wait $_lew
	_lc1=$(cpu_ticks "$LL_SPIN") _lo1=0 _lw1=$(date +%s.%N)
	[ "$_lother" != 0 ] && _lo1=$(cpu_ticks "$_lother")
	kill "$LL_SPIN" 2>/dev/null
	wait $_lsess
	LL_RC=$(cat "$_ld/rc" 2>/dev/null)
	# pid N fork_ms N exec_ms N exec_wait_ms N raised_ms N raise_wait_ms N exit_ms N exec_cpu_ms N raise_cpu_ms N
	grep '^pid ' "$_ld/watch" >"$_ld/watch.pid"
	read -r _ _ _ LL_FORK _ LL_EXEC _ LL_EWAIT _ LL_RAISED _ LL_RWAIT _ LL_EXIT _ LL_ECPU _ LL_RCPU _ <"$_ld/watch.pid" ||
		LL_FORK=-1 LL_EXEC=-1 LL_EWAIT=-1 LL_RAISED=-1 LL_RWAIT=-1 LL_EXIT=-1 LL_ECPU=-1 LL_RCPU=-1
	eval "$(awk -v c0="${_lc0:-0}" -v c1="${_lc1:-0}" -v o0="${_lo0:-0}" -v o1="${_lo1:-0}" \
		-v w0="$_lw0" -v w1="$_lw1" -v tck="$(getconf CLK_TCK)" 'BEGIN {
		printf "LL_RATE=%.3f LL_ORATE=%.3f\n", (c1 - c0) / tck / (w1 - w0), (o1 - o0) / tck / (w1 - w0) }')"
}

# cpus_between LOG PID T0 T1: the CPUs process PID had from T0 to T1 (Unix
# seconds, fractional: a profile's start and end), from exitwatch's log of
# its CPU time every 50 ms (lines "cpu MS PID TICKS", interpolated between
# two); 0 when the log does not span them.  Other load may come and go
# over a run, so the CPU a profile should account for is that of its span.
cpus_between() {
	awk -v pid="$2" -v t0="$3" -v t1="$4" -v tck="$(getconf CLK_TCK)" '
		function at(t,   i) {
			for (i = 2; i <= n; i++)
				if (ms[i] >= t)
					return tk[i - 1] + (tk[i] - tk[i - 1]) * (t - ms[i - 1]) / (ms[i] - ms[i - 1])
			return -1
		}
		$1 == "cpu" && $3 == pid && $4 >= 0 && (n == 0 || $2 > ms[n]) { n++; ms[n] = $2; tk[n] = $4 }
		END {
			a = t0 * 1000; b = t1 * 1000
			if (n < 2 || ms[1] > a || ms[n] < b || b <= a) {
				# 0, and why on stderr: a log that does not cover the span
				printf "cpus_between: %d lines for %s, %.0f..%.0f ms, do not cover the span %.0f..%.0f\n",
					n, pid, ms[1], ms[n], a, b > "/dev/stderr"
				print 0; exit
			}
			printf "%.3f\n", (at(b) - at(a)) / tck / ((b - a) / 1000)
		}' "$1"
}

# cpu_log_start LOG PID...: exitwatch (real-time) logs the CPU time of each
# PID every 50 ms to LOG ("cpu MS PID TICKS", for cpus_between); returns
# once the first line is written, so that an agent started next finds its
# whole span in the log.  Sets CPU_LOG_PID.
cpu_log_start() {
	_cll=$1
	shift
	chrt -f 20 "$BUILD/workloads/exitwatch" 0 0 300 "$@" >"$_cll" &
	CPU_LOG_PID=$!
	for _ in $(seq 100); do
		[ -s "$_cll" ] && return 0
		sleep 0.02
	done
	echo "cpu_log_start: no line in $_cll after 2 s" >&2
}

# cpu_log_stop: ends the log after one more line, so that it covers
# whatever ended just before (an agent's last window).
cpu_log_stop() {
	sleep 0.1
	kill "$CPU_LOG_PID" 2>/dev/null
	wait "$CPU_LOG_PID" 2>/dev/null
}

# profile_span PROFILE: its start and end, Unix seconds ("T0 T1"); empty if unreadable.
profile_span() {
	_pt0=$(profile_field "$1" Time) _pd=$(profile_field "$1" Duration)
	[ -n "$_pt0" ] && [ -n "$_pd" ] && awk -v a="$_pt0" -v d="$_pd" 'BEGIN { printf "%.3f %.3f\n", a, a + d }'
}

# profile_field FILE FIELD: "Time" (Unix seconds, fractional) or "Duration"
# (seconds) of a profile, as go tool pprof prints them.
profile_field() {
	go tool pprof -raw "$1" 2>/dev/null | awk -v f="$2" '
		f == "Time" && /^Time: / { cmd = "date -d \"" $2 " " $3 " " $4 "\" +%s.%N"; cmd | getline t; print t; exit }
		f == "Duration" && /^Duration: / { print $2 + 0; exit }'
}
