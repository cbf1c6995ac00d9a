#!/usr/bin/env python3
"""scanpos.py CSV [old|new] - where each scan-mix scanner read, from an
`lpcbench read --csv` file, and how much of what it read a scanner of the same
variant had read within the last WINDOW scanner pages (a cache's worth: 65536
pages of 4 KiB for the default 256 MiB; such a re-read is within refault
distance, the readers' misses between only add to the distance).

old: each row (1, 2, 8 readers) has its own position (ddcb94f's read.c);
new: one position per variant, carried from row to row (28c1009's).
The CSV has the measured rounds only: the warm-up round's reads are taken as
equal to the first measured round's (approximate)."""
import csv
import sys
from collections import defaultdict

WINDOW = 65536
NPAGES = 262144

path, mode = sys.argv[1], sys.argv[2]
reads = defaultdict(dict)  # (variant) -> {(round, threads): scan_reads}
for r in csv.DictReader(open(path)):
    if r['record'] == 'raw' and r['variant'].startswith('scan-mix/') and r['metric'] == 'scan_reads':
        reads[r['variant'].split('/')[1]][(int(r['round']), int(r['threads']))] = int(float(r['value']))

for v, d in sorted(reads.items()):
    rounds = sorted({k[0] for k in d})
    threads = sorted({k[1] for k in d})
    # execution order: round 0 (the warm-up, estimated), then rounds 1.., and
    # within a round the thread counts in order
    order = [(0, t, d[(1, t)]) for t in threads] + [(r, t, d[(r, t)]) for r in rounds for t in threads]
    pos = defaultdict(int)  # old: per row; new: one
    recent = []  # (start, length) of the last scanner reads, in order
    tot = re = 0
    gaps = []
    for rnd, t, n in order:
        key = t if mode == 'old' else 0
        start = pos[key]
        pos[key] += n
        # pages of [start, start+n) read within the last WINDOW scanner pages
        seen = 0
        budget = WINDOW
        covered = []
        for (s0, l0) in reversed(recent):
            take = min(l0, budget)
            s1 = s0 + l0 - take  # the most recent `take` pages of that read
            covered.append((s1, s1 + take))
            budget -= take
            if budget <= 0:
                break
        # union of covered intervals intersected with [start, start+n), mod NPAGES ignored (< 1 pass)
        covered.sort()
        merged = []
        for a, b in covered:
            if merged and a <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], b)
            else:
                merged.append([a, b])
        for a, b in merged:
            lo, hi = max(a, start), min(b, start + n)
            if hi > lo:
                seen += hi - lo
        if rnd >= 1:
            tot += n
            re += seen
        recent.append((start, n))
        if mode == 'old' and t == threads[-1] and rnd >= 1:
            gaps.append((rnd, [pos[x] for x in threads]))
    print(f'{v}: {mode} positions; scanner pages read in the measured rounds {tot}, '
          f'of which re-read within {WINDOW} scanner pages: {re} ({re / tot:.3f})')
    if mode == 'old':
        for rnd, p in gaps[:3] + gaps[-2:]:
            print(f'   after round {rnd:2d}: positions of the 1-, 2-, 8-reader rows\' scanners {p}')
    else:
        print(f'   final position {pos[0]} = {pos[0] / NPAGES:.2f} passes over the file')
