#!/bin/sh
# End-to-end: symbols people can read.  The real sampler on workloads built
# here, the files read back with `go tool pprof` (-raw, -traces), an
# independent reader: demangled C++ and Rust names with the raw symbol kept,
# source files and lines, inlined calls as extra lines of one location,
# separate debug files, JIT frames from a perf map inside a container-like
# namespace, kernel frames, the mapping flags, and --symbolize=none
# symbolized afterwards by pprof from the binaries.  Needs root.
REAL_HOME=$HOME
. "$(dirname "$0")/lib.sh"

T=$(mktemp -d)
chmod 755 "$T"
BIDDBG=""
cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	[ -n "$BIDDBG" ] && rm -f "$BIDDBG"
	rm -rf "$T"
}
PIDS=""
trap cleanup EXIT

plan 31
require_root "C++ names: the leaf" "C++ names: system_name" "Rust names (legacy mangling)" \
	"Rust names (legacy): system_name" "Rust names (v0 mangling)" "source lines: every location" \
	"inline frames: a location" "inline frames: the inlined leaf" "inline frames: go tool pprof -traces" \
	"source lines: file names are absolute" "mapping flags: -g binary" \
	"mapping flags: [FN] beside an unnamed address" \
	"--dwarf-memory 16M: libc" "--dwarf-memory 16M: no object left without lines" \
	"--dwarf-memory 64M" "--dwarf-memory 4M -v" "--dwarf-memory: the summary counts" \
	"mapping flags: a binary without DWARF" "no DWARF: names from the symbol table" \
	"debuglink" "build-id debug file" "dlopen lines" "static lines" "JIT frames" \
	"kernel frames: syscall entry" "kernel frames: under [kernel.kallsyms]" "--no-kernel" \
	"--symbolize=none: no user function names" "--symbolize=none: mapping keeps file name" \
	"--symbolize=none: kernel frames still named" "--symbolize=none: pprof with PPROF_BINARY_PATH"

W=$BUILD/workloads

# --- helpers -----------------------------------------------------------------

# stacks FILE: one line per sample, "COUNT<TAB>root;...;leaf", every line of
# every location expanded (inlined calls included), function names only.
stacks() {
	go tool pprof -symbolize=none -raw "$1" 2>/dev/null | awk '
	function fname(s) {
		sub(/ [^ ]*:[0-9]+ s=[0-9]+(\(.*\))?$/, "", s)
		return s
	}
	/^Samples:/ { ins = 1; next }
	/^Locations/ { ins = 0; inl = 1; next }
	/^Mappings/ { inl = 0; next }
	ins && /^ *[0-9]+ +[0-9]+: / { n++; cnt[n] = $1; sub(/^ *[0-9]+ +[0-9]+: */, ""); ids[n] = $0; next }
	inl && /^ +[0-9]+: 0x/ {
		id = $1; sub(/:$/, "", id); s = $0
		sub(/^ *[0-9]+: +0x[0-9a-f]+ +/, "", s); sub(/^M=[0-9]+ */, "", s)
		nl[id] = 0
		if (s != "") names[id, ++nl[id]] = fname(s)
		last = id; next
	}
	inl && /^             [^ ]/ && last != "" { s = $0; sub(/^ +/, "", s); names[last, ++nl[last]] = fname(s); next }
	END {
		for (i = 1; i <= n; i++) {
			m = split(ids[i], a, " "); out = ""
			for (j = m; j >= 1; j--)
				for (k = nl[a[j]]; k >= 1; k--)
					out = out (out == "" ? "" : ";") names[a[j], k]
			printf "%s\t%s\n", cnt[i], out
		}
	}'
}

# locations FILE: one line per location, "ADDR<TAB>line 1<TAB>line 2...",
# each line "name file:line s=start[(system name)]" as pprof prints it.
locations() {
	go tool pprof -symbolize=none -raw "$1" 2>/dev/null | awk '
	/^Locations/ { inl = 1; next }
	/^Mappings/ { if (cur != "") print cur; inl = 0; next }
	inl && /^ +[0-9]+: 0x/ {
		if (cur != "") print cur
		s = $0; sub(/^ *[0-9]+: +/, "", s); addr = s; sub(/ .*/, "", addr)
		sub(/^0x[0-9a-f]+ +/, "", s); sub(/^M=[0-9]+ */, "", s)
		cur = addr "\t" s; next
	}
	inl && /^             [^ ]/ { s = $0; sub(/^ +/, "", s); cur = cur "\t" s }'
}

# mapping FILE PATTERN: the Mappings line of pprof -raw matching PATTERN.
mapping() {
	go tool pprof -symbolize=none -raw "$1" 2>/dev/null | sed -n '/^Mappings/,$p' | grep -- "$2" | head -n1
}

# share STACKS PATTERN: percentage (integer) of samples whose stack matches.
share() {
	awk -F '\t' -v pat="$2" '{ t += $1 } $2 ~ pat { s += $1 } END { print t ? int(100 * s / t) : 0 }' "$1"
}

total() {
	awk -F '\t' '{ t += $1 } END { print t + 0 }' "$1"
}

# profile NAME SECS CMD...: runs CMD (which prints its pid), profiles it for
# SECS at 499 Hz into $T/NAME.pb.gz and writes $T/NAME.stacks.
profile() {
	_name=$1 _secs=$2
	shift 2
	"$@" >"$T/$_name.pid" 2>"$T/$_name.werr" &
	_w=$!
	PIDS="$PIDS $_w"
	_pid=$(wait_pid_file "$T/$_name.pid") || { echo "# $_name: no pid"; return 1; }
	sleep 0.3
	$CPROF --pid "$_pid" -F 499 --duration "$_secs" $CPROF_EXTRA --output-dir "$T/$_name.out" \
		2>"$T/$_name.err"
	mv "$T/$_name.out"/*.pb.gz "$T/$_name.pb.gz" 2>/dev/null
	kill "$_w" 2>/dev/null
	wait "$_w" 2>/dev/null
	stacks "$T/$_name.pb.gz" >"$T/$_name.stacks"
	locations "$T/$_name.pb.gz" >"$T/$_name.locs"
	[ -s "$T/$_name.stacks" ]
}

line_of() { grep -n -- "$2" "$1" | head -n1 | cut -d: -f1; }

# --- C++ ---------------------------------------------------------------------
if command -v g++ >/dev/null; then
	g++ -O2 -g -fno-omit-frame-pointer -o "$T/sym_cpp" tests/workloads/sym_cpp.cc
	profile cpp 2 "$T/sym_cpp" 20
	s=$(share "$T/cpp.stacks" ';ns::Type<int>::method\(long\)$')
	check "C++ names: the leaf is ns::Type<int>::method(long), demangled ($s% of samples)" \
		[ "$s" -ge 80 ]
	check "C++ names: system_name keeps the raw symbol _ZN2ns4TypeIiE6methodEl" \
		grep -q 'ns::Type<int>::method(long) .*(_ZN2ns4TypeIiE6methodEl)$' "$T/cpp.locs"
else
	skip "C++ names: the leaf" "g++ not installed"
	skip "C++ names: system_name" "g++ not installed"
fi

# --- Rust ----------------------------------------------------------------------
RUSTC=$(command -v rustc || true)
for h in "$REAL_HOME" "$(getent passwd "$(id -u)" | cut -d: -f6)"; do
	[ -z "$RUSTC" ] && [ -x "$h/.cargo/bin/rustc" ] && RUSTC=$h/.cargo/bin/rustc
done
# rustup's rustc finds its toolchain through the real $HOME.
if [ -n "$RUSTC" ] && HOME=$REAL_HOME "$RUSTC" -O -g -o "$T/sym_rust" tests/workloads/sym_rust.rs 2>"$T/rustc.err" &&
	HOME=$REAL_HOME "$RUSTC" -O -g -C symbol-mangling-version=v0 -o "$T/sym_rust_v0" tests/workloads/sym_rust.rs 2>>"$T/rustc.err"; then
	profile rust 2 "$T/sym_rust" 20
	# At the leaf: crunch, or what std code rustc inlined into it.
	s=$(share "$T/rust.stacks" '(^|;)sym_rust::outer::Thing<T>::crunch(;[^;]*(core|std|<u64>)::[^;]*)*$')
	check "Rust names (legacy mangling): leaf sym_rust::outer::Thing<T>::crunch ($s%)" [ "$s" -ge 80 ]
	check "Rust names (legacy): system_name is the raw _ZN...17h<hash>E symbol" \
		grep -q 'sym_rust::outer::Thing<T>::crunch .*(_ZN8sym_rust5outer.*crunch17h[0-9a-f]*E)$' "$T/rust.locs"
	profile rustv0 2 "$T/sym_rust_v0" 20
	s=$(share "$T/rustv0.stacks" '(^|;)<sym_rust::outer::Thing<u32>>::crunch(;[^;]*(core|std|<u64>)::[^;]*)*$')
	check "Rust names (v0 mangling): leaf <sym_rust::outer::Thing<u32>>::crunch ($s%)" [ "$s" -ge 80 ]
else
	skip_each "no rustc (PATH or ~/.cargo/bin), or it failed: $(head -c 200 "$T/rustc.err" 2>/dev/null)" \
		"Rust names" "legacy mangling" "legacy: system_name" "v0 mangling"
fi

# --- source lines and inlined calls ------------------------------------------------
SRC=tests/workloads/sym_inline.c
L_BODY=$(line_of $SRC 'LINE_INLINED_BODY')
L_CALL=$(line_of $SRC 'LINE_CALL')
L_DECL=$(line_of $SRC 'void inlined_step(')
profile inline 3 "$W/sym_inline" 20
s=$(awk -F '\t' '$2 ~ /^(inlined_step|outer_loop) [^ ]*sym_inline\.c:[1-9][0-9]* s=[1-9]/' "$T/inline.locs" | wc -l)
n=$(awk -F '\t' '$2 ~ /^(inlined_step|outer_loop) /' "$T/inline.locs" | wc -l)
check "source lines: every location in inlined_step/outer_loop has file:line and start line ($s of $n)" \
	eval '[ "$n" -gt 0 ] && [ "$s" -eq "$n" ]'
check "inline frames: a location with inlined_step at sym_inline.c:$L_BODY (s=$L_DECL), then outer_loop at the call, line $L_CALL" \
	grep -q "	inlined_step [^ ]*/sym_inline\.c:$L_BODY s=$L_DECL	outer_loop [^ ]*/sym_inline\.c:$L_CALL s=" "$T/inline.locs"
s=$(share "$T/inline.stacks" 'main;outer_loop;inlined_step$')
check "inline frames: the inlined leaf is under its caller in $s% of samples" [ "$s" -ge 10 ]
check "inline frames: go tool pprof -traces marks it (inline)" \
	sh -c "go tool pprof -traces '$T/inline.pb.gz' 2>/dev/null | grep -q 'inlined_step (inline)'"
check "source lines: file names are absolute (compilation directory joined)" \
	grep -q "	inlined_step /[^ ]*/tests/workloads/sym_inline\.c:" "$T/inline.locs"

# --- mapping flags -------------------------------------------------------------------
m=$(mapping "$T/inline.pb.gz" 'workloads/sym_inline')
check "mapping flags: -g binary has functions [FN] ($m)" sh -c "echo '$m' | grep -q '\[FN\]'"
# A mapping with one address no symbol covers (as a PLT stub is) still
# claims its functions: claiming none, pprof would name every location of
# it again itself (no start lines, relative paths), over ours.  This was
# test_python's rare "python 3.13 -c" failure: a sample in libpython's PLT.
profile unnamed 2 "$W/sym_unnamed" 20
m=$(mapping "$T/unnamed.pb.gz" 'workloads/sym_unnamed')
u=$(awk -F '\t' '$2 == ""' "$T/unnamed.locs" | wc -l)
check "mapping flags: [FN] beside an unnamed address ($u unnamed; $m), our lines kept (start lines, absolute paths)" \
	sh -c "[ $u -ge 1 ] && echo '$m' | grep -q '\[FN\]' &&
		go tool pprof -raw '$T/unnamed.pb.gz' 2>/dev/null |
		grep -q ' named_spin /[^ ]*/sym_unnamed\.c:[1-9][0-9]* s=[1-9]'"
libc_bid=$(readelf -n /lib/x86_64-linux-gnu/libc.so.6 2>/dev/null | awk '/Build ID/ { print $3 }')
if [ -n "$libc_bid" ] && [ -e "/usr/lib/debug/.build-id/$(echo "$libc_bid" | cut -c1-2)/$(echo "$libc_bid" | cut -c3-).debug" ]; then
	# libc6-dbg's libc: 8.2 MiB of DWARF, within the default --dwarf-memory.
	m=$(mapping "$T/inline.pb.gz" 'libc.so')
	check "--dwarf-memory 16M (default): libc with its debug file has [FN][FL][LN][IN] ($m)" \
		sh -c "echo '$m' | grep -q '\[FN\]\[FL\]\[LN\]\[IN\]'"
	check "--dwarf-memory 16M (default): no object left without lines, nothing said of it" \
		sh -c "! grep -q 'without source lines' '$T/inline.err'"
	CPROF_EXTRA="-v --dwarf-memory 64M" profile libc64 2 "$W/sym_inline" 20
	m=$(mapping "$T/libc64.pb.gz" 'libc.so')
	check "--dwarf-memory 64M: libc with its debug file (by build ID) has [FN][FL][LN][IN] ($m)" \
		sh -c "echo '$m' | grep -q '\[FN\]\[FL\]\[LN\]\[IN\]'"
	CPROF_EXTRA="-v --dwarf-memory 4M" profile libc4 2 "$W/sym_inline" 20
	check "--dwarf-memory 4M -v: names each object left without lines, with its DWARF size" \
		grep -q 'libc.so.6: names without source lines: DWARF of 8.[0-9] MB, over the 4.0 MB allowed' \
		"$T/libc4.err"
	check "--dwarf-memory: the summary counts the objects left without lines" \
		grep -q '1 object without source lines: DWARF over --dwarf-memory (4M)' "$T/libc4.err"
else
	skip_each "no libc debug file under /usr/lib/debug (libc6-dbg)" "--dwarf-memory" \
		"16M (default): libc" "16M (default): no object left without lines" "64M" "4M -v" \
		"the summary counts the objects left without lines"
fi
gcc -O1 -fno-omit-frame-pointer -o "$T/sym_nog" $SRC
profile nog 2 "$T/sym_nog" 20
m=$(mapping "$T/nog.pb.gz" 'sym_nog')
check "mapping flags: a binary without DWARF claims functions only ($m)" \
	sh -c "echo '$m' | grep -q '\[FN\]' && ! echo '$m' | grep -q '\[FL\]\|\[LN\]\|\[IN\]'"
check "no DWARF: names from the symbol table, no file or line" \
	sh -c "grep -q '	outer_loop :0 s=0$' '$T/nog.locs' && ! grep -q 'sym_inline.c' '$T/nog.locs'"

# --- separate debug files -------------------------------------------------------------
mkdir -p "$T/dl"
cp "$W/sym_inline" "$T/dl/sym_dl"
objcopy --only-keep-debug "$T/dl/sym_dl" "$T/dl/sym_dl.debug"
objcopy --strip-debug --add-gnu-debuglink="$T/dl/sym_dl.debug" "$T/dl/sym_dl"
if readelf -S "$T/dl/sym_dl" | grep -q debug_info; then
	fail "debuglink" "objcopy --strip-debug left .debug_info"
else
	profile debuglink 2 "$T/dl/sym_dl" 20
	check "debuglink: stripped binary gets lines and inlines from its .gnu_debuglink file" \
		grep -q "	inlined_step [^ ]*/sym_inline\.c:$L_BODY s=$L_DECL	outer_loop " "$T/debuglink.locs"
fi

# A build ID of our own, so the debug file can go where the host keeps them.
gcc -O1 -g -fno-omit-frame-pointer -Wl,--build-id=0x"$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')" \
	-o "$T/sym_bid" $SRC
bid=$(readelf -n "$T/sym_bid" | awk '/Build ID/ { print $3 }')
BIDDBG=/usr/lib/debug/.build-id/$(echo "$bid" | cut -c1-2)/$(echo "$bid" | cut -c3-).debug
mkdir -p "$(dirname "$BIDDBG")"
objcopy --only-keep-debug "$T/sym_bid" "$BIDDBG"
objcopy --strip-debug "$T/sym_bid"
profile bid 2 "$T/sym_bid" 20
check "build-id debug file: /usr/lib/debug/.build-id/xx/rest.debug gives lines and inlines" \
	grep -q "	inlined_step [^ ]*/sym_inline\.c:$L_BODY s=$L_DECL	outer_loop " "$T/bid.locs"
rm -f "$BIDDBG"
BIDDBG=""

# --- dlopen'd library and static binary: names and lines ---------------------------------
profile dlopen 3 "$W/nofp" dlopen 20 "$PWD/$W/libplugin.so"
pbid=$(readelf -n "$W/libplugin.so" | awk '/Build ID/ { print $3 }')
m=$(mapping "$T/dlopen.pb.gz" 'libplugin.so')
check "dlopen lines: plugin_inner has plugin.c:N; its mapping has the build ID and [FN][FL][LN][IN]" \
	sh -c "grep -q '	plugin_inner [^ ]*/plugin\.c:[1-9]' '$T/dlopen.locs' &&
	       echo '$m' | grep -q '$pbid' && echo '$m' | grep -q '\[FN\]\[FL\]\[LN\]\[IN\]'"
profile static 2 "$W/nofp-static" split 20
check "static lines: work_hot in the static binary has nofp.c:N" \
	grep -q '	work_hot [^ ]*/nofp\.c:[1-9]' "$T/static.locs"

# --- JIT ---------------------------------------------------------------------------
if [ "$(uname -m)" != x86_64 ]; then
	skip "JIT frames" "the JIT workload emits x86-64 code"
elif ! command -v unshare >/dev/null; then
	skip "JIT frames" "unshare (util-linux) not installed"
else
	# In its own mount and pid namespaces with a private /tmp, as in a
	# container: the map is /tmp/perf-1.map there and nowhere on the host.
	unshare --mount --pid --fork --propagation private \
		sh -c "mount -t tmpfs tmpfs /tmp && exec $W/sym_jit 20" >"$T/jit.nspid" &
	U=$!
	PIDS="$PIDS $U"
	wait_pid_file "$T/jit.nspid" >/dev/null
	JP=""
	for c in $(pgrep -P "$U"); do JP=$c; done
	if [ -z "$JP" ]; then
		fail "JIT frames" "could not find the namespaced workload"
	else
		$CPROF --pid "$JP" -F 499 --duration 2 --output-dir "$T/jit.out" 2>"$T/jit.err"
		stacks "$T/jit.out"/*.pb.gz >"$T/jit.stacks"
		hot=$(share "$T/jit.stacks" ';cprof_jit_hot$')
		cold=$(share "$T/jit.stacks" ';cprof_jit_cold$')
		check "JIT frames: named from /tmp/perf-<nspid>.map inside the process's namespaces (hot $hot%, cold $cold%, ns pid $(cat "$T/jit.nspid"))" \
			sh -c "[ $((hot + cold)) -ge 85 ] && [ $hot -gt $cold ] && [ $cold -gt 0 ]"
	fi
	kill "$U" 2>/dev/null
fi

# --- kernel ------------------------------------------------------------------------
profile sys 2 "$W/syscalls" 20
# __x64_sys_write is a tail call from x64_sys_call on recent kernels: not
# always a frame of its own.
# (Where in the syscall samples land is the kernel's and the hypervisor's:
# see test_core.sh.  Checked: the frames are named and in order.)
s=$(share "$T/sys.stacks" 'do_writes;entry_SYSCALL[^;]*;do_syscall_64;(x64_sys_call;)?(__x64_sys_write;)?ksys_write;vfs_write')
sany=$(share "$T/sys.stacks" 'vfs_write')
sentry=$(share "$T/sys.stacks" 'do_writes;entry_SYSCALL[^;]*;do_syscall_64')
check "kernel frames: syscall entry above the user frames in >=20% ($sentry%), every vfs_write under ksys_write under it ($s% of $sany%), >=3%" \
	eval '[ "$sentry" -ge 20 ] && [ "$s" -eq "$sany" ] && [ "$s" -ge 3 ]'
m=$(mapping "$T/sys.pb.gz" 'kernel.kallsyms')
check "kernel frames: under [kernel.kallsyms], marked symbolized" sh -c "echo '$m' | grep -q '\[FN\]'"
CPROF_EXTRA=--no-kernel profile sysnk 1 "$W/syscalls" 20
m=$(mapping "$T/sysnk.pb.gz" kernel.kallsyms)
check "--no-kernel: no kernel frames, no kernel mapping" \
	sh -c "! grep -q 'vfs_write\|entry_SYSCALL' '$T/sysnk.stacks' && [ -z '$m' ]"

# --- --symbolize=none, then pprof symbolizes from the binaries -----------------------------
# `go tool pprof` cannot do this part: its object reader (cmd/pprof) has no
# build IDs (BuildID() is always ""), so PPROF_BINARY_PATH never matches a
# mapping that has one, and it ignores the file offset of PIE text mappings.
# The upstream pprof it is cut from can: Debian ships its source
# (golang-github-google-pprof-dev), built here once, offline.
pprof_tool() {
	if command -v pprof >/dev/null; then
		command -v pprof
	elif [ -x "$BUILD/tools/pprof" ]; then
		echo "$BUILD/tools/pprof"
	elif [ -d /usr/share/gocode/src/github.com/google/pprof ] &&
		GO111MODULE=off GOPATH=/usr/share/gocode GOFLAGS= \
			go build -o "$BUILD/tools/pprof" github.com/google/pprof >"$T/pprof-build.log" 2>&1; then
		echo "$BUILD/tools/pprof"
	fi
}
# (--symbolize is an option of this build: no probing, a missing one fails)
{
	cp "$W/sym_inline" "$T/sym_off"
	CPROF_EXTRA=--symbolize=none profile off 2 "$T/sym_off" 20
	check "--symbolize=none: no user function names in the file" \
		sh -c "! go tool pprof -symbolize=none -raw '$T/off.pb.gz' 2>/dev/null | grep -q 'outer_loop\|inlined_step\|__libc_start'"
	m=$(mapping "$T/off.pb.gz" sym_off)
	obid=$(readelf -n "$T/sym_off" | awk '/Build ID/ { print $3 }')
	check "--symbolize=none: mapping keeps file name and build ID, claims no functions" \
		sh -c "echo '$m' | grep -q '$obid' && ! echo '$m' | grep -q '\[FN\]'"
	CPROF_EXTRA=--symbolize=none profile offsys 2 "$W/syscalls" 20
	check "--symbolize=none: kernel frames still named (kallsyms is only here, now)" \
		sh -c "grep -q 'ksys_write' '$T/offsys.stacks' && ! grep -q 'do_writes' '$T/offsys.stacks'"
	PPROF=$(pprof_tool)
	if [ -z "$PPROF" ]; then
		skip "--symbolize=none: pprof symbolizes from PPROF_BINARY_PATH" \
			"no pprof binary and no golang-github-google-pprof-dev to build one"
	else
		# The binary moves away; pprof finds it by build ID in PPROF_BINARY_PATH.
		mkdir -p "$T/bins/$obid"
		mv "$T/sym_off" "$T/bins/$obid/sym_off"
		PPROF_BINARY_PATH=$T/bins "$PPROF" -symbolize=local -traces "$T/off.pb.gz" \
			>"$T/off.traces" 2>"$T/off.pprof.err"
		check "--symbolize=none: pprof with PPROF_BINARY_PATH=<dir>/<build id>/ names the frames, inlines included" \
			sh -c "grep -q '^ *outer_loop$' '$T/off.traces' && grep -q 'inlined_step (inline)' '$T/off.traces' && grep -q '^ *main$' '$T/off.traces'"
	fi
}
exit 0
