#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check-abi.py - what a program built against a released lpc.h relies on
still holds in the headers of this tree.

A program compiled against lpc 0.2.0's headers keeps, in its own code, the
layout of every public struct it fills or reads (struct lpc_config that
lpc_cache_create reads, struct lpc_stats that lpc_stats writes, the backend
ops table a user backend hands in...), the value of every constant it
passes (LPC_IO_NULL, LPC_PIN_WRITE, LPC_FADV_*...) and the way it calls
each function and callback.  The symbol versions (src/lpc.map) keep the
functions' names bound, not their types; nothing else tells anyone that a
field moved, a flag changed value or a parameter changed type, and such a
change breaks the old program silently: it passes what now means
something else.

  check-abi.py --dump INCLUDE_DIR        print the ABI description of the
                                         headers in INCLUDE_DIR/lpc/
  check-abi.py --check REF INCLUDE_DIR   compare them with REF, a --dump of
                                         a release (tests/packaging/abi/)
  check-abi.py --selftest INCLUDE_DIR    plant each kind of break in a copy
                                         of the headers; each must be found

The description is the compiler's own view of every header in lpc/ (clang's
record layouts and declarations, and a program that prints each constant
as that compiler evaluates it), one line each:
  struct NAME size N align A      every struct lpc_* the headers define
  field NAME OFFSET TYPE MEMBER   each member, at OFFSET (BYTE, or
                                  BYTE:FIRST-LAST for a bit-field); the
                                  members of an anonymous union or struct
                                  count as the enclosing struct's, as C
                                  names them
  typedef NAME TYPE               each lpc_* typedef (callbacks: a member
                                  spelled with one is compared through it)
  function NAME TYPE              each lpc_* function's prototype
  const NAME VALUE                each object-like LPC_* macro and LPC_*
                                  enumerator of integer type
  string NAME HEX TEXT            each LPC_* string macro (a name a program
                                  passes: the VFS's, RBD's prefix), its
                                  bytes in hex (compared) and as text
Rules of --check, for everything REF lists:
  - the struct still exists, of the same alignment, with every member at
    the same offset and of the same type; its size is the same, except for
    the structs lpc fills through a versioned symbol (GROWABLE: each old
    version of the symbol writes only its old prefix,
    tests/packaging/stats_abi.c), which may only grow.  Members named
    reserved* are exempt: a new member may take their place (lpc.h's
    reserved words are zeroed by lpc_config_init, and zero means the
    default), the struct's size and its other members still checked;
  - each typedef and function keeps its type, except the functions whose
    old types stay bound to their old symbol version (VERSIONED);
  - each constant keeps its value, and each string its bytes, except the
    version (LPC_VERSION_*).
What REF does not list (new structs, members, functions, constants) is
free.  Not covered: what differs only for C++ or under a feature macro (the
dump is one C compile without -D), and which header declares what (a
constant moved between headers is a source break, not an ABI one).
Exit: 0 holds, 1 broken, 77 no clang (skip).
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

# Filled by lpc through a versioned symbol: may grow, never change a prefix.
GROWABLE = {"lpc_stats"}
# Functions whose older types stay bound to their older symbol versions.
VERSIONED = set()
EXEMPT_CONST = re.compile(r"^LPC_VERSION_")
RESERVED = re.compile(r"^reserved")


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def headers_in(inc):
    """Every header of INCLUDE_DIR/lpc/, lpc.h first."""
    names = sorted(os.path.basename(h) for h in glob.glob(os.path.join(inc, "lpc", "*.h")))
    return sorted(names, key=lambda h: h != "lpc.h")


def uncomment(text):
    return re.sub(r"/\*.*?\*/|//[^\n]*", "", text, flags=re.S)


def header_text(inc):
    out = ""
    for h in headers_in(inc):
        with open(os.path.join(inc, "lpc", h)) as fp:
            out += uncomment(fp.read()) + "\n"
    return out


def struct_names(text):
    return sorted(set(re.findall(r"\bstruct\s+(lpc_\w+)\s*\{", text)))


def enumerators(text):
    names = []
    for body in re.findall(r"\benum\b[^{;]*\{(.*?)\}", text, re.S):
        names += re.findall(r"(?:^|,)\s*(LPC_\w+)\s*(?==|,|$)", body.strip())
    return names


def macros(cc, inc, tu):
    """The object-like LPC_* macros with a body (header guards have none)."""
    out = run([cc, "-I", inc, "-dM", "-E", tu])
    if out.returncode:
        sys.exit("check-abi: preprocessing failed:\n" + out.stderr)
    return [m.group(1) for m in re.finditer(r"^#define (LPC_\w+) (\S.*)$", out.stdout, re.M)]


PRINTER = r"""
#include <stdint.h>
#include <stdio.h>
static void abi_int(const char *name, int neg, long long s, unsigned long long u)
{
	if (neg)
		printf("const %s %lld\n", name, s);
	else
		printf("const %s %llu\n", name, u);
}
static void abi_str(const char *name, const char *v)
{
	printf("string %s ", name);
	for (const char *c = v; *c; c++)
		printf("%02x", (unsigned char)*c);
	printf(" %s\n", v);
}
/* The constant's own type decides: a string macro defined through another
 * macro is still a string, any integer expression an integer. */
#define ABI_P(n, x) _Generic((x), char *: abi_str(n, (const char *)(uintptr_t)(x)), \
	const char *: abi_str(n, (const char *)(uintptr_t)(x)), \
	default: abi_int(n, (x) < 0, (long long)(x), (unsigned long long)(x)))
"""


def printer_source(includes, consts):
    body = "".join(f'\tABI_P("{c}", {c});\n' for c in consts)
    return includes + PRINTER + "int main(void)\n{\n" + body + "\treturn 0;\n}\n"


def constants(cc, inc, tmp, includes, names):
    """Runs the printer; a name that is no expression (an attribute, a
    type) is left out, found by compiling each name alone."""
    src, exe = os.path.join(tmp, "consts.c"), os.path.join(tmp, "consts")
    cflags = ["-I", inc, "-w", "-o", exe, src]

    def build(ns):
        with open(src, "w") as fp:
            fp.write(printer_source(includes, ns))
        return run([cc] + cflags).returncode == 0

    if not build(names):
        names = [n for n in names if build([n])]
        if not build(names):
            sys.exit("check-abi: the constant printer does not build")
    out = run([exe])
    if out.returncode:
        sys.exit("check-abi: the constant printer failed")
    return out.stdout.splitlines()


def layouts(cc, inc, tu, structs):
    lay = run([cc, "-I", inc, "-Xclang", "-fdump-record-layouts", "-fsyntax-only", tu])
    if lay.returncode:
        sys.exit("check-abi: compiling the headers failed:\n" + lay.stderr)
    lines, record, anon = [], None, []
    for line in lay.stdout.splitlines():
        m = re.match(r"\s*0 \| struct (lpc_\w+)$", line)
        if m:
            record, anon = (m.group(1) if m.group(1) in structs else None), []
            continue
        if record is None:
            continue
        m = re.match(r"\s*\| \[sizeof=(\d+), (?:dsize=\d+, )?align=(\d+)", line)
        if m:
            lines.append(f"struct {record} size {m.group(1)} align {m.group(2)}")
            record = None
            continue
        m = re.match(r"\s*(\d+(?::\d+-\d+)?) \|( +)(.*?) ?(\w*)$", line)
        if not m:
            continue
        depth = (len(m.group(2)) - 1) // 2  # 1: a member of the struct itself
        typ, name = m.group(3), m.group(4)
        if "(anonymous at" in typ or "(unnamed at" in typ:
            typ, name = (typ + " " + name).strip(), ""
        del anon[depth - 1:]
        # A member is the struct's own when every level above it is an
        # anonymous union or struct (C11: s.member reaches it).
        own = all(anon[: depth - 1]) and len(anon) == depth - 1
        anon.append(not name)
        if own and name:
            lines.append(f"field {record} {m.group(1)} {typ} {name}")
    return lines


def declarations(cc, inc, tu):
    out = run([cc, "-I", inc, "-Xclang", "-ast-dump", "-Xclang", "-ast-dump-filter=lpc_",
               "-fsyntax-only", tu])
    if out.returncode:
        sys.exit("check-abi: compiling the headers failed:\n" + out.stderr)
    lines = set()
    for m in re.finditer(r"^(TypedefDecl|FunctionDecl) 0x[0-9a-f]+ <[^>]*> (?:\S+ )*?(lpc_\w+) "
                         r"'([^']*)'(?::'([^']*)')?", out.stdout, re.M):
        kind = "typedef" if m.group(1) == "TypedefDecl" else "function"
        lines.add(f"{kind} {m.group(2)} {m.group(4) or m.group(3)}")
    return sorted(lines)


def dump(inc, cc):
    hs = headers_in(inc)
    if "lpc.h" not in hs:
        sys.exit(f"check-abi: no lpc/lpc.h in {inc}")
    text = header_text(inc)
    structs = struct_names(text)
    includes = "".join(f"#include <lpc/{h}>\n" for h in hs)
    with tempfile.TemporaryDirectory() as tmp:
        tu = os.path.join(tmp, "abi.c")
        with open(tu, "w") as fp:
            fp.write(includes)
            for st in structs:
                fp.write(f"unsigned long abi_size_{st} = sizeof(struct {st});\n")
        names = sorted(set(enumerators(text)) | set(macros(cc, inc, tu)))
        return (layouts(cc, inc, tu, structs) + declarations(cc, inc, tu)
                + constants(cc, inc, tmp, includes, names))


def parse(lines):
    """REF's or a dump's lines: {(kind, name): value}; a field's key is
    (field, struct.member), its value (offset, type)."""
    out = {}
    for line in lines:
        if not line.strip() or line.startswith("#"):
            continue
        kind, rest = line.split(" ", 1)
        if kind == "struct":
            w = rest.split()
            out[(kind, w[0])] = (int(w[2]), int(w[4]))
        elif kind == "field":
            rec, off, rest = rest.split(" ", 2)
            typ, _, member = rest.rpartition(" ")
            out[(kind, rec + "." + member)] = (off, typ)
        elif kind in ("typedef", "function", "const"):
            name, value = rest.split(" ", 1)
            out[(kind, name)] = value
        elif kind == "string":
            name, hexv = rest.split(" ", 2)[:2]
            out[("const", name)] = "string " + hexv
    return out


def compare(ref_lines, now_lines):
    ref, now = parse(ref_lines), parse(now_lines)
    bad = []
    for (kind, name), val in sorted(ref.items()):
        cur = now.get((kind, name))
        if kind == "struct":
            if cur is None:
                bad.append(f"struct {name}: gone")
                continue
            (size, align), (nsize, nalign) = val, cur
            if nalign != align:
                bad.append(f"struct {name}: align {nalign}, was {align}")
            if nsize < size or (nsize != size and name not in GROWABLE):
                bad.append(f"struct {name}: size {nsize}, was {size}"
                           + ("" if name in GROWABLE else " (only "
                              + ", ".join(sorted(GROWABLE)) + " may grow)"))
        elif kind == "field":
            rec, member = name.split(".", 1)
            if RESERVED.match(member) or ("struct", rec) not in now:
                continue
            if cur is None:
                bad.append(f"field {name}: gone")
                continue
            if cur[0] != val[0]:
                bad.append(f"field {name}: offset {cur[0]}, was {val[0]}")
            if cur[1] != val[1]:
                bad.append(f"field {name}: type {cur[1]}, was {val[1]}")
        elif kind in ("typedef", "function"):
            if cur is None:
                bad.append(f"{kind} {name}: gone")
            elif cur != val and name not in VERSIONED:
                bad.append(f"{kind} {name}: {cur}, was {val}")
        elif not EXEMPT_CONST.match(name):
            if cur is None:
                bad.append(f"const {name}: gone")
            elif cur != val:
                bad.append(f"const {name}: {cur}, was {val}")
    return bad, ref


def check(ref, inc, cc):
    with open(ref) as fp:
        ref_lines = fp.read().splitlines()
    bad, kinds = compare(ref_lines, dump(inc, cc))
    for b in bad:
        print("BROKEN " + b)
    count = {k: sum(1 for kk, _ in kinds if kk == k)
             for k in ("struct", "field", "typedef", "function", "const")}
    print(f"{os.path.basename(ref)}: {count['struct']} structs, {count['field']} members, "
          f"{count['typedef']} typedefs, {count['function']} functions, "
          f"{count['const']} constants: " + ("held" if not bad else f"{len(bad)} broken"))
    return 1 if bad else 0


def selftest(inc, cc):
    """Each planted break, in a copy of the headers, must be reported; each
    compatible edit must not be."""
    ref = dump(inc, cc)
    breaks = [
        ("two lpc_config fields swapped", "lpc.h",
         r"(struct lpc_config \{.*?\n)(\s*[^\n;]*;[^\n]*\n)(\s*[^\n;]*;[^\n]*\n)",
         lambda m: m.group(1) + m.group(3) + m.group(2), "field lpc_config."),
        ("a field's type changed", "lpc.h",
         r"(struct lpc_stats \{\s*(?:/\*.*?\*/\s*)?)uint64_t", lambda m: m.group(1) + "int64_t",
         "field lpc_stats."),
        ("lpc_config grown", "lpc.h", r"(struct lpc_config \{)",
         lambda m: m.group(1) + "\n\tuint64_t abi_selftest_pad[1];", "struct lpc_config: size"),
        ("a field made a bit-field in the same bytes", "lpc.h",
         r"(struct lpc_config \{.*?)\bint io_backend;",
         lambda m: m.group(1) + "int io_flags : 3;\n\tint io_backend : 29;",
         "field lpc_config.io_backend: offset"),
        ("an enumerator renumbered", "lpc.h",
         r"(\benum\b[^{;]*\{\s*(?:/\*.*?\*/\s*)*)(LPC_\w+)(\s*=\s*[^,\n]+)?",
         lambda m: m.group(1) + m.group(2) + " = 1000", "const "),
        ("a macro changed", "lpc.h", r"(#define LPC_BACKEND_V2\s+)(\d+)",
         lambda m: m.group(1) + str(int(m.group(2)) + 4096), "const LPC_BACKEND_V2"),
        ("lpc_stats' first field removed (it may grow, not lose its prefix)", "lpc.h",
         r"(struct lpc_stats \{\s*(?:/\*.*?\*/\s*)?)uint64_t \w+;", lambda m: m.group(1),
         "field lpc_stats."),
        ("the VFS's name given a trailing space", "lpc_sqlite.h",
         r'(#define LPC_SQLITE_VFS_NAME\s+)"(\w+)"', lambda m: m.group(1) + '"' + m.group(2) + ' "',
         "const LPC_SQLITE_VFS_NAME"),
        ("a callback typedef's parameter changed", "lpc.h",
         r"(typedef void lpc_backend_done\(void \*\w*, )int", lambda m: m.group(1) + "long",
         "typedef lpc_backend_done"),
        ("a function's parameter changed", "lpc.h",
         r"(int lpc_page_get\(struct lpc_file \*\w*, )uint64_t", lambda m: m.group(1) + "uint32_t",
         "function lpc_page_get"),
    ]
    compatible = [
        ("a reserved word taken by a new field", "lpc.h",
         r"(struct lpc_config \{.*?)uint64_t reserved\[2\];",
         lambda m: m.group(1) + "uint64_t new_field;\n\tuint64_t reserved[1];"),
        ("a field wrapped in an anonymous union", "lpc.h",
         r"(struct lpc_config \{.*?)(size_t page_size;)",
         lambda m: m.group(1) + "union {\n\t\t" + m.group(2) + "\n\t\tsize_t page_bytes;\n\t};"),
        ("a struct's brace on its own line", "lpc.h", r"struct lpc_cred \{",
         lambda m: "struct lpc_cred\n{"),
        ("a flag written with ^", "lpc.h", r"#define LPC_ACL_MASK\s+0x10",
         lambda m: "#define LPC_ACL_MASK (0x30 ^ 0x20)"),
        ("a string macro defined through another", "lpc_sqlite.h",
         r'(#define LPC_SQLITE_VFS_NAME\s+)"lpc"',
         lambda m: '#define LPC_ABI_SELFTEST_NAME "lpc"\n' + m.group(1) + "LPC_ABI_SELFTEST_NAME"),
    ]
    failed = 0

    def planted(what, h, pat, repl):
        tmp = tempfile.mkdtemp()
        shutil.copytree(os.path.join(inc, "lpc"), os.path.join(tmp, "lpc"))
        path = os.path.join(tmp, "lpc", h)
        with open(path) as fp:
            new, n = re.subn(pat, repl, fp.read(), count=1, flags=re.S)
        if not n:
            shutil.rmtree(tmp)
            print(f"SELFTEST could not plant: {what}")
            return None
        with open(path, "w") as fp:
            fp.write(new)
        try:
            return compare(ref, dump(tmp, cc))[0]
        finally:
            shutil.rmtree(tmp)

    for what, h, pat, repl, want in breaks:
        bad = planted(what, h, pat, repl)
        found = [b for b in bad or [] if b.startswith(want)]
        print(f"{'ok' if found else 'MISSED'}: {what}: "
              + (found[0] if found else f"no '{want}' among {bad}"))
        failed |= not found
    for what, h, pat, repl in compatible:
        bad = planted(what, h, pat, repl)
        print(f"{'ok' if bad == [] else 'FALSE'}: {what}: "
              + ("held" if bad == [] else f"reported {bad}"))
        failed |= bad != []
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
        print("# lpc ABI: struct layouts, typedefs, prototypes and constants of "
              "lpc/*.h (scripts/check-abi.py --dump)")
        print("\n".join(dump(a.dump, a.cc)))
        return 0
    if a.check:
        return check(a.check[0], a.check[1], a.cc)
    return selftest(a.selftest, a.cc)


if __name__ == "__main__":
    sys.exit(main())
