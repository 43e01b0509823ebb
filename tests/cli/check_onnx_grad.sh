#!/bin/bash
# check_onnx_grad.sh TESSERA SRC_DIR WORK_DIR [CASE]: `tessera convert` + `tessera grad` +
# `tessera run` on tests/autodiff/CASE/model.onnx (TorchScript exports with a data-dependent Loop
# and an If; see tests/autodiff/make_onnx_control_flow.py), then compares the loss and the
# gradients with PyTorch autograd's (float32: 1e-4 relative). CASE onnx_control_flow (default)
# also differentiates the .onnx directly with the default --wrt (the weights the loss depends on:
# only `scale`). CASE onnx_loop_matmul is the opset-16 export whose Loop outputs have no rank.
set -e
tessera=$1; case=${4:-onnx_control_flow}; src=$2/tests/autodiff/$case; work=$3
rm -rf "$work"; mkdir -p "$work"
"$tessera" convert "$src/model.onnx" -o "$work/model.tsr"
"$tessera" grad "$work/model.tsr" -o "$work/grad.tsr" --wrt x,w,c,scale
"$tessera" run "$work/grad.tsr" -i x="$src/x.npy" -i w="$src/w.npy" -i c="$src/c.npy" --output-dir "$work/out"
if [[ $case == onnx_control_flow ]]; then
  "$tessera" grad "$src/model.onnx" -o "$work/grad_default.tsr" | tee "$work/default.txt"
  grep -qF '1 gradient(s): scale_grad' "$work/default.txt"
  "$tessera" run "$work/grad_default.tsr" -i "$src/x.npy" -i "$src/w.npy" -i "$src/c.npy" --output-dir "$work/out_default"
fi
/usr/bin/python3 - "$src" "$work" <<'PY'
import json, os, sys, numpy as np
src, work = sys.argv[1], sys.argv[2]
def check(out, names):
    meta = json.load(open(f"{out}/outputs.json"))["outputs"]
    assert [o["name"] for o in meta] == ["loss", "y"] + [n + "_grad" for n in names], meta
    np.testing.assert_allclose(np.load(f"{out}/output_0.npy"), np.load(f"{src}/loss.npy"), rtol=1e-5)
    np.testing.assert_allclose(np.load(f"{out}/output_1.npy"), np.load(f"{src}/y.npy"), rtol=1e-5)
    for i, n in enumerate(names):
        got, want = np.load(f"{out}/output_{2 + i}.npy"), np.load(f"{src}/{n}_grad.npy")
        assert got.dtype == np.float32 and got.shape == want.shape, (n, got.dtype, got.shape)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6, err_msg=n)
check(work + "/out", ["x", "w", "c", "scale"])
if os.path.isdir(work + "/out_default"):
    check(work + "/out_default", ["scale"])
print("ONNX Loop/If gradients match PyTorch")
PY
