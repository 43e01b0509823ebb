#!/usr/bin/python3
"""Prepares the C trainer test's files (tests/c_api/c_train_test.c) with the host `tessera` CLI:
a small PyTorch MLP (image [N, 1, 8, 8] -> logits [N, 4]) exported to ONNX and converted to
OUT/net.tsr; OUT/train.tsr from `tessera prepare-training` (sgd, momentum 0.9, lr 0.05, fc1.*
frozen); a one-sample IDX dataset (pixels 0 or 255, so that every reader gets exactly 0.0 and
1.0) with OUT/x.npy and OUT/y.npy holding that sample as f32 [1, 1, 8, 8] and i64 [1]; and
OUT/cli_checkpoint.tsr, the checkpoint `tessera train` writes after three steps on it.
Usage: prepare_train_model.py --tessera HOST_TESSERA --out OUT
Exit status: 0 written, 1 error, 77 when the host CLI or torch/onnx is absent.
"""
import argparse
import os
import subprocess
import sys

SKIP = 77


def idx(path, arr, magic):
    import numpy as np
    with open(path, "wb") as f:
        f.write(bytes([0, 0, magic, arr.ndim]))
        for d in arr.shape:
            f.write(int(d).to_bytes(4, "big"))
        f.write(arr.astype(np.uint8).tobytes())


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--tessera", required=True)
    p.add_argument("--out", required=True)
    a = p.parse_args()
    if not os.access(a.tessera, os.X_OK):
        print(f"SKIP: no host tessera CLI at {a.tessera} (build the release preset's tessera_cli first)")
        return SKIP
    try:
        import numpy as np
        import torch
        import onnx  # noqa: F401  (torch.onnx.export needs it)
    except ImportError as e:
        print(f"SKIP: {e}")
        return SKIP
    out = a.out
    os.makedirs(f"{out}/data", exist_ok=True)
    rng = np.random.default_rng(3)
    images = (rng.random((5, 8, 8)) < 0.5).astype(np.uint8) * 255
    labels = np.array([2, 0, 1, 3, 2], np.uint8)
    idx(f"{out}/data/train-images-idx3-ubyte", images[:1], 8)
    idx(f"{out}/data/train-labels-idx1-ubyte", labels[:1], 8)
    idx(f"{out}/data/t10k-images-idx3-ubyte", images[1:], 8)
    idx(f"{out}/data/t10k-labels-idx1-ubyte", labels[1:], 8)
    np.save(f"{out}/x.npy", (images[:1] / 255).astype(np.float32).reshape(1, 1, 8, 8))
    np.save(f"{out}/y.npy", labels[:1].astype(np.int64))

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.fc2 = torch.nn.Linear(64, 16), torch.nn.Linear(16, 4)

        def forward(self, image):
            return self.fc2(torch.relu(self.fc1(torch.flatten(image, 1))))

    torch.manual_seed(1)
    torch.onnx.export(Net(), (torch.zeros(1, 1, 8, 8),), f"{out}/net.onnx", input_names=["image"],
                      output_names=["logits"], dynamic_axes={"image": {0: "N"}, "logits": {0: "N"}},
                      opset_version=13)
    t = a.tessera
    run = [
        [t, "convert", f"{out}/net.onnx", "-o", f"{out}/net.tsr"],
        [t, "prepare-training", f"{out}/net.tsr", "--optimizer", "sgd", "--lr", "0.05", "--momentum", "0.9",
         "--frozen", "fc1.*", "-o", f"{out}/train.tsr"],
        [t, "train", f"{out}/train.tsr", "--data", f"{out}/data", "--limit", "1", "--batch-size", "1",
         "--epochs", "3", "-o", f"{out}/run"],
    ]
    for cmd in run:
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            print(f"prepare_train_model: {' '.join(cmd)} failed ({r.returncode}):\n{r.stdout}{r.stderr}")
            return 1
    os.replace(f"{out}/run/checkpoint_epoch3.tsr", f"{out}/cli_checkpoint.tsr")
    print(f"wrote {out}/train.tsr, x.npy, y.npy, cli_checkpoint.tsr")
    return 0


if __name__ == "__main__":
    sys.exit(main())
