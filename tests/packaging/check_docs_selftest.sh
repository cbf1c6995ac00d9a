#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# check_docs_selftest.sh PYTHON3 ROOT - the docs.paths checker
# (scripts/check-docs.py) against the real tree, with files planted beside
# it: documents and C files that name only what exists must pass, and one
# stale path, one stale lpc_* name and one stale step tag, each planted in a
# file of its own, must each be reported, with its kind and line, and fail the
# run; so must a table of parts that omits a file or a part, and a table of
# models that omits a model.
set -uo pipefail
py=$1 root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# plant KIND(doc|c) N TEXT: writes the planted file N with TEXT on line 2
# and adds it to the checker's arguments.
args=()
plant() {
	local kind=$1 f=$tmp/$2 text=$3
	if [[ $kind == doc ]]; then
		printf '# planted\n%s\n' "$text" >"$f"
	else
		printf '/* planted */\n/* %s */\nint planted;\n' "$text" >"$f"
	fi
	args+=("--plant-$kind" "$f")
}

# 1. Mentions of what exists: no finding, exit 0.
plant doc good.md '`src/filemap/lookup.c` and `tests/unit/test_*.c` tell how `lpc_page_get` takes R4, E1-E7 and `lpc_ns_*`.'
plant c good.c 'filemap/lookup.c steps R1-R5 (lookup.c) and lpc_page_get; see tests/regress/.'
out=$("$py" "$root/scripts/check-docs.py" --root "$root" "${args[@]}")
rc=$?
if ((rc == 0)) && ! grep -q "^$tmp/" <<<"$out"; then
	echo "ok: planted files that name what exists pass"
else
	echo "FAILED: planted files that name what exists (exit $rc):"
	echo "$out"
	fail=1
fi

# 2. One stale mention per file, each reported on its line, exit 1.
args=()
expect=()
bad() { plant "$1" "$2" "$3"; expect+=("$tmp/$2:2: $4"); }
bad doc path.md 'The reader in `src/filemap/nonesuch.c`.' "stale path 'src/filemap/nonesuch.c'"
bad doc name.md 'Call `lpc_page_frobnicate` first.' "stale name 'lpc_page_frobnicate'"
bad doc tag.md 'The re-check (R99) keeps it.' "stale tag 'R99'"
bad doc range.md 'Between R1 and R97.' "stale tag 'R97'"
bad c path.c 'see filemap/nonesuch.h for it' "stale path 'filemap/nonesuch.h'"
bad c name.c 'lpc_page_frobnicate() calls it' "stale name 'lpc_page_frobnicate'"
bad c tag.c 'after K3 and before K99' "stale tag 'K99'"
out=$("$py" "$root/scripts/check-docs.py" --root "$root" "${args[@]}")
rc=$?
((rc == 1)) || { echo "FAILED: stale mentions: exit $rc, not 1"; fail=1; }
for e in "${expect[@]}"; do
	if grep -qxF "$e" <<<"$out"; then
		echo "ok: reported: ${e#"$tmp/"}"
	else
		echo "FAILED: not reported: ${e#"$tmp/"}"
		fail=1
	fi
done
n=$(grep -c "^$tmp/" <<<"$out")
if ((n != ${#expect[@]})); then
	echo "FAILED: $n findings about the planted files, ${#expect[@]} expected:"
	grep "^$tmp/" <<<"$out"
	fail=1
fi
# 3. The tables: a row that omits a file of its part, a part without a row,
# and a model the models' table omits, each reported.
sed -e 's/, `dirty.c` (its index side/ (its index side/' -e '/^| `src\/io\/` |/d' \
	"$root/docs/architecture.md" >"$tmp/architecture.md"
sed -e '/^| `size.pml` |/d' "$root/tests/model/README.md" >"$tmp/models.md"
out=$("$py" "$root/scripts/check-docs.py" --root "$root" --plant-parts "$tmp/architecture.md" \
	--plant-models "$tmp/models.md")
rc=$?
((rc == 1)) || { echo "FAILED: stale tables: exit $rc, not 1"; fail=1; }
for e in "stale row (a file it omits) 'src/writeback/dirty.c'" \
	 "stale part (no row in the table of parts) 'src/io/'" \
	 "stale row (a model the table omits) 'tests/model/size.pml'"; do
	if grep -qF "$e" <<<"$out"; then
		echo "ok: reported: $e"
	else
		echo "FAILED: not reported: $e"
		echo "$out"
		fail=1
	fi
done

((fail == 0)) && echo "docs.paths selftest: passed"
exit $fail
