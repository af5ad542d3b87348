#!/bin/sh
# End-to-end: cprof-bpf installed the ways its users install it.  `make
# install` (PREFIX, DESTDIR) and `make uninstall`; the man page renders and
# lists every option --help does; `make` links no shared library
# and profiles from a root holding nothing but the binary, /proc and /sys;
# `make deb` builds a package lintian finds no error in, which dpkg installs,
# runs and removes.
. "$(dirname "$0")/lib.sh"

plan 12
require_install_deps "make install: binary, man page, unit under PREFIX in DESTDIR
make uninstall removes them
man -l renders the page
every long option of --help is in the man page
every long option of the man page is in --help
versions agree
make: not a dynamic executable
static binary profiles from an empty root
make deb: lintian finds no error
dpkg -i installs binary, man page, unit
installed cprof-bpf: --version and a 2 s run
dpkg --purge removes it" build package

T=$(mktemp -d)
chmod 755 "$T"
W=""
INSTALLED=""
trap '[ -n "$W" ] && kill $W 2>/dev/null; [ -n "$INSTALLED" ] && dpkg --purge cprof-bpf >/dev/null 2>&1; rm -rf "$T"' EXIT

version=$($CPROF --version | awk '{ print $2 }')

# --- make install / uninstall ------------------------------------------------
D="$T/dest"
make -s install DESTDIR="$D" PREFIX=/opt/cprof >"$T/install.log" 2>&1
rc=$?
(cd "$D" && find . -type f -printf '%m %p\n' | sort) >"$T/tree"
check "make install: binary, man page, unit under PREFIX in DESTDIR ($(tr '\n' ' ' <"$T/tree"))" \
	sh -c "[ $rc -eq 0 ] && [ \"\$(cat '$T/tree')\" = '644 ./opt/cprof/lib/systemd/system/cprof-bpf.service
644 ./opt/cprof/share/man/man1/cprof-bpf.1
755 ./opt/cprof/bin/cprof-bpf' ] &&
	       grep -q '^ExecStart=/opt/cprof/bin/cprof-bpf ' '$D/opt/cprof/lib/systemd/system/cprof-bpf.service' &&
	       [ \"\$('$D/opt/cprof/bin/cprof-bpf' --version)\" = 'cprof-bpf $version' ]"

# The page as installed, rendered by man (groff), with its warnings.
MAN="$D/opt/cprof/share/man/man1/cprof-bpf.1"
MANWIDTH=80 man --warnings -l "$MAN" >"$T/man.txt" 2>"$T/man.err"
rc=$?
missing=""
for s in NAME SYNOPSIS DESCRIPTION OPTIONS FILES "EXIT STATUS" EXAMPLES; do
	grep -q "^$s\$" "$T/man.txt" || missing="$missing '$s'"
done
check "man -l renders the page (exit $rc, warnings: $(head -c 200 "$T/man.err"), sections missing:$missing)" \
	sh -c "[ $rc -eq 0 ] && [ ! -s '$T/man.err' ] && [ -z \"$missing\" ]"

# Long options as --help lists them, and as the tags of the page's OPTIONS
# entries (the line after each .TP) write them in its source, \-\-name: a
# mention in another option's text does not count, and a line break in the
# rendering cannot hide one.
$CPROF --help | grep -o -- '--[a-z][a-z-]*' | sort -u >"$T/help.opts"
awk '/^\.SH / { opts = ($0 == ".SH OPTIONS") } opts && tag { print } { tag = opts && /^\.TP/ }' "$MAN" |
	grep -o '\\-\\-[a-z][a-z\\-]*' | sed 's/\\-/-/g' | sort -u >"$T/man.opts"
check "every long option of --help is in the man page (missing: $(comm -23 "$T/help.opts" "$T/man.opts" | tr '\n' ' '))" \
	sh -c "[ -s '$T/help.opts' ] && [ -z \"\$(comm -23 '$T/help.opts' '$T/man.opts')\" ]"
check "every long option of the man page is in --help (stale: $(comm -13 "$T/help.opts" "$T/man.opts" | tr '\n' ' '))" \
	sh -c "[ -z \"\$(comm -13 '$T/help.opts' '$T/man.opts')\" ]"

man_version=$(sed -n 's/^\.TH [^"]*"cprof-bpf \([^"]*\)".*/\1/p' docs/cprof-bpf.1)
deb_version=$(sed -n '1s/^cprof-bpf (\([^)]*\)).*/\1/p' debian/changelog)
check "versions agree: --version $version, man page $man_version, debian/changelog $deb_version" \
	sh -c "[ -n '$version' ] && [ '$man_version' = '$version' ] && [ '$deb_version' = '$version' ]"

make -s uninstall DESTDIR="$D" PREFIX=/opt/cprof >/dev/null 2>&1
rc=$?
left=$(find "$D" -type f | wc -l)
check "make uninstall removes them (exit $rc, $left files left)" sh -c "[ $rc -eq 0 ] && [ $left -eq 0 ]"

# --- make: a static binary ------------------------------------------------------
# As a user types it (BUILD as the Makefile chooses), then ./cprof-bpf back
# to this run's build.
env -u BUILD make -s >"$T/static.log" 2>&1
rc=$?
cp cprof-bpf "$T/cprof-static" 2>/dev/null
make -s cprof-bpf >/dev/null 2>&1
ldd_out=$(ldd "$T/cprof-static" 2>&1)
size=$(stat -c %s "$T/cprof-static" 2>/dev/null)
echo "# static binary: $size bytes"
check "make: not a dynamic executable (exit $rc, ldd: $ldd_out)" \
	sh -c "[ $rc -eq 0 ] && echo '$ldd_out' | grep -q 'not a dynamic executable' &&
	       [ \"\$('$T/cprof-static' --version)\" = 'cprof-bpf $version' ]"

# A root with the binary, /proc and /sys only: no library, no /etc, no /tmp.
R="$T/root"
mkdir -p "$R/proc" "$R/sys" "$R/out"
cp "$T/cprof-static" "$R/cprof-bpf"
$BUILD/workloads/nofp split 8 >"$T/w.pid" &
W=$!
WP=$(wait_pid_file "$T/w.pid")
unshare -m sh -c "mount -t proc proc '$R/proc' && mount -t sysfs sysfs '$R/sys' &&
	chroot '$R' /cprof-bpf --duration 3 --pid $WP --output-dir /out" 2>"$T/chroot.err"
rc=$?
[ $rc -eq 0 ] || cat "$T/chroot.err"
folded "$R/out/nofp-$WP.pb.gz" >"$T/chroot.folded" 2>/dev/null
set -- $(split_named "$T/chroot.folded")
libs=$(find "$R" -mindepth 1 -maxdepth 1 | sort | sed "s|$R/||" | tr '\n' ' ')
check "static binary profiles from an empty root ($libs; exit $rc, $1 of $2 samples in main;...;work_*)" \
	eval "[ $rc -eq 0 ] && mostly_named $1 $2"

# --- make deb -------------------------------------------------------------------
# make deb fails on a lintian error; -I shows the informational tags too.
make -s deb DEBDIR="$T/deb" LINTIAN_FLAGS=-I >"$T/deb.log" 2>&1
rc=$?
DEB=$(ls "$T"/deb/cprof-bpf_"$version"_*.deb 2>/dev/null | head -n1)
grep -E '^[EWIPX]: ' "$T/deb.log" >"$T/lintian"
tags=$(cut -c1 "$T/lintian" | sort | uniq -c | awk '{ printf "%s%s %s", sep, $1, $2; sep = ", " }')
echo "# lintian: ${tags:-no tags}"
sed 's/^/#   /' "$T/lintian"
[ $rc -eq 0 ] || tail -n 20 "$T/deb.log"
check "make deb: lintian finds no error (exit $rc, $DEB)" \
	sh -c "[ $rc -eq 0 ] && [ -n '$DEB' ] && ! grep -q '^E: ' '$T/lintian'"

if [ -z "$DEB" ]; then
	for n in "dpkg -i installs binary, man page, unit" "installed cprof-bpf: --version and a 2 s run" \
		"dpkg --purge removes it"; do
		fail "$n" "no package was built"
	done
	exit 1
fi
# One test run at a time installs the package on this machine, and one that
# was installed before is left alone.
exec 9>/run/lock/cprof-e2e-dpkg.lock
flock 9
st=$(dpkg-query -W -f='${db:Status-Status}' cprof-bpf 2>/dev/null)
if [ "$st" = installed ]; then
	for n in "dpkg -i installs binary, man page, unit" "installed cprof-bpf: --version and a 2 s run" \
		"dpkg --purge removes it"; do
		skip "$n" "a cprof-bpf package is installed on this machine already: not replacing it"
	done
	exit 0
fi

# dpkg -i, waiting while another dpkg or apt holds the lock.
dpkg_i() {
	_i=0
	while ! dpkg -i "$1" >"$T/dpkg.log" 2>&1; do
		grep -q 'lock' "$T/dpkg.log" && [ $_i -lt 120 ] || return 1
		sleep 5
		_i=$((_i + 1))
	done
}
dpkg_i "$DEB"
rc=$?
INSTALLED=1
[ $rc -eq 0 ] || cat "$T/dpkg.log"
dpkg -L cprof-bpf >"$T/files" 2>/dev/null
check "dpkg -i installs binary, man page, unit (exit $rc)" \
	sh -c "[ $rc -eq 0 ] && grep -qx /usr/bin/cprof-bpf '$T/files' &&
	       grep -qx /usr/share/man/man1/cprof-bpf.1.gz '$T/files' &&
	       grep -qx /lib/systemd/system/cprof-bpf.service '$T/files' &&
	       grep -q '^ExecStart=/usr/bin/cprof-bpf ' /lib/systemd/system/cprof-bpf.service"

v=$(/usr/bin/cprof-bpf --version 2>&1)
kill $W 2>/dev/null
$BUILD/workloads/nofp split 4 >"$T/w2.pid" &
W=$!
WP=$(wait_pid_file "$T/w2.pid")
/usr/bin/cprof-bpf --duration 2 --pid "$WP" --output-dir "$T/debrun" 2>"$T/debrun.err"
rc=$?
folded "$T/debrun/nofp-$WP.pb.gz" >"$T/debrun.folded" 2>/dev/null
set -- $(split_named "$T/debrun.folded")
check "installed cprof-bpf: --version and a 2 s run ($v; exit $rc, $1 of $2 samples in main;...;work_*)" \
	eval "[ '$v' = 'cprof-bpf $version' ] && [ $rc -eq 0 ] && mostly_named $1 $2"

dpkg --purge cprof-bpf >"$T/dpkg.log" 2>&1
rc=$?
st=$(dpkg-query -W -f='${db:Status-Status}' cprof-bpf 2>/dev/null)
check "dpkg --purge removes it (exit $rc, status '${st:-unknown}')" \
	sh -c "[ $rc -eq 0 ] && [ ! -e /usr/bin/cprof-bpf ] && [ ! -e /usr/share/man/man1/cprof-bpf.1.gz ] &&
	       [ ! -e /lib/systemd/system/cprof-bpf.service ]"
[ $rc -eq 0 ] && INSTALLED=""
