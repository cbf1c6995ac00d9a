#!/usr/bin/env bash
# Applies the sed expression of each mutant this commit added or changed in
# tests/mutants/run.sh to a scratch copy of its source file and reports
# whether it changes anything (run.sh itself reports a sed that changes
# nothing as "ERROR (the sed no longer matches ...)").
# Usage: tests/attack_drop/check_mutant_sed.sh   (from anywhere)
# Exit: 1 if some sed matches nothing.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rc=0
for name in ra-referenced drop-referenced drop-no-slack bulk-marks; do
	line=$(grep -F "'$name|" "$root/tests/mutants/run.sh") || { echo "$name: not in run.sh"; rc=1; continue; }
	line=${line#*\'}
	line=${line%\'*}
	IFS='|' read -r _ file expr <<<"$line"
	cp "$root/$file" "$tmp/cur"
	sed -i "$expr" "$tmp/cur"
	if cmp -s "$tmp/cur" "$root/$file"; then
		echo "$name: sed matches NOTHING in $file"
		rc=1
	else
		echo "$name: sed changes $(diff "$root/$file" "$tmp/cur" | grep -c '^>') line(s) of $file"
	fi
done
exit $rc
