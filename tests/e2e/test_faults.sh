#!/bin/sh
# End-to-end fault tests: the real BPF sampler (root) against missing
# privileges, unwritable and full output directories, signals at random
# moments, corrupt binaries, processes that vanish while they are read, an
# overflowing counts map and symlinks planted in the output directory.
# Each asserts what the user is promised: a clear error and the right exit
# status, and never a truncated or misplaced file.
. "$(dirname "$0")/lib.sh"

T=$(mktemp -d)
chmod 755 "$T"
BG=   # pids of the workloads we started, killed at exit
MNT=  # tmpfs mounts we made, unmounted at exit
cleanup() {
	for p in $BG; do kill "$p" 2>/dev/null; done
	for p in $BG; do wait "$p" 2>/dev/null; done
	for m in $MNT; do umount "$m" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

plan 25
require_root "no CAP_BPF: one line, exit 1, no files" "read-only output dir" \
	"output dir not creatable on a read-only fs" "disk full mid-write: exit 1 with ENOSPC named" \
	"disk full mid-write: some written" "disk full mid-write: the other files intact" \
	"signals at random moments" "corrupt binaries: the run goes on" \
	"corrupt binaries: shdrs profiled" "corrupt binaries: shoff profiled" \
	"corrupt binaries: ehtrunc profiled" "corrupt binaries: symcount profiled" \
	"corrupt binaries: ehtrunc still names fault_leaf" \
	"corrupt binaries: symcount still names fault_leaf" \
	"corrupt binaries: a healthy process in the same run is untouched" \
	"processes exiting while read" "library truncated under a profiled process" \
	"deleted binary" "counts map overflow: samples lost" "counts map overflow: the profile's total" \
	"planted symlinks" "a directory at a profile's name" "valgrind: a 2 s run" \
	"valgrind runs beside a default cprof-bpf" "no uprobe by default"

CC=${CC:-cc}

# --- helpers ------------------------------------------------------------------

# Random integer in [0, $1).
rand() { od -An -N4 -tu4 /dev/urandom | awk -v m="$1" '{ print $1 % m }'; }

# complete DIR [SKIP-PATTERN]: every .pb.gz in DIR is a whole gzip stream
# (a truncated one fails gzip -t: the trailer holds the length and CRC), the
# first few also read by go tool pprof, and no temporary file is left
# (names starting with '.', apart from those matching SKIP-PATTERN, which
# the test planted).  Prints what is wrong; fails if anything is.
complete() {
	_bad=0 _n=0
	for _f in "$1"/*.pb.gz; do
		# Nothing there, or a directory the test planted at a profile's name.
		[ -e "$_f" ] && [ ! -d "$_f" ] || continue
		_n=$((_n + 1))
		if [ -L "$_f" ] || ! gzip -t "$_f" 2>/dev/null; then
			echo "# incomplete or not a regular file: $_f"
			_bad=1
		elif [ $_n -le 3 ] && ! go tool pprof -raw "$_f" >/dev/null 2>&1; then
			echo "# unreadable by go tool pprof: $_f"
			_bad=1
		fi
	done
	_left=$(ls -A "$1" 2>/dev/null | grep '^\.' | grep -v "${2:-^$}")
	if [ -n "$_left" ]; then
		echo "# temporary files left in $1: $_left"
		_bad=1
	fi
	return $_bad
}

# samples FILE: total of the first sample value (samples/count).
samples() {
	folded "$1" >"$T/folded.tmp"
	sum_where "$T/folded.tmp" '.'
}

# mapping_build_id FILE PATTERN: the build ID of the mapping whose file
# matches ("1: 0xSTART/0xLIMIT/0xOFFSET FILE BUILDID [FN]").
mapping_build_id() {
	go tool pprof -raw "$1" 2>/dev/null | sed -n '/^Mappings/,$p' | grep -- "$2" |
		head -n 1 | awk '{ print $4 }'
}

# --- privileges -------------------------------------------------------------------

# Root, but without the capabilities BPF needs: the bounding set caps what
# the exec'd program gets.
if command -v setpriv >/dev/null; then
	setpriv --bounding-set=-bpf,-perfmon,-sys_admin \
		$CPROF --duration 1 --output-dir "$T/nocap" >"$T/err" 2>&1
	rc=$?
	check "no CAP_BPF: one line, exit 1, no files (rc=$rc: $(head -c 200 "$T/err"))" \
		eval "[ $rc -eq 1 ] && [ \$(wc -l <'$T/err') -eq 1 ] && grep -q CAP_BPF '$T/err' &&
		       [ -z \"\$(ls -A '$T/nocap' 2>/dev/null)\" ]"
else
	skip "no CAP_BPF: one line, exit 1, no files" "setpriv (util-linux) not installed"
fi

# --- output directory: read-only, full ---------------------------------------------

mkdir -p "$T/ro" "$T/full"
if mount -t tmpfs -o ro,size=64k cprof-test "$T/ro" 2>/dev/null; then
	MNT="$MNT $T/ro"
	$CPROF --duration 1 --output-dir "$T/ro" >"$T/err" 2>&1
	rc=$?
	check "read-only output dir: exit 1, one line naming it (rc=$rc: $(head -c 200 "$T/err"))" \
		eval "[ $rc -eq 1 ] && [ \$(wc -l <'$T/err') -eq 1 ] && grep -q '$T/ro' '$T/err' &&
		       grep -qi 'read-only' '$T/err'"
	$CPROF --duration 1 --output-dir "$T/ro/sub/dir" >"$T/err" 2>&1
	rc=$?
	check "output dir not creatable on a read-only fs: exit 1, names it, nothing made" \
		eval "[ $rc -eq 1 ] && grep -q '$T/ro/sub/dir' '$T/err' && [ ! -e '$T/ro/sub' ]"
else
	skip "read-only output dir" "cannot mount a tmpfs here"
	skip "output dir not creatable on a read-only fs" "cannot mount a tmpfs here"
fi

# A 16 KiB tmpfs holds four pages: one for a file that must survive, three
# for profiles; eight processes to write makes the disk fill mid-run.
if mount -t tmpfs -o size=16k cprof-test "$T/full" 2>/dev/null; then
	MNT="$MNT $T/full"
	echo precious >"$T/full/keep.txt"
	pids=
	for i in 1 2 3 4 5 6 7 8; do
		start p "$BUILD/workloads/fault_target" 30
		pids="$pids${pids:+,}$p"
	done
	$CPROF --pid "$pids" -F 199 --duration 2 --output-dir "$T/full" >"$T/err" 2>&1
	rc=$?
	n=$(ls "$T/full" | grep -c '\.pb\.gz$')
	check "disk full mid-write: exit 1 with ENOSPC named (rc=$rc, $n of 8 written)" \
		eval "[ $rc -eq 1 ] && grep -q 'No space left on device' '$T/err'"
	check "disk full mid-write: some written, every file present complete, no temporaries" \
		eval "[ $n -ge 1 ] && [ $n -lt 8 ] && complete '$T/full'"
	check "disk full mid-write: the other files intact" \
		eval "[ \"\$(cat '$T/full/keep.txt')\" = precious ]"
	stop_all
else
	skip_each "cannot mount a tmpfs here" "disk full mid-write" \
		"exit 1 with ENOSPC named" "some written" "the other files intact"
fi

# --- signals at random moments --------------------------------------------------------

# Whole-host runs of 3 s, each sent SIGINT or SIGTERM after a random delay
# of up to 4 s: before the handlers exist, while loading BPF, while
# sampling, while writing, or after the end.  Some get a second signal
# 50 ms later, which must not cut the writing short either.
"$BUILD/workloads/busy" 120 >/dev/null &
BG="$BG $!"
runs=10 bad=0 early=0 written=0
i=0
while [ $i -lt $runs ]; do
	i=$((i + 1))
	d=$T/sig$i
	$CPROF --duration 3 -F 99 --output-dir "$d" >/dev/null 2>"$T/sig.err" &
	cp=$!
	# A third of the runs aim at startup (options, output dir, BPF load).
	if [ $((i % 3)) -eq 1 ]; then ms=$(rand 300); else ms=$(rand 4000); fi
	sleep "$(awk -v m="$ms" 'BEGIN { print m / 1000 }')"
	if [ $((i % 2)) -eq 0 ]; then sig=INT; else sig=TERM; fi
	kill -$sig $cp 2>/dev/null
	[ $((i % 3)) -eq 0 ] && { sleep 0.05; kill -INT $cp 2>/dev/null; }
	# (braces: the shell's "Terminated" notice goes to /dev/null too)
	{ wait $cp; } 2>/dev/null
	rc=$?
	# 0: handled; 1: some file failed (reported); 128+n: killed before
	# the handlers were installed, which writes nothing.
	case $rc in
	0) ;;
	130 | 143) early=$((early + 1)) ;;
	*) bad=1; echo "# run $i (SIG$sig after $ms ms): exit $rc: $(tail -n 2 "$T/sig.err")" ;;
	esac
	complete "$d" || { bad=1; echo "# run $i (SIG$sig after $ms ms) left the above"; }
	[ -n "$(ls "$d" 2>/dev/null)" ] && written=$((written + 1))
	rm -rf "$d"
done
check "signals at random moments: $runs runs, every file present complete ($written wrote files, $early killed before the handlers)" \
	[ $bad -eq 0 ]
stop_all

# --- corrupt binaries ---------------------------------------------------------------------

# Copies of one program, each with its own build ID (objects are cached by
# it, so copies must not share one), corrupted where a profiler looks but
# the kernel and ld.so do not.
if $CC -O1 -Wall -o "$T/elfpatch" tests/fuzz/elfpatch.c 2>"$T/err"; then
	corrupt_ok=1
	bid() { printf 'fa%02d00112233445566778899aabbccddeeff0011' "$1"; }
	i=0
	for v in shdrs shoff ehtrunc symcount; do
		i=$((i + 1))
		$CC -O1 -g -fno-omit-frame-pointer -rdynamic -Wl,--build-id=0x$(bid $i) \
			-o "$T/fa-$v" tests/workloads/fault_target.c 2>>"$T/err" || corrupt_ok=0
	done
	"$T/elfpatch" "$T/fa-shdrs" shdrs-garbage &&
		"$T/elfpatch" "$T/fa-shoff" shoff-past-end &&
		"$T/elfpatch" "$T/fa-ehtrunc" truncate .eh_frame &&
		"$T/elfpatch" "$T/fa-symcount" absurd-size .symtab || corrupt_ok=0
else
	corrupt_ok=0
fi
if [ $corrupt_ok -eq 1 ]; then
	start P_SHDRS "$T/fa-shdrs" 30
	start P_SHOFF "$T/fa-shoff" 30
	start P_EHTR "$T/fa-ehtrunc" 30
	start P_SYMC "$T/fa-symcount" 30
	start P_OK "$BUILD/workloads/split" 30
	$CPROF --pid "$P_SHDRS,$P_SHOFF,$P_EHTR,$P_SYMC,$P_OK" -F 499 --duration 3 \
		--output-dir "$T/corrupt" >/dev/null 2>"$T/corrupt.err"
	rc=$?
	check "corrupt binaries: the run goes on, exit 0 (rc=$rc)" [ $rc -eq 0 ]
	i=0
	for v in shdrs:$P_SHDRS shoff:$P_SHOFF ehtrunc:$P_EHTR symcount:$P_SYMC; do
		i=$((i + 1))
		name=${v%%:*} pid=${v#*:}
		f=$T/corrupt/fa-$name-$pid.pb.gz
		n=$( [ -e "$f" ] && samples "$f" || echo 0)
		got=$( [ -e "$f" ] && mapping_build_id "$f" "fa-$name")
		check "corrupt binaries: $name profiled ($n samples) with its build ID from PT_NOTE" \
			eval "[ $n -ge 10 ] && [ '$got' = '$(bid $i)' ]"
	done
	# Where the symbol table survives, names must too.
	for v in ehtrunc:$P_EHTR symcount:$P_SYMC; do
		name=${v%%:*} pid=${v#*:}
		check "corrupt binaries: $name still names fault_leaf" \
			eval "go tool pprof -top '$T/corrupt/fa-$name-$pid.pb.gz' 2>/dev/null | grep -q fault_leaf"
	done
	check "corrupt binaries: a healthy process in the same run is untouched" \
		eval "go tool pprof -top '$T/corrupt/split-$P_OK.pb.gz' 2>/dev/null | grep -q spin_c"
	stop_all
else
	skip_each "cannot build the patched copies: $(head -c 200 "$T/err")" "corrupt binaries" \
		"the run goes on" "shdrs profiled" "shoff profiled" "ehtrunc profiled" \
		"symcount profiled" "ehtrunc still names fault_leaf" "symcount still names fault_leaf" \
		"a healthy process in the same run is untouched"
fi

# --- processes exiting while their maps and binaries are read -------------------------------

# A stream of processes living ~2 ms each (exec, exit), whole host, high rate.
start P_CHURN "$BUILD/workloads/fault_churn" 6
$CPROF -F 999 --duration 3 --output-dir "$T/churn" >/dev/null 2>"$T/churn.err"
rc=$?
kids=$(ls "$T/churn" 2>/dev/null | grep '^fault_churn-' | grep -vc "^fault_churn-$P_CHURN\.")
check "processes exiting while read: exit 0, every file complete ($kids short-lived children profiled)" \
	eval "[ $rc -eq 0 ] && complete '$T/churn' && [ $kids -ge 1 ]"
stop_all

# A shared library truncated under the process using it (which then dies of
# SIGBUS) while the profiler holds it open to read its symbols.
cp "$BUILD/workloads/libplugin.so" "$T/libtrunc.so"
start P_LIB "$BUILD/workloads/fault_target" 30 "$T/libtrunc.so"
$CPROF --pid "$P_LIB" -F 499 --duration 3 --output-dir "$T/trunc" >/dev/null 2>"$T/trunc.err" &
cp=$!
sleep 1.5
truncate -s 100 "$T/libtrunc.so"
wait $cp
rc=$?
f=$T/trunc/fault_target-$P_LIB.pb.gz
n=$( [ -e "$f" ] && samples "$f" || echo 0)
check "library truncated under a profiled process: exit 0, its profile complete ($n samples)" \
	eval "[ $rc -eq 0 ] && [ $n -gt 0 ] && complete '$T/trunc'"
stop_all

# A binary deleted while it runs: read through /proc/<pid>/map_files.
cp "$BUILD/workloads/fault_target" "$T/gone"
start P_GONE "$T/gone" 30
rm -f "$T/gone"
$CPROF --pid "$P_GONE" -F 499 --duration 2 --output-dir "$T/gone.out" >/dev/null 2>&1
rc=$?
check "deleted binary: exit 0, still named (fault_leaf)" \
	eval "[ $rc -eq 0 ] && go tool pprof -top '$T/gone.out/gone-$P_GONE.pb.gz' 2>/dev/null | grep -q fault_leaf"
stop_all

# --- counts map overflow: lost samples counted and shown -----------------------------------

# (--counts-max is an option of this build: no probing, a missing one fails)
{
	start P_ST "$BUILD/workloads/fault_stacks" 30 8
	c0=$(cpu_ticks "$P_ST") w0=$(date +%s.%N)
	$CPROF --pid "$P_ST" -F 999 --counts-max 16 --duration 3 --output-dir "$T/ovf" \
		--json-summary "$T/ovf.json" >/dev/null 2>"$T/ovf.err"
	rc=$?
	# its CPUs over the run, by /proc: the independent view of the total
	use=$(awk -v a="$c0" -v b="$(cpu_ticks "$P_ST")" -v w0="$w0" -v w1="$(date +%s.%N)" \
		-v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.3f", (b - a) / hz / (w1 - w0) }')
	secs=$(jget "$T/ovf.json" sampled_s)
	f=$T/ovf/fault_stacks-$P_ST.pb.gz
	folded "$f" >"$T/ovf.folded"
	total=$(sum_where "$T/ovf.folded" '.')
	shown=$(sum_where "$T/ovf.folded" '\[lost samples\]')
	counted=$(jget "$T/ovf.json" samples.sampled)
	lost=$(jget "$T/ovf.json" samples.lost_counts_map_full)
	check "counts map overflow: samples lost (${lost:-?}) and shown as [lost samples] ($shown)" \
		eval "[ $rc -eq 0 ] && [ '${lost:-0}' -gt 0 ] && [ '$shown' -eq '${lost:-0}' ]"
	check "counts map overflow: the profile's total ($total) is every sample taken (${counted:-?}), 999 a second of its CPU time within 25% ($use CPUs over ${secs:-?} s)" \
		eval '[ "$total" -eq "${counted:--1}" ] &&
		      awk -v n="$total" -v u="$use" -v s="${secs:-0}" "BEGIN { e = u * s * 999; exit !(n >= 0.75 * e && n <= 1.25 * e) }"'
	stop_all
}

# --- symlinks planted in the output directory ---------------------------------------------

# At the final name (the rename replaces the link, never writes through it)
# and at the temporary names the profiler will try (O_EXCL|O_NOFOLLOW: it
# must skip them and leave them alone).
echo precious >"$T/victim"
start P1 "$BUILD/workloads/fault_target" 30
mkdir -p "$T/sym"
ln -s "$T/victim" "$T/sym/fault_target-$P1.pb.gz"
$CPROF --pid "$P1" -F 199 --duration 2 --output-dir "$T/sym" >/dev/null 2>"$T/sym.err" &
cp=$!
n=0
while [ $n -le 40 ]; do
	ln -s "$T/victim2" "$T/sym/.fault_target-$P1.pb.gz.tmp.$cp.$n"
	n=$((n + 1))
done
wait $cp
rc=$?
links=$(find "$T/sym" -maxdepth 1 -type l -name '.fault_target-*' | wc -l)
f=$T/sym/fault_target-$P1.pb.gz
check "planted symlinks: exit 0, targets untouched, the profile a regular file in place (rc=$rc)" \
	eval "[ $rc -eq 0 ] && [ \"\$(cat '$T/victim')\" = precious ] && [ ! -e '$T/victim2' ] &&
	       [ -f '$f' ] && [ ! -L '$f' ] && [ $links -eq 41 ] &&
	       complete '$T/sym' '^\.fault_target-$P1\.pb\.gz\.tmp\.$cp\.'"

# A directory where a profile should go: that file fails, with its name;
# the other process's profile is still written.
start P2 "$BUILD/workloads/fault_target" 30
mkdir -p "$T/symd/fault_target-$P2.pb.gz"
$CPROF --pid "$P1,$P2" -F 199 --duration 2 --output-dir "$T/symd" >/dev/null 2>"$T/symd.err"
rc=$?
check "a directory at a profile's name: exit 1 naming it, the other profile written (rc=$rc)" \
	eval "[ $rc -eq 1 ] && grep -q 'fault_target-$P2.pb.gz' '$T/symd.err' &&
	       [ -d '$T/symd/fault_target-$P2.pb.gz' ] && complete '$T/symd' &&
	       [ -f '$T/symd/fault_target-$P1.pb.gz' ]"
stop_all

# --- valgrind: a short whole-host run is clean ---------------------------------------
# (definite leaks count as errors; the suppressions are libbpf's bpf()
# attribute false positives, see the file)
# ld_uprobe: someone's uprobe on ld.so (another profiler's --ld-probe),
# whose breakpoint valgrind would die of at start-up (below).
ld_uprobe() { bpftool perf 2>/dev/null | grep ' uprobe .*ld-linux' | head -n1; }
if [ "${SANITIZE:-}" = 1 ]; then
	skip "valgrind: a 2 s run" "this build is ASan's: the two cannot share a process"
elif ! command -v valgrind >/dev/null 2>&1; then
	fail "valgrind: a 2 s run" "valgrind missing (make deps installs it)"
elif [ -n "$(ld_uprobe)" ]; then
	skip "valgrind: a 2 s run" "another program's uprobe on ld.so is attached on this host: $(ld_uprobe)"
else
	# valgrind replaces malloc through the dynamic loader: a static agent
	# (make's default) is checked as the same objects linked dynamically.
	VGBIN=$CPROF
	ldd "$CPROF" >/dev/null 2>&1 || VGBIN=$BUILD/cprof-bpf-dyn
	start P1 "$BUILD/workloads/fault_target" 30
	timeout 300 valgrind -q --error-exitcode=97 --leak-check=full --errors-for-leak-kinds=definite \
		--suppressions=tests/fuzz/valgrind.supp \
		$VGBIN --duration 2 -F 199 --output-dir "$T/vg" >/dev/null 2>"$T/vg.err"
	rc=$?
	check "valgrind: a 2 s whole-host run, no memory error and no leak (rc=$rc; $(ls "$T/vg" 2>/dev/null | wc -l) files)" \
		eval "[ $rc -eq 0 ] && [ -f '$T/vg/fault_target-$P1.pb.gz' ] && complete '$T/vg'"
	[ $rc -eq 0 ] || sed 's/^/# /' "$T/vg.err" | head -n 40
	stop_all
fi

# --- no breakpoint in the host's ld.so unless asked for (--ld-probe) ------------
# A uprobe is an int3 written into every process's copy of ld.so's page:
# valgrind, which reads and runs a program's code itself, meets it as its
# own and dies of SIGTRAP at start-up.  So the ld.so probe is opt-in.
uprobes_of() { bpftool perf 2>/dev/null | awk -v p="pid $1" 'index($0, p " ") == 1 && / uprobe /' | wc -l; }
$CPROF --duration 60 --output-dir "$T/lp0" 2>"$T/lp0.err" &
CP=$!
BG="$BG $CP"
if wait_sampling $CP; then
	n0=$(uprobes_of $CP)
	# The agent's own build does not matter here: valgrind runs /bin/true.
	if [ -n "$(ld_uprobe)" ]; then
		skip "valgrind runs beside a default cprof-bpf" "another program's uprobe on ld.so is attached on this host: $(ld_uprobe)"
	elif ! command -v valgrind >/dev/null 2>&1; then
		fail "valgrind runs beside a default cprof-bpf" "valgrind missing (make deps installs it)"
	else
		valgrind -q /bin/true >"$T/vgt.out" 2>&1
		vrc=$?
		check "valgrind runs beside a default cprof-bpf (rc=$vrc)" [ $vrc -eq 0 ]
	fi
else
	n0=?
	fail "valgrind runs beside a default cprof-bpf" "the agent did not start: $(tail -n1 "$T/lp0.err")"
fi
kill -INT $CP 2>/dev/null
wait $CP
$CPROF --ld-probe --duration 60 --output-dir "$T/lp1" 2>"$T/lp1.err" &
CP=$!
BG="$BG $CP"
wait_sampling $CP && n1=$(uprobes_of $CP) || n1=?
kill -INT $CP 2>/dev/null
wait $CP
CP=
check "no uprobe by default ($n0), one on ld.so with --ld-probe ($n1)" \
	eval "[ '$n0' = 0 ] && [ '$n1' = 1 ]"
exit 0
