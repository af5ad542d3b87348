#!/bin/sh
# The loader's layout, as user/README.md states it: folders by job, each
# with a README; includes between folders that point one way only (a
# folder includes its own and lower layers, in the order of user/README.md's
# table); proto/ on util/ alone; libelf read by the ELF layer and the DWARF
# reader's image only; few files loose in user/; no patch leftovers.
cd "$(dirname "$0")/../.." || exit 1
echo "1..8"

loose=$(ls user/*.c user/*.h 2>/dev/null | wc -l)
if [ "$loose" -le 3 ]; then
	echo "ok - layout: $loose source files loose in user/ (at most 3)"
else
	echo "not ok - layout: $loose source files loose in user/ (at most 3): $(ls user/*.c user/*.h | tr '\n' ' ')"
fi

missing=
for d in user/*/; do
	[ -f "$d/README.md" ] || missing="$missing ${d%/}"
done
if [ -z "$missing" ]; then
	echo "ok - layout: every folder of user/ has a README.md"
else
	echo "not ok - layout: folders without a README.md:$missing"
fi

# The layers, lowest first, from the table's rows "| `name/` | ... |".
order=$(sed -n 's/^| `\([a-z_]*\)\/` |.*/\1/p' user/README.md)
rank() {
	i=0
	for l in $order; do
		i=$((i + 1))
		[ "$l" = "$1" ] && { echo $i; return; }
	done
	echo 0
}
folders=$(cd user && ls -d */ | tr -d /)
unranked=
for d in $folders; do
	[ "$(rank "$d")" -gt 0 ] || unranked="$unranked $d"
done
if [ -z "$unranked" ]; then
	echo "ok - layout: every folder of user/ has its layer in user/README.md ($(echo $order | tr ' ' '<'))"
else
	echo "not ok - layout: folders missing from user/README.md's layers:$unranked"
fi

# Every include of a user/ folder's header, as "file folder".
edges=$(mktemp)
trap 'rm -f "$edges"' EXIT
for f in user/*/*.[ch] proto/*.[ch]; do
	sed -n 's/^#include "\([a-z_]*\)\/[^"]*".*/\1/p' "$f" | sed "s|^|$f |"
done >"$edges"
bad=$(while read -r f to; do
	case "$f" in
	proto/*)
		[ "$to" = util ] || echo "$f includes $to/"
		continue ;;
	esac
	from=${f#user/}
	from=${from%%/*}
	[ "$from" = "$to" ] && continue
	rf=$(rank "$from") rt=$(rank "$to")
	if [ "$rt" -eq 0 ] || [ "$rt" -gt "$rf" ]; then
		echo "$f includes $to/"
	fi
done <"$edges")
n=$(wc -l <"$edges")
if [ "$n" -gt 100 ] && [ -z "$bad" ]; then
	echo "ok - layout: $n includes between folders, each of a lower layer (proto/ of util/ only)"
else
	echo "not ok - layout: includes of a higher layer ($n read): $(echo "$bad" | tr '\n' ';')"
fi

# The runtimes' readers (java/, node/) share a layer: each reads a
# process's memory and objects through util/, fs/ and elf/ (and bpf/'s
# cprof.h), and neither includes the other.
peer=$(grep '^user/\(java\|node\)/' "$edges" | while read -r f to; do
	from=${f#user/}
	from=${from%%/*}
	case "$to" in "$from" | util | fs | elf) ;; *) echo "$f includes $to/" ;; esac
done)
if [ -z "$peer" ]; then
	echo "ok - layout: java/ and node/ include util/, fs/, elf/ only (and bpf/'s cprof.h), not each other"
else
	echo "not ok - layout: a runtime's reader includes more than util/, fs/, elf/: $(echo "$peer" | tr '\n' ';')"
fi

# Pairs of folders in a cycle, counted independently of the stated order.
cyc=$(awk '{ f = $1; sub(/^user\//, "", f); sub(/\/.*/, "", f); if (f != $2) print f, $2 }' "$edges" |
	sort -u | tsort 2>&1 >/dev/null)
if [ -z "$cyc" ]; then
	echo "ok - layout: no cycle among folders (tsort)"
else
	echo "not ok - layout: folders include each other: $(echo "$cyc" | tr '\n' ' ')"
fi

# libelf opened (elf_begin, elf_memory) by the ELF layer and by the DWARF
# reader's image only, whose handle on its own copy of a file's DWARF is
# what libdw is given; others get a handle from elfsrc or none.
elf=$(grep -l '\belf_\(begin\|memory\) *(' user/*.c user/*/*.c 2>/dev/null |
	grep -v '^user/elf/\|^user/dwarf/dwarfimage\.c$')
if [ -z "$elf" ]; then
	echo "ok - layout: libelf opened by user/elf/ and the DWARF reader's image (dwarf/dwarfimage.c) only"
else
	echo "not ok - layout: libelf opened outside the ELF layer: $(echo $elf)"
fi

# A patch tool's leftovers (two *.orig copies were committed once).
left=$(find user bpf proto tests tools docs bench -name '*.orig' -o -name '*.rej' -o -name '*~' 2>/dev/null)
if [ -z "$left" ]; then
	echo "ok - layout: no patch leftovers (*.orig, *.rej, *~) in the tree"
else
	echo "not ok - layout: patch leftovers: $(echo $left)"
fi
