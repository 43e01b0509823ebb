#!/usr/bin/python3
"""One real-model test: onnxruntime reference -> tessera convert -> inspect -> run -> compare.

Usage: run_model_test.py --model NAME --tessera PATH/TO/tessera --work-dir DIR
                         [--threads 1] [--rtol 1e-4] [--atol 1e-4] [--rel-l2 TOL]
                         [--manifest FILE] [--model-dir DIR] [--no-steady-state-check]
--manifest/--model-dir take the model from another table (bench/zoo's manifest.json) than
models.json and third_party/models.
Exit status: 0 pass, 1 fail, 77 skipped because the model file is absent
(third_party/models/fetch.sh fetches it; TSR_MODELS_DIR overrides the folder).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
NODE = os.environ.get("TSR_NODE", "/usr/bin/node")
SKIP = 77


def run(cmd, **kw):
    print("+ " + " ".join(cmd), flush=True)
    r = subprocess.run(cmd, **kw)
    if r.returncode != 0:
        print(f"command failed with exit status {r.returncode}", flush=True)
    return r.returncode


def device_placement(args, tsr_path):
    """Prints the share of nodes (all graphs) placed on the device; non-zero below the minimum."""
    cmd = [args.tessera, "inspect", tsr_path, "--placement", args.device, "--json"]
    print("+ " + " ".join(cmd), flush=True)
    r = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    if r.returncode != 0:
        print(f"command failed with exit status {r.returncode}", flush=True)
        return 1
    p = json.loads(r.stdout)
    share = 100.0 * p["device_nodes"] / max(1, p["total_nodes"])
    cpu_ops = sorted({n["op"] for n in p["nodes"] if n["device"] == "cpu"})
    print(f"placement {args.model}: {p['device_nodes']} of {p['total_nodes']} nodes on {args.device} "
          f"({share:.1f}%), {p['copies']} copies; CPU-only ops: {', '.join(cpu_ops) or 'none'}", flush=True)
    if share < args.min_device_share:
        print(f"FAIL: {share:.1f}% of the nodes on {args.device}, expected >= {args.min_device_share}%")
        return 1
    return 0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", required=True)
    p.add_argument("--tessera", required=True)
    p.add_argument("--work-dir", required=True)
    p.add_argument("--threads", default="1")
    p.add_argument("--rtol", default=None, help="default: the model's \"rtol\" in models.json, else 1e-4")
    p.add_argument("--atol", default=None, help="default: the model's \"atol\" in models.json, else 1e-4")
    p.add_argument("--device", default="cpu", help="tessera run --device (cpu, vulkan, auto)")
    p.add_argument("--min-device-share", type=float, default=0,
                   help="with --device: fail when fewer %% of the nodes are placed on the device")
    p.add_argument("--manifest", default=os.path.join(HERE, "models.json"), help="the model table")
    p.add_argument("--model-dir", default=None,
                   help="folder of the table's files (default $TSR_MODELS_DIR or third_party/models)")
    p.add_argument("--no-steady-state-check", action="store_true",
                   help="report the runs' allocations after the warm-up without failing on them")
    p.add_argument("--rel-l2", default=None,
                   help="pass on each output's relative L2 error <= this instead of the element-wise rule")
    args = p.parse_args()

    with open(args.manifest) as f:
        model = next((m for m in json.load(f) if m["name"] == args.model), None)
    if model is None:
        print(f"unknown model {args.model}")
        return 1
    rtol = args.rtol or str(model.get("rtol", 1e-4))
    atol = args.atol or str(model.get("atol", 1e-4))
    models_dir = args.model_dir or os.environ.get("TSR_MODELS_DIR", os.path.join(REPO, "third_party", "models"))
    onnx_path = os.path.join(models_dir, model["file"])
    if not os.path.exists(onnx_path):
        print(f"SKIP: {onnx_path} is absent (run third_party/models/fetch.sh)")
        return SKIP

    work = args.work_dir
    shutil.rmtree(work, ignore_errors=True)
    ref_dir, out_dir = os.path.join(work, "ref"), os.path.join(work, "out")
    os.makedirs(out_dir)
    if run([NODE, os.path.join(HERE, "gen_refs.js"), "--model", args.model, "--out", ref_dir,
            "--manifest", args.manifest, "--model-dir", models_dir]):
        return 1
    with open(os.path.join(ref_dir, "ref.json")) as f:
        ref = json.load(f)

    tsr_path = os.path.join(work, args.model + ".tsr")
    if run([args.tessera, "convert", onnx_path, "-o", tsr_path]):
        return 1
    with open(os.path.join(work, "inspect.txt"), "w") as f:
        if run([args.tessera, "inspect", tsr_path], stdout=f):
            return 1
    cmd = [args.tessera, "run", tsr_path, "--threads", args.threads, "--output-dir", out_dir,
           "--warmup", "1", "--repeat", "2"]
    for i in ref["inputs"]:
        cmd += ["--input", f"{i['name']}={os.path.join(ref_dir, i['file'])}"]
    if args.device != "cpu":
        if device_placement(args, tsr_path):
            return 1
        cmd += ["--device", args.device]
    print("+ " + " ".join(cmd), flush=True)
    r = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    print(r.stdout, end="", flush=True)
    if r.returncode:
        print(f"FAIL: exit {r.returncode}")
        return 1
    # The runs after the warm-up take every tensor buffer from the recycled ones and make no
    # heap allocation (on the CPU, where tensors live in host memory).
    m = re.search(r"steady state: (\d+) tensor buffers from the system allocator and (\d+) heap allocations", r.stdout)
    if args.device == "cpu" and not args.no_steady_state_check and (
            not m or int(m.group(1)) != 0 or int(m.group(2)) != 0):
        print("FAIL: runs after the warm-up allocated: " + (m.group(0) if m else "no steady-state line"))
        return 1
    # compare.txt keeps the per-model error line for scripts/test.sh's summary (bench/results/accuracy.md).
    cmd = ["/usr/bin/python3", os.path.join(HERE, "compare.py"), "--ref-dir", ref_dir,
           "--out-dir", out_dir, "--rtol", rtol, "--atol", atol, "--name", args.model]
    if args.rel_l2:
        cmd += ["--rel-l2", args.rel_l2]
    print("+ " + " ".join(cmd), flush=True)
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print(r.stdout, end="", flush=True)
    with open(os.path.join(work, "compare.txt"), "w") as f:
        f.write(r.stdout)
    return 0 if r.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
