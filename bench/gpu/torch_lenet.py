"""PyTorch CUDA eager baseline for bench/gpu/bench.sh: the LeNet of tools/train/architectures.h
(Conv 6@5x5 pad 2, ReLU, MaxPool 2, Conv 16@5x5, ReLU, MaxPool 2, Gemm 120, 84, 10) trained one
epoch with AdamW (lr 1e-3) on random Fashion-MNIST-shaped data; prints samples/s. Exits 0 with a
note when torch has no CUDA device (Debian's python3-torch is CPU-only)."""
import argparse
import time

import torch
import torch.nn as nn

p = argparse.ArgumentParser()
p.add_argument("--samples", type=int, default=8192)
p.add_argument("--batch-size", type=int, default=64)
a = p.parse_args()
if not torch.cuda.is_available():
    print("pytorch cuda: unavailable (torch", torch.__version__, "without a CUDA device)")
    raise SystemExit(0)
dev = torch.device("cuda")
net = nn.Sequential(nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(6, 16, 5), nn.ReLU(),
                    nn.MaxPool2d(2), nn.Flatten(), nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(),
                    nn.Linear(84, 10)).to(dev)
opt = torch.optim.AdamW(net.parameters(), lr=1e-3, weight_decay=0.0)
x = torch.rand(a.samples, 1, 28, 28)
y = torch.randint(0, 10, (a.samples,))
loss_fn = nn.CrossEntropyLoss()
torch.cuda.synchronize()
t0 = time.perf_counter()
for i in range(0, a.samples, a.batch_size):
    xb, yb = x[i:i + a.batch_size].to(dev), y[i:i + a.batch_size].to(dev)
    opt.zero_grad()
    loss = loss_fn(net(xb), yb)
    loss.backward()
    opt.step()
    loss.item()  # one host read per step, as tessera's train loop reads its loss
torch.cuda.synchronize()
dt = time.perf_counter() - t0
print(f"pytorch cuda: {a.samples / dt:.0f} samples/s ({torch.cuda.get_device_name()})")
