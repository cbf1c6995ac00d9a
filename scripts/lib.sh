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

# lpc_test_env VARIANT: fills the arrays lpc_env (VAR=value words for env)
# and lpc_wrap (a command prefix) with what the variant's tests run under:
#   asan  ASAN_OPTIONS=detect_leaks=1, UBSAN_OPTIONS=halt_on_error=1:
#         print_stacktrace=1
#   tsan  TSAN_OPTIONS=halt_on_error=1 with tests/tsan.supp; without ASLR
#         where the kernel randomises mmap with more than 28 bits (gcc 12's
#         TSan maps its shadow at fixed addresses and dies with "unexpected
#         memory mapping" there)
# Options already in ASAN_OPTIONS, UBSAN_OPTIONS or TSAN_OPTIONS are kept
# and win over these defaults.
lpc_test_env() {
	lpc_env=() lpc_wrap=()
	case $1 in
	asan)
		lpc_env=(ASAN_OPTIONS="detect_leaks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
			 UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}")
		;;
	tsan)
		lpc_env=(TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$LPC_ROOT/tests/tsan.supp${TSAN_OPTIONS:+:$TSAN_OPTIONS}")
		if [[ $(cat /proc/sys/vm/mmap_rnd_bits 2>/dev/null || echo 28) -gt 28 ]] &&
		   setarch "$(uname -m)" -R true 2>/dev/null; then
			lpc_wrap=(setarch "$(uname -m)" -R)
		fi
		;;
	esac
}
