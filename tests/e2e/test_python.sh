#!/bin/sh
# End-to-end: Python frames (function, file, line) spliced into the native
# stacks of CPython processes, for every CPython 3.8-3.13 pyenv installed
# here (libpython3.N.so with symbols) and Debian's python3.11 (the
# interpreter in the executable, .dynsym only).  A version not installed
# is a skip saying so.  Needs root.
. "$(dirname "$0")/lib.sh"

T=$(mktemp -d)
trap 'stop_all; rm -rf "$T"' EXIT
PYENV=${PYENV_ROOT:-/root/.pyenv}/versions
WORK=$PWD/tests/workloads/pysplit.py

# Without root the script is skipped whole, before its plan; after it,
# each skip is made by name where it happens (no skip_all).
require_root "python frames"
NAMES=
# Per CPython 3.8-3.13: 3 of split_checks, 1 of reuse_checks; 3.12 and 3.13
# with -X perf 6 more; Debian's 3.11 4; the newest 3.10-3.13 9; 3.7,
# free-threaded 3.13t and 3.12 claiming 3.11 4.
plan 53

# run NAME PYTHON MODE SECS [CPROF-ARGS...]: runs the workload (with the
# interpreter options in $PYOPTS), profiles its pid for SECS at 499 Hz, then
# stops it; leaves $T/NAME.folded, .raw (the profile's locations), .out
# (what the workload printed) and .err.
run() {
	_n=$1 _py=$2 _mode=$3 _s=$4
	shift 4
	"$_py" ${PYOPTS:-} "$WORK" "$_mode" 60 >"$T/$_n.out" &
	BG="$BG $!"
	_pid=$(wait_pid_file "$T/$_n.out")
	sleep 0.3
	$CPROF --pid "$_pid" -F 499 --duration "$_s" --output-dir "$T/$_n" "$@" 2>"$T/$_n.err"
	stop_all
	# CPython leaves its -X perf map behind at exit: runs would pile them up in /tmp
	[ -z "$_pid" ] || rm -f "/tmp/perf-$_pid.map"
	folded "$T/$_n"/*.pb.gz >"$T/$_n.folded"
	go tool pprof -raw "$T/$_n"/*.pb.gz >"$T/$_n.raw" 2>/dev/null
}

# share M N MIN: M of N is at least MIN (a fraction), with N >= 50.
share() { awk -v m="$1" -v n="$2" -v f="$3" 'BEGIN { exit !(n >= 50 && m >= f * n) }'; }

# native_only LABEL NAME ERE: the run NAME kept its native frames, >=90% in
# the interpreter's loop, none named as Python, and its summary says ERE.
native_only() {
	_all=$(sum_where "$T/$2.folded" .)
	_named=$(sum_where "$T/$2.folded" ';(outer|hot|cold|\[python)')
	_eval=$(sum_where "$T/$2.folded" ';_PyEval_EvalFrameDefault')
	check "$1, native frames only ($_named of $_all named, $_eval in the loop)" \
		sh -c "[ $_all -ge 50 ] && [ $_named -eq 0 ] && [ $_eval -ge $((_all * 9 / 10)) ] &&
		       grep -Eq '$3' '$T/$2.err'"
}

# The split, in one interpreter: the outer function on nearly every
# sample, hot's share as the program measured it, file and line on hot.
split_checks() { # LABEL NAME
	_l=$1 _f=$T/$2.folded
	all=$(sum_where "$_f" .)
	outer=$(sum_where "$_f" ';outer(;|$)')
	check "$_l: >=95% of samples show outer() ($outer of $all)" share "$outer" "$all" 0.95
	# From 3.11 one loop runs both; before, each is its own native call.
	hot=$(sum_where "$_f" ';outer;([^;]*;)*hot(;|$)')
	cold=$(sum_where "$_f" ';outer;([^;]*;)*cold(;|$)')
	own=$(awk '/^hot_share/ { print $2 }' "$T/$2.out")
	check "$_l: hot's share within 5 points of the program's own ($hot:$cold, own $own)" \
		awk -v a="$hot" -v b="$cold" -v o="${own:-x}" \
		'BEGIN { exit !(o != "x" && a + b >= 50 && (a / (a + b) - o)^2 <= 0.05^2) }'
	check "$_l: hot's frames carry pysplit.py and a line > 0" \
		grep -Eq " hot $WORK:[1-9][0-9]* " "$T/$2.raw"
}

# Code objects freed and made again at the same addresses (exec()'d code):
# each function keeps its own name, in the shares the program measured.
reuse_checks() { # LABEL NAME
	_f=$T/$2.folded
	_n=$(awk '$1 == "reused" { print $2 }' "$T/$2.out")
	_all=$(sum_where "$_f" ';spin(;|$)')
	_named=0 _bad=
	for _p in phase_a phase_b phase_c phase_d; do
		_m=$(sum_where "$_f" ";$_p;([^;]*;)*spin(;|\$)")
		_own=$(awk -v p="$_p" '$1 == "share" && $2 == p { print $3 }' "$T/$2.out")
		_named=$((_named + _m))
		awk -v m="$_m" -v n="$_all" -v o="${_own:-x}" \
			'BEGIN { exit !(o != "x" && n >= 50 && (m / n - o)^2 <= 0.05^2) }' ||
			_bad="$_bad $_p:$_m/$_all(own ${_own:-?})"
	done
	check "$1 exec'd code, code objects made again at $_n freed ones' addresses: each of four functions within 5 points of its own share, >=95% of spin's samples under one (${_bad:-all} $_named of $_all)" \
		sh -c "[ '${_n:-0}' -ge 1 ] && [ -z '$_bad' ] && [ $_named -ge $((_all * 95 / 100)) ]"
}

for v in 3.8 3.9 3.10 3.11 3.12 3.13; do
	dir=$(ls -d "$PYENV/$v".* 2>/dev/null | sort -V | tail -n1)
	if [ -z "$dir" ]; then
		skip_each "CPython $v is not installed under $PYENV" "python $v" \
			"outer() on >=95%" "hot's share" "hot's frames carry pysplit.py" "exec'd code"
		continue
	fi
	run "py$v" "$dir/bin/python$v" split 3
	split_checks "python $v (libpython3.so, pyenv)" "py$v"
	run "reuse$v" "$dir/bin/python$v" reuse 3
	reuse_checks "python $v" "reuse$v"
done

# -X perf (3.12+): a trampoline without CFI between each Python function's
# interpreter frames, stepped by the rule the loader found for it; the
# stacks as complete as without it, down to _start.
for v in 3.12 3.13; do
	dir=$(ls -d "$PYENV/$v".* 2>/dev/null | sort -V | tail -n1)
	if [ -z "$dir" ]; then
		skip_each "CPython $v is not installed under $PYENV" "python $v -X perf" \
			"outer() on >=95%" "hot's share" "hot's frames carry pysplit.py" \
			"unwound from a trampoline" "the trampolines' arenas counted" \
			"--no-python: unwound from a trampoline"
		continue
	fi
	PYOPTS="-X perf" run "perf$v" "$dir/bin/python$v" split 3 -v
	split_checks "python $v -X perf (perf trampolines)" "perf$v"
	all=$(sum_where "$T/perf$v.folded" .)
	whole=$(sum_where "$T/perf$v.folded" '\t_start;([^;]*;)*py::outer:')
	check "python $v -X perf: >=95% of samples unwound from a trampoline to _start ($whole of $all)" \
		share "$whole" "$all" 0.95
	check "python $v -X perf: the trampolines' arenas counted" \
		grep -Eq 'perf trampolines: [1-9][0-9]* arenas walked' "$T/perf$v.err"
	# The trampolines are native frames: walked with --no-python too.
	PYOPTS="-X perf" run "perfnopy$v" "$dir/bin/python$v" split 2 --no-python
	all=$(sum_where "$T/perfnopy$v.folded" .)
	whole=$(sum_where "$T/perfnopy$v.folded" '\t_start;([^;]*;)*py::outer:')
	check "python $v -X perf --no-python: >=95% of samples unwound from a trampoline to _start ($whole of $all)" \
		share "$whole" "$all" 0.95
done

if [ -x /usr/bin/python3.11 ]; then
	run debian /usr/bin/python3.11 split 3
	split_checks "Debian python3.11 (in the executable, .dynsym only)" debian
	run debreuse /usr/bin/python3.11 reuse 3
	reuse_checks "Debian python3.11" debreuse
else
	skip_each "/usr/bin/python3.11 is not installed" "Debian python3.11" \
		"outer() on >=95%" "hot's share" "hot's frames carry pysplit.py" "exec'd code"
fi

# The rest runs on the newest pyenv version installed.
dir=$(ls -d "$PYENV"/3.1[0-3].* 2>/dev/null | sort -V | tail -n1)
if [ -z "$dir" ]; then
	skip_each "no CPython 3.10-3.13 under $PYENV" "python 3.1x" "threads: thread_alpha" \
		"threads: thread_beta" "threads: thread_gamma" "in a mount namespace: outer() on >=95%" \
		"in a mount namespace: hot's share" "in a mount namespace: hot's frames carry pysplit.py" \
		"zlib" "--no-python" "-c, 300 ms"
	skip_each "no CPython 3.10-3.13 under $PYENV" "python" "3.7 (no layout)" \
		"free-threaded 3.13t by its name" "free-threaded 3.13t by its symbol" "3.12 claiming 3.11"
	exit 0
fi
v=$(basename "$dir" | cut -d. -f1,2)
PY=$dir/bin/python$v

# Threads: each thread's samples show its own function.
run threads "$PY" threads 3
for fn in thread_alpha thread_beta thread_gamma; do
	tid=$(awk -v f="$fn" '$1 == "tid" && $3 == f { print $2 }' "$T/threads.out")
	all=$(sum_where "$T/threads.folded" "tid:\\[$tid\\]")
	own=$(sum_where "$T/threads.folded" "tid:\\[$tid\\].*;$fn(;|\$)")
	check "python $v threads: >=90% of thread ${tid:-?}'s samples show its $fn ($own of $all)" \
		awk -v m="$own" -v n="$all" 'BEGIN { exit !(n >= 20 && m >= 0.9 * n) }'
done

# Another mount namespace: the interpreter, its libpython (copies: files of
# their own) and the program in a tmpfs mounted only there, the standard
# library bound under it.  None of it is on the host's paths: what is read
# is read through the process's root.
NS=$T/ns HOSTWORK=$WORK
mkdir -p "$NS"
cat >"$T/nspy" <<EOF
#!/bin/sh
exec unshare -m --propagation private sh -c '
	mount -t tmpfs cprof-test "$NS" &&
	mkdir -p "$NS/py/bin" "$NS/py/lib/python$v" &&
	cp "$PY" "$NS/py/bin/" && cp "$dir/lib/libpython$v.so.1.0" "$NS/py/lib/" &&
	mount --bind "$dir/lib/python$v" "$NS/py/lib/python$v" &&
	cp "$HOSTWORK" "$NS/" &&
	LD_LIBRARY_PATH="$NS/py/lib" exec "$NS/py/bin/python$v" "\$@"' nspy "\$@"
EOF
chmod +x "$T/nspy"
WORK=$NS/pysplit.py
run mntns "$T/nspy" split 3
if [ -s "$T/mntns.out" ] && [ ! -e "$NS/py/lib/libpython$v.so.1.0" ]; then
	split_checks "python $v in a mount namespace of its own" mntns
else
	for n in "outer() on >=95%" "hot's share" "hot's frames carry pysplit.py"; do
		fail "python $v in a mount namespace of its own: $n" "not started, or its files on the host"
	done
fi
WORK=$HOSTWORK

# A C extension: its native frames below the Python function calling it.
run zlib "$PY" zlib 3
z=$(sum_where "$T/zlib.folded" ';deflate')
zc=$(sum_where "$T/zlib.folded" ';compress_loop;([^;]*;)*deflate')
check "python $v zlib: >=95% of samples in deflate show compress_loop() above it ($zc of $z)" \
	share "$zc" "$z" 0.95

# --no-python: today's native stacks, no Python frame.
run nopy "$PY" split 2 --no-python
n=$(sum_where "$T/nopy.folded" .)
o=$(sum_where "$T/nopy.folded" ';(outer|hot|cold)(;|$)')
e=$(sum_where "$T/nopy.folded" ';_PyEval_EvalFrameDefault')
check "python $v --no-python: native frames only ($o of $n Python, $e in the loop)" \
	awk -v o="$o" -v n="$n" -v e="$e" 'BEGIN { exit !(n >= 50 && o == 0 && e >= 0.9 * n) }'

# A 300 ms `python -c` run: found and read from its first samples.  The
# profiler runs 20 s; a run starts every ~0.6 s from its 3rd second on (it
# may take seconds to load on a busy host), and each run sampled whole
# (>= 100 samples; at least three) is checked: of its samples in the -c
# code (PyRun_SimpleStringFlags), >=95% show outer() (start-up and exit
# run no code of the program's).
SHORT='import time
def outer():
    t = time.process_time() + 0.3
    while time.process_time() < t:
        pass
outer()'
$CPROF --comm "python$v" -F 499 --duration 20 --output-dir "$T/short" 2>"$T/short.err" &
CP=$!
sleep 3
i=0
while [ $i -lt 22 ] && kill -0 $CP 2>/dev/null; do
	"$PY" -c "$SHORT"
	sleep 0.3
	i=$((i + 1))
done
wait $CP
whole=0 worst=
for f in "$T/short"/*.pb.gz; do
	[ -e "$f" ] || continue
	folded "$f" >"$f.folded"
	c=$(sum_where "$f.folded" ';_?PyRun_SimpleStringFlags(WithName)?;')
	o=$(sum_where "$f.folded" ';_?PyRun_SimpleStringFlags(WithName)?;.*;outer(;|$)')
	a=$(sum_where "$f.folded" .)
	[ "$a" -ge 100 ] || continue
	whole=$((whole + 1))
	# the run with the smallest share is the one to show
	if [ -z "$worst" ] || [ $((o * 1000 / (c ? c : 1))) -lt $((${worst%% *} * 1000 / (${worst##* } ? ${worst##* } : 1))) ]; then
		worst="$o $c" worstf=$f
	fi
done
# what the worst run's -c code showed instead, when it is short of the bar;
# a run none of whose stacks reach the -c code: its stacks and mappings
if [ -n "$worst" ] && [ "${worst##* }" -eq 0 ]; then
	echo "# $(basename "$worstf"): no sample under PyRun_SimpleStringFlags; its top stacks, mappings:"
	sort -t "	" -k1,1 -rn "$worstf.folded" | head -n5 | cut -c1-400 | sed 's/^/#   /'
	go tool pprof -raw "$worstf" 2>/dev/null | sed -n '/^Mappings/,$p' | head -n 12 | sed 's/^/#   /'
	grep -v '^cprof-bpf: *[0-9.]*%' "$T/short.err" | tail -n 5 | sed 's/^/#   agent: /'
elif [ -n "$worst" ] && [ $((${worst%% *} * 100)) -lt $((${worst##* } * 95)) ]; then
	grep -E ';_?PyRun_SimpleStringFlags(WithName)?;' "$worstf.folded" | grep -Ev ';outer(;|$)' |
		sort -rn | head -n3 | sed 's/^/# not outer: /'
fi
check "python $v -c, 300 ms: in each of $whole runs sampled whole (>= 3), >=95% of the samples in the -c code show outer() (worst ${worst%% *} of ${worst##* })" \
	awk -v r="$whole" -v m="${worst%% *}" -v n="${worst##* }" 'BEGIN { exit !(r >= 3 && n >= 20 && m >= 0.95 * n) }'

# An unknown version (3.7 has no layout): native frames, reported once.
old=$(ls -d "$PYENV"/3.7.* 2>/dev/null | sort -V | tail -n1)
if [ -n "$old" ]; then
	run old "$old/bin/python3.7" split 2
	n=$(sum_where "$T/old.folded" .)
	o=$(sum_where "$T/old.folded" ';(outer|hot|cold)(;|$)')
	check "python 3.7 (no layout): native frames only, unknown version reported ($o of $n)" \
		sh -c "[ $n -ge 50 ] && [ $o -eq 0 ] && grep -q 'unknown CPython (3.7 first)' '$T/old.err'"
else
	skip "python 3.7 (no layout)" "CPython 3.7 is not installed under $PYENV"
fi

# A free-threaded build (3.13t; none is installed here, none can be
# fetched) has layouts of its own: known by its file name (the "t"), or by
# the symbol only such a build exports, it is reported and left to native
# frames, never read with 3.13's offsets.  Stood for by pyenv's 3.13: its
# libpython preloaded as libpython3.13t.so.1.0, then under its own name
# with a dynamic symbol renamed to _Py_MergeZeroLocalRefcount.
lib=$(ls "$PYENV"/3.13.*/lib/libpython3.13.so.1.0 2>/dev/null | sort -V | tail -n1)
if [ -n "$lib" ]; then
	py13=$(dirname "$(dirname "$lib")")/bin/python3.13
	mkdir -p "$T/ft" "$T/ftsym"
	cp "$lib" "$T/ft/libpython3.13t.so.1.0"
	python3 - "$lib" "$T/ftsym/libpython3.13.so.1.0" <<'PY'
import sys
b = open(sys.argv[1], "rb").read()
old, new = b"\0PyMarshal_ReadLongFromFile\0", b"\0_Py_MergeZeroLocalRefcount\0"
assert len(old) == len(new) and old in b
open(sys.argv[2], "wb").write(b.replace(old, new))
PY
	# preloaded into the interpreter alone (ASan's cprof-bpf must load first)
	printf '#!/bin/sh\nLD_PRELOAD=%s exec %s "$@"\n' "$T/ft/libpython3.13t.so.1.0" "$py13" >"$T/ftpy"
	chmod +x "$T/ftpy"
	run ftname "$T/ftpy" split 2 -v
	LD_LIBRARY_PATH=$T/ftsym run ftsym "$py13" split 2 -v
	native_only "free-threaded 3.13t by its name: reported" ftname 'unknown CPython \(3\.13t first\)'
	native_only "free-threaded 3.13t by its symbol: reported" ftsym 'unknown CPython \(3\.13t first\)'
else
	skip_each "CPython 3.13 is not installed under $PYENV" "free-threaded 3.13t" \
		"by its name" "by its symbol"
fi

# Memory that does not match the layout: pyenv's 3.12 with its Py_Version
# patched to say 3.11 (a copy of libpython, found first by the loader)
# is read with 3.11's offsets.  Its samples must keep their native frames,
# none named from what was misread, and the summary count why.
lib=$(ls "$PYENV"/3.12.*/lib/libpython3.12.so.1.0 2>/dev/null | sort -V | tail -n1)
if [ -n "$lib" ]; then
	mkdir -p "$T/lie"
	cp "$lib" "$T/lie/"
	python3 - "$T/lie/libpython3.12.so.1.0" <<'PY'
import struct, subprocess, sys
f = sys.argv[1]
syms = subprocess.run(["readelf", "-Ws", "--dyn-syms", f], capture_output=True, text=True).stdout
addr = next(int(l.split()[1], 16) for l in syms.splitlines() if l.split()[-1:] == ["Py_Version"])
for l in subprocess.run(["readelf", "-lW", f], capture_output=True, text=True).stdout.splitlines():
    w = l.split()
    if w[:1] == ["LOAD"]:
        off, va, filesz = int(w[1], 16), int(w[2], 16), int(w[4], 16)
        if va <= addr < va + filesz:
            with open(f, "r+b") as o:
                o.seek(off + addr - va)
                o.write(struct.pack("<Q", 0x030b07f0))
PY
	LD_LIBRARY_PATH=$T/lie run lie "$(dirname "$(dirname "$lib")")/bin/python3.12" split 2 -v
	native_only "3.12 claiming 3.11: no name misread, the reason counted" lie \
		'python: 1 processes, 0 of their [0-9]+ samples.*([1-9][0-9]* no thread state|[1-9][0-9]* read failed|[1-9][0-9]* layout mismatch)'
else
	skip "3.12 claiming 3.11" "CPython 3.12 is not installed under $PYENV"
fi
