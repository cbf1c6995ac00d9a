#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check-abi.py - what a program built against a released lpc.h relies on
still holds in the headers of this tree.

A program compiled against lpc 0.2.0's headers keeps, in its own code, the
layout of every public struct it fills or reads (struct lpc_config that
lpc_cache_create reads, struct lpc_stats that lpc_stats writes, the backend
ops table a user backend hands in...) and the value of every constant it
passes (LPC_IO_NULL, LPC_PIN_WRITE, LPC_FADV_*...).  The symbol versions
(src/lpc.map) keep the functions' names bound; nothing else tells anyone
that a field moved or a flag changed value, and such a change breaks the
old program silently: it passes what now means something else.

  check-abi.py --dump INCLUDE_DIR        print the ABI description of the
                                         headers in INCLUDE_DIR/lpc/
  check-abi.py --check REF INCLUDE_DIR   compare them with REF, a --dump of
                                         a release (tests/packaging/abi/)
  check-abi.py --selftest INCLUDE_DIR    plant each kind of break in a copy
                                         of the headers; each must be found

The description (the compiler's own view, clang's record layouts and a
program that prints each constant as that compiler sees it):
  struct NAME size N align A      every struct lpc_* the headers define
  field NAME OFFSET TYPE FIELD    each of its members (top level)
  const NAME VALUE                every integer macro LPC_* and every
                                  enumerator LPC_* of the headers
  string NAME TEXT                every string macro LPC_* (a name a
                                  program passes: the VFS's, RBD's prefix)
Rules of --check, for everything REF lists:
  - the struct still exists with every field at the same offset and of the
    same type; its size is the same, except for the structs lpc fills
    through a versioned symbol (GROWABLE: each old version of the symbol
    writes only its old prefix, tests/packaging/stats_abi.c), which may
    only grow;
  - the constant still exists with the same value, except the version
    numbers (LPC_VERSION_*);
What REF does not list (new structs, fields, constants) is free.  Function
prototypes are not compared (the symbol versions and debian/*.symbols
carry the functions).  Exit: 0 holds, 1 broken, 77 no clang (skip).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

HEADERS = ("lpc.h", "lpc_sqlite.h", "lpc_rbd.h")
# Filled by lpc through a versioned symbol: may grow, never change a prefix.
GROWABLE = {"lpc_stats"}
EXEMPT_CONST = re.compile(r"^LPC_VERSION_")


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def headers_in(inc):
    return [h for h in HEADERS if os.path.exists(os.path.join(inc, "lpc", h))]


def struct_names(inc):
    names = []
    for h in headers_in(inc):
        with open(os.path.join(inc, "lpc", h)) as fp:
            names += re.findall(r"^struct (lpc_\w+) \{", fp.read(), re.M)
    return sorted(set(names))


def enumerators(inc):
    names = []
    for h in headers_in(inc):
        with open(os.path.join(inc, "lpc", h)) as fp:
            text = re.sub(r"/\*.*?\*/", "", fp.read(), flags=re.S)
        for body in re.findall(r"\benum\b[^{;]*\{(.*?)\}", text, re.S):
            names += re.findall(r"^\s*(LPC_\w+)\s*(?:=|,|$)", body, re.M)
    return names


def macros(cc, inc, tu):
    """The object-like LPC_* macros: (integer ones, string ones)."""
    out = run([cc, "-I", inc, "-dM", "-E", tu])
    if out.returncode:
        sys.exit("check-abi: preprocessing failed:\n" + out.stderr)
    ints, strs = [], []
    for line in out.stdout.splitlines():
        m = re.match(r"#define (LPC_\w+) (.+)$", line)
        if not m:
            continue
        if re.fullmatch(r'"[^"\\]*"', m.group(2)):
            strs.append(m.group(1))
        elif re.fullmatch(r"[\w\s()<>|&~+\-*/]+", m.group(2)):
            ints.append(m.group(1))
    return ints, strs


def dump(inc, cc):
    hs = headers_in(inc)
    if "lpc.h" not in hs:
        sys.exit(f"check-abi: no lpc/lpc.h in {inc}")
    with tempfile.TemporaryDirectory() as tmp:
        tu = os.path.join(tmp, "abi.c")
        with open(tu, "w") as fp:
            for h in hs:
                fp.write(f"#include <lpc/{h}>\n")
        ints, strs = macros(cc, inc, tu)
        consts = sorted(set(enumerators(inc)) | set(ints))
        structs = struct_names(inc)
        with open(tu, "a") as fp:
            fp.write("#include <stdio.h>\n")
            for s in structs:
                fp.write(f"unsigned long abi_size_{s} = sizeof(struct {s});\n")
            fp.write("int main(void)\n{\n")
            for c in consts:
                fp.write(f'\tif (({c}) < 0)\n\t\tprintf("const {c} %lld\\n", (long long)({c}));\n'
                         f'\telse\n\t\tprintf("const {c} %llu\\n", '
                         f'(unsigned long long)({c}));\n')
            for c in sorted(strs):
                fp.write(f'\tprintf("string {c} %s\\n", {c});\n')
            fp.write("\treturn 0;\n}\n")
        lay = run([cc, "-I", inc, "-Xclang", "-fdump-record-layouts", "-fsyntax-only", tu])
        if lay.returncode:
            sys.exit("check-abi: compiling the headers failed:\n" + lay.stderr)
        exe = os.path.join(tmp, "abi")
        built = run([cc, "-I", inc, "-o", exe, tu])
        if built.returncode:
            sys.exit("check-abi: building the constant printer failed:\n" + built.stderr)
        vals = run([exe]).stdout.splitlines()
    lines = []
    record, depth = None, None
    for line in lay.stdout.splitlines():
        m = re.match(r"\s*(\d+) \| struct (lpc_\w+)$", line)
        if m and m.group(1) == "0":
            record = m.group(2) if m.group(2) in structs else None
            continue
        if record is None:
            continue
        m = re.match(r"\s*\| \[sizeof=(\d+), (?:dsize=\d+, )?align=(\d+)", line)
        if m:
            lines.append(f"struct {record} size {m.group(1)} align {m.group(2)}")
            record = None
            continue
        m = re.match(r"\s*(\d+)(?::\d+-\d+)? \|(\s+)(.*) (\w+)$", line)
        if m and len(m.group(2)) == 3:  # top-level members only
            lines.append(f"field {record} {m.group(1)} {m.group(3)} {m.group(4)}")
    return lines + vals


def parse(lines):
    structs, fields, consts = {}, {}, {}
    for line in lines:
        w = line.split()
        if not w or w[0].startswith("#"):
            continue
        if w[0] == "struct":
            structs[w[1]] = (int(w[3]), int(w[5]))
        elif w[0] == "field":
            fields[(w[1], w[-1])] = (int(w[2]), " ".join(w[3:-1]))
        elif w[0] == "const":
            consts[w[1]] = int(w[2])
        elif w[0] == "string":
            consts[w[1]] = " ".join(w[2:])
    return structs, fields, consts


def compare(ref_lines, now_lines):
    rs, rf, rc = parse(ref_lines)
    ns, nf, nc = parse(now_lines)
    bad = []
    for s, (size, align) in sorted(rs.items()):
        if s not in ns:
            bad.append(f"struct {s}: gone")
            continue
        nsize, nalign = ns[s]
        if nalign != align:
            bad.append(f"struct {s}: align {nalign}, was {align}")
        if nsize < size or (nsize != size and s not in GROWABLE):
            bad.append(f"struct {s}: size {nsize}, was {size}"
                       + ("" if s in GROWABLE else " (only "
                          + ", ".join(sorted(GROWABLE)) + " may grow)"))
    for (s, f), (off, typ) in sorted(rf.items()):
        if s not in ns:
            continue
        if (s, f) not in nf:
            bad.append(f"field {s}.{f}: gone")
            continue
        noff, ntyp = nf[(s, f)]
        if noff != off:
            bad.append(f"field {s}.{f}: offset {noff}, was {off}")
        if ntyp != typ:
            bad.append(f"field {s}.{f}: type {ntyp}, was {typ}")
    for c, v in sorted(rc.items()):
        if EXEMPT_CONST.match(c):
            continue
        if c not in nc:
            bad.append(f"const {c}: gone")
        elif nc[c] != v:
            bad.append(f"const {c}: {nc[c]}, was {v}")
    return bad, len(rs), len(rf), len(rc)


def check(ref, inc, cc):
    with open(ref) as fp:
        ref_lines = fp.read().splitlines()
    bad, ns, nf, nc = compare(ref_lines, dump(inc, cc))
    for b in bad:
        print("BROKEN " + b)
    print(f"{os.path.basename(ref)}: {ns} structs, {nf} fields, {nc} constants: "
          + ("held" if not bad else f"{len(bad)} broken"))
    return 1 if bad else 0


def selftest(inc, cc):
    """Each planted break, in a copy of the headers, must be reported."""
    ref = dump(inc, cc)
    plants = [
        ("two lpc_config fields swapped", "lpc.h",
         r"(struct lpc_config \{.*?\n)(\s*[^\n;]*;[^\n]*\n)(\s*[^\n;]*;[^\n]*\n)",
         lambda m: m.group(1) + m.group(3) + m.group(2), "field lpc_config."),
        ("a field's type changed", "lpc.h",
         r"(struct lpc_stats \{\s*(?:/\*.*?\*/\s*)?)uint64_t", lambda m: m.group(1) + "int64_t",
         "field lpc_stats."),
        ("lpc_config grown", "lpc.h", r"(struct lpc_config \{)",
         lambda m: m.group(1) + "\n\tuint64_t abi_selftest_pad[1];", "struct lpc_config: size"),
        ("an enumerator renumbered", "lpc.h", r"(\benum\b[^{;]*\{\s*(?:/\*.*?\*/\s*)*)(LPC_\w+)(\s*=\s*[^,\n]+)?",
         lambda m: m.group(1) + m.group(2) + " = 1000", "const "),
        ("a macro changed", "lpc.h", r"(#define LPC_BACKEND_V2\s+)(\d+)",
         lambda m: m.group(1) + str(int(m.group(2)) + 4096), "const LPC_BACKEND_V2"),
        ("lpc_stats' first field removed (it may grow, not lose its prefix)", "lpc.h",
         r"(struct lpc_stats \{\s*(?:/\*.*?\*/\s*)?)uint64_t \w+;", lambda m: m.group(1),
         "field lpc_stats."),
        ("the VFS's name changed", "lpc_sqlite.h", r'(#define LPC_SQLITE_VFS_NAME\s+)"(\w+)"',
         lambda m: m.group(1) + '"' + m.group(2) + 'x"', "const LPC_SQLITE_VFS_NAME"),
    ]
    failed = 0
    for what, h, pat, repl, want in plants:
        with tempfile.TemporaryDirectory() as tmp:
            shutil.copytree(os.path.join(inc, "lpc"), os.path.join(tmp, "lpc"))
            path = os.path.join(tmp, "lpc", h)
            with open(path) as fp:
                text = fp.read()
            new, n = re.subn(pat, repl, text, count=1, flags=re.S)
            if not n:
                print(f"SELFTEST could not plant: {what}")
                failed = 1
                continue
            with open(path, "w") as fp:
                fp.write(new)
            bad = compare(ref, dump(tmp, cc))[0]
            found = [b for b in bad if b.startswith(want)]
            print(f"{'ok' if found else 'MISSED'}: {what}: "
                  + (found[0] if found else f"no '{want}' among {bad}"))
            failed |= not found
    same = compare(ref, dump(inc, cc))[0]
    print(("ok" if not same else "MISSED") + ": the headers against their own dump: "
          + ("nothing broken" if not same else "; ".join(same)))
    return 1 if failed or same else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--dump", metavar="INCLUDE_DIR")
    g.add_argument("--check", nargs=2, metavar=("REF", "INCLUDE_DIR"))
    g.add_argument("--selftest", metavar="INCLUDE_DIR")
    ap.add_argument("--cc", default=os.environ.get("LPC_ABI_CC", "clang"))
    a = ap.parse_args()
    if not shutil.which(a.cc):
        print(f"SKIP: {a.cc} not found (clang's record layouts are the reference)")
        return 77
    if a.dump:
        print("# lpc ABI: struct layouts and integer constants of lpc/*.h "
              "(scripts/check-abi.py --dump)")
        print("\n".join(dump(a.dump, a.cc)))
        return 0
    if a.check:
        return check(a.check[0], a.check[1], a.cc)
    return selftest(a.selftest, a.cc)


if __name__ == "__main__":
    sys.exit(main())
