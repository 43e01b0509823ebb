#!/usr/bin/python3
"""Generates a group of cases, gets onnxruntime-node's outputs and checks `tessera run` against them.

Usage: check.py --tessera BIN --gen gen_<group>.py --work DIR [--filter TEXT] [--threads N]
For each case: `tessera run CASE.onnx --input NAME=FILE ... --output-dir` (the .onnx is imported on
the fly), then tests/models/compare.py's rule (|a-b| <= atol + rtol*|b|, shapes and NaNs equal).
Prints one line per case and a summary. Exit status: 0 all pass, 1 any failure.
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "models"))
import numpy as np  # noqa: E402
from compare import compare_one  # noqa: E402

NODE = os.environ.get("TSR_NODE", "/usr/bin/node")


def check_case(args, c):
    cdir = os.path.join(args.work, c["name"])
    out = os.path.join(cdir, "out")
    os.makedirs(out, exist_ok=True)
    cmd = [args.tessera, "run", os.path.join(args.work, c["onnx"]), "--threads", args.threads,
           "--output-dir", out]
    for i in c["inputs"]:
        cmd += ["--input", f"{i['name']}={os.path.join(cdir, i['file'])}"]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode:
        return False, f"tessera run exit {r.returncode}: {r.stdout.strip()[-600:]}\n    {' '.join(cmd)}"
    with open(os.path.join(cdir, "ref.json")) as f:
        ref = json.load(f)
    msgs, ok = [], True
    for k, o in enumerate(ref["outputs"]):
        b = np.load(os.path.join(cdir, o["file"]))
        a = np.load(os.path.join(out, f"output_{k}.npy"))
        good, max_abs, max_rel, _, msg = compare_one(a, b, c["rtol"], c["atol"])
        ok &= good
        if not good:
            msgs.append(f"output[{k}] {o['name']}: max abs {max_abs:.3g}, max rel {max_rel:.3g} {msg}")
    return ok, "; ".join(msgs)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tessera", required=True)
    p.add_argument("--gen", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--filter", default="")
    p.add_argument("--threads", default="1")
    args = p.parse_args()
    gen = args.gen if os.path.isabs(args.gen) else os.path.join(HERE, args.gen)
    cmd = ["/usr/bin/python3", gen, "--out", args.work] + (["--filter", args.filter] if args.filter else [])
    if subprocess.run(cmd).returncode:
        print("FAIL: the generator failed")
        return 1
    if subprocess.run([NODE, os.path.join(HERE, "ort_refs.js"), args.work]).returncode:
        print("FAIL: onnxruntime-node could not produce every reference")
        return 1
    with open(os.path.join(args.work, "cases.json")) as f:
        cases = json.load(f)
    failed = []
    for c in cases:
        ok, msg = check_case(args, c)
        print(f"{'ok  ' if ok else 'FAIL'} {c['name']}{': ' + msg if msg else ''}", flush=True)
        if not ok:
            failed.append(c["name"])
    print(f"{len(cases) - len(failed)} of {len(cases)} cases match onnxruntime"
          + (f"; failed: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
