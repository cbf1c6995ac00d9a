#!/bin/sh
# SPDX-License-Identifier: MIT
# bitfield_demo.sh - the "bitfield" edit of abi_attacks.py, which
# check-abi.py --check passes, breaks a program built against 0.2.0: one
# translation unit built with 0.2.0's lpc.h (a34a5c3) fills struct
# lpc_config as an old program does (io_backend = LPC_IO_NULL), another
# built with the edited lpc.h reads it as the new library would.
# Exit 1 while the new reader sees another backend (the defect stands).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
main=${LPC_MAIN:-/work/main}
abi=${LPC_ABI:-/work/wt-abi}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/old/lpc"
for h in lpc.h lpc_sqlite.h lpc_rbd.h; do
	git -C "$main" show "a34a5c3:include/lpc/$h" >"$tmp/old/lpc/$h"
done
python3 "$here/abi_attacks.py" --include "$abi/include" --keep "$tmp/kept" bitfield || true
echo "== check-abi.py --check on the edited headers:"
python3 "$abi/scripts/check-abi.py" --check "$abi/tests/packaging/abi/lpc-0.2.0.abi" \
	"$tmp/kept/bitfield" || true
cat >"$tmp/old.c" <<'C'
#include <string.h>
#include <lpc/lpc.h>
void old_fill(void *buf) /* what an 0.2.0 program hands lpc_cache_create */
{
	struct lpc_config c;

	memset(&c, 0, sizeof(c));
	c.io_backend = LPC_IO_NULL;
	memcpy(buf, &c, sizeof(c));
}
C
cat >"$tmp/new.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <lpc/lpc.h>
void old_fill(void *buf);
int main(void) /* the library built with the edited header reads it */
{
	struct lpc_config c;

	old_fill(&c);
	printf("old program set io_backend %d (LPC_IO_NULL); new layout reads io_backend %d\n",
	       LPC_IO_NULL, c.io_backend);
	return c.io_backend == LPC_IO_NULL ? 0 : 1;
}
C
cc -I "$tmp/old" -c -o "$tmp/old.o" "$tmp/old.c"
cc -I "$tmp/kept/bitfield" -o "$tmp/demo" "$tmp/new.c" "$tmp/old.o"
"$tmp/demo"
