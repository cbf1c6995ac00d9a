#!/bin/sh
# SPDX-License-Identifier: MIT
# mpriv_mutant.sh - relinks branch mpriv's model_api object (its build-release,
# untouched) with mpriv_reuse_wrap.c and runs a quarter of the matrix.
# Exit 0 when model_api reports "the frame was reused while held" (the
# OP_PRIVATE check can fail: not a defect), 1 when the mutant passes.
# (The mutant's own double put may crash it after the report.)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
b=${LPC_MPRIV_BUILD:-/work/wt-mpriv/build-release}
inc=${LPC_MPRIV_INC:-/work/wt-mpriv/include}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -I "$inc" -c -o "$tmp/wrap.o" "$here/mpriv_reuse_wrap.c"
cc -o "$tmp/model_api_mutant" "$b/tests/model_api/CMakeFiles/model_api.dir/model_api.c.o" \
	"$tmp/wrap.o" -Wl,--wrap=lpc_page_alloc "$b/src/liblpc.a" -lm -lpthread \
	-lurcu-memb -lurcu-common -lurcu-cds -luring
"$tmp/model_api_mutant" --matrix 0/4 --seconds 2 --shrink-seconds 5 "$@" >"$tmp/out" 2>&1 || true
grep -m3 'reused while held' "$tmp/out" || { tail -15 "$tmp/out"; exit 1; }
