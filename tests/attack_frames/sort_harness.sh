#!/usr/bin/env bash
# Extracts chain_merge, chain_cut_run, chain_sort_block, chain_sort,
# SORT_SMALL and SORT_BUCKETS from src/page/alloc.c
# verbatim (sed between their first line and the next function) and checks
# them against qsort on: n = 0..9 every permutation, stretch boundaries
# (equal-length up/down stretches, alternating), random chains up to 1e6,
# and times sorted, reversed, alternating-pair and random chains.
# Usage: bash tests/attack_frames/sort_harness.sh   (from the repo root)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$root/tests/attack_frames/out
mkdir -p "$out"
{
	cat <<'H'
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
struct lpc_page { struct lpc_page *next; uint32_t id; char pad[112]; };
H
	grep -E '^#define (SORT_SMALL|SORT_BUCKETS)' "$root/src/page/alloc.c"
	sed -n '/^static struct lpc_page \*chain_merge(/,/^}/p' "$root/src/page/alloc.c"
	sed -n '/^static struct lpc_page \*chain_cut_run(/,/^}/p' "$root/src/page/alloc.c"
	sed -n '/^static struct lpc_page \*chain_sort_block(/,/^}/p' "$root/src/page/alloc.c"
	sed -n '/^static struct lpc_page \*chain_sort(/,/^}/p' "$root/src/page/alloc.c"
	cat "$root/tests/attack_frames/sort_check.c"
} > "$out/sort_check_full.c"
cc -O2 -std=c11 -Wall -o "$out/sort_check" "$out/sort_check_full.c"
"$out/sort_check" "$@"
