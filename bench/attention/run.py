#!/usr/bin/python3
"""Thread CPU time and GFLOP/s of the fused f32 Attention kernel alone, on the zoo's shapes.

Writes one-node ONNX Attention models (opset 23, [B, S, N*H] inputs as the fuse_attention pass
makes them) for the attention shapes of the model zoo, runs each through `tessera run
--random-inputs --profile` with every build given, alternating builds round by round (a shared
machine's load hits them alike), and prints per build the shortest and the median per-call thread
CPU time of the Attention node and its GFLOP/s (4 * N * S * T * H flops: Q.K^T and P.V; causal
shapes count the full square, so their figure is a lower bound of the rate). Thread CPU time,
not wall time: other processes on the machine do not inflate it (their cache traffic still does).

Usage: /usr/bin/python3 bench/attention/run.py --tessera build/release/bin/tessera [--tessera OTHER]
         [--shapes whisper,minilm512,vit,gpt] [--rounds 5] [--repeat 10] [--threads 1]
         [--work-dir build/bench/attention]
"""
import argparse
import os
import re
import subprocess
import sys

# name: (S queries, T keys, heads, head size, additive [1, 1, 1, T] mask, causal)
SHAPES = {
    "whisper": (1500, 1500, 6, 64, False, False),   # whisper_tiny_enc: 1500 frames after the conv stem
    "minilm512": (512, 512, 12, 32, True, False),   # minilm_s512, with its padding mask
    "vit": (197, 197, 3, 64, False, False),         # vit_tiny: 196 patches and the class token
    "gpt": (256, 256, 12, 64, False, True),         # a causal prefill
}


def make_model(path, s, t, heads, dim, mask, causal):
    import onnx
    from onnx import TensorProto, helper
    inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, length, heads * dim])
              for n, length in (("q", s), ("k", t), ("v", t))]
    names = ["q", "k", "v"]
    if mask:
        inputs.append(helper.make_tensor_value_info("mask", TensorProto.FLOAT, [1, 1, 1, t]))
        names.append("mask")
    node = helper.make_node("Attention", names, ["y"], q_num_heads=heads, kv_num_heads=heads,
                            is_causal=1 if causal else 0)
    out = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, s, heads * dim])
    model = helper.make_model(helper.make_graph([node], "attention", inputs, [out]),
                              opset_imports=[helper.make_opsetid("", 23)])
    model.ir_version = 9
    onnx.save(model, path)


def node_ms(tessera, model, repeat, threads):
    """Per-call thread CPU time (ms) of the model's Attention node."""
    out = subprocess.run([tessera, "run", model, "--random-inputs", "--repeat", str(repeat), "--warmup", "2",
                          "--profile", "--threads", str(threads)], capture_output=True, text=True, check=True)
    work = [float(m.group(1)) for m in re.finditer(r"work\s+([0-9.]+)\s+graph\[0\]\.node\[0\]", out.stdout + out.stderr)]
    if not work:
        sys.exit(f"no Attention work line in the profile of {tessera}:\n{out.stdout}{out.stderr}")
    return work[0] / repeat


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tessera", action="append", required=True)
    p.add_argument("--shapes", default=",".join(SHAPES))
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--repeat", type=int, default=10)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--work-dir", default="build/bench/attention")
    a = p.parse_args()
    os.makedirs(a.work_dir, exist_ok=True)
    print("| shape | S x T, heads x dim | build | min ms | median ms | GFLOP/s (min) |")
    print("|---|---|---|---|---|---|")
    for name in a.shapes.split(","):
        s, t, heads, dim, mask, causal = SHAPES[name]
        model = os.path.join(a.work_dir, f"{name}.onnx")
        make_model(model, s, t, heads, dim, mask, causal)
        times = {b: [] for b in a.tessera}
        for _ in range(a.rounds):
            for b in a.tessera:
                times[b].append(node_ms(b, model, a.repeat, a.threads))
        flops = 4.0 * heads * s * t * dim
        for b in a.tessera:
            ts = sorted(times[b])
            print(f"| {name} | {s} x {t}, {heads} x {dim} | {b} | {ts[0]:.3f} | {ts[len(ts) // 2]:.3f} | "
                  f"{flops / ts[0] / 1e6:.1f} |")


if __name__ == "__main__":
    main()
