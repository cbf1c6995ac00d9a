# shellcheck shell=bash
# SPDX-License-Identifier: MIT
#
# lib.sh - shared by test.sh and bench.sh (sourced, not run).
#
# lpc_build VARIANT: configures and builds VARIANT in build-VARIANT at the
# repository root.  Variants:
#   release  -DCMAKE_BUILD_TYPE=Release
#   asan     -DLPC_SANITIZE=address (ASan + UBSan), RelWithDebInfo, LPC_DEBUG
#   tsan     -DLPC_SANITIZE=thread, RelWithDebInfo, LPC_DEBUG
# (LPC_DEBUG: protocol checks, yield injection, tests/debug and tests/regress.)
# All three with -DLPC_WERROR=ON: a warning fails the build (CMake's default
# is off, so a user's build with a newer compiler still succeeds).
# LPC_JOBS (default: the number of CPUs) sets the build's parallelism.

LPC_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LPC_JOBS=${LPC_JOBS:-$(nproc 2>/dev/null || echo 2)}

lpc_variant_args() {
	case $1 in
	release) echo "-DCMAKE_BUILD_TYPE=Release -DLPC_SANITIZE= -DLPC_DEBUG=OFF -DLPC_WERROR=ON" ;;
	asan) echo "-DCMAKE_BUILD_TYPE=RelWithDebInfo -DLPC_SANITIZE=address -DLPC_DEBUG=ON -DLPC_WERROR=ON" ;;
	tsan) echo "-DCMAKE_BUILD_TYPE=RelWithDebInfo -DLPC_SANITIZE=thread -DLPC_DEBUG=ON -DLPC_WERROR=ON" ;;
	*) return 1 ;;
	esac
}

lpc_build() {
	local variant=$1 dir="$LPC_ROOT/build-$1" args gen=()
	args=$(lpc_variant_args "$variant") || {
		echo "unknown variant: $variant" >&2
		return 2
	}
	# A build directory keeps the generator it was made with; only a new one
	# gets Ninja (when it is installed).
	if [[ ! -f $dir/CMakeCache.txt ]] && command -v ninja >/dev/null 2>&1; then
		gen=(-G Ninja)
	fi
	echo "+ cmake -S . -B build-$variant ${gen[*]} $args"
	# shellcheck disable=SC2086 # $args is a list of words
	cmake -S "$LPC_ROOT" -B "$dir" "${gen[@]}" $args || return 1
	echo "+ cmake --build build-$variant -j $LPC_JOBS"
	cmake --build "$dir" -j "$LPC_JOBS" || return 1
}
