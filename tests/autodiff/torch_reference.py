#!/usr/bin/python3
"""Reference gradients for the control-flow programs of tests/unit/autodiff_control_flow_test.cpp.

Each program is computed eagerly in PyTorch (Debian's python3-torch 1.13) in float64; autograd
gives d(loss)/d(each input). Inputs and gradients are written as .npy files under
tests/autodiff/reference/<program>/ (inputs: <name>.npy, gradients: <name>_grad.npy, the loss:
loss.npy). The C++ test builds the same program as a graph with If/Loop nodes, differentiates
it with the autodiff pass and compares.

Usage: /usr/bin/python3 tests/autodiff/torch_reference.py   (rewrites the reference folder)
"""
import os

import numpy as np
import torch

torch.set_default_dtype(torch.float64)
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference")


def save(name, inputs, loss_fn):
    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    ts = {k: torch.tensor(v, requires_grad=(v.dtype == np.float64)) for k, v in inputs.items()}
    loss = loss_fn(**ts)
    loss.backward()
    np.save(os.path.join(d, "loss.npy"), loss.detach().numpy())
    for k, t in ts.items():
        np.save(os.path.join(d, k + ".npy"), inputs[k])
        if t.requires_grad:
            g = t.grad if t.grad is not None else torch.zeros_like(t)
            np.save(os.path.join(d, k + "_grad.npy"), g.numpy())


rng = np.random.default_rng(7)


def u(*shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, size=shape)


# The seeds' example: y = W1 @ X if flag > 0 else W2 @ X; y = relu(y + b); loss = sum(y * y).
def seeds_program(X, W1, W2, b, flag):
    y = W1 @ X if flag > 0 else W2 @ X
    y = torch.relu(y + b)
    return (y * y).sum()


common = dict(X=u(3, 2), W1=u(4, 3), W2=u(4, 3), b=u(4, 1))
save("if_then", dict(common, flag=np.array(1.0)), seeds_program)
save("if_else", dict(common, flag=np.array(-1.0)), seeds_program)


# A while loop whose trip count depends on the data: x = x * w + c until sum(x) >= limit.
def while_program(x, w, c, limit):
    while x.sum() < limit:
        x = x * w + c
    return (x * x).sum()


save("while_data_dependent", dict(x=u(2, 3, lo=0.1, hi=0.5), w=u(2, 3, lo=1.1, hi=1.4), c=u(3, lo=0.0, hi=0.2),
                                  limit=np.array(9.0)), while_program)


# Nested: a counted loop whose body branches on the data and runs an inner counted loop.
def nested_program(x, w, c):
    for _ in range(4):
        if x.sum() > 0:
            for _ in range(2):
                x = x * w + c
        else:
            x = x - c * 0.5
        x = x / (1.0 + (x * x).sum())
    return (x * x).sum()


save("nested_loop_if_loop", dict(x=u(2, 2), w=u(2, 2, lo=0.5, hi=1.5), c=u(2, 2)), nested_program)


# Scan (tests/unit/autodiff_scan_test.cpp, recurrence()): xs [2, 4] scanned along axis 1 from the
# last column (scan_input_directions = 1); each step s = s * w + x, y = s * x - w; the ys are
# stacked along axis 0 last-first (scan_output_directions = 1); loss = sum(s^2) + sum(ys^3).
def scan_program(s0, xs, w):
    s, ys = s0, []
    for t in reversed(range(xs.shape[1])):
        x = xs[:, t]
        s = s * w + x
        ys.append(s * x - w)
    ys = torch.stack(ys[::-1], 0)
    return (s * s).sum() + (ys * ys * ys).sum()


save("scan_reverse", dict(s0=u(2), xs=u(2, 4), w=u(2, lo=0.5, hi=1.2)), scan_program)
print("wrote", OUT)
