#!/bin/sh
# No function in user/, bpf/ or proto/ is longer than MAX lines (120): a
# longer one is split at its seams.  A function's length is counted from
# the line of its opening brace to that of its closing one, both at the
# start of a line in the tree's style; a function whose head ends in "{"
# is counted from its head.
#
#   sh tests/unit/test_funclen.sh
cd "$(dirname "$0")/../.." || exit 1
MAX=120
echo "1..1"

files=$(find user bpf proto -name '*.[ch]' | sort)
[ -n "$files" ] || { echo "not ok - function length: no sources under user/, bpf/, proto/"; exit 1; }

# One line per function: LENGTH FILE:LINE NAME.
lengths=$(awk '
	FNR == 1 { start = 0 }
	# The name: the identifier before the first "(", or for a macro such
	# as BPF_PROG(name, ...) its first argument.
	function name_of(h,    n, rest) {
		if (!match(h, /[A-Za-z_][A-Za-z0-9_]*[ \t]*\(/))
			return "?"
		n = substr(h, RSTART, RLENGTH - 1)
		sub(/[ \t]+$/, "", n)
		rest = substr(h, RSTART + RLENGTH)
		if (n ~ /^[A-Z0-9_]+$/ && match(rest, /^[ \t]*[A-Za-z_][A-Za-z0-9_]*/)) {
			n = substr(rest, RSTART, RLENGTH)
			sub(/^[ \t]+/, "", n)
		}
		return n
	}
	!start && /^\{/ { start = FNR; name = name_of(head); next }
	!start && /^[A-Za-z_].*\)[ \t]*\{[ \t]*$/ { start = FNR; name = name_of($0); next }
	!start && /^[A-Za-z_]/ { head = $0 }
	start && /^\}/ { print FNR - start, FILENAME ":" start, name; start = 0 }
' $files | sort -rn)

[ -n "$lengths" ] || { echo "not ok - function length: no function found"; exit 1; }
over=$(echo "$lengths" | awk -v max=$MAX '$1 > max')
if [ -n "$over" ]; then
	echo "$over" | while read -r n where name; do
		echo "not ok - function length: $name ($where) is $n lines, over $MAX: split it at its seams"
	done
	exit 1
fi
count=$(echo "$lengths" | wc -l)
set -- $(echo "$lengths" | head -n 1)
echo "ok - function length: $count functions in user/, bpf/, proto/, none over $MAX lines (longest: $3, $1)"
