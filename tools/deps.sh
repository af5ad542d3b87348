#!/bin/sh
# Installs the Debian packages cprof-bpf needs, only those missing, so that
# `sudo make run` / `sudo make test` work on a fresh Debian 12 machine.
#
#   tools/deps.sh [GROUP]...   GROUP: build test bench package image
#
# Without a group: build, test and bench (what `make deps` installs).  The
# packaging tests install `package` and `image` themselves.  CPROF_DEPS=build
# (no group given) is the same as `tools/deps.sh build`.
set -e

# The -dev packages also hold the static archives `make STATIC=1` links
# (libbpf.a, libdw.a, libelf.a, libz.a, liblzma.a, libbz2.a, libiberty.a).
build_pkgs="make gcc clang llvm libbpf-dev bpftool libelf-dev libdw-dev libiberty-dev zlib1g-dev liblzma-dev libbz2-dev pkg-config"
test_pkgs="golang-go openjdk-17-jdk-headless nodejs golang-github-google-pprof-dev protobuf-compiler binutils dwz g++ procps util-linux python3 libclang-rt-14-dev valgrind"
bench_pkgs="bpftrace linux-perf time"
# make deb, and the man page's rendering check
package_pkgs="dpkg-dev debhelper lintian man-db"
# make image and its test: runc, as crun cannot run where cgroups are hybrid
image_pkgs="podman runc"

groups="$*"
if [ -z "$groups" ]; then
	if [ "${CPROF_DEPS:-}" = build ]; then groups=build; else groups="build test bench"; fi
fi

want=""
for g in $groups; do
	case "$g" in
	build) want="$want $build_pkgs" ;;
	test) want="$want $test_pkgs" ;;
	bench) want="$want $bench_pkgs" ;;
	package) want="$want $package_pkgs" ;;
	image) want="$want $image_pkgs" ;;
	*) echo "deps: unknown group '$g' (build, test, bench, package, image)" >&2; exit 2 ;;
	esac
done

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
# Another apt or dpkg may hold the lock for a while: wait for it.
DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
	-o DPkg::Lock::Timeout=600 $missing
