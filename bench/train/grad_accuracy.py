#!/usr/bin/python3
"""grad_accuracy.py --tessera BIN [--arch mnv2|lenet] [--batch 32] [--work DIR]: the gradients of one
batch from `tessera grad` and from PyTorch in float32, each against PyTorch in float64.

bench/train/torch_train.py's model (seed 0, BatchNormalization in training mode for mnv2) is
exported to ONNX with a loss appended (sum(logits * R), R fixed normal noise, so no output's
gradient cancels by symmetry); `tessera grad` differentiates it with respect to every weight and
`tessera run` evaluates it on the batch. PyTorch computes the same loss's gradients in float32 and
float64. Prints, per weight in backward order, the relative L2 error of both float32 results
against float64: where the two float32 runtimes disagree with each other, this says which is
closer to the exact gradient. MobileNetV2's training-mode BatchNormalizations on small planes make
the gradients ill-conditioned (~1e-3..1e-2 relative error in float32 for the first layers), which
is why two runtimes' trajectories part after a few steps although each step is right.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import warnings

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_train  # noqa: E402

DATA = "/usr/share/datasets/fashion-mnist"
warnings.filterwarnings("ignore")  # torch.onnx export chatter


def rel(a, ref):
    return float(np.linalg.norm(a - ref) / max(np.linalg.norm(ref), 1e-30))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--tessera", required=True)
    p.add_argument("--arch", choices=["lenet", "mnv2"], default="mnv2")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--work", default="")
    a = p.parse_args()
    work = a.work or tempfile.mkdtemp()
    torch.manual_seed(0)
    xtr, _, _, _ = torch_train.load(DATA, a.arch, a.batch)
    x = xtr[:a.batch].numpy().astype(np.float32)
    model = torch_train.LeNet() if a.arch == "lenet" else torch_train.MobileNetV2()
    state = {k: v.clone() for k, v in model.state_dict().items()}
    model.train()
    torch.onnx.export(model, xtr[:2], f"{work}/model.onnx", input_names=["image"], output_names=["logits"],
                      dynamic_axes={"image": {0: "N"}, "logits": {0: "N"}}, opset_version=15,
                      training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False)
    model.load_state_dict(state)  # tracing ran a training-mode forward: undo its statistics update
    R = np.random.RandomState(1).randn(a.batch, 10).astype(np.float32)
    m = onnx.load(f"{work}/model.onnx")
    m.graph.initializer.append(numpy_helper.from_array(R, "R"))
    m.graph.node.append(helper.make_node("Mul", ["logits", "R"], ["weighted"]))
    m.graph.node.append(helper.make_node("ReduceSum", ["weighted"], ["loss"], keepdims=0))
    del m.graph.output[:]
    m.graph.output.append(helper.make_tensor_value_info("loss", TensorProto.FLOAT, []))
    onnx.save(m, f"{work}/loss.onnx")
    np.save(f"{work}/x.npy", x)
    names = [k for k, _ in model.named_parameters()]
    subprocess.run([a.tessera, "grad", f"{work}/loss.onnx", "--wrt", ",".join(names), "-o", f"{work}/grad.tsr"],
                   check=True, stdout=subprocess.DEVNULL)
    subprocess.run([a.tessera, "run", f"{work}/grad.tsr", "-i", f"image={work}/x.npy", "--output-dir", f"{work}/out",
                    "--threads", "1"], check=True, stdout=subprocess.DEVNULL)
    outs = json.load(open(f"{work}/out/outputs.json"))["outputs"]
    tessera = {o["name"][:-len("_grad")]: np.load(f"{work}/out/{o['file']}") for o in outs if o["name"].endswith("_grad")}

    def grads(dtype):
        net = (torch_train.LeNet() if a.arch == "lenet" else torch_train.MobileNetV2()).to(dtype)
        net.load_state_dict({k: v.to(dtype) if v.is_floating_point() else v for k, v in state.items()})
        net.train()
        (net(torch.from_numpy(x).to(dtype)) * torch.from_numpy(R).to(dtype)).sum().backward()
        return {k: q.grad.double().numpy() for k, q in net.named_parameters()}

    g32, g64 = grads(torch.float32), grads(torch.float64)
    print(f"{a.arch}, batch {a.batch}: relative L2 error of each weight's gradient against PyTorch float64")
    print("| weight | PyTorch float32 | Tessera float32 |")
    print("| --- | ---: | ---: |")
    worse = 0
    for k in reversed(names):
        e32, et = rel(g32[k], g64[k]), rel(tessera[k], g64[k])
        worse += et > e32
        print(f"| {k} | {e32:.2e} | {et:.2e} |")
    print(f"Tessera's error is larger than PyTorch's on {worse} of {len(names)} weights")


if __name__ == "__main__":
    main()
