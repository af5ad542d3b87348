#!/bin/sh
# Installs the Debian packages cprof-bpf needs to build, test and benchmark,
# only those missing, so that `sudo make run` / `sudo make test` work on a
# fresh Debian 12 machine.  Set CPROF_DEPS=build to skip test/bench tools.
set -e

build_pkgs="make gcc clang llvm libbpf-dev bpftool libelf-dev libdw-dev libiberty-dev zlib1g-dev pkg-config"
test_pkgs="golang-go golang-github-google-pprof-dev protobuf-compiler binutils dwz g++ procps util-linux python3 libclang-rt-14-dev valgrind"
bench_pkgs="bpftrace linux-perf time"

want="$build_pkgs"
[ "${CPROF_DEPS:-all}" = build ] || want="$want $test_pkgs $bench_pkgs"

missing=""
for p in $want; do
	st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$st" = installed ] || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing Debian packages:$missing" >&2
	echo "deps: run as root (sudo make ...) to install them" >&2
	exit 1
fi

# Refresh the package lists when they are empty or older than a day.
lists=/var/lib/apt/lists
if [ -z "$(find "$lists" -maxdepth 1 -name '*Packages*' -mtime -1 2>/dev/null | head -n1)" ]; then
	apt-get update -q
fi
echo "deps: installing$missing" >&2
DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing
