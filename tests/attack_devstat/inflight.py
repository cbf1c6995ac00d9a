#!/usr/bin/env python3
"""inflight.py TRACE CSV: per lpcbench scan row (the trace's devstat-read
markers, two a row, in row order), lpcbench's in-flight estimate
(read ticks / wall x mean request) against the bytes really in flight
(the integral of the bytes of the accounted reads in flight over the row's
window / wall), from block_io_start..block_io_done, and the same at the
driver (block_rq_issue..block_rq_complete)."""
import re, sys, csv

ev = re.compile(r'\s(\d+\.\d+): (block_\w+|tracing_mark_write): (.*)$')
body = re.compile(r'(\d+),(\d+) (\S+) (?:(\d+) )?\(.*?\) (\d+) \+ (\d+)')

marks, starts, dones, issues, comps = [], [], [], [], []
all_starts, all_dones = [], []
for line in open(sys.argv[1]):
    m = ev.search(line)
    if not m:
        continue
    t, name, rest = float(m.group(1)), m.group(2), m.group(3)
    if name == 'tracing_mark_write':
        if 'devstat-read' in rest:
            marks.append(t)
        continue
    b = body.match(rest)
    if not b:
        continue
    sec, n = int(b.group(5)), int(b.group(6))
    if name == 'block_io_start':
        all_starts.append((t, sec, n))
    elif name == 'block_io_done':
        all_dones.append((t, sec, n))
    if 'R' not in b.group(3):
        continue
    {'block_io_start': starts, 'block_io_done': dones, 'block_rq_issue': issues,
     'block_rq_complete': comps}[name].append((t, sec, n))

def pair(begin, end):
    """(t0, t1, bytes) per request: an end event matched to the oldest open
    begin event with the same start sector (or the same end sector)."""
    open_ = {}
    out = []
    for kind, (t, sec, n) in sorted([(0, e) for e in begin] + [(1, e) for e in end],
                                    key=lambda x: x[1][0]):
        if kind == 0:
            open_.setdefault(sec, []).append((t, n))
        else:
            key = sec if sec in open_ else next((s for s, l in open_.items()
                                                 if l and s + l[0][1] == sec), None)
            if key is None or not open_.get(key):
                continue
            t0, n0 = open_[key].pop(0)
            if not open_[key]:
                del open_[key]
            out.append((t0, t, n0 * 512))
    return out

acct = pair(starts, dones)
every = pair(all_starts, all_dones)

def busy(lst, w0, w1):
    """Seconds of [w0, w1] with at least one accounted request (any
    direction) in flight: what io_ticks is meant to count."""
    iv = sorted((max(t0, w0), min(t1, w1)) for t0, t1, b in lst if min(t1, w1) > max(t0, w0))
    tot, cur0, cur1 = 0.0, None, None
    for a, b in iv:
        if cur1 is None or a > cur1:
            if cur1 is not None:
                tot += cur1 - cur0
            cur0, cur1 = a, b
        else:
            cur1 = max(cur1, b)
    if cur1 is not None:
        tot += cur1 - cur0
    return tot
drv = pair(issues, comps)

rows = []
with open(sys.argv[2]) as f:
    raw = {}
    order = []
    for r in csv.reader(f):
        if len(r) < 7 or r[1] != 'raw':
            continue
        key = (r[2], r[3], r[4])
        if key not in raw:
            raw[key] = {}
            order.append(key)
        raw[key][r[5]] = float(r[6])
    rows = [(k, raw[k]) for k in order]

print("%-22s %8s %6s %9s %9s | %9s %9s %9s %9s %6s %6s" % ("row (round,scanners,var)", "wall ms", "reqs",
      "KiB/req", "lpcbench", "acct MiB", "drv MiB", "ticks ms", "ticks ms", "busy", "busy"))
print("%-22s %8s %6s %9s %9s | %9s %9s %9s %9s %6s %6s" % ("", "", "", "", "MiB", "in flt", "in flt", "traced", "stat", "lpcb.", "traced"))
for i, (k, v) in enumerate(rows):
    if 2 * i + 1 >= len(marks):
        break
    w0, w1 = marks[2 * i], marks[2 * i + 1]
    wall = v['wall_ns'] / 1e9
    reqs = v['dev_read_requests']
    kib = v['dev_read_sectors'] / 2 / reqs if reqs else float('nan')
    est = v['dev_read_ms'] / 1e3 / wall * kib / 1024 if reqs else float('nan')
    def integral(lst):
        s = 0.0
        for t0, t1, b in lst:
            lo, hi = max(t0, w0), min(t1, w1)
            if hi > lo:
                s += b * (hi - lo)
        return s / wall / 2**20
    ticks = sum(t1 - t0 for t0, t1, b in acct if w0 < t1 <= w1) * 1e3
    print("%-22s %8.1f %6d %9.0f %9.2f | %9.2f %9.2f %9.1f %9.0f %5.0f%% %5.0f%%" % (
        ",".join(k), wall * 1e3, reqs, kib, est, integral(acct), integral(drv), ticks,
        v["dev_read_ms"], 100 * v["dev_busy_ms"] / 1e3 / wall,
        100 * busy(every, w0, w1) / wall))
print("(lpcbench MiB: its dev_read_ms / wall x its mean KiB, from the CSV; acct / drv:"
      " the traced reads' bytes x their time in flight inside the row's window, over wall;"
      " ticks traced: the accounted reads' summed latencies, completed in the window,"
      " against the CSV's dev_read_ms; busy: lpcbench's (dev_busy_ms / wall) and the"
      " traced share of the row's window with an accounted request in flight, over wall)")
