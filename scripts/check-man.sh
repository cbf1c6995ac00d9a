#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# check-man.sh [MAN_DIR [MAP]] - checks lpc's man pages (the `docs.man` test).
#   1. every page under MAN_DIR (default man/) renders with
#      `man --warnings -l -Tutf8 -Z` without a single warning (a .so link page
#      is rendered through its target, from MAN_DIR);
#   2. every global symbol of the version script MAP (default src/lpc.map)
#      has a man3 page, its own or a .so link to the page that covers it;
#   3. every .so link points at a page that exists.
# Exits 0 pass, 1 fail, 77 skip (man or groff is not installed).
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
mandir=${1:-$root/man}
map=${2:-$root/src/lpc.map}
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

# Globals of the map: names followed by ';' before each node's "local:".
syms=$(sed -e 's|/\*.*\*/||' "$map" | awk '
	/^[[:space:]]*local:/ { inlocal = 1; next }
	/^[[:space:]]*global:/ { inlocal = 0; next }
	/^}/ || /^[A-Z_0-9.]+ *\{/ { inlocal = 0; next }
	!inlocal && /^[[:space:]]*[A-Za-z_][A-Za-z0-9_]*;/ { gsub(/[;[:space:]]/, ""); print }')
nsyms=0
for s in $syms; do
	nsyms=$((nsyms + 1))
	if [[ ! -f man3/$s.3 ]]; then
		echo "FAIL $s: exported in $(basename "$map") but has no man3/$s.3"
		fail=1
	fi
done
if ((pages == 0 || nsyms == 0)); then
	echo "FAIL: found $pages pages and $nsyms symbols"
	fail=1
fi
echo "man: $pages pages, $nsyms exported symbols: $([[ $fail == 0 ]] && echo ok || echo FAILED)"
exit $fail
