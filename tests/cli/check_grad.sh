#!/bin/bash
# check_grad.sh TESSERA DATA_DIR: `tessera grad` on grad_model.tsr (loss = sum(x * w + b)), then
# `tessera run` on the result; numpy checks the outputs: the model's own outputs first, then
# w_grad = x and b_grad = 2 (default --wrt: the constants), or x_grad = w with --wrt x.
set -e
tessera=$1; data=$2
out=$data/grad_check
rm -rf "$out"
"$tessera" grad "$data/grad_model.tsr" -o "$out.all.tsr"
"$tessera" run "$out.all.tsr" --input x="$data/x.npy" --input ids="$data/ids.npy" --output-dir "$out/all"
"$tessera" grad "$data/grad_model.tsr" -o "$out.x.tsr" --wrt x,b
"$tessera" run "$out.x.tsr" --input x="$data/x.npy" --input ids="$data/ids.npy" --output-dir "$out/x"
/usr/bin/python3 - "$out" "$data" <<'PY'
import json, sys, numpy as np
out, data = sys.argv[1], sys.argv[2]
x = np.load(data + "/x.npy")
w = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
b = np.array([0.5, -0.5, 1], np.float32)
for sub, names, grads in (("all", ["w_grad", "b_grad"], [x, np.full(3, 2, np.float32)]),
                          ("x", ["x_grad", "b_grad"], [w, np.full(3, 2, np.float32)])):
    meta = json.load(open(f"{out}/{sub}/outputs.json"))["outputs"]
    assert [o["name"] for o in meta] == ["loss", "count"] + names, meta
    np.testing.assert_allclose(np.load(f"{out}/{sub}/output_0.npy"), (x * w + b).sum(), rtol=1e-6)
    np.testing.assert_array_equal(np.load(f"{out}/{sub}/output_1.npy"), [4])
    for i, g in enumerate(grads):
        got = np.load(f"{out}/{sub}/output_{2 + i}.npy")
        assert got.dtype == np.float32 and got.shape == g.shape, (names[i], got.dtype, got.shape)
        np.testing.assert_allclose(got, g, rtol=1e-6, err_msg=names[i])
print("grad outputs OK")
PY
