#!/usr/bin/env python3
"""Summarize scan_ab.sh (or scan_abc.sh)'s CSVs: per tag, scanner count, call size and lib,
the within-round lpc/kernel ratios (each run's median, then the median and
range of those; and all rounds pooled), lpc MB/s, pages per read I/O, and a
permutation test of NEW against OLD on the pooled within-round ratios."""
import csv, glob, os, random, re, statistics as st, sys
from collections import defaultdict

d = sys.argv[1] if len(sys.argv) > 1 else '/tmp/rc'
runs = defaultdict(list)  # (tag, thr, call, lib, row) -> list of per-run lists of ratios
mbs = defaultdict(list)
ppio = defaultdict(list)
for path in sorted(glob.glob(os.path.join(d, '*.csv'))):
    m = re.match(r'(.+)\.(NEW|OLD|WS)\.(\d+)\.csv$', os.path.basename(path))
    if not m:
        continue
    tag, lib = m.group(1), m.group(2)
    v = defaultdict(dict)
    for r in csv.DictReader(open(path)):
        if r['record'] != 'raw':
            continue
        var, call = r['variant'].split('/')
        v[(r['threads'], call, var, r['metric'])][r['round']] = float(r['value'])
    keys = {(t, c) for (t, c, _, _) in v}
    for t, c in keys:
        k = v.get((t, c, 'kernel', 'mb_s'), {})
        for row in ('lpc_uring', 'lpc_sync'):
            l = v.get((t, c, row, 'mb_s'), {})
            rs = [l[x] / k[x] for x in l if x in k and k[x] > 0]
            if rs:
                runs[(tag, t, c, lib, row)].append(rs)
                mbs[(tag, t, c, lib, row)] += list(l.values())
            rd = v.get((t, c, row, 'lpc_reads'), {})
            rp = v.get((t, c, row, 'lpc_read_pages'), {})
            ppio[(tag, t, c, lib, row)] += [rp[x] / rd[x] for x in rd if rd[x]]

def perm_p(a, b, n=20000):
    obs = st.median(a) - st.median(b)
    pool = a + b
    cnt = 0
    rnd = random.Random(1)
    for _ in range(n):
        rnd.shuffle(pool)
        if abs(st.median(pool[:len(a)]) - st.median(pool[len(a):])) >= abs(obs):
            cnt += 1
    return cnt / n

print('tag      scanners call row        lib runs  per-run medians: median [min-max]  pooled median (n)  MB/s median  pages/IO')
groups = sorted({k[:3] + (k[4],) for k in runs})
for tag, t, c, row in groups:
    pooled = {}
    for lib in ('OLD', 'WS', 'NEW'):
        rr = runs.get((tag, t, c, lib, row), [])
        if not rr:
            continue
        meds = [st.median(x) for x in rr]
        allr = [y for x in rr for y in x]
        pooled[lib] = allr
        print(f'{tag:8} {t:>8} {c:>4} {row:10} {lib} {len(rr):4}  {st.median(meds):.3f} [{min(meds):.3f}-{max(meds):.3f}]'
              f'              {st.median(allr):.3f} ({len(allr)})        {st.median(mbs[(tag,t,c,lib,row)]):7.0f}'
              f'   {st.median(ppio[(tag,t,c,lib,row)]):.0f}')
    for a, b in (('NEW', 'OLD'), ('WS', 'OLD'), ('NEW', 'WS')):
        if a in pooled and b in pooled:
            print(f'{"":8} {"":>8} {"":>4} {row:10} {a}/{b} of pooled medians {st.median(pooled[a])/st.median(pooled[b]):.3f},'
                  f' permutation p = {perm_p(pooled[a], pooled[b]):.3f}')
