#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""abi_attacks.py - edits of lpc/*.h that scripts/check-abi.py (branch abi)
judges wrongly.

Each attack copies the headers of INCLUDE_DIR, makes one edit and runs
  check-abi.py --check REF COPY
  MISS   a change that breaks a program built against 0.2.0: the check must
         exit 1; exit 0 is the defect.
  FALSE  a change that every program built against 0.2.0 survives: the check
         must exit 0; exit 1 is the defect.
  NOTE   outside what the check claims (a source break, a function's type):
         its result is shown, never counted.
Exit: 1 while any attack still shows its defect, 0 when the check judges
every one right.

  abi_attacks.py [--script S] [--ref R] [--include I] [NAME...]
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

ABI = "/work/wt-abi"

# (name, kind, header, old text, new text, why)
ATTACKS = [
    ("bitfield", "MISS", "lpc.h",
     "\tint io_backend;       /*",
     "\tint io_flags : 3;     /* new, taken from io_backend's low bits */\n"
     "\tint io_backend : 29;  /*",
     "io_backend becomes bits 3-31 of the word at 16: clang prints it as "
     "'16:3-31 | int io_backend', the regex keeps only the byte offset 16 "
     "and the type 'int'; an old program's io_backend = LPC_IO_NULL (1) "
     "lands in io_flags and the library reads io_backend 0 (LPC_IO_SYNC)"),
    ("typedef-callback", "MISS", "lpc.h",
     "typedef void lpc_backend_done(void *arg, int k);",
     "typedef void lpc_backend_done(void *arg, size_t k, int err);",
     "read_batch's type is spelled 'void (*)(void *, struct lpc_backend_run *, "
     "int, lpc_backend_done *, void *)' by clang: the typedef's name, not its "
     "signature; an old backend calls done(arg, k) and the library reads a "
     "garbage err"),
    ("string-trailing-space", "MISS", "lpc_rbd.h",
     '#define LPC_RBD_PREFIX "rbd:"',
     '#define LPC_RBD_PREFIX "rbd: "',
     "parse() joins the words of 'string NAME TEXT' with one space: "
     "'rbd: ' and 'rbd:' compare equal; an old program's \"rbd:pool/img\" "
     "no longer starts with the prefix"),
    ("string-leading-space", "MISS", "lpc_sqlite.h",
     '#define LPC_SQLITE_VFS_NAME "lpc"',
     '#define LPC_SQLITE_VFS_NAME " lpc"',
     "a leading space vanishes the same way: sqlite3_vfs_find(\"lpc\") of "
     "an old program finds no VFS"),
    ("cplusplus-only", "MISS", "lpc.h",
     "#define LPC_BACKEND_V2 2",
     "#ifdef __cplusplus\n#define LPC_BACKEND_V2 3\n#else\n#define LPC_BACKEND_V2 2\n#endif\n"
     "#define LPC_BACKEND_V2_UNUSED 2",
     "the dump is one compile, C, no -D: a C++ program (the header has "
     "extern \"C\" for it) or one built with -D_GNU_SOURCE / "
     "-D_FILE_OFFSET_BITS=64 sees headers the check never compiled"),
    ("const-moved", "NOTE", "lpc_rbd.h",
     '/* The prefix of the names lpc_rbd_open takes: "rbd:POOL/IMAGE". */\n'
     '#define LPC_RBD_PREFIX "rbd:"\n',
     "",
     "moved to lpc_sqlite.h (second edit): the check compiles all three "
     "headers in one unit, so it holds; a program that includes only "
     "<lpc/lpc_rbd.h> and names LPC_RBD_PREFIX no longer compiles (a "
     "source break, not an ABI one)"),
    ("callback-typedef-proto", "NOTE", "lpc.h",
     "typedef int lpc_stream_cb(void *arg, uint64_t *index, void **user);",
     "typedef int lpc_stream_cb(void *arg, uint32_t *index, void **user);",
     "prototypes are not compared by design (the symbol versions 'carry the "
     "functions'), but a symbol version binds a name, not a type: an old "
     "program's callback writes 8 bytes where the library now passes a "
     "uint32_t"),
    ("split-header", "FALSE", "lpc.h",
     "enum lpc_pin_flags {",
     "#include <lpc/lpc_pin.h> /* enum lpc_pin_flags, moved */\nenum lpc_pin_flags_old {",
     "the enum moved, whole, to a new header that lpc.h includes (a program "
     "sees the same names and values): enumerators() and struct_names() "
     "read only the three files of HEADERS, so 'const LPC_PIN_READ: gone' "
     "(a renamed leftover, enum lpc_pin_flags_old with LPC_OLD_PIN_*, stays "
     "in lpc.h only to keep the edit a text replacement)"),
    ("reserved-taken", "FALSE", "lpc.h",
     "\tuint64_t reserved[2]; /* must be zero (lpc_config_init does it) */",
     "\tuint32_t new_knob;     /* 0: the default */\n"
     "\tuint32_t new_knob2;    /* 0: the default */\n"
     "\tuint64_t reserved[1]; /* must be zero (lpc_config_init does it) */",
     "what lpc.h itself says 0.2 did (alloc_wait_ms and reclaim_policy taken "
     "from the reserved space, size and offsets unchanged) is reported "
     "broken: reserved's offset and type change.  lpc_config and "
     "lpc_ns_stats can never use their reserved words again"),
    ("anon-union", "FALSE", "lpc.h",
     "\tuint64_t reserved_wb;          /* must be zero */",
     "\tunion {\n\t\tuint64_t reserved_wb; /* must be zero */\n"
     "\t\tuint64_t reserved_wb_alias;\n\t};",
     "a field put in an anonymous union keeps its offset, type and name "
     "(p->reserved_wb compiles and means the same), but only top-level "
     "lines are read: 'field lpc_config.reserved_wb: gone'"),
    ("struct-brace-style", "FALSE", "lpc.h",
     "struct lpc_cred {",
     "struct lpc_cred\n{",
     "struct_names() wants '^struct lpc_x {' on one line: a brace on its "
     "own line (or 'struct lpc_x{', or a typedef) drops the struct: "
     "'struct lpc_cred: gone'"),
    ("macro-xor", "FALSE", "lpc.h",
     "#define LPC_ACL_MASK 0x10",
     "#define LPC_ACL_MASK (LPC_ACL_OTHER ^ 0x30)",
     "macros() keeps an integer macro only if its text matches "
     "[\\w\\s()<>|&~+\\-*/]+: any '^', '%', '?:', ',' or char literal "
     "drops it: 'const LPC_ACL_MASK: gone' although the compiler still "
     "says 16"),
    ("string-via-macro", "FALSE", "lpc_rbd.h",
     '#define LPC_RBD_PREFIX "rbd:"',
     '#define LPC_RBD_PREFIX_V1 "rbd:"\n#define LPC_RBD_PREFIX LPC_RBD_PREFIX_V1',
     "a string macro defined through another macro (the same \"rbd:\"): its "
     "text 'LPC_RBD_PREFIX_V1' matches the integer class, so the printer "
     "casts the string's address to long long: 'const LPC_RBD_PREFIX: "
     "<an address>, was rbd:'"),
    ("macro-minus-one", "NOTE", "lpc.h",
     "#define LPC_DIRTY_EXPIRE_NEVER UINT64_MAX",
     "#define LPC_DIRTY_EXPIRE_NEVER (-1)",
     "dirty_expire_ms is uint64_t: the program stores the same bits, but the "
     "printer takes the sign of the macro's own type: -1 vs "
     "18446744073709551615; a NOTE, not a defect: the macro's type did "
     "change, which a comparison with a narrower variable can notice"),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--script", default=os.path.join(ABI, "scripts/check-abi.py"))
    ap.add_argument("--ref", default=os.path.join(ABI, "tests/packaging/abi/lpc-0.2.0.abi"))
    ap.add_argument("--include", default=os.path.join(ABI, "include"))
    ap.add_argument("--keep", metavar="DIR",
                    help="leave each edited copy in DIR/NAME/lpc/ (for --check by hand)")
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    defects = 0
    for name, kind, h, old, new, why in ATTACKS:
        if a.names and name not in a.names:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            shutil.copytree(os.path.join(a.include, "lpc"), os.path.join(tmp, "lpc"))
            path = os.path.join(tmp, "lpc", h)
            with open(path) as fp:
                text = fp.read()
            if text.count(old) != 1:
                print(f"{name}: cannot plant (text not found once in {h})")
                defects = 1
                continue
            with open(path, "w") as fp:
                fp.write(text.replace(old, new))
            if name == "split-header":
                with open(path) as fp:
                    t2 = fp.read()
                i = t2.index("enum lpc_pin_flags_old {")
                j = t2.index("};", i)
                body = t2[i + len("enum lpc_pin_flags_old {"):j]
                with open(path, "w") as fp:
                    fp.write(t2[:i] + "enum lpc_pin_flags_old {"
                             + body.replace("LPC_PIN_", "LPC_OLD_PIN_") + t2[j:])
                with open(os.path.join(tmp, "lpc", "lpc_pin.h"), "w") as fp:
                    fp.write("#ifndef LPC_PIN_H\n#define LPC_PIN_H\nenum lpc_pin_flags {"
                             + body + "};\n#endif\n")
            if name == "const-moved":
                sq = os.path.join(tmp, "lpc", "lpc_sqlite.h")
                with open(sq) as fp:
                    t2 = fp.read()
                with open(sq, "w") as fp:
                    fp.write(t2.replace('#define LPC_SQLITE_VFS_NAME "lpc"',
                                        '#define LPC_SQLITE_VFS_NAME "lpc"\n'
                                        '#define LPC_RBD_PREFIX "rbd:"', 1))
            if a.keep:
                dst = os.path.join(a.keep, name)
                shutil.rmtree(dst, ignore_errors=True)
                shutil.copytree(tmp, dst)
            r = subprocess.run([sys.executable, a.script, "--check", a.ref, tmp],
                               capture_output=True, text=True)
        if r.returncode not in (0, 1):
            print(f"{name}: check-abi.py exit {r.returncode}: {r.stdout}{r.stderr}")
            defects = 1
            continue
        if kind == "NOTE":
            wrong = False
            verdict = "NOTE"
        else:
            wrong = (r.returncode == 0) if kind == "MISS" else (r.returncode == 1)
            verdict = "DEFECT" if wrong else "ok"
        print(f"{verdict} {kind} {name}: check-abi exit {r.returncode}")
        print(f"    edit in lpc/{h}: {old!r} -> {new!r}")
        for line in r.stdout.splitlines():
            print("    " + line)
        if wrong or kind == "NOTE":
            print("    why: " + why)
        defects |= wrong
    return 1 if defects else 0


if __name__ == "__main__":
    sys.exit(main())
