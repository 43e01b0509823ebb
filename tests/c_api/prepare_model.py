#!/usr/bin/python3
"""Prepares one real model for the C API tests (native, ASan and aarch64 under qemu):
onnxruntime-node references on this x86 host (tests/models/gen_refs.js) and the .tsr from the
host `tessera convert`. Writes OUT/model.tsr, OUT/ref/{input_k,ref_i}.npy and OUT/manifest.txt,
one line per tensor for the C test, which has no JSON parser:
    input <name> <file>      (model input name, .npy under OUT/ref)
    output <name> <file>     (graph output order)
Usage: prepare_model.py --model NAME --tessera HOST_TESSERA --out OUT
Exit status: 0 written, 1 error, 77 when the model file or the host CLI is absent.
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SKIP = 77


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", required=True)
    p.add_argument("--tessera", required=True)
    p.add_argument("--out", required=True)
    a = p.parse_args()
    with open(os.path.join(REPO, "tests", "models", "models.json")) as f:
        model = next((m for m in json.load(f) if m["name"] == a.model), None)
    if model is None:
        print(f"prepare_model: unknown model {a.model}")
        return 1
    models_dir = os.environ.get("TSR_MODELS_DIR", os.path.join(REPO, "third_party", "models"))
    onnx_path = os.path.join(models_dir, model["file"])
    if not os.path.exists(onnx_path):
        print(f"SKIP: {onnx_path} is absent (run third_party/models/fetch.sh)")
        return SKIP
    if not os.access(a.tessera, os.X_OK):
        print(f"SKIP: no host tessera CLI at {a.tessera} (build the release preset's tessera_cli first)")
        return SKIP
    ref_dir = os.path.join(a.out, "ref")
    os.makedirs(ref_dir, exist_ok=True)
    for cmd in (["/usr/bin/node", os.path.join(REPO, "tests", "models", "gen_refs.js"), "--model", a.model,
                 "--out", ref_dir],
                [a.tessera, "convert", onnx_path, "-o", os.path.join(a.out, "model.tsr")]):
        print("+ " + " ".join(cmd), flush=True)
        if subprocess.run(cmd).returncode != 0:
            return 1
    with open(os.path.join(ref_dir, "ref.json")) as f:
        ref = json.load(f)
    with open(os.path.join(a.out, "manifest.txt"), "w") as f:
        for i in ref["inputs"]:
            f.write(f"input {i['name']} {i['file']}\n")
        for o in ref["outputs"]:
            f.write(f"output {o['name']} {o['file']}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
