#!/usr/bin/python3
"""The q8 model zoo: quantizes the f32 zoo (bench/zoo/export.py) with `tessera quantize` and
measures the accuracy of both runtimes on the quantized files.

Transformers (ViT, MiniLM, GPT, Whisper encoder) get --mode dynamic (MatMul/Gemm weights s8 per
tensor: the transformers.js q8 pattern); CNNs get --mode static (QDQ, per-channel s8 weights),
calibrated on 4 seeded random inputs drawn from the manifest's input ranges. Writes
OUT/<name>_q8.onnx, links the f32 files, and OUT/manifest.json listing both (<name> and
<name>_q8) for bench/latency.js --manifest OUT/manifest.json --model-dir OUT. Then, unless
--no-accuracy, runs f32 and q8 in onnxruntime-node (tests/quantize/ort_run.js) and q8 in tessera
on one seeded input and prints a table: rel-L2 vs onnxruntime's f32 output for both runtimes, and
tessera vs onnxruntime on the same q8 file (max over outputs).

Usage: /usr/bin/python3 bench/zoo/quantize.py --tessera PATH [--zoo build/zoo] [--out build/zoo_q8]
         [--models a,b] [--no-accuracy] [--json OUT.json]
Timing: /usr/bin/node bench/latency.js --manifest OUT/manifest.json --model-dir OUT --threads 1,2
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "tests", "quantize"))
from quantize_test import outputs, rel_l2, save_inputs as save  # noqa: E402  (one copy of the .npy plumbing)

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
NODE = os.environ.get("TSR_NODE", "/usr/bin/node")
ORT_RUN = os.path.join(REPO, "tests", "quantize", "ort_run.js")
CNNS = {"resnet18", "resnet50", "mobilenet_v2", "mobilenet_v3_small", "efficientnet_b0"}


def inputs_for(entry, seed):
    rng = np.random.default_rng(seed)
    out = {}
    for i in entry["inputs"]:
        dt = np.dtype(i["dtype"])
        if "value" in i:
            out[i["name"]] = np.full(i["shape"], i["value"], dt)
        elif np.issubdtype(dt, np.integer):
            out[i["name"]] = rng.integers(i["low"], i["high"], i["shape"]).astype(dt)
        else:
            out[i["name"]] = rng.uniform(i["low"], i["high"], i["shape"]).astype(dt)
    return out


def run(cmd, **kw):
    print("+ " + " ".join(cmd), file=sys.stderr, flush=True)
    return subprocess.run(cmd, check=True, **kw)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tessera", required=True)
    p.add_argument("--zoo", default=os.path.join(REPO, "build", "zoo"))
    p.add_argument("--out", default=os.path.join(REPO, "build", "zoo_q8"))
    p.add_argument("--models", default=None)
    p.add_argument("--no-accuracy", action="store_true")
    p.add_argument("--json", default=None)
    a = p.parse_args()
    manifest = json.load(open(os.path.join(a.zoo, "manifest.json")))
    if a.models:
        keep = a.models.split(",")
        manifest = [e for e in manifest if e["name"] in keep]
    os.makedirs(a.out, exist_ok=True)
    table, rows = [], []
    for e in manifest:
        name, src = e["name"], os.path.join(os.path.abspath(a.zoo), e["file"])
        f32 = os.path.join(a.out, e["file"])
        if not os.path.exists(f32):
            os.symlink(src, f32)
        q8 = os.path.join(a.out, name + "_q8.onnx")
        mode = "static" if name in CNNS else "dynamic"
        cmd = [a.tessera, "quantize", f32, "-o", q8, "--mode", mode]
        if mode == "static":
            calib = os.path.join(a.out, "calib", name)
            for s in range(4):
                save(os.path.join(calib, f"sample_{s}"), inputs_for(e, 100 + s))
            cmd += ["--calibration", calib]
        r = run(cmd, stdout=subprocess.PIPE, text=True)
        summary = r.stdout.strip()
        print(f"{name}: {summary}", flush=True)
        table.append(e)
        table.append(dict(e, name=name + "_q8", file=name + "_q8.onnx", note=f"{e.get('note', '')}; tessera quantize --mode {mode}"))
        if a.no_accuracy:
            continue
        wd = os.path.join(a.out, "accuracy", name)
        feeds = save(os.path.join(wd, "inputs"), inputs_for(e, 7))
        res = {}
        for tag, model in (("ort_f32", f32), ("ort_q8", q8)):
            run([NODE, ORT_RUN, model, os.path.join(wd, tag)] + feeds)
            res[tag] = outputs(os.path.join(wd, tag))
        cmd = [a.tessera, "run", q8, "--output-dir", os.path.join(wd, "tsr_q8")]
        for f in feeds:
            cmd += ["--input", f]
        run(cmd, stdout=subprocess.DEVNULL)
        res["tsr_q8"] = outputs(os.path.join(wd, "tsr_q8"))
        row = {"model": name, "mode": mode, "summary": summary,
               "ort_q8_vs_f32": max(rel_l2(q, f) for q, f in zip(res["ort_q8"], res["ort_f32"])),
               "tsr_q8_vs_f32": max(rel_l2(q, f) for q, f in zip(res["tsr_q8"], res["ort_f32"])),
               "tsr_vs_ort_q8": max(rel_l2(t, o) for t, o in zip(res["tsr_q8"], res["ort_q8"]))}
        rows.append(row)
    with open(os.path.join(a.out, "manifest.json"), "w") as f:
        f.write("[\n" + ",\n".join("  " + json.dumps(e) for e in table) + "\n]\n")
    if rows:
        print("\n| model | mode | rel-L2 vs f32, onnxruntime | rel-L2 vs f32, tessera | tessera vs onnxruntime (q8) |")
        print("| --- | --- | ---: | ---: | ---: |")
        for r in rows:
            print(f"| {r['model']} | {r['mode']} | {r['ort_q8_vs_f32']:.2e} | {r['tsr_q8_vs_f32']:.2e} | {r['tsr_vs_ort_q8']:.2e} |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
