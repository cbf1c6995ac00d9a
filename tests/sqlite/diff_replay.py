#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# diff_replay.py BIN TRACE PAGE_SIZE JOURNAL_MODE [--shrink] - replays what
# test_sqlite_diff did (its stderr with LPC_SQLITE_DIFF_TRACE=1: the lines
# "  -> PID: CMD", SPAWN, SLEEP, SLEEP-NOREPLY and KILL included) on a fresh
# database of that page size and journal mode (the run's "step 0: run:"
# line), through BIN --worker processes, in the same order.  At the end:
# every open connection's view, its integrity_check, and a fresh unix
# process's view and integrity_check after every worker is SIGKILLed; exit 1
# when two views differ (views refused with SQLITE_BUSY aside), one is an
# error, or an integrity_check is not ok.  The parent's reference is not
# replayed: this oracle only sees disagreement and damage.  --shrink deletes
# commands while it still fails (each candidate run twice), keeping SPAWN,
# SLEEP*, KILL and a command killed before its reply, then prints the short
# trace.  A kill's timing is replayed by its delay only: a replay tries the
# same story, not the same interleaving.  Converting the trace's
# "open C lpc file:P?lpc_coherence=detect" into "open C unix file:P" gives the
# control.
import os, re, signal, subprocess, sys, tempfile, shutil
BIN, TRACE, PAGE, MODE = sys.argv[1:5]
lines = [l.rstrip('\n') for l in open(TRACE) if l.startswith('  -> ')]
cmds = []
for l in lines:
    m = re.match(r'  -> (\d+): (.*)$', l)
    if m.group(2).startswith(('digest', 'ic ')): continue
    cmds.append((int(m.group(1)), m.group(2)))

def run(cmds, verbose=False):
    d = tempfile.mkdtemp(dir='/var/tmp')
    path = os.path.join(d, 'r.db')
    import sqlite3
    db = sqlite3.connect(path); db.execute('PRAGMA page_size=%s' % PAGE); db.execute('PRAGMA journal_mode=%s' % MODE)
    db.executescript('CREATE TABLE t(k INTEGER PRIMARY KEY, v INTEGER NOT NULL, w INTEGER NOT NULL, b TEXT NOT NULL); CREATE INDEX t_v ON t(v);'); db.close()
    procs = {}; opened = {}
    def spawn(pid, kind='unix', kb='4', mb='64'):
        env = dict(os.environ, LPC_SQLITE_PAGE_KB=kb, LPC_SQLITE_CACHE_MB=mb)
        procs[pid] = subprocess.Popen([BIN, '--worker'], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True)
        opened[pid] = set()
    def cmd(pid, c):
        p = procs[pid]
        p.stdin.write(c + '\n'); p.stdin.flush()
        r = p.stdout.readline().strip()
        if verbose: print('  %d: %s -> %s' % (pid, c[:110], r))
        return r
    bad = []
    import time
    for i, (pid, c) in enumerate(cmds):
        if c.startswith('SLEEP'):
            if pid in procs: time.sleep(int(c.split()[1]) / 1e6)
            continue
        nxt = cmds[i + 1] if i + 1 < len(cmds) else (0, '')
        c = re.sub(r'file:\S*?diff-\d+\.db', 'file:' + path, c)
        if c.startswith('SPAWN'):
            _, kind, kb, mb = c.split(); spawn(pid, kind, kb, mb); continue
        if pid not in procs: continue
        if c == 'KILL':
            procs[pid].send_signal(signal.SIGKILL); procs[pid].wait(); del procs[pid]
            if verbose: print('  %d: KILL' % pid)
            continue
        if c == 'quit':
            procs[pid].stdin.write('quit\n'); procs[pid].stdin.flush(); procs[pid].wait(); del procs[pid]
            if verbose: print('  %d: quit' % pid)
            continue
        if nxt[0] == pid and nxt[1].startswith('SLEEP-NOREPLY'):
            procs[pid].stdin.write(c + '\n'); procs[pid].stdin.flush()
            if verbose: print('  %d: %s (killed before its reply)' % (pid, c[:110]))
            continue
        r = cmd(pid, c)
        if r.startswith('err 11') or r.startswith('bad'): bad.append((pid, c[:60], r))
        sl = int(c.split()[1]) if c.split()[0] in ('open', 'close') else None
        if c.startswith('open') and r == 'ok': opened[pid].add(sl)
        if c.startswith('close') and r == 'ok': opened[pid].discard(sl)
    views = {}
    for pid in list(procs):
        for sl in sorted(opened[pid]):
            cmd(pid, 'exec %d COMMIT' % sl)
            views[(pid, sl)] = cmd(pid, 'digest %d' % sl)
            ic = cmd(pid, 'ic %d' % sl)
            if ic != 'ok' and 'database is locked' not in ic: bad.append((pid, 'ic', ic))
    for pid in list(procs): procs[pid].send_signal(signal.SIGKILL); procs[pid].wait()
    spawn(0); r = cmd(0, 'open 0 unix file:' + path)
    views['fresh unix'] = cmd(0, 'digest 0'); ic = cmd(0, 'ic 0')
    if ic != 'ok': bad.append(('fresh', 'ic', ic))
    procs[0].send_signal(signal.SIGKILL); procs[0].wait()
    shutil.rmtree(d)
    vs = {k: v for k, v in views.items() if not v.startswith('err 5 ')}
    if len(set(vs.values())) > 1: bad.append(('views differ', vs))
    if verbose:
        for k, v in views.items(): print('view', k, v)
    return bad

if '--shrink' in sys.argv:
    assert run(cmds), 'does not fail'
    cur = cmds; chunk = max(1, len(cur) // 2)
    while chunk >= 1:
        i = 0; changed = False
        while i < len(cur):
            cand = cur[:i] + cur[i + chunk:]
            keep = lambda j: cur[j][1].startswith(('SPAWN', 'SLEEP', 'KILL')) or (
                j + 1 < len(cur) and cur[j + 1][1].startswith('SLEEP-NOREPLY'))
            if any(keep(j) for j in range(i, min(i + chunk, len(cur)))): i += chunk; continue
            if run(cand) and run(cand): cur = cand; changed = True
            else: i += chunk
        if not changed: chunk //= 2
    print('%d -> %d commands' % (len(cmds), len(cur)))
    for pid, c in cur: print('  -> %d: %s' % (pid, c))
    cmds = cur
b = run(cmds, verbose=True)
print('BAD' if b else 'ok', b)
sys.exit(1 if b else 0)
