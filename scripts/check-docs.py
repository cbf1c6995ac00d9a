#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check-docs.py - the words around the code must name what exists.

Reads README.md, NEWS.md, docs/*.md, man/man*/*, bench/README.md,
tests/*/README.md and debian/README*, and the comments of every C file
(src/, include/, tools/, tests/, examples/), and reports each mention that
names something the tree does not have:

  path  a repository path (`src/filemap/run.c`, `tests/unit/test_*.c`,
        `src/{core,page}/`, `tools/lpcbench/`), or a file name with a
        source extension (`lookup.c`, `lpc_sqlite.7`).  A path under a build
        folder (`build-release/tests/model_api/model_api`) needs its source
        folder (`tests/model_api`).  In a C comment or a test folder's README
        a path may also be relative to src/ (`filemap/optimistic.h`), to the
        file's own folder, or to tests/.
  name  an `lpc_*` or `LPC_*` identifier that no code, build or script file
        (comments of C files left out) and no file name contains; `lpc_ns_*`
        needs one name with that prefix.
  tag   a protocol step tag (`R4`, `K3`, `SQ3a`) that no step list or label of
        the protocols' code and models defines: a tag opening a line of a
        comment in src/, include/ or tests/model/*.pml (`* R4 reload ...`), or
        a comment of its own at the end of a code line (`/* R4 */`).
  row   docs/architecture.md's table of parts has a row per folder of src/,
        and each row names every .c and .h file of its folder;
        tests/model/README.md's table has a row per model (*.pml).

Usage: check-docs.py [--root DIR] [--plant-doc FILE] [--plant-c FILE]
                     [--plant-parts FILE] [--plant-models FILE]
  --plant-doc/--plant-c check FILE too, as a document or as a C file;
  --plant-parts/--plant-models read FILE as the table of parts or of models
  (the checker's own test plants stale mentions and rows that way).
Prints one line per finding (FILE:LINE: kind 'mention') and a summary; exits
1 when there is a finding, 0 when there is none, 2 on a usage error.
"""

import argparse
import fnmatch
import glob
import itertools
import os
import re
import sys

# Words that look like step tags and are not: a C standard, an instruction
# set extension, SQLite's and the kernel's own names.
NOT_TAGS = {"C11", "C99", "C17", "AVX2", "AVX512", "SSE2", "SSE4", "X86", "H200",
            "UTF8", "UTF16", "SHA1", "SHA256", "MD5", "IPv4", "IPv6", "L1", "L2", "L3",
            "P50", "P90", "P99", "X11",
            "A0"}  # A0, A1: connections in tests/sqlite, not steps
# Other projects' files that comments name: SQLite's sources.
EXTERNAL_FILES = {"pager.c", "wal.c", "os_unix.c", "os.h", "sqlite3.c", "sqlite3.h",
                  "sqliteInt.h", "btree.c", "filemap.c", "pagemap.h", "xarray.c",
                  "xarray.h", "rculfhash.c", "clock_cache.h"}
# Names of the reader's own files in the usage examples, not of the tree.
EXAMPLE_FILES = {"app.c", "data.db", "db.sqlite", "x.c", "prog.c", "MODEL.pml"}
SELF = {os.path.join("scripts", "check-docs.py"),
        os.path.join("tests", "packaging", "check_docs_selftest.sh")}
SRC_EXT = ("c", "h", "md", "sh", "pml", "cmake", "py", "sql", "map", "in", "gp", "supp")
DOC_EXT = re.compile(r"\.(?:%s|[37])$" % "|".join(SRC_EXT))

TAG_RE = re.compile(r"(?<![A-Za-z0-9_./@-])([A-Z]{1,3}[0-9]{1,2}[a-d]?)(?![A-Za-z0-9_]|\.[0-9])"
                    r"|(?<=[0-9a-d][-\u2013])([A-Z]{1,3}[0-9]{1,2}[a-d]?)(?![A-Za-z0-9_]|\.[0-9])")
NAME_RE = re.compile(r"(?<![A-Za-z0-9_])((?:lpc|LPC)_[A-Za-z0-9_]*\*?)")
PATH_RE = re.compile(r"(?<![A-Za-z0-9_.:/~$<-])([A-Za-z0-9_.{},*+-]+(?:/[A-Za-z0-9_.{},*+-]*)+)")
FILE_RE = re.compile(r"(?<![A-Za-z0-9_./~$<-])([A-Za-z0-9_+-][A-Za-z0-9_.+-]*\.[A-Za-z0-9]+)(?![A-Za-z0-9_/])")


C_TOKEN = re.compile(r"/\*.*?(?:\*/|$)|//[^\n]*|\"(?:\\.|[^\"\\\n])*\"?|'(?:\\.|[^'\\\n])*'?",
                     re.S)


def c_comments(text):
    """Returns ([(line, text)] for each line of each comment of C text, the
    text with its comments blanked (strings kept))."""
    comments, out, pos, line = [], [], 0, 1
    for m in C_TOKEN.finditer(text):
        tok = m.group(0)
        if tok[0] in "\"'":
            continue
        out.append(text[pos:m.start()])
        line += text.count("\n", pos, m.start())
        for k, part in enumerate(tok.split("\n")):
            comments.append((line + k, part))
        line += tok.count("\n")
        out.append(re.sub(r"[^\n]", " ", tok))
        pos = m.end()
    out.append(text[pos:])
    return comments, "".join(out)


def expand_braces(s):
    m = re.search(r"\{([^{}]*)\}", s)
    if not m:
        return [s]
    return list(itertools.chain.from_iterable(
        expand_braces(s[:m.start()] + alt + s[m.end():]) for alt in m.group(1).split(",")))


class Tree:
    def __init__(self, root):
        self.root = root
        self.files, self.basenames = [], set()
        for d, dirs, names in os.walk(root):
            rel = os.path.relpath(d, root)
            top = rel.split(os.sep)[0]
            if rel != "." and top.startswith(("build", ".")) or top in ("obj-x86_64-linux-gnu",) or \
               (top == "debian" and rel.count(os.sep) >= 1 and
                    rel.split(os.sep)[1] not in ("source", "tests")):
                dirs[:] = []
                continue
            dirs[:] = [x for x in dirs if not x.startswith(".")]
            for nm in names:
                p = os.path.normpath(os.path.join(rel, nm))
                self.files.append(p)
                self.basenames.add(nm)
        self.top = {p.split(os.sep)[0] for p in self.files}
        self.src_parts = {p.split(os.sep)[1] for p in self.files
                          if p.startswith("src" + os.sep) and p.count(os.sep) >= 2}
        self.names, self.tags = set(), set()
        self.ignore = [x.strip().strip("/") for x in self.read(".gitignore").split("\n")
                       if x.strip() and not x.startswith("#")]
        for p in self.files:
            self._index(p)

    def read(self, p):
        try:
            with open(os.path.join(self.root, p), encoding="utf-8", errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def _index(self, p):
        base = os.path.basename(p)
        if p in SELF:
            return  # the checker and its test name stale things on purpose
        stem = base.split(".")[0]
        self.names.add(stem)
        if base in ("CMakeLists.txt",) or p.endswith((".cmake", ".sh", ".map", ".py", ".sql",
                                                       ".in", ".pml", ".supp", ".gp")) \
           or p.startswith("debian" + os.sep) or p == ".ci/run":
            text = self.read(p)
            self.names.update(NAME_RE.findall(text))
            if p.endswith(".pml"):
                self._tags_of(text.split("\n"))
                self._labels_of(text)
        elif p.endswith((".c", ".h")):
            comments, code = c_comments(self.read(p))
            self.names.update(NAME_RE.findall(code))
            if p.startswith(("src" + os.sep, "include" + os.sep)):
                self._tags_of([c for _, c in comments])
                self._labels_of(self.read(p))

    def _labels_of(self, text):
        # A label of its own at the end of a code line: `x; /* R4 */`.
        for m in re.finditer(r"/\*\s*([A-Z]{1,3}[0-9]{1,2}[a-d]?)\b[^*]*\*/", text):
            self.tags.add(m.group(1))

    def _tags_of(self, lines):
        for ln in lines:
            m = re.match(r"\s*(?:/\*+|\*|//|--)?\s*(?:\(?([A-Z]{1,3}[0-9]{1,2}[a-d]?)\)?)"
                         r"(?:[.:,)]|\s|$)", ln)
            if m and m.group(1):
                self.tags.add(m.group(1))
            # `R2-R4` or `E1..E7` opening a line defines the ones between.
            m = re.match(r"\s*(?:/\*+|\*|//)?\s*([A-Z]{1,3})([0-9]{1,2})\s*[-–.]+\s*\1([0-9]{1,2})\b",
                         ln)
            if m:
                for k in range(int(m.group(2)), int(m.group(3)) + 1):
                    self.tags.add("%s%d" % (m.group(1), k))

    def ignored(self, base):
        """A build product's name (.gitignore: spin's pan, pan.c)."""
        return any(fnmatch.fnmatch(base, pat) for pat in self.ignore if "/" not in pat)

    def exists(self, rel):
        rel = os.path.normpath(rel)
        if rel.startswith(".."):
            return False
        if any(c in rel for c in "*?["):
            return bool(glob.glob(os.path.join(self.root, rel)))
        return os.path.exists(os.path.join(self.root, rel))

    def name_exists(self, name):
        if name.endswith("*"):
            pre = name[:-1]
            return any(n.startswith(pre) for n in self.names)
        if name.endswith("_"):
            return any(n.startswith(name) for n in self.names)
        return name in self.names


def check_path(tree, tok, where, is_c):
    tok = tok.rstrip(".,;:")
    while tok.startswith("./"):
        tok = tok[2:]
    if os.path.basename(tok) in EXAMPLE_FILES or tree.ignored(os.path.basename(tok)):
        return True
    if "://" in tok or tok.startswith(("/", "~")) or tok.count("/") == 0:
        return True
    for cand in expand_braces(tok):
        parts = [x for x in cand.split("/") if x]
        if not parts:
            continue
        first = parts[0]
        if first.startswith("build") or first == "obj-x86_64-linux-gnu":
            # A build product: its source folder must exist.
            rest = parts[1:-1]
            if rest and not tree.exists("/".join(rest)):
                return False
            continue
        bases = []
        if first in tree.top:
            bases.append("")
        if first in tree.src_parts:
            bases.append("src")
        here = os.path.dirname(where)
        if (is_c or where.startswith("tests")) and tree.exists(os.path.join(here, first)):
            bases.append(here)
        if where.startswith("tests") and tree.exists(os.path.join("tests", first)):
            bases.append("tests")
        if first == "lpc" and cand.endswith(".h"):
            bases.append("include")  # #include <lpc/lpc.h>
        if not bases:
            continue  # not a repository path (lib/cmake/lpc, man3/...)
        # A program is named for its source: examples/read_file.
        if not any(tree.exists(os.path.join(b, cand)) or tree.exists(os.path.join(b, cand + ".c"))
                   for b in bases):
            return False
    return True


def check_text(tree, where, lines, is_c, findings):
    """lines: (line number, text) pairs."""
    in_code_fence = False
    for no, text in lines:
        if not is_c and text.lstrip().startswith("```"):
            in_code_fence = not in_code_fence
        for m in PATH_RE.finditer(text):
            if not check_path(tree, m.group(1), where, is_c):
                findings.append((where, no, "path", m.group(1).rstrip(".,;:")))
        for m in FILE_RE.finditer(text):
            tok = m.group(1).rstrip(".")
            if not DOC_EXT.search(tok) or tok in EXAMPLE_FILES or tok in EXTERNAL_FILES or \
               re.match(r"^[0-9.]+$", tok) or len(tok.split(".")[0]) <= 1 or tree.ignored(tok):
                continue  # not a file of the tree (g.sql is a struct's field)
            if text[m.end():m.end() + 1] == "(":
                continue  # a function call: lpc_page_get.3 never looks like that
            if tok.endswith((".3", ".7")) and not tok.startswith("lpc"):
                continue  # another project's man page (pread.2, cmake.1 ...)
            if tok not in tree.basenames:
                findings.append((where, no, "path", tok))
        for m in NAME_RE.finditer(text):
            nm = m.group(1)
            if nm in ("lpc_", "LPC_") or re.match(r"^LPC_[0-9]", nm):
                continue
            if re.search(r"_(?:xx|XX|N)$", nm):
                nm = nm[:-len(nm.split("_")[-1])]  # a pattern: LPC_YP_xx
            if not tree.name_exists(nm):
                findings.append((where, no, "name", nm))
        for m in TAG_RE.finditer(text):
            tag = m.group(1) or m.group(2)
            if tag in NOT_TAGS or tag in tree.tags or tag.startswith("QD"):  # QD1: queue depth
                continue
            findings.append((where, no, "tag", tag))


def read_as(tree, p, instead):
    if instead:
        with open(instead, encoding="utf-8", errors="replace") as f:
            return instead, f.read()
    return p, tree.read(p)


def check_parts_table(tree, findings, instead=None):
    """docs/architecture.md's table of parts (or INSTEAD, a file read in its
    place): a row per folder of src/ that has C files, and each row names
    every .c and .h file of its folder."""
    p, text = read_as(tree, os.path.join("docs", "architecture.md"), instead)
    rows = {}
    for no, line in enumerate(text.split("\n"), 1):
        m = re.match(r"\|\s*`src/([a-z_]+)/`\s*\|(.*)", line)
        if m:
            rows[m.group(1)] = (no, set(re.findall(r"`([A-Za-z0-9_.]+\.[ch])`", m.group(2))))
    for part in sorted(tree.src_parts):
        files = {os.path.basename(f) for f in tree.files
                 if os.path.dirname(f) == os.path.join("src", part) and f.endswith((".c", ".h"))}
        if not files:
            continue
        if part not in rows:
            findings.append((p, 0, "part (no row in the table of parts)", "src/%s/" % part))
            continue
        no, named = rows[part]
        for f in sorted(files - named):
            findings.append((p, no, "row (a file it omits)", "src/%s/%s" % (part, f)))


def check_models_table(tree, findings, instead=None):
    """tests/model/README.md's table (or INSTEAD's) has a row per model
    (tests/model/*.pml)."""
    p, text = read_as(tree, os.path.join("tests", "model", "README.md"), instead)
    named = set(re.findall(r"^\|\s*`([A-Za-z0-9_]+\.pml)`\s*\|", text, re.M))
    for f in sorted(tree.files):
        if os.path.dirname(f) == os.path.join("tests", "model") and f.endswith(".pml") \
           and os.path.basename(f) not in named:
            findings.append((p, 0, "row (a model the table omits)", f))


def doc_files(tree):
    pats = ["README.md", "NEWS.md", "docs/*.md", "man/man*/*", "bench/README.md",
            "tests/*/README.md", "debian/README*"]
    out = []
    for pat in pats:
        out += sorted(os.path.relpath(p, tree.root) for p in glob.glob(os.path.join(tree.root, pat)))
    return out


def c_files(tree):
    return sorted(p for p in tree.files
                  if p.endswith((".c", ".h")) and p.split(os.sep)[0] in
                  ("src", "include", "tools", "tests", "examples"))


def main():
    ap = argparse.ArgumentParser(description="report stale paths, names and tags in the docs")
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    ap.add_argument("--plant-doc", action="append", default=[])
    ap.add_argument("--plant-c", action="append", default=[])
    ap.add_argument("--plant-parts", help="read FILE as docs/architecture.md's table of parts")
    ap.add_argument("--plant-models", help="read FILE as tests/model/README.md's table")
    a = ap.parse_args()
    tree = Tree(os.path.abspath(a.root))
    findings = []
    docs = [(p, p) for p in doc_files(tree)] + [(p, "README.md") for p in a.plant_doc]
    for path, where in docs:
        full = path if os.path.isabs(path) or path in a.plant_doc else os.path.join(tree.root, path)
        with open(full, encoding="utf-8", errors="replace") as f:
            lines = list(enumerate(f.read().split("\n"), 1))
        check_text(tree, path if path in a.plant_doc else where, lines, False, findings)
    cs = [(p, p) for p in c_files(tree)] + [(p, "src/filemap/planted.c") for p in a.plant_c]
    for path, where in cs:
        full = path if path in a.plant_c else os.path.join(tree.root, path)
        with open(full, encoding="utf-8", errors="replace") as f:
            comments, _ = c_comments(f.read())
        # Relative paths resolve from `where`; findings name the real file.
        sub = []
        check_text(tree, where, comments, True, sub)
        findings += [(path, no, kind, tok) for (_, no, kind, tok) in sub]
    check_parts_table(tree, findings, a.plant_parts)
    check_models_table(tree, findings, a.plant_models)
    seen = set()
    for f in findings:
        if f in seen:
            continue
        seen.add(f)
        print("%s:%d: stale %s '%s'" % f)
    print("docs.paths: %d files, %d names and %d step tags known; %d findings"
          % (len(docs) + len(cs), len(tree.names), len(tree.tags), len(seen)))
    return 1 if seen else 0


if __name__ == "__main__":
    sys.exit(main())
