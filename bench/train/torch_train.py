#!/usr/bin/python3
"""PyTorch (Debian python3-torch 1.13) side of bench/train/run.sh, and the exporter of its second
model for `tessera train MODEL.onnx`.

Models (same layers and initialization rule on both sides):
  lenet  the LeNet-5 of tools/train/architectures.cpp, Fashion-MNIST 28x28;
  mnv2   a MobileNetV2 of width 0.35 (inverted residual blocks, depthwise 3x3, BatchNorm, ReLU6)
         on Fashion-MNIST upscaled to 64x64 (bilinear, align_corners=False).

  torch_train.py --arch A [--epochs E --batch-size B --threads T --limit N --seed S]
      trains with Adam 1e-3 and prints per epoch: "torch epoch E: S s, test accuracy A"
  torch_train.py --arch A --export DIR [--limit N --seed S]
      writes DIR/A.onnx, the model as initialized with --seed (the weights the training run with
      that seed starts from; mnv2: BatchNormalization in training mode, as torch trains it), and
      DIR/data/{train,t10k}-{images-idx3,labels-idx1}-ubyte: the training images (the first N;
      mnv2: upscaled, and the first 1000 test images) as IDX files for `tessera train --data DIR/data`.

The batches: each epoch's order is `tessera train --seed S`'s (bench/train/shuffle.py: Fisher-Yates
over mt19937_64), so `tessera train DIR/A.onnx --data DIR/data --seed S` with the same batch size,
optimizer and learning rate takes the same steps from the same weights.
"""
import argparse
import gzip
import os
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from shuffle import epoch_orders


def idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    ndim = data[3]
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def write_idx(path, array):
    code = {np.dtype(np.uint8): 0x08}[array.dtype]
    with open(path, "wb") as f:
        f.write(bytes([0, 0, code, array.ndim]))
        for d in array.shape:
            f.write(int(d).to_bytes(4, "big"))
        f.write(array.tobytes())


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


def conv_bn(cin, cout, k, stride, groups=1, act=True):
    layers = [nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
    if act:
        layers.append(nn.ReLU6())
    return nn.Sequential(*layers)


class InvertedResidual(nn.Module):
    def __init__(self, cin, cout, stride, expand):
        super().__init__()
        hidden = cin * expand
        layers = [conv_bn(cin, hidden, 1, 1)] if expand != 1 else []
        layers += [conv_bn(hidden, hidden, 3, stride, groups=hidden), conv_bn(hidden, cout, 1, 1, act=False)]
        self.body = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        return x + self.body(x) if self.residual else self.body(x)


class MobileNetV2(nn.Module):
    """torchvision's MobileNetV2 layout at width 0.35 (channels rounded to multiples of 8), one
    input channel, 10 classes."""

    def __init__(self, width=0.35, classes=10):
        super().__init__()

        def ch(c):
            return max(8, int(c * width + 4) // 8 * 8)

        settings = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2),
                    (6, 320, 1, 1)]
        cin = ch(32)
        layers = [conv_bn(1, cin, 3, 2)]
        for t, c, n, s in settings:
            for i in range(n):
                layers.append(InvertedResidual(cin, ch(c), s if i == 0 else 1, t))
                cin = ch(c)
        layers.append(conv_bn(cin, 1280, 1, 1))
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Linear(1280, classes)

    def forward(self, x):
        x = self.features(x)
        return self.classifier(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def load(data, arch, limit):
    xtr = torch.tensor(idx(f"{data}/train-images-idx3-ubyte.gz"), dtype=torch.float32).unsqueeze(1)
    ytr = torch.tensor(idx(f"{data}/train-labels-idx1-ubyte.gz"), dtype=torch.int64)
    xte = torch.tensor(idx(f"{data}/t10k-images-idx3-ubyte.gz"), dtype=torch.float32).unsqueeze(1)
    yte = torch.tensor(idx(f"{data}/t10k-labels-idx1-ubyte.gz"), dtype=torch.int64)
    if limit > 0:
        xtr, ytr = xtr[:limit], ytr[:limit]
    if arch == "mnv2":  # upscaled, then rounded back to bytes: both sides read the same IDX pixels
        up = lambda x: F.interpolate(x, size=(64, 64), mode="bilinear", align_corners=False).round().clamp(0, 255)
        xtr, xte, yte = up(xtr), up(xte[:1000]), yte[:1000]  # 1000 test images: evaluation is not timed
    return xtr / 255, ytr, xte / 255, yte


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--arch", choices=["lenet", "mnv2"], default="lenet")
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--limit", type=int, default=0)
    p.add_argument("--export", default="")
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    xtr, ytr, xte, yte = load(a.data, a.arch, a.limit)
    model = LeNet() if a.arch == "lenet" else MobileNetV2()
    if a.export:
        os.makedirs(f"{a.export}/data", exist_ok=True)
        model.train()
        torch.onnx.export(model, xtr[:2], f"{a.export}/{a.arch}.onnx", input_names=["image"], output_names=["logits"],
                          dynamic_axes={"image": {0: "N"}, "logits": {0: "N"}}, opset_version=15,
                          training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False)
        to_u8 = lambda x: (x * 255).round().to(torch.uint8).squeeze(1).numpy()
        write_idx(f"{a.export}/data/train-images-idx3-ubyte", to_u8(xtr))
        write_idx(f"{a.export}/data/train-labels-idx1-ubyte", ytr.to(torch.uint8).numpy())
        write_idx(f"{a.export}/data/t10k-images-idx3-ubyte", to_u8(xte))
        write_idx(f"{a.export}/data/t10k-labels-idx1-ubyte", yte.to(torch.uint8).numpy())
        return
    opt = torch.optim.Adam(model.parameters(), lr=a.lr)
    orders = epoch_orders(len(ytr), a.seed)
    for epoch in range(1, a.epochs + 1):
        model.train()
        order = torch.tensor(next(orders))
        t0 = time.perf_counter()
        for b in range(0, len(ytr), a.batch_size):
            i = order[b:b + a.batch_size]
            opt.zero_grad()
            loss = F.cross_entropy(model(xtr[i]), ytr[i])
            loss.backward()
            opt.step()
        secs = time.perf_counter() - t0
        model.eval()
        with torch.no_grad():
            acc = sum((model(xte[k:k + 1000]).argmax(1) == yte[k:k + 1000]).sum().item()
                      for k in range(0, len(yte), 1000)) / len(yte)
        print(f"torch epoch {epoch}: {secs:.2f} s, test accuracy {acc:.4f}", flush=True)


if __name__ == "__main__":
    main()
