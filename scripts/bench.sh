#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# bench.sh [lpcbench options] - build Release in build-release and run every
# lpcbench workload: `lpcbench all "$@"` (lookup, read, pin, fault, walk, write and
# sqlite: about 10 minutes with the defaults on 2 CPUs).  lpcbench makes its own data files and memory
# cgroup and removes them; `build-release/tools/lpcbench/lpcbench --help`
# lists the options (--plot DIR draws every table as CSV + SVG).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/lib.sh
. "$here/lib.sh"

bash "$here/deps.sh"
lpc_build release
echo "+ build-release/tools/lpcbench/lpcbench all $*"
exec "$LPC_ROOT/build-release/tools/lpcbench/lpcbench" all "$@"
