#!/usr/bin/python3
"""Reference weights for the optimizer tests of tests/unit/training_test.cpp.

A linear model pred = X * w + b (X [4, 3], w [3], b [1], float32) with the mean-squared-error
loss is trained for 5 steps on one fixed batch by torch.optim (Debian's python3-torch 1.13) with
each optimizer configuration below. Writes tests/autodiff/reference/optim/{X,Y,w0,b0}.npy and,
per configuration, <name>_w.npy, <name>_b.npy (weights after the 5 steps) and <name>_loss.npy
(the 5 losses, each before its update).

Usage: /usr/bin/python3 tests/autodiff/torch_optimizer_reference.py
"""
import os

import numpy as np
import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference", "optim")
os.makedirs(OUT, exist_ok=True)
rng = np.random.default_rng(11)
X = rng.uniform(-1, 1, (4, 3)).astype(np.float32)
Y = rng.uniform(-1, 1, (4, 3)).astype(np.float32)
w0 = rng.uniform(-1, 1, (3,)).astype(np.float32)
b0 = rng.uniform(-1, 1, (1,)).astype(np.float32)
for name, arr in {"X": X, "Y": Y, "w0": w0, "b0": b0}.items():
    np.save(os.path.join(OUT, name + ".npy"), arr)

CONFIGS = {
    "sgd": lambda p: torch.optim.SGD(p, lr=0.1),
    "sgd_wd": lambda p: torch.optim.SGD(p, lr=0.1, weight_decay=0.05),
    "momentum": lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9),
    "nesterov": lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01),
    "adam": lambda p: torch.optim.Adam(p, lr=0.05),
    "adamw": lambda p: torch.optim.AdamW(p, lr=0.05, weight_decay=0.1),
}

for name, make in CONFIGS.items():
    w = torch.tensor(w0, requires_grad=True)
    b = torch.tensor(b0, requires_grad=True)
    opt = make([w, b])
    losses = []
    for _ in range(5):
        opt.zero_grad()
        loss = ((torch.tensor(X) * w + b - torch.tensor(Y)) ** 2).mean()
        loss.backward()
        losses.append(loss.item())
        opt.step()
    np.save(os.path.join(OUT, name + "_w.npy"), w.detach().numpy())
    np.save(os.path.join(OUT, name + "_b.npy"), b.detach().numpy())
    np.save(os.path.join(OUT, name + "_loss.npy"), np.array(losses, dtype=np.float32))
