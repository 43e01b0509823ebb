#!/usr/bin/python3
"""Compares tessera's outputs to onnxruntime's reference outputs.

Passes when every element satisfies |a - b| <= atol + rtol * |b| (numpy.isclose's rule, b the
reference), shapes are equal and NaNs sit at the same places; with --rel-l2 TOL, when instead
each float output's relative L2 error ||a - b|| / ||b|| is <= TOL (the model zoo's rule, bench/zoo:
random weights give outputs where a few elements near zero carry large element-wise errors).
Prints one line per output with the max absolute error, the max relative error
|a - b| / max(|b|, atol) and the relative L2 error, then one summary line per model:
    model NAME: max abs err A, max rel err R over N outputs (rtol=..., atol=...): PASS|FAIL
(with --rel-l2: "..., max rel-L2 E over N outputs (rel-L2 <= TOL): PASS|FAIL").

Usage: compare.py --ref-dir DIR (holds ref.json + ref_<i>.npy) --out-dir DIR (output_<i>.npy)
                  [--rtol 1e-4] [--atol 1e-4] [--rel-l2 TOL] [--name NAME]
Exit status: 0 all outputs match, 1 a mismatch or a missing/unreadable file.
"""
import argparse
import json
import os
import sys

import numpy as np


def compare_one(a, b, rtol, atol, rel_l2_tol=None):
    """Returns (ok, max_abs, max_rel, rel_l2, message) for output a against reference b.
    rel_l2_tol: None for the element-wise rule, else the largest relative L2 error that passes."""
    inf = float("inf")
    if a.shape != b.shape:
        return False, inf, inf, inf, f"shape {a.shape} != reference {b.shape}"
    if b.dtype.kind == "b" or b.dtype.kind in "iu":
        if a.dtype.kind not in "biu":
            return False, inf, inf, inf, f"dtype {a.dtype} != reference {b.dtype}"
        diff = np.abs(a.astype(np.int64) - b.astype(np.int64))
        max_abs = float(diff.max()) if diff.size else 0.0
        return max_abs == 0, max_abs, max_abs, 0.0 if max_abs == 0 else inf, ""
    a64 = a.astype(np.float64)
    b64 = b.astype(np.float64)
    nan_a, nan_b = np.isnan(a64), np.isnan(b64)
    if not np.array_equal(nan_a, nan_b):
        return False, float("nan"), float("nan"), float("nan"), f"NaN at {int((nan_a != nan_b).sum())} places that differ"
    finite = ~nan_b
    diff = np.abs(a64[finite] - b64[finite])
    ref = np.abs(b64[finite])
    # inf == inf gives nan in the subtraction: treat equal infinities as exact.
    same = a64[finite] == b64[finite]
    diff = np.where(same, 0.0, diff)
    max_abs = float(diff.max()) if diff.size else 0.0
    # Relative error against max(|b|, atol): near-zero references would otherwise dominate.
    rel = diff / np.maximum(ref, max(atol, np.finfo(np.float64).tiny))
    max_rel = float(rel.max()) if rel.size else 0.0
    ref_norm = float(np.linalg.norm(ref))
    rel_l2 = float(np.linalg.norm(diff)) / (ref_norm if ref_norm > 0 else 1.0)
    if rel_l2_tol is not None:
        ok = bool(rel_l2 <= rel_l2_tol)  # False for NaN (an infinity that differs)
        return ok, max_abs, max_rel, rel_l2, "" if ok else f"rel-L2 {rel_l2:.3g} > {rel_l2_tol:g}"
    bad = diff > atol + rtol * ref
    nbad = int(bad.sum())
    msg = ""
    if nbad:
        idx = np.unravel_index(int(np.flatnonzero(finite)[np.argmax(bad)]), b.shape)
        msg = f"{nbad} of {b.size} elements out of tolerance, first at {tuple(int(i) for i in idx)}: {a[idx]!r} vs {b[idx]!r}"
    return nbad == 0, max_abs, max_rel, rel_l2, msg


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--ref-dir", required=True)
    p.add_argument("--out-dir", required=True)
    p.add_argument("--rtol", type=float, default=1e-4)
    p.add_argument("--atol", type=float, default=1e-4)
    p.add_argument("--rel-l2", type=float, default=None,
                   help="pass on each output's relative L2 error <= this instead of the element-wise rule")
    p.add_argument("--name", default=None)
    args = p.parse_args()

    with open(os.path.join(args.ref_dir, "ref.json")) as f:
        ref = json.load(f)
    name = args.name or ref.get("model", "?")
    all_ok = True
    worst_abs = worst_rel = worst_l2 = 0.0
    for i, o in enumerate(ref["outputs"]):
        ours_path = os.path.join(args.out_dir, f"output_{i}.npy")
        if not os.path.exists(ours_path):
            print(f"  output[{i}] {o['name']!r}: missing {ours_path}")
            all_ok = False
            continue
        try:
            a = np.load(ours_path, allow_pickle=False)
        except Exception as e:  # a malformed file is a test failure, not a crash
            print(f"  output[{i}] {o['name']!r}: cannot read {ours_path}: {e}")
            all_ok = False
            continue
        b = np.load(os.path.join(args.ref_dir, o["file"]), allow_pickle=False)
        ok, max_abs, max_rel, rel_l2, msg = compare_one(a, b, args.rtol, args.atol, args.rel_l2)
        worst_abs = max(worst_abs, max_abs)
        worst_rel = max(worst_rel, max_rel)
        worst_l2 = max(worst_l2, rel_l2)
        all_ok &= ok
        print(f"  output[{i}] {o['name']!r} {list(b.shape)} {b.dtype}: max abs err {max_abs:.3g}, "
              f"max rel err {max_rel:.3g}, rel-L2 {rel_l2:.3g}: {'ok' if ok else 'MISMATCH'}"
              f"{' (' + msg + ')' if msg else ''}")
    rule = f"rel-L2 <= {args.rel_l2:g}" if args.rel_l2 is not None else f"rtol={args.rtol:g}, atol={args.atol:g}"
    print(f"model {name}: max abs err {worst_abs:.3g}, max rel err {worst_rel:.3g}, max rel-L2 {worst_l2:.3g} "
          f"over {len(ref['outputs'])} outputs ({rule}): {'PASS' if all_ok else 'FAIL'}")
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
