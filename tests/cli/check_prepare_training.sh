#!/usr/bin/env bash
# check_prepare_training.sh TESSERA WORKDIR: `tessera prepare-training` on a PyTorch model exported
# to ONNX (fc1 frozen, fc2 trained with SGD + momentum), `tessera train` on the prepared model,
# `tessera export`, `tessera run`: the exported model's logits equal those of the same model
# trained by torch.optim.SGD on the same 64 Fashion-MNIST samples (3 full-batch steps, so the
# CLI's shuffling changes only the summation order), and fc1 is left exactly as exported.
# Skipped (77) without the dataset or torch/onnx.
set -euo pipefail
tessera=$1 dir=$2
data=/usr/share/datasets/fashion-mnist
[[ -f $data/train-images-idx3-ubyte.gz ]] || { echo "SKIP: $data missing (apt-get install dataset-fashion-mnist)"; exit 77; }
/usr/bin/python3 -c "import torch, onnx, numpy" 2>/dev/null || { echo "SKIP: python3 lacks torch/onnx/numpy"; exit 77; }
rm -rf "$dir" && mkdir -p "$dir"
/usr/bin/python3 - "$dir" "$data" <<'PY'
import gzip, sys, numpy as np, torch
d, data = sys.argv[1:]
def idx(name):
    raw = gzip.open(f"{data}/{name}", "rb").read()
    dims = raw[3]
    shape = [int.from_bytes(raw[4 + 4 * k:8 + 4 * k], "big") for k in range(dims)]
    return np.frombuffer(raw, np.uint8, offset=4 + 4 * dims).reshape(shape)
x = torch.tensor(idx("train-images-idx3-ubyte.gz")[:64], dtype=torch.float32).reshape(64, 1, 28, 28) / 255
y = torch.tensor(idx("train-labels-idx1-ubyte.gz")[:64], dtype=torch.int64)
test = (torch.tensor(idx("t10k-images-idx3-ubyte.gz")[:16], dtype=torch.float32) / 255).reshape(16, 1, 28, 28)
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = torch.nn.Linear(784, 32), torch.nn.Linear(32, 10)
    def forward(self, image):
        return self.fc2(torch.relu(self.fc1(torch.flatten(image, 1))))
torch.manual_seed(0)
net = Net()
torch.onnx.export(net, (x[:2],), f"{d}/net.onnx", input_names=["image"], output_names=["logits"],
                  dynamic_axes={"image": {0: "N"}, "logits": {0: "N"}}, opset_version=13)
fc1 = net.fc1.weight.detach().clone()
for p in net.fc1.parameters(): p.requires_grad_(False)
opt = torch.optim.SGD(net.fc2.parameters(), lr=0.1, momentum=0.9)
for _ in range(3):
    opt.zero_grad()
    torch.nn.functional.cross_entropy(net(x), y).backward()
    opt.step()
assert torch.equal(net.fc1.weight, fc1)
np.save(f"{d}/test.npy", test.numpy())
np.save(f"{d}/want.npy", net(test).detach().numpy())
PY
# A pattern that matches nothing is named (exit 4, invalid argument).
if "$tessera" prepare-training "$dir/net.onnx" --frozen 'encoder.*' -o "$dir/bad.tsr" 2>"$dir/bad.txt"; then
  echo "FAIL: an unmatched --frozen pattern was accepted"; exit 1
fi
grep -qF 'frozen "encoder.*"' "$dir/bad.txt" || { echo "FAIL: error does not name the pattern:"; cat "$dir/bad.txt"; exit 1; }
# The model after the repeatable pattern options: each takes one value.
"$tessera" prepare-training --optimizer sgd --lr 0.1 --momentum 0.9 --trainable '*' --frozen 'fc1.*' "$dir/net.onnx" \
  -o "$dir/train.tsr" | tee "$dir/prepare.txt"
grep -qF "2 trainable weights" "$dir/prepare.txt" || { echo "FAIL: expected fc2's 2 weights trainable"; exit 1; }
"$tessera" train "$dir/train.tsr" --limit 64 --batch-size 64 --epochs 3 -o "$dir/run" >/dev/null
"$tessera" export "$dir/run/checkpoint_epoch3.tsr" -o "$dir/tuned.tsr"
"$tessera" run "$dir/tuned.tsr" --input "image=$dir/test.npy" --output-dir "$dir/out" >/dev/null
/usr/bin/python3 - "$dir" <<'PY'
import sys, numpy as np
d = sys.argv[1]
got, want = np.load(f"{d}/out/output_0.npy"), np.load(f"{d}/want.npy")
err = np.abs(got - want).max()
assert got.shape == want.shape and err < 1e-4, f"logits differ from torch.optim.SGD's by {err}"
print(f"tessera prepare-training + train + export = torch SGD (momentum, fc1 frozen): max |diff| {err:.2e}")
PY
echo "PASS"
