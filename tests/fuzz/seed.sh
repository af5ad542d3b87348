#!/bin/sh
# seed.sh NAME DIR SEEDGEN: fills the corpus directory DIR of fuzz target
# NAME with starting inputs taken from this machine's own files, so the
# fuzzer begins from real ELF objects, real maps and a real kallsyms rather
# than from nothing.  The committed seeds (tests/fuzz/seeds/NAME) and
# regression inputs are passed to the fuzzer separately by fuzz.sh.
#
# Everything here is generated at fuzz time into the build tree: none of
# it is committed.  Deterministic given the machine (sorted file lists).
set -u
name=$1 dir=$2 seedgen=$3
mkdir -p "$dir"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
BUILD=${BUILD:-build}

# Small ELF objects of the machine: at most $1 of them, under 256 KiB each.
small_elfs() {
	find /usr/bin /usr/sbin /usr/lib/x86_64-linux-gnu "$BUILD/workloads" -maxdepth 1 \
		-type f -size -256k 2>/dev/null | sort | while read -r f; do
		[ "$(head -c 4 "$f" 2>/dev/null | od -An -c | tr -d ' ')" = '177ELF' ] && echo "$f"
	done | awk -v n="$1" 'NR % 7 == 1 && c < n { print; c++ }'
}

# Big, much-used libraries: only their heads fit a fuzz input.
big_elfs() {
	for f in /usr/lib/x86_64-linux-gnu/libc.so.6 /usr/lib/x86_64-linux-gnu/libstdc++.so.6 \
		/usr/lib/x86_64-linux-gnu/libelf.so.1 /usr/lib/x86_64-linux-gnu/libz.so.1 \
		/usr/lib/x86_64-linux-gnu/libbpf.so.1 /usr/lib/x86_64-linux-gnu/libm.so.6; do
		[ -r "$f" ] && readlink -f "$f"
	done
}

# Objects built here with the variants the parsers care about: .debug_frame
# (no unwind tables), compressed debug sections, static, stripped, no PIE.
built_elfs() {
	cat >"$tmp/t.c" <<'C'
#include <stdio.h>
static volatile int sink;
__attribute__((noinline)) static void leaf(int i) { sink += i; }
__attribute__((noinline)) void mid(int i) { for (int j = 0; j < i; j++) leaf(j); }
int main(int argc, char **argv) { (void)argv; mid(argc); printf("%d\n", sink); return 0; }
C
	cc=${CC:-cc}
	$cc -O1 -g -o "$tmp/plain" "$tmp/t.c" 2>/dev/null && echo "$tmp/plain"
	$cc -O1 -g -fno-asynchronous-unwind-tables -fno-unwind-tables -o "$tmp/dbgframe" "$tmp/t.c" 2>/dev/null &&
		echo "$tmp/dbgframe"
	$cc -O1 -g -gz -fno-asynchronous-unwind-tables -fno-unwind-tables -o "$tmp/dbgz" "$tmp/t.c" 2>/dev/null &&
		echo "$tmp/dbgz"
	$cc -O2 -fomit-frame-pointer -no-pie -fno-pie -o "$tmp/nopie" "$tmp/t.c" 2>/dev/null && echo "$tmp/nopie"
	$cc -O2 -s -rdynamic -o "$tmp/stripped" "$tmp/t.c" 2>/dev/null && echo "$tmp/stripped"
	$cc -O2 -shared -fPIC -o "$tmp/lib.so" "$tmp/t.c" 2>/dev/null && echo "$tmp/lib.so"
	$cc -O2 -static -o "$tmp/static" "$tmp/t.c" 2>/dev/null && echo "$tmp/static"
	true
}

n=0
case "$name" in
elf)
	for f in $(small_elfs 60) $(built_elfs); do
		[ "$(wc -c <"$f")" -le 262144 ] && cp "$f" "$dir/elf-$n" && n=$((n + 1))
	done
	for f in $(big_elfs); do
		head -c 65536 "$f" >"$dir/head-$n" && n=$((n + 1))
	done
	;;
symbolize)
	for f in $(small_elfs 60) $(big_elfs) $(built_elfs); do
		"$seedgen" symbolize "$f" "$dir/sym-$n" 65536 && n=$((n + 1))
	done
	;;
ehframe | elfsyms)
	for f in $(small_elfs 60) $(big_elfs) $(built_elfs); do
		"$seedgen" "$name" "$f" "$dir/$name-$n" 65536 && n=$((n + 1))
		if [ "$name" = ehframe ]; then
			"$seedgen" debugframe "$f" "$dir/dbg-$n" 65536 && n=$((n + 1))
			"$seedgen" ehframe "$f" "$dir/small-$n" 2048 && n=$((n + 1))
		fi
	done
	;;
procmaps)
	# Kernel threads have empty maps: keep looking until 60 real ones.
	for p in $(ls -d /proc/[0-9]* 2>/dev/null | sort -t/ -k3 -n); do
		[ $n -lt 60 ] || break
		head -c 65536 "$p/maps" >"$dir/maps-$n" 2>/dev/null && [ -s "$dir/maps-$n" ] && n=$((n + 1))
	done
	rm -f "$dir/maps-$n"
	;;
kallsyms)
	# Slices from the head, the middle and the modules at the end.
	if [ -r /proc/kallsyms ]; then
		cp /proc/kallsyms "$tmp/k"
		total=$(wc -l <"$tmp/k")
		for start in 1 100 5000 20000 50000 $((total / 2)) $((total - 2000)) $((total - 300)); do
			[ "$start" -ge 1 ] || continue
			sed -n "${start},$((start + 150))p" "$tmp/k" >"$dir/slice-$n" && n=$((n + 1))
		done
	fi
	;;
pprof)
	for i in 1 2 3 4 5 6 7 8; do
		head -c $((i * 256)) /dev/urandom >"$dir/random-$i" && n=$((n + 1))
	done
	;;
perfmap)
	for f in $(ls /tmp/perf-*.map 2>/dev/null | head -n 20); do
		head -c 65536 "$f" >"$dir/map-$n" && n=$((n + 1))
	done
	;;
pylines)
	# Line tables of real code objects, from every CPython installed.
	for py in $(ls /root/.pyenv/versions/3.*/bin/python3.[0-9]* 2>/dev/null | grep -E 'python3\.[0-9]+$'); do
		"$py" - "$dir/py-$(basename "$py")" <<'PY' 2>/dev/null && n=$((n + 1))
import struct, sys
v = sys.version_info
def walk(co):
    yield co
    for c in co.co_consts:
        if hasattr(c, "co_code"):
            yield from walk(c)
import os
for i, co in enumerate(walk(compile(open(os.__file__).read(), "os.py", "exec"))):
    if i >= 40:
        break
    tab = co.co_linetable if v >= (3, 10) else co.co_lnotab
    sel = {8: 0, 9: 1, 10: 2, 11: 3, 12: 4, 13: 5}.get(v.minor, 5)
    with open("%s-%d" % (sys.argv[1], i), "wb") as f:
        f.write(bytes([sel]) + struct.pack("<iH", co.co_firstlineno, min(len(co.co_code) // 2, 65535)) + tab)
PY
	done
	n=$(ls "$dir" | wc -l)
	;;
cgroup)
	for p in $(ls -d /proc/[0-9]* 2>/dev/null | sort -t/ -k3 -n); do
		[ $n -lt 60 ] || break
		cat "$p/cgroup" >"$dir/cgroup-$n" 2>/dev/null && [ -s "$dir/cgroup-$n" ] && n=$((n + 1))
	done
	rm -f "$dir/cgroup-$n"
	;;
dwarfinfo)
	# Objects with DWARF: built here (gcc and clang, DWARF 4 and 5, C and
	# C++), this tree's workloads, and the smallest of the host's debug files.
	cat >"$tmp/x.cc" <<'CC'
template <typename T> struct Box { T v; __attribute__((noinline)) T get() const { return v * 2; } };
static inline __attribute__((always_inline)) int twice(int x) { return x + x; }
int main(int argc, char **) { Box<long> b{argc}; return (int)b.get() + twice(argc); }
CC
	for f in $(built_elfs); do
		"$seedgen" dwarf "$f" "$dir/dwarf-$n" 65536 && n=$((n + 1))
	done
	for v in "gcc -gdwarf-4 -O1 t.c" "clang -g -O2 t.c" "clang -gdwarf-4 -O2 t.c" "g++ -g -O2 x.cc"; do
		# shellcheck disable=SC2086
		(cd "$tmp" && $v -o "$tmp/v$n") 2>/dev/null &&
			"$seedgen" dwarf "$tmp/v$n" "$dir/dwarf-$n" 65536 && n=$((n + 1))
	done
	for f in $(small_elfs 60) $(ls -S /usr/lib/debug/.build-id/*/*.debug 2>/dev/null | tail -n 20); do
		"$seedgen" dwarf "$f" "$dir/dwarf-$n" 65536 && n=$((n + 1))
	done
	;;
demangle)
	# Mangled names of this machine's C++ (and any Rust) objects: one per
	# seed, the first byte choosing the small buffer's size.
	for f in /usr/lib/x86_64-linux-gnu/libstdc++.so.6 $(small_elfs 60) $(big_elfs); do
		nm -D --defined-only "$f" 2>/dev/null
		nm --defined-only "$f" 2>/dev/null
	done | awk '$3 ~ /^_[ZR]/ { sub(/@.*/, "", $3); print $3 }' | sort -u | awk 'NR % 13 == 1' | head -n 300 >"$tmp/names"
	while read -r sym; do
		printf '%s%s' "$(printf "\\$(printf %o $((n % 200 + 20)))")" "$sym" >"$dir/sym-$n"
		n=$((n + 1))
	done <"$tmp/names"
	;;
esac
# Identical inputs waste the fuzzer's first pass.
echo "seed.sh: $n seeds for $name in $dir" >&2
