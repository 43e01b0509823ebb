#!/usr/bin/python3
"""PyTorch (Debian python3-torch 1.13) side of bench/train/run.sh: the LeNet-5 of
tools/train/architectures.cpp (same layers, same initialization rule) trained on Fashion-MNIST
with Adam, one thread, the same batch size and epochs. Prints one line per epoch:
  torch epoch E: S s, test accuracy A
"""
import argparse
import gzip
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    ndim = data[3]
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


class LeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(400, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    xtr = torch.tensor(idx(f"{a.data}/train-images-idx3-ubyte.gz"), dtype=torch.float32).unsqueeze(1) / 255
    ytr = torch.tensor(idx(f"{a.data}/train-labels-idx1-ubyte.gz"), dtype=torch.int64)
    xte = torch.tensor(idx(f"{a.data}/t10k-images-idx3-ubyte.gz"), dtype=torch.float32).unsqueeze(1) / 255
    yte = torch.tensor(idx(f"{a.data}/t10k-labels-idx1-ubyte.gz"), dtype=torch.int64)
    model = LeNet()
    opt = torch.optim.Adam(model.parameters(), lr=a.lr)
    g = torch.Generator().manual_seed(a.seed)
    for epoch in range(1, a.epochs + 1):
        order = torch.randperm(len(ytr), generator=g)
        t0 = time.perf_counter()
        for b in range(0, len(ytr), a.batch_size):
            i = order[b:b + a.batch_size]
            opt.zero_grad()
            loss = F.cross_entropy(model(xtr[i]), ytr[i])
            loss.backward()
            opt.step()
        secs = time.perf_counter() - t0
        with torch.no_grad():
            acc = (model(xte).argmax(1) == yte).float().mean().item()
        print(f"torch epoch {epoch}: {secs:.2f} s, test accuracy {acc:.4f}", flush=True)


if __name__ == "__main__":
    main()
