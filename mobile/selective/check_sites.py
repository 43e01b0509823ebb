#!/usr/bin/python3
"""Checks the selective build's registration sites (core/base/selective.h) in the op families
(core/ops/families/*.cpp) and CPU kernel families (backends/cpu/kernels/*.cpp):
  1. every TSR_IF_SELECTED("X") guards a statement that registers X: the first string literal
     after the guard (on its line or the next ones) is "X";
  2. every registration call naming its op by a literal (r.add("X", r.add_fn("X", r.add({"X",
     r.add(OpDef{"X", add(OpDef{"X", add_<helper>(r, "X") is guarded, on its line or the line
     before.
A wrong or missing guard would drop an op from, or leave it in, every minimal runtime without
failing the normal build. Usage: check_sites.py REPO_ROOT. Exit status 0 when clean, 1 otherwise.
"""
import glob
import os
import re
import sys

GUARD = re.compile(r'TSR_IF_SELECTED\("((?:com\.microsoft::)?\w+)"\)')  # contrib ops: "com.microsoft::X"
LITERAL = re.compile(r'"([^"\\]*)"')
CALL = re.compile(r'(?:\br\.add_fn\(|\br\.add\((?:OpDef)?\{?|\badd\(OpDef\{|\badd_\w+\(r, )"((?:com\.microsoft::)?[A-Z]\w*)"')


def check(path):
    errors = []
    lines = open(path).read().split("\n")
    for i, line in enumerate(lines):
        for m in GUARD.finditer(line):
            rest = line[m.end():] + "\n" + "\n".join(lines[i + 1:i + 4])
            lit = LITERAL.search(rest)
            if not lit or lit.group(1) != m.group(1):
                errors.append(f"{path}:{i + 1}: TSR_IF_SELECTED(\"{m.group(1)}\") guards a statement registering "
                              f"{lit.group(1) if lit else 'nothing'!r}")
        for m in CALL.finditer(line):
            op = m.group(1)
            guarded = f'TSR_IF_SELECTED("{op}")'
            if guarded not in line[:m.start()] and (i == 0 or not lines[i - 1].rstrip().endswith(guarded)):
                errors.append(f"{path}:{i + 1}: registration of {op} without TSR_IF_SELECTED(\"{op}\")")
    return errors


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    files = sorted(glob.glob(os.path.join(root, "core/ops/families/*.cpp")) +
                   glob.glob(os.path.join(root, "backends/cpu/kernels/*.cpp")))
    errors = [e for f in files for e in check(f)]
    for e in errors:
        print(e)
    n_guards = sum(len(GUARD.findall(open(f).read())) for f in files)
    print(f"{len(files)} family files, {n_guards} guarded registration sites, {len(errors)} problems")
    return 1 if errors or n_guards == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
