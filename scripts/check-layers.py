#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check-layers.py - the parts of src/ stay layered (docs/architecture.md).

Each part (a folder of src/) may include and call only the parts below it:

    core < page, index, io < filemap < writeback < reclaim < cache < names

page, index and io sit side by side and use none of each other; src/sqlite/
(liblpc_sqlite) uses lpc's public header alone.  Two checks:

  includes  every `#include "part/..."` in src/PART/*.[ch] names PART itself
            or a part below it;
  symbols   (with --objects DIR, the object files of liblpc: CMake's
            lpc_objects.dir) every lpc_*/ns_* function an object file of
            PART calls is defined in PART or a part below it -- this catches
            a declaration in a lower header of a function a higher part
            defines, which the include check cannot see;
  names     (with --objects) every global symbol PART defines that is not
            public (src/lpc.map) carries one of PART's prefixes (the rule in
            docs/architecture.md: a part never defines a function under
            another part's name).

tools/ (docs/architecture.md, "Tools") is layered too: the harness below
lpcbench's benchmarks and hitcost, each benchmark in its folder:

  tool includes   tools/harness/ includes only its own headers; a benchmark
            folder of tools/lpcbench/ includes the harness, benches.h and its
            own files, never another benchmark's; hitcost includes no
            benchmark;
  tool symbols    (with --tool-objects DIR, the build's tools/ folder) no
            harness object calls a symbol lpcbench defines; no benchmark's
            object calls one of another benchmark; a report (NAME_report.c)
            calls nothing its benchmark's other files define, so a benchmark
            calls its report and never the other way.

Usage: check-layers.py [--root DIR] [--objects DIR] [--tool-objects DIR] [--selftest]
Prints one line per finding and "layers: N findings"; exits 1 on any.
--selftest plants includes upwards in a copy of src/, and an object file
that calls upwards and defines another part's name, the same in a copy of
tools/ (an include of a benchmark in the harness and of one benchmark in
another; a report that calls its benchmark), and expects each finding (so
the check can fail).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

RANK = {
    "core": 0,
    "page": 1,
    "index": 1,
    "io": 1,
    "filemap": 2,
    "writeback": 3,
    "reclaim": 4,
    "cache": 5,
    "names": 6,
}
# Each part's prefixes for its internal (non-exported) globals.
PREFIXES = {
    "core": ("lpc_towner_", "lpc_tcache", "lpc_thread", "lpc_rcu_", "lpc_count",
             "lpc_debug_", "lpc_yield_", "lpc_self"),
    "page": ("lpc_page_", "lpc_pool_"),
    "index": ("lpc_radix_",),
    "io": ("lpc_io_",),
    "filemap": ("lpc_filemap_", "lpc_file_", "lpc_files_", "lpc_ra_"),
    "writeback": ("lpc_wb_",),
    "reclaim": ("lpc_reclaim_",),
    "cache": ("lpc_cache_",),
    "names": ("ns_",),
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/[^"]+"', re.M)


def allowed(part, other):
    return other == part or RANK[other] < RANK[part]


def check_includes(src):
    findings = []
    for part in sorted(os.listdir(src)):
        d = os.path.join(src, part)
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            if not name.endswith((".c", ".h")):
                continue
            path = os.path.join(d, name)
            text = open(path, encoding="utf-8").read()
            for m in INCLUDE.finditer(text):
                other = m.group(1)
                line = text.count("\n", 0, m.start()) + 1
                rel = os.path.relpath(path, os.path.dirname(src))
                if part == "sqlite":
                    if other != "sqlite":
                        findings.append(f"{rel}:{line}: sqlite/ includes {other}/ (public API only)")
                    continue
                if part not in RANK:
                    findings.append(f"{rel}: part {part}/ has no place in the layers (check-layers.py RANK)")
                    break
                if other not in RANK and other != "lpc":
                    findings.append(f"{rel}:{line}: includes {other}/, which is no part")
                elif other in RANK and not allowed(part, other):
                    findings.append(f"{rel}:{line}: {part}/ includes {other}/, a part above or beside it")
    return findings


def nm(path, flags):
    out = subprocess.run(["nm", flags, path], capture_output=True, text=True, check=True).stdout
    return out.split("\n")


def public_symbols(root):
    text = open(os.path.join(root, "src", "lpc.map"), encoding="utf-8").read()
    return set(re.findall(r"^\s+(lpc_[a-z0-9_]+);", text, re.M))


def check_symbols(objdir, public, src=None):
    """objdir: CMake's lpc_objects.dir; src: the source's src/ folder (an
    object whose source is gone, left in an incremental build dir by a file
    that moved, is passed over)."""
    defined = {}  # symbol -> part
    undefined = []  # (part, object, symbol)
    findings = []
    for part in sorted(os.listdir(objdir)):
        d = os.path.join(objdir, part)
        if not os.path.isdir(d) or part not in RANK:
            continue
        for name in sorted(os.listdir(d)):
            if not name.endswith(".o"):
                continue
            path = os.path.join(d, name)
            if src and not os.path.exists(os.path.join(src, part, name[:-len(".o")])):
                continue
            for line in nm(path, "-P"):
                f = line.split()
                if len(f) < 2 or not re.match(r"(lpc|ns)_", f[0]):
                    continue
                if f[1] in "TDBR":
                    defined[f[0]] = part
                    sym = f[0].split("@")[0]
                    # lpc_stats_v01/_v02: the versions of public lpc_stats.
                    pub = sym in public or re.sub(r"_v[0-9]+$", "", sym) in public
                    if not pub and not sym.startswith(PREFIXES[part]):
                        findings.append(f"{part}/{name[:-2]}: defines {sym}, not under "
                                        f"{part}/'s prefixes ({', '.join(PREFIXES[part])})")
                elif f[1] == "U":
                    undefined.append((part, name, f[0]))
    for part, obj, sym in undefined:
        other = defined.get(sym)
        if other and not allowed(part, other):
            findings.append(f"{part}/{obj[:-2]}: calls {sym}, defined in {other}/ (above or beside it)")
    return findings


TOOL_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def check_tool_includes(tools):
    findings = []
    for dirpath, _, names in sorted(os.walk(tools)):
        rel_dir = os.path.relpath(dirpath, tools).split(os.sep)
        for name in sorted(names):
            if not name.endswith((".c", ".h")):
                continue
            path = os.path.join(dirpath, name)
            text = open(path, encoding="utf-8").read()
            rel = os.path.relpath(path, os.path.dirname(tools))
            for m in TOOL_INCLUDE.finditer(text):
                inc = m.group(1)
                line = text.count("\n", 0, m.start()) + 1
                if "/" not in inc:
                    continue  # the file's own folder
                top = inc.split("/")[0]
                if rel_dir[0] == "harness":
                    findings.append(f"{rel}:{line}: the harness includes {inc} (it names no tool)")
                elif rel_dir[0] == "lpcbench":
                    bench = rel_dir[1] if len(rel_dir) > 1 else None
                    if top == "harness" or inc == "lpcbench/benches.h":
                        continue
                    if top == "lpcbench" and bench and inc.startswith(f"lpcbench/{bench}/"):
                        continue
                    findings.append(f"{rel}:{line}: lpcbench/{bench + '/' if bench else ''} "
                                    f"includes {inc} (another benchmark's, or no part of tools/)")
                elif top == "lpcbench":
                    findings.append(f"{rel}:{line}: {rel_dir[0]}/ includes {inc}, a benchmark's")
    return findings


def objects_under(d):
    for dirpath, _, names in os.walk(d):
        for name in sorted(names):
            if name.endswith(".o"):
                yield os.path.join(dirpath, name)


def defined_undefined(path):
    dfn, und = set(), set()
    for line in nm(path, "-P"):
        f = line.split()
        if len(f) < 2:
            continue
        if f[1] in "TDBRC":
            dfn.add(f[0])
        elif f[1] == "U":
            und.add(f[0])
    return dfn, und


# libc's, defined again by lpcbench/sqlite/sqlite_vfs.c to count the unix
# VFS's syncs: every caller in the program reaches them, as it would libc's.
INTERPOSED = {"fdatasync", "fsync"}


def check_tool_symbols(tobj, tools=None):
    """tobj: the build's tools/ folder (CMake's object directories in it);
    tools: the source's tools/ folder (an object whose source is not there,
    left by an older build or generated, is passed over)."""
    findings = []
    harness = os.path.join(tobj, "harness", "CMakeFiles", "lpcbench_harness.dir")
    bench = os.path.join(tobj, "lpcbench", "CMakeFiles", "lpcbench.dir")
    if not os.path.isdir(harness) or not os.path.isdir(bench):
        return [f"{tobj}: no harness or lpcbench objects (build the tools first)"]

    def current(o, objdir, srcdir):
        src = os.path.join(srcdir, os.path.relpath(o, objdir)[:-len(".o")])
        return tools is None or os.path.exists(src)

    objs = {}  # object -> (folder under lpcbench.dir or "harness", defined, undefined)
    for o in objects_under(harness):
        if current(o, harness, os.path.join(tools or "", "harness")):
            objs[o] = ("harness",) + defined_undefined(o)
    for o in objects_under(bench):
        if not current(o, bench, os.path.join(tools or "", "lpcbench")):
            continue
        rel = os.path.relpath(o, bench).split(os.sep)
        objs[o] = ((rel[0] if len(rel) > 1 else "main"),) + defined_undefined(o)
    where = {}
    for o, (folder, dfn, _) in objs.items():
        for sym in dfn:
            where.setdefault(sym, []).append((folder, o))
    for o, (folder, _, und) in sorted(objs.items()):
        name = os.path.basename(o)[:-len(".c.o")]
        for sym in sorted(und - INTERPOSED):
            for other, oo in where.get(sym, []):
                oname = os.path.basename(oo)[:-len(".c.o")]
                if folder == "harness" and other != "harness":
                    findings.append(f"harness/{name}: calls {sym}, defined in lpcbench ({oname})")
                elif folder not in ("harness", "main") and other not in ("harness", folder):
                    findings.append(f"lpcbench/{folder}/{name}: calls {sym}, defined in "
                                    f"{other}/{oname} (another benchmark)")
                elif (folder == other and name.endswith("_report") and oname != name):
                    findings.append(f"lpcbench/{folder}/{name}: calls {sym}, defined in "
                                    f"{folder}/{oname} (a report calls nothing of its benchmark)")
    return findings


def tool_selftest(root, tmp):
    tools = os.path.join(tmp, "tools")
    shutil.copytree(os.path.join(root, "tools"), tools)
    with open(os.path.join(tools, "harness", "pool.c"), "a", encoding="utf-8") as f:
        f.write('\n#include "lpcbench/benches.h"\n')
    with open(os.path.join(tools, "lpcbench", "scan", "scan.c"), "a", encoding="utf-8") as f:
        f.write('\n#include "lpcbench/read/read.h"\n')
    got = check_tool_includes(tools)
    want = ["the harness includes lpcbench/benches.h", "lpcbench/scan/ includes lpcbench/read/read.h"]
    # Objects: a report that calls its benchmark, a benchmark that calls
    # another, the harness that calls a benchmark.
    tobj = os.path.join(tmp, "tobj")
    for folder, name, code in (
            ("harness/CMakeFiles/lpcbench_harness.dir", "pool",
             "void read_go(void); void pool_go(void); void pool_go(void) { read_go(); }\n"),
            ("lpcbench/CMakeFiles/lpcbench.dir/read", "read",
             "void read_name(void); void read_go(void); void read_go(void) { read_name(); }\n"),
            ("lpcbench/CMakeFiles/lpcbench.dir/read", "read_report",
             "void read_go(void); void read_name(void); void read_name(void) { read_go(); }\n"),
            ("lpcbench/CMakeFiles/lpcbench.dir/scan", "scan",
             "void read_go(void); void scan_go(void); void scan_go(void) { read_go(); }\n")):
        d = os.path.join(tobj, folder)
        os.makedirs(d, exist_ok=True)
        c = os.path.join(d, name + ".c")
        open(c, "w", encoding="utf-8").write(code)
        subprocess.run(["cc", "-c", c, "-o", c + ".o"], check=True)
        os.remove(c)
    got += check_tool_symbols(tobj)
    want += ["harness/pool: calls read_go", "lpcbench/scan/scan: calls read_go",
             "lpcbench/read/read_report: calls read_go"]
    return got, want


def selftest(root):
    tmp = tempfile.mkdtemp()
    try:
        src = os.path.join(tmp, "src")
        shutil.copytree(os.path.join(root, "src"), src)
        with open(os.path.join(src, "core", "thread.c"), "a", encoding="utf-8") as f:
            f.write('\n#include "filemap/filemap.h"\n')
        with open(os.path.join(src, "sqlite", "vfs.c"), "a", encoding="utf-8") as f:
            f.write('\n#include "cache/cache.h"\n')
        got = check_includes(src)
        want = ["core/ includes filemap/", "sqlite/ includes cache/"]
        # Objects: page/ defines a filemap name and calls writeback/.
        objs = os.path.join(tmp, "objs")
        for part, name, code in (
                ("page", "up", "void lpc_wb_file(void); void lpc_filemap_bogus(void);\n"
                               "void lpc_filemap_bogus(void) { lpc_wb_file(); }\n"),
                ("writeback", "wb", "void lpc_wb_file(void); void lpc_wb_file(void) {}\n")):
            os.makedirs(os.path.join(objs, part), exist_ok=True)
            c = os.path.join(objs, part, name + ".c")
            open(c, "w", encoding="utf-8").write(code)
            subprocess.run(["cc", "-c", c, "-o", c[:-2] + ".o"], check=True)
        got += check_symbols(objs, public_symbols(root))
        want += ["page/up: defines lpc_filemap_bogus", "page/up: calls lpc_wb_file"]
        tgot, twant = tool_selftest(root, tmp)
        got += tgot
        want += twant
        missing = [w for w in want if not any(w in g for g in got)]
        for w in want:
            print(f"selftest: {'caught' if w not in missing else 'MISSED'}: {w}")
        return 1 if missing or len(got) != len(want) else 0
    finally:
        shutil.rmtree(tmp)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    ap.add_argument("--objects")
    ap.add_argument("--tool-objects")
    ap.add_argument("--selftest", action="store_true")
    a = ap.parse_args()
    root = os.path.abspath(a.root)
    if a.selftest:
        return selftest(root)
    findings = check_includes(os.path.join(root, "src"))
    if a.objects:
        findings += check_symbols(a.objects, public_symbols(root), os.path.join(root, "src"))
    findings += check_tool_includes(os.path.join(root, "tools"))
    if a.tool_objects:
        findings += check_tool_symbols(a.tool_objects, os.path.join(root, "tools"))
    for f in findings:
        print(f)
    print(f"layers: {len(findings)} findings")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
