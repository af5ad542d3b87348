# shellcheck shell=bash
# bench/env.sh: what every bench script starts from, sourced (bash) right
# after the script has made sure it runs under bash.  Leaves the shell in
# the tree's root with ROOT, CPROF (BENCH_CPROF: benchmark another build of
# cprof-bpf; default the tree's) and RESULTS (BENCH_RESULTS: write
# elsewhere) set, and log/die, which name the script.
set -u
export LC_ALL=C # "." decimal points, for $EPOCHREALTIME and awk alike
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
ROOT=$(pwd)
CPROF=$(realpath -m "${BENCH_CPROF:-$ROOT/cprof-bpf}")
RESULTS=${BENCH_RESULTS:-$ROOT/bench/RESULTS.md}
BENCH_NAME=${BENCH_NAME:-$(basename "$0" .sh)}

log() { printf '%s: %s\n' "$BENCH_NAME" "$*" >&2; }
die() { log "$*"; exit 1; }

# bench_require FILES... [-- COMMANDS...]: root, bash 5, the built FILES
# and the installed COMMANDS, or a one-line reason and exit 1.
bench_require() {
	local f
	[ "$(id -u)" -eq 0 ] || die "must run as root (sudo make bench)"
	[ -n "${EPOCHREALTIME:-}" ] || die "bash 5 needed (EPOCHREALTIME)"
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		[ -x "$1" ] || die "$1 missing: run 'make cprof-bpf workloads' first"
		shift
	done
	[ $# -gt 0 ] && shift
	for f in "$@"; do
		command -v "$f" >/dev/null || die "$f missing: run 'sudo make deps'"
	done
}
