#!/usr/bin/python3
"""An ONNX model with a data-dependent Loop and an If, for `tessera grad` on converted models.

A TorchScript module (Debian's python3-torch 1.13) with a `while` on a tensor condition and an
`if` on a tensor is exported with torch.onnx.export (opset 15): the while becomes an ONNX Loop
whose condition is recomputed in the body, the if an ONNX If whose branches capture outer values.
Only ops with gradient rules appear on the differentiable path (Mul, Add, Sub, ReduceSum,
ReduceMean). PyTorch's autograd on the same scripted module gives the reference gradients of the
loss with respect to the inputs x, w, c and the parameter `scale` (an initializer), in float32.

Writes tests/autodiff/onnx_control_flow/: model.onnx, x.npy, w.npy, c.npy, loss.npy and
<name>_grad.npy for x, w, c, scale. tests/cli/check_onnx_grad.sh converts, differentiates and runs
the model with the tessera CLI and compares.

Usage: /usr/bin/python3 tests/autodiff/make_onnx_control_flow.py
"""
import os

import numpy as np
import onnx
import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "onnx_control_flow")


class Program(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.tensor([0.5, -0.25, 0.75]))

    def forward(self, x, w, c):
        # Trip count depends on the data (3 iterations for the inputs below).
        while bool(x.sum() < 6.0):
            x = x * w + c
        if bool(x.mean() > 0.5):
            y = x - c * self.scale
        else:
            y = x * c
        return (y * y).sum(), y


def main():
    os.makedirs(OUT, exist_ok=True)
    module = torch.jit.script(Program())
    inputs = {
        "x": np.array([[0.2, 0.3, 0.4], [0.1, 0.5, 0.3]], np.float32),
        "w": np.array([[1.2, 1.3, 1.1], [1.25, 1.15, 1.35]], np.float32),
        "c": np.array([0.1, 0.05, 0.15], np.float32),
    }
    ts = {k: torch.tensor(v, requires_grad=True) for k, v in inputs.items()}
    loss, y = module(ts["x"], ts["w"], ts["c"])
    loss.backward()
    path = os.path.join(OUT, "model.onnx")
    torch.onnx.export(module, tuple(torch.tensor(v) for v in inputs.values()), path, opset_version=15,
                      input_names=list(inputs), output_names=["loss", "y"])
    model = onnx.load(path)
    ops = sorted({n.op_type for n in model.graph.node})
    assert "Loop" in ops and "If" in ops, ops
    inits = [i.name for i in model.graph.initializer]
    assert "scale" in inits, inits
    np.save(os.path.join(OUT, "loss.npy"), loss.detach().numpy())
    np.save(os.path.join(OUT, "y.npy"), y.detach().numpy())
    for k, t in ts.items():
        np.save(os.path.join(OUT, k + ".npy"), inputs[k])
        np.save(os.path.join(OUT, k + "_grad.npy"), t.grad.numpy())
    np.save(os.path.join(OUT, "scale_grad.npy"), module.scale.grad.numpy())
    print("wrote", OUT, "ops:", ", ".join(ops), "loss:", float(loss))


if __name__ == "__main__":
    main()
