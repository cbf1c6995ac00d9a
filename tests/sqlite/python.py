#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# python.py LIB SCRIPT - Python's sqlite3 module (Debian's python3, on the
# system libsqlite3) with the VFS "lpc": a first connection loads the
# extension LIB (enable_load_extension + load_extension, as a user would; a
# Python built without them loads it with ctypes and calls
# lpc_sqlite_register(0)), then SCRIPT runs statement by statement
# through "file:...?vfs=lpc" and through "vfs=unix"; every row must be equal
# (the printed outputs byte-identical), the cache's counters must show that
# lpc served the reads, and the file lpc wrote must dump like unix's.
# Exits 0 pass, 1 fail, 77 skip.
import ctypes
import os
import sqlite3
import sys
import tempfile


def statements(path):
    buf = ""
    for line in open(path, encoding="utf-8"):
        if line.startswith("--"):
            continue
        buf += line
        if sqlite3.complete_statement(buf):
            yield buf.strip()
            buf = ""


def run(dbpath, vfs, script):
    con = sqlite3.connect(f"file:{dbpath}?vfs={vfs}", uri=True, isolation_level=None)
    out = []
    for st in statements(script):
        for row in con.execute(st):
            out.append("|".join("" if v is None else str(v) for v in row))
    con.close()
    return "\n".join(out) + "\n"


def main():
    lib, script = sys.argv[1], sys.argv[2]
    boot = sqlite3.connect(":memory:")
    if hasattr(boot, "enable_load_extension"):
        boot.enable_load_extension(True)
        boot.load_extension(os.path.splitext(lib)[0] if lib.endswith(".so") else lib)
        how = "load_extension"
    else:
        rc = ctypes.CDLL(lib, mode=ctypes.RTLD_GLOBAL).lpc_sqlite_register(0)
        if rc != 0:
            print(f"FAIL: lpc_sqlite_register = {rc}")
            return 1
        how = "ctypes"
    # The same handle (dlopen counts): lpc_sqlite_stats reads the VFS's cache.
    so = ctypes.CDLL(lib)
    stats = (ctypes.c_uint64 * 64)()  # struct lpc_stats: lookups is the first field
    fail = 0
    with tempfile.TemporaryDirectory() as d:
        out_lpc = run(os.path.join(d, "lpc.db"), "lpc", script)
        out_unix = run(os.path.join(d, "unix.db"), "unix", script)
        if out_lpc != out_unix:
            print("FAIL: the outputs differ")
            fail = 1
        so.lpc_sqlite_stats(stats)
        if stats[0] == 0:
            print("FAIL: lpc saw no lookup: the database did not go through lpc")
            fail = 1
        dumps = []
        for name in ("lpc.db", "unix.db"):
            con = sqlite3.connect(os.path.join(d, name))
            dumps.append("\n".join(con.iterdump()))
            con.close()
        if dumps[0] != dumps[1]:
            print("FAIL: the files differ when dumped through unix")
            fail = 1
    print(f"loaded with {how}; output: {out_lpc.count(chr(10))} lines; "
          f"lpc lookups {stats[0]}, hits {stats[1]}")
    if not fail:
        print("PASS: python sqlite3, identical output through lpc and unix")
    return fail


if __name__ == "__main__":
    sys.exit(main())
