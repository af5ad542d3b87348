#!/bin/bash
# bench/java.sh: what walking and naming Java frames costs in BPF (issue 32).
#
#   sudo sh bench/java.sh                       # ~2 minutes; `make bench` runs it
#   sudo JAVA_SECS=3 JAVA_REPS=1 sh bench/java.sh   # quick check of the script
#
# tests/workloads/java/Hot.java on Debian's OpenJDK 17 (one busy thread,
# C2-compiled after its warm-up, no flags) and the native reference, `nofp
# split` (-O2 -fomit-frame-pointer: DWARF unwinding only), take turns of
# TURN s on one CPU, profiled by one cprof-bpf (--cpu that CPU, --pid
# both) running on the other CPU, for 2 x JAVA_SECS (5) s; JAVA_REPS (3)
# repetitions alternating the CPUs; with Java frames (the default) and
# with --no-java.  Figures as bench/python.sh's (bench/turns.sh): BPF
# ns/sample = what the workload's turns added to run_time_ns over what
# they added to run_cnt of the instance's perf_event programs.  The bar:
# a Java sample at most 2x a native DWARF sample.  Written between the
# "java" markers of bench/RESULTS.md.

if [ -z "${BASH_VERSION:-}" ]; then exec bash "$0" "$@"; fi
. "$(dirname "$0")/env.sh"
NOFP=$ROOT/build/workloads/nofp
CLASSES=$ROOT/build/workloads/java
JAVA=${JAVA17:-/usr/lib/jvm/java-17-openjdk-amd64/bin/java}
SECS=${JAVA_SECS:-5}
REPS=${JAVA_REPS:-3}
HZ=999
LOAD_SLACK=4
TURN=0.25
NCPU=$(nproc)
# the JVM's start and C2's compiles of Hot's methods, before the instance
TURNS_WARMUP=4
FINISH_MAX=60
BPF_PROG_TYPE_PERF_EVENT=7

bench_require "$CPROF" "$NOFP" "$JAVA" -- taskset
[ -f "$CLASSES/Hot.class" ] || die "$CLASSES/Hot.class missing: run 'make workloads' (with javac) first"
[ "$NCPU" -ge 2 ] || die "needs 2 CPUs: the workloads compared run at once, a CPU each"
. "$ROOT/bench/lib.sh"
. "$ROOT/bench/turns.sh"
turns_init cprof-bench-java

# record NAME NS: the row of one run (turns_row), with its Java frames named.
record() {
	turns_row "$1" "$2" "$(jget "$RAW/$1.json" java.frames.named)" "Java frames named"
}

for rep in $(seq "$REPS"); do
	cpu=$((rep % 2)) TOOLS_CPU=$(((rep + 1) % 2))
	in_turns java $cpu -- "$JAVA" -cp "$CLASSES" Hot 600
	in_turns java-nojava $cpu --no-java -- "$JAVA" -cp "$CLASSES" Hot 600
done

NEW=$RAW/section.md
r=$(turns_ratio java) rn=$(turns_ratio java-nojava)
{
	echo "<!-- BEGIN java -->"
	echo "## Java frames: BPF cost per sample (issue 32)"
	echo
	echo "Written by \`bench/java.sh\` ($(date -u '+%Y-%m-%d %H:%M UTC'); build $BUILD_DESC;"
	echo "$NCPU CPUs, load average $(cut -d' ' -f1 /proc/loadavg) at the end).  Hot.java on Debian's"
	echo "OpenJDK 17 (one busy thread, C2-compiled, no flags) and the native reference (nofp split,"
	echo "one busy thread) take turns of $TURN s on one CPU for 2 x $SECS s, under one cprof-bpf --cpu"
	echo "(that CPU) --pid (both) running on the other CPU, $HZ Hz, the JVM warmed up for"
	echo "$TURNS_WARMUP s first; $REPS repetitions alternating CPUs, medians shown.  BPF ns/sample as in"
	echo "the Python section (bench/turns.sh).  A Java sample walks Hot's stack from its leaf in"
	echo "C2's code of Hot.work (spinA inlined) through Hot.stage, Hot.main (interpreted or"
	echo "compiled), the call stub, and libjvm's and glibc's frames by CFI to the thread's start:"
	echo "11 or 12 frames (the profiles' stacks); the native one 7.  With --no-java the walk stops"
	echo "at the first Java frame."
	echo "Raw logs: \`$RAW\`."
	echo
	echo "| workload | BPF ns/sample | runs | a sample | the native sample of its runs | ratio | Java frames named (the run's) | stacks stopped early (the run's) |"
	echo "|---|---|---|---|---|---|---|---|"
	turns_table_row "Hot.java, JDK 17, Java frames" java
	turns_table_row "Hot.java, JDK 17, --no-java" java-nojava
	echo
	echo "The bar: a Java sample at most 2x a native DWARF sample: ${r}x"
	[ "$r" != - ] && [ "$rn" != - ] &&
		echo "(${rn}x with --no-java, whose walk ends at the first Java frame: the Java frames and the JVM's frames below them add $(calc "$r - $rn" %.2f) native samples, ~$(calc "($r - $rn) * $(turns_native java)" %.0f) ns)."
	echo "<!-- END java -->"
} >"$NEW"
cat "$NEW" >&2
publish_section java "$NEW"
