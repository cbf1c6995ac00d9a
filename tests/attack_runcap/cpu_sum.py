#!/usr/bin/env python3
"""CPU us per MiB of lpc rows (lpcbench scan's cpu_ns over bytes), median and range per lib."""
import csv, glob, os, re, statistics as st, sys
from collections import defaultdict
v = defaultdict(list)
for p in glob.glob(os.path.join(sys.argv[1], '*.csv')):
    m = re.match(r'(.+)\.(NEW|OLD|WS)\.(\d+)\.csv$', os.path.basename(p))
    if not m:
        continue
    rows = defaultdict(dict)
    for r in csv.DictReader(open(p)):
        if r['record'] == 'raw':
            rows[(r['threads'], r['variant'], r['round'])][r['metric']] = float(r['value'])
    for (t, var, rd), x in rows.items():
        if 'cpu_ns' in x and x.get('bytes'):
            v[(m.group(1), t, var, m.group(2))].append(x['cpu_ns'] / 1e3 / (x['bytes'] / 2**20))
for k in sorted(v):
    a = v[k]
    print(f'{k[0]:8} scanners {k[1]} {k[2]:16} {k[3]:3}  cpu us/MiB median {st.median(a):6.1f} [{min(a):.1f}-{max(a):.1f}] n={len(a)}')
