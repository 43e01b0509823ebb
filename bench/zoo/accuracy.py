#!/usr/bin/python3
"""Accuracy of every model of the zoo (bench/zoo/export.py) against onnxruntime-node.

Exports the zoo (unless --no-export finds DIR/manifest.json), then runs each model through
tests/models/run_model_test.py (onnxruntime reference -> tessera convert -> run -> compare.py) with
the zoo's manifest and the rule rel-L2 <= TOL per output, and prints one line per model and a
summary. Heap allocations after the warm-up are printed as a note, not failed on. The CTest `zoo: accuracy` runs it on the --small zoo.

Usage: /usr/bin/python3 bench/zoo/accuracy.py --tessera PATH [--out build/zoo] [--small]
         [--no-export] [--models a,b] [--set zoo|holdout] [--rel-l2 1e-4] [--threads 1] [--work-dir OUT/accuracy]
Exit status: 0 every model passes, 1 a model fails (mismatch, tessera or onnxruntime error,
export failure), 77 skipped because PyTorch is not installed (only then).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
RUN_MODEL_TEST = os.path.join(REPO, "tests", "models", "run_model_test.py")
SKIP = 77


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tessera", required=True)
    p.add_argument("--out", default=os.path.join(REPO, "build", "zoo"), help="the zoo's folder")
    p.add_argument("--small", action="store_true", help="export the reduced-size zoo (CI)")
    p.add_argument("--set", default="zoo", choices=["zoo", "holdout"], help="export.py's model set")
    p.add_argument("--no-export", action="store_true", help="use OUT/manifest.json as it is when present")
    p.add_argument("--models", default="", help="comma-separated subset (default: all)")
    p.add_argument("--rel-l2", default="1e-4")
    p.add_argument("--threads", default="1")
    p.add_argument("--work-dir", default=None, help="default OUT/accuracy")
    args = p.parse_args()

    manifest = os.path.join(args.out, "manifest.json")
    if not (args.no_export and os.path.exists(manifest)):
        cmd = ["/usr/bin/python3", os.path.join(HERE, "export.py"), "--out", args.out]
        if args.small:
            cmd.append("--small")
        if args.set != "zoo":
            cmd += ["--set", args.set]
        if args.models:
            cmd += ["--models", args.models]
        print("+ " + " ".join(cmd), flush=True)
        t0 = time.time()
        r = subprocess.run(cmd)
        if r.returncode == SKIP:
            return SKIP  # export.py printed why (no torch)
        if r.returncode:
            print(f"FAIL: export.py exit {r.returncode}")
            return 1
        print(f"export: {time.time() - t0:.1f} s", flush=True)
    with open(manifest) as f:
        models = [m["name"] for m in json.load(f)]
    wanted = [m for m in args.models.split(",") if m] or models
    missing = [m for m in wanted if m not in models]
    if missing:
        print(f"FAIL: {', '.join(missing)} not in {manifest}")
        return 1

    work = args.work_dir or os.path.join(args.out, "accuracy")
    os.makedirs(work, exist_ok=True)
    failed = []
    for name in wanted:
        t0 = time.time()
        cmd = ["/usr/bin/python3", RUN_MODEL_TEST, "--model", name, "--tessera", args.tessera,
               "--work-dir", os.path.join(work, name), "--manifest", manifest, "--model-dir", args.out,
               "--rel-l2", args.rel_l2, "--threads", args.threads, "--no-steady-state-check"]
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        with open(os.path.join(work, name + ".log"), "w") as f:
            f.write(r.stdout)
        summary = re.search(r"^model \S+: .*$", r.stdout, re.M)
        status = "ok" if r.returncode == 0 else "FAIL"
        print(f"zoo {name}: {summary.group(0) if summary else 'no comparison'} "
              f"[{status}, {time.time() - t0:.1f} s]", flush=True)
        # Allocations after the warm-up are reported, not failed on (tests/models' own tests
        # check them for the 13 models; here the check is the outputs).
        steady = re.search(r"steady state: (\d+) tensor buffers .* and (\d+) heap allocations.*", r.stdout)
        if steady and (int(steady.group(1)) or int(steady.group(2))):
            print(f"    note: {steady.group(0)}", flush=True)
        if r.returncode:
            failed.append(name)
            # The failing command and its message, verbatim (run_model_test.py prints both).
            print("\n".join("    " + l for l in r.stdout.strip().splitlines()[-25:]), flush=True)
    print(f"zoo accuracy: {len(wanted) - len(failed)} of {len(wanted)} models pass (rel-L2 <= {args.rel_l2})"
          + (f"; failing: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
