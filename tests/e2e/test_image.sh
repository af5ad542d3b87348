#!/bin/sh
# End-to-end: the container image (make image) run with podman the way
# deploy/ runs it.  As the DaemonSet (its capabilities and seccomp setting,
# the host's pid namespace, /sys/kernel/btf) it profiles a host process and
# a process in another container, that one labelled with podman's container
# ID and named from the image's own files; as the sidecar (--cgroup of one
# container) it profiles that container only; and a bad setup (no BTF, no
# capabilities) gets one line saying what is missing.
#
# podman needs runc here (crun fails on hybrid cgroups and cannot raise
# rlimits) and fixed ulimits.  The images are built once, under names of
# this run, and removed at the end with every container.
. "$(dirname "$0")/lib.sh"

plan 8
require_install_deps "image holds the static binary only
manifests name the image
daemonset: host process profiled
daemonset: container process labelled with its container_id
daemonset: container frames named from the image's files
sidecar: only its container profiled
no BTF: one line, exit 1
no capabilities: one line, exit 1" build image

T=$(mktemp -d)
TAG=$$
IMG=localhost/cprof-e2e-$TAG:test
WIMG=localhost/cprof-e2e-work-$TAG:test
CTRS=""
PODMAN="podman --runtime runc"
RUN="$PODMAN run --ulimit nofile=1024:1024 --ulimit nproc=4096:4096 --network none"
cleanup() {
	for c in $CTRS; do podman rm -f -t 0 "$c" >/dev/null 2>&1; done
	podman rmi -f "$IMG" "$WIMG" >/dev/null 2>&1
	[ -n "${HOSTW:-}" ] && kill "$HOSTW" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

# Starts the workload image as container NAME running `nofp split SECS`;
# prints its host pid.
start_work() {
	CTRS="$CTRS $1"
	$RUN -d --name "$1" "$WIMG" split "$2" >/dev/null &&
		podman inspect -f '{{.State.Pid}}' "$1"
}

# The capabilities a manifest adds, comma-separated: an inline list after
# "add:" or the "- NAME" lines under it.
manifest_caps() {
	awk '/^ *add: *\[/ { gsub(/.*\[|\].*|[" ]/, ""); print; exit }
	     /^ *add: *$/ { inadd = 1; next }
	     inadd && /^ *- / { sub(/^ *- */, ""); sub(/ .*/, ""); caps = caps (caps ? "," : "") $0; next }
	     inadd { print caps; exit }' "$1"
}

# --- the images, built once ----------------------------------------------------
make -s image IMAGE="$IMG" >"$T/build.log" 2>&1 || {
	cat "$T/build.log"
	fail_all "make image: podman build failed"
}
mkdir -p "$T/work"
cp "$BUILD/workloads/nofp-static" "$T/work/e2e-spin"
printf 'FROM scratch\nCOPY e2e-spin /e2e-spin\nENTRYPOINT ["/e2e-spin"]\n' >"$T/work/Containerfile"
$PODMAN build -q -t "$WIMG" "$T/work" >/dev/null 2>"$T/wbuild.err" || {
	cat "$T/wbuild.err"
	fail_all "the workload image: podman build failed"
}
size=$(podman image inspect -f '{{.Size}}' "$IMG")
echo "# image $IMG: $size bytes"

CTRS="$CTRS cprof-e2e-list-$TAG"
podman create --name "cprof-e2e-list-$TAG" "$IMG" >/dev/null
podman export "cprof-e2e-list-$TAG" | tar -t | grep -v '/$' | sort >"$T/files"
check "image holds the static binary only ($(tr '\n' ' ' <"$T/files"))" \
	sh -c "[ \"\$(cat '$T/files')\" = usr/bin/cprof-bpf ]"

version=$($BUILD/cprof-bpf --version | awk '{ print $2 }')
check "manifests name the image (localhost/cprof-bpf:$version)" \
	sh -c "grep -q 'image: localhost/cprof-bpf:$version\$' deploy/daemonset.yaml &&
	       grep -q 'image: localhost/cprof-bpf:$version\$' deploy/sidecar.yaml"

# Runs the image as MANIFEST runs it (hostPID, its capabilities and seccomp
# setting), with the podman options OPTS (mounts), the output in DIR, and
# cprof-bpf's ARGS.
BTF="-v /sys/kernel/btf:/sys/kernel/btf:ro"
run_as() {
	_m=$1 _opts=$2 _dir=$3
	shift 3
	_sec="" _pid="" _caps=""
	grep -q 'seccompProfile: { type: Unconfined }' "$_m" && _sec="--security-opt seccomp=unconfined"
	grep -q 'hostPID: true' "$_m" && _pid="--pid=host"
	_caps=$(manifest_caps "$_m")
	mkdir -p "$_dir"
	# shellcheck disable=SC2086
	$RUN --rm $_pid $_sec ${_caps:+--cap-add "$_caps"} $_opts -v "$_dir:/profiles" \
		"$IMG" --output-dir /profiles "$@"
}

# --- DaemonSet: the host and another container ------------------------------------
$BUILD/workloads/nofp split 12 >"$T/host.pid" &
HOSTW=$!
HP=$(wait_pid_file "$T/host.pid")
CP=$(start_work "cprof-e2e-a-$TAG" 12)
CID=$(podman inspect -f '{{.Id}}' "cprof-e2e-a-$TAG")
sleep 0.5
run_as deploy/daemonset.yaml "$BTF" "$T/ds" --duration 4 2>"$T/ds.err"
rc=$?
[ $rc -eq 0 ] || cat "$T/ds.err"

folded "$T/ds/nofp-$HP.pb.gz" >"$T/host.folded" 2>/dev/null
set -- $(split_named "$T/host.folded")
withcid=$(sum_where "$T/host.folded" 'container_id:')
check "daemonset: host process profiled (exit $rc, $1 of $2 samples in main;...;work_*, $withcid with a container_id)" \
	eval "[ $rc -eq 0 ] && mostly_named $1 $2 && [ $withcid -eq 0 ]"

folded "$T/ds/e2e-spin-$CP.pb.gz" >"$T/ctr.folded" 2>/dev/null
all=$(sum_where "$T/ctr.folded" '.')
labelled=$(sum_where "$T/ctr.folded" "container_id:\\[$CID\\]")
check "daemonset: container process labelled with its container_id ($labelled of $all samples)" \
	sh -c "[ $all -ge 30 ] && [ $labelled -eq $all ]"

# /e2e-spin exists in the image only: its names came from the container's root.
set -- $(split_named "$T/ctr.folded")
mapping=$(go tool pprof -raw "$T/ds/e2e-spin-$CP.pb.gz" 2>/dev/null | grep -c ' /e2e-spin ')
check "daemonset: container frames named from the image's files ($1 of $2 samples in main;...;work_*, /e2e-spin mappings: $mapping)" \
	eval "[ ! -e /e2e-spin ] && mostly_named $1 $2 && [ $mapping -eq 1 ]"

# --- sidecar: one container's cgroup ----------------------------------------------
# The host's cgroup2 tree, where --cgroup finds the path (/sys/fs/cgroup on
# unified hosts, /sys/fs/cgroup/unified on hybrid ones).
CG2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
if [ -n "$CG2" ]; then
	BP=$(start_work "cprof-e2e-b-$TAG" 8)
	AP=$(start_work "cprof-e2e-c-$TAG" 8)
	CG=$(sed -n 's/^0:://p' "/proc/$AP/cgroup")
	sleep 0.3
	run_as deploy/sidecar.yaml "$BTF -v $CG2:$CG2:ro" "$T/sc" --duration 3 --cgroup "$CG" \
		2>"$T/sc.err"
	rc=$?
	[ $rc -eq 0 ] || cat "$T/sc.err"
	files=$(ls "$T/sc" 2>/dev/null | tr '\n' ' ')
	folded "$T/sc/e2e-spin-$AP.pb.gz" >"$T/sc.folded" 2>/dev/null
	set -- $(split_named "$T/sc.folded")
	check "sidecar: only its container profiled (exit $rc, files: $files, $1 of $2 samples in main;...;work_*; not $BP, $HP)" \
		eval "[ $rc -eq 0 ] && [ '$files' = 'e2e-spin-$AP.pb.gz ' ] && mostly_named $1 $2"
else
	skip "sidecar: only its container profiled" "no cgroup v2 hierarchy on this host: --cgroup needs one"
fi

# --- bad setups: one line naming what is missing, exit 1, no file ----------------
# No BTF: an empty directory where the host's would be mounted.
run_as deploy/daemonset.yaml "--mount type=tmpfs,destination=/sys/kernel/btf,notmpcopyup" \
	"$T/nobtf" --duration 1 >"$T/nobtf.err" 2>&1
rc=$?
check "no BTF: one line, exit 1 ($(head -c 200 "$T/nobtf.err"))" \
	sh -c "[ $rc -eq 1 ] && [ \$(wc -l <'$T/nobtf.err') -eq 1 ] &&
	       grep -q '/sys/kernel/btf' '$T/nobtf.err' && [ -z \"\$(ls -A '$T/nobtf')\" ]"

# No capabilities: podman's defaults, without the manifest's.
mkdir -p "$T/nocap"
$RUN --rm --pid=host $BTF -v "$T/nocap:/profiles" "$IMG" --output-dir /profiles --duration 1 \
	>"$T/nocap.err" 2>&1
rc=$?
check "no capabilities: one line, exit 1 ($(head -c 200 "$T/nocap.err"))" \
	sh -c "[ $rc -eq 1 ] && [ \$(wc -l <'$T/nocap.err') -eq 1 ] &&
	       grep -q 'CAP_BPF' '$T/nocap.err' && [ -z \"\$(ls -A '$T/nocap')\" ]"
