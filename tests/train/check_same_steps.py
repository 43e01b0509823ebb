#!/usr/bin/python3
"""check_same_steps.py --tessera BIN --work DIR: `tessera train` and PyTorch take the same steps.

bench/train/torch_train.py's LeNet-5, initialized by PyTorch with seed 0, is exported to ONNX with
the first 320 Fashion-MNIST training images (and 100 test images) as IDX files; `tessera train`
trains the ONNX file for 2 epochs (batch 32, Adam 1e-3, seed 0) and PyTorch trains its own model
on the same images in the order of bench/train/shuffle.py (Fisher-Yates over mt19937_64, the
mirror of tessera's shuffle). The 20 step losses must agree within 1e-4 (measured: within the
6 digits loss.csv prints): the same weights, data, pixel scaling, batches and optimizer on both
sides, which is what bench/train/run.sh's accuracy comparison rests on.
Exit 77 (skip) without the dataset or torch/onnx.
"""
import argparse
import os
import subprocess
import sys

DATA = "/usr/share/datasets/fashion-mnist"
BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "train")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--tessera", required=True)
    p.add_argument("--work", required=True)
    a = p.parse_args()
    if not os.path.exists(f"{DATA}/train-images-idx3-ubyte.gz"):
        print(f"SKIP: {DATA} missing (apt-get install dataset-fashion-mnist)")
        return 77
    try:
        import torch
        import torch.nn.functional as F
        import onnx  # noqa: F401 (torch.onnx.export needs it)
    except ImportError:
        print("SKIP: python3 lacks torch/onnx")
        return 77
    sys.path.insert(0, BENCH)
    import torch_train
    from shuffle import epoch_orders

    seed, n, batch, epochs = 0, 320, 32, 2
    torch.set_num_threads(1)
    torch.manual_seed(seed)
    xtr, ytr, xte, yte = torch_train.load(DATA, "lenet", n)
    model = torch_train.LeNet()
    os.makedirs(f"{a.work}/data", exist_ok=True)
    torch.onnx.export(model, xtr[:2], f"{a.work}/lenet.onnx", input_names=["image"], output_names=["logits"],
                      dynamic_axes={"image": {0: "N"}, "logits": {0: "N"}}, opset_version=15)
    to_u8 = lambda x: (x * 255).round().to(torch.uint8).squeeze(1).numpy()
    torch_train.write_idx(f"{a.work}/data/train-images-idx3-ubyte", to_u8(xtr))
    torch_train.write_idx(f"{a.work}/data/train-labels-idx1-ubyte", ytr.to(torch.uint8).numpy())
    torch_train.write_idx(f"{a.work}/data/t10k-images-idx3-ubyte", to_u8(xte[:100]))
    torch_train.write_idx(f"{a.work}/data/t10k-labels-idx1-ubyte", yte[:100].to(torch.uint8).numpy())

    subprocess.run([a.tessera, "train", f"{a.work}/lenet.onnx", "--data", f"{a.work}/data", "--epochs", str(epochs),
                    "--batch-size", str(batch), "--optimizer", "adam", "--lr", "1e-3", "--seed", str(seed),
                    "--threads", "1", "-o", f"{a.work}/run"], check=True, stdout=subprocess.DEVNULL)
    got = [float(line.split(",")[3]) for line in open(f"{a.work}/run/loss.csv").read().split("\n")[1:] if line]

    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    orders = epoch_orders(n, seed)
    want = []
    for _ in range(epochs):
        order = torch.tensor(next(orders))
        for b in range(0, n, batch):
            i = order[b:b + batch]
            opt.zero_grad()
            loss = F.cross_entropy(model(xtr[i]), ytr[i])
            loss.backward()
            opt.step()
            want.append(loss.item())
    err = max(abs(g - w) for g, w in zip(got, want)) if len(got) == len(want) else float("inf")
    print(f"{len(got)} steps of tessera train against PyTorch's: losses {want[0]:.4f} -> {want[-1]:.4f}, "
          f"max |diff| {err:.1e}")
    if err > 1e-4:
        for k, (g, w) in enumerate(zip(got, want)):
            print(f"step {k + 1}: tessera {g:.6f} torch {w:.6f}")
        print(f"FAIL: {len(got)} tessera steps, {len(want)} PyTorch steps, max |diff| {err}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
