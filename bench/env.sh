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
