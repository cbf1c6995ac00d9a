#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# check-man.sh [MAN_DIR [MAP...]] - checks lpc's man pages (the `docs.man`
# test).
#   1. every page under MAN_DIR (default man/) renders with
#      `man --warnings -l -Tutf8 -Z` without a single warning (a .so link page
#      is rendered through its target, from MAN_DIR);
#   2. every global symbol of each version script MAP has a man3 page, its
#      own or a .so link to the page that covers it.  Default: every *.map
#      under src/, i.e. every library the build can install (liblpc's
#      src/lpc.map, liblpc_sqlite's src/sqlite/lpc_sqlite.map, liblpc_rbd's
#      src/rbd/lpc_rbd.map; a new library's map is checked as soon as it is
#      added); every page under MAN_DIR is installed (cmake/LpcPackaging.cmake);
#   3. every .so link points at a page that exists;
#   4. every man3 page of its own (not a .so link) has the sections NAME,
#      SYNOPSIS, DESCRIPTION, RETURN VALUE, ERRORS, CONTEXT and SEE ALSO.
# Exits 0 pass, 1 fail, 77 skip (man or groff is not installed).
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
mandir=${1:-$root/man}
shift $(($# > 0 ? 1 : 0))
maps=("$@")
if ((${#maps[@]} == 0)); then
	mapfile -t maps < <(find "$root/src" -name '*.map' -type f | sort)
fi
fail=0 pages=0

if ! command -v man >/dev/null 2>&1 || ! command -v groff >/dev/null 2>&1; then
	echo "SKIP: man or groff not installed (Debian: man-db groff-base)"
	exit 77
fi
cd "$mandir" || exit 1

for page in man1/*.1 man3/*.3 man7/*.7; do
	[[ -e $page ]] || continue
	pages=$((pages + 1))
	if [[ $(head -c 4 "$page") == ".so " ]]; then
		target=$(sed -n '1s/^\.so //p' "$page")
		if [[ ! -f $target ]]; then
			echo "FAIL $page: .so target $target does not exist"
			fail=1
			continue
		fi
	fi
	err=$(MANWIDTH=80 LC_ALL=C.UTF-8 man --warnings -l -Tutf8 -Z "$page" 2>&1 >/dev/null)
	if [[ -n $err ]]; then
		echo "FAIL $page: warnings:"
		echo "$err" | sed 's/^/  /'
		fail=1
	fi
done

# The sections of every man3 page of its own (one awk for them all).
missing=$(awk '
	function out(i, n, want) {
		if (so)
			return
		n = split("NAME|SYNOPSIS|DESCRIPTION|RETURN VALUE|ERRORS|CONTEXT|SEE ALSO", want, "|")
		for (i = 1; i <= n; i++)
			if (!(want[i] in have))
				print "FAIL " f ": no " want[i] " section"
	}
	FNR == 1 { if (f != "") out(); f = FILENAME; so = ($0 ~ /^\.so /); split("", have) }
	/^\.SH / { s = $0; sub(/^\.SH +/, "", s); gsub(/"/, "", s); have[s] = 1 }
	END { if (f != "") out() }' man3/*.3)
if [[ -n $missing ]]; then
	echo "$missing"
	fail=1
fi

# Globals of a map: names followed by ';' outside each node's "local:" part
# (comments, which may span lines, removed first).
map_globals() {
	awk '
	{ line = line $0 "\n" }
	END {
		while ((i = index(line, "/*")) > 0) {
			rest = substr(line, i + 2)
			j = index(rest, "*/")
			line = substr(line, 1, i - 1) (j ? substr(rest, j + 2) : "")
		}
		n = split(line, l, "\n")
		for (k = 1; k <= n; k++) {
			s = l[k]
			if (s ~ /^[[:space:]]*local:/) { inlocal = 1; continue }
			if (s ~ /^[[:space:]]*global:/) { inlocal = 0; continue }
			if (s ~ /^}/ || s ~ /^[A-Z_0-9.]+ *\{/) { inlocal = 0; continue }
			if (!inlocal && s ~ /^[[:space:]]*[A-Za-z_][A-Za-z0-9_]*;/) {
				gsub(/[;[:space:]]/, "", s); print s
			}
		}
	}' "$1"
}

nsyms=0 nmaps=0
for map in "${maps[@]}"; do
	nmaps=$((nmaps + 1))
	n=0
	for s in $(map_globals "$map"); do
		n=$((n + 1))
		if [[ ! -f man3/$s.3 ]]; then
			echo "FAIL $s: exported in ${map#"$root"/} but has no man3/$s.3"
			fail=1
		fi
	done
	if ((n == 0)); then
		echo "FAIL ${map#"$root"/}: no global symbol found"
		fail=1
	fi
	nsyms=$((nsyms + n))
done
if ((pages == 0 || nsyms == 0)); then
	echo "FAIL: found $pages pages and $nsyms symbols"
	fail=1
fi
echo "man: $pages pages, $nsyms exported symbols of $nmaps version scripts:" \
	"$([[ $fail == 0 ]] && echo ok || echo FAILED)"
exit $fail
