#!/usr/bin/python3
"""ONNX models with a data-dependent Loop and an If, for `tessera grad` on converted models.

A TorchScript module (Debian's python3-torch 1.13) with a `while` on a tensor condition and an
`if` on a tensor is exported with torch.onnx.export (opset 15): the while becomes an ONNX Loop
whose condition is recomputed in the body, the if an ONNX If whose branches capture outer values.
Only ops with gradient rules appear on the differentiable path (Mul, Add, Sub, ReduceSum,
ReduceMean). PyTorch's autograd on the same scripted module gives the reference gradients of the
loss with respect to the inputs x, w, c and the parameter `scale` (an initializer), in float32.

Writes tests/autodiff/onnx_control_flow/: model.onnx, x.npy, w.npy, c.npy, loss.npy and
<name>_grad.npy for x, w, c, scale. tests/cli/check_onnx_grad.sh converts, differentiates and runs
the model with the tessera CLI and compares.

Also writes tests/autodiff/onnx_loop_matmul/ (same files, opset 16): a `while` whose final value
feeds an `if` with a MatMul in each branch. The export leaves the Loop's outputs without a rank,
so the gradient pass must infer loop-carried types to a fixed point (issue 16, failure 2).

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


class LoopMatMul(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.tensor([[0.5, -0.25, 0.75], [0.2, 0.1, -0.3], [0.05, 0.4, 0.3]]))

    def forward(self, x, w, c):
        while bool(x.abs().sum() < 8.0):
            x = x * 1.5 + c
        if bool(x.mean() > 0.6):
            y = torch.matmul(x, w * self.scale) * 0.5
        else:
            y = torch.matmul(x, self.scale) + c
        return (y * y).sum(), y


def export(program, out, inputs, opset):
    os.makedirs(out, exist_ok=True)
    module = torch.jit.script(program)
    ts = {k: torch.tensor(v, requires_grad=True) for k, v in inputs.items()}
    loss, y = module(ts["x"], ts["w"], ts["c"])
    loss.backward()
    path = os.path.join(out, "model.onnx")
    torch.onnx.export(module, tuple(torch.tensor(v) for v in inputs.values()), path, opset_version=opset,
                      input_names=list(inputs), output_names=["loss", "y"])
    model = onnx.load(path)
    ops = sorted({n.op_type for n in model.graph.node})
    assert "Loop" in ops, ops
    inits = [i.name for i in model.graph.initializer]
    assert "scale" in inits, inits
    np.save(os.path.join(out, "loss.npy"), loss.detach().numpy())
    np.save(os.path.join(out, "y.npy"), y.detach().numpy())
    for k, t in ts.items():
        np.save(os.path.join(out, k + ".npy"), inputs[k])
        np.save(os.path.join(out, k + "_grad.npy"), t.grad.numpy())
    np.save(os.path.join(out, "scale_grad.npy"), module.scale.grad.numpy())
    print("wrote", out, "ops:", ", ".join(ops), "loss:", float(loss))
    return model


def main():
    model = export(Program(), OUT, {
        "x": np.array([[0.2, 0.3, 0.4], [0.1, 0.5, 0.3]], np.float32),
        "w": np.array([[1.2, 1.3, 1.1], [1.25, 1.15, 1.35]], np.float32),
        "c": np.array([0.1, 0.05, 0.15], np.float32),
    }, 15)
    assert "If" in {n.op_type for n in model.graph.node}
    out2 = os.path.join(os.path.dirname(OUT), "onnx_loop_matmul")
    model = export(LoopMatMul(), out2, {
        "x": np.array([[0.2, 0.3, 0.4], [0.1, 0.5, 0.3]], np.float32),
        "w": np.array([[0.9, 0.2, 0.1], [0.3, 1.1, 0.2], [0.1, 0.4, 1.2]], np.float32),
        "c": np.array([0.1, 0.05, 0.15], np.float32),
    }, 16)
    ops = [n.op_type for n in model.graph.node]
    assert ops.index("Loop") < ops.index("If"), ops  # the If reads the Loop's rankless output


if __name__ == "__main__":
    main()
