#!/bin/bash
# check_limits.sh TESSERA WORK_DIR: the default session limits stop hostile models.
# A Loop with M = INT64_MAX and a condition that stays true (made with onnx.helper) ends with
# exit 7 naming the Loop node, under the default cap and under --max-loop-iterations; a
# ConstantOfShape asking for 64 MiB fails with exit 7 under --max-memory 1M and runs without it.
set -u
tessera=$1; dir=$2/limits
rm -rf "$dir"; mkdir -p "$dir"
/usr/bin/python3 - "$dir" <<'PY' || exit 1
import sys, numpy as np, onnx
from onnx import helper, TensorProto
d = sys.argv[1]
body = helper.make_graph(
    [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
     helper.make_node("Add", ["x_in", "one"], ["x_out"])],
    "body",
    [helper.make_tensor_value_info("i", TensorProto.INT64, []),
     helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
     helper.make_tensor_value_info("x_in", TensorProto.FLOAT, [])],
    [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
     helper.make_tensor_value_info("x_out", TensorProto.FLOAT, [])],
    [helper.make_tensor("one", TensorProto.FLOAT, [], [1.0])])
g = helper.make_graph(
    [helper.make_node("Loop", ["M", "cond", "x0"], ["x"], name="runaway", body=body)],
    "g", [helper.make_tensor_value_info("x0", TensorProto.FLOAT, [])],
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [])],
    [helper.make_tensor("M", TensorProto.INT64, [], [2**63 - 1]),
     helper.make_tensor("cond", TensorProto.BOOL, [], [True])])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 16)]), d + "/runaway.onnx")
g2 = helper.make_graph(
    [helper.make_node("ConstantOfShape", ["shape"], ["y"], name="big",
                      value=helper.make_tensor("v", TensorProto.FLOAT, [1], [0.5]))],
    "g2", [helper.make_tensor_value_info("shape", TensorProto.INT64, [2])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
onnx.save(helper.make_model(g2, opset_imports=[helper.make_opsetid("", 17)]), d + "/big.onnx")
np.save(d + "/x0.npy", np.array(0, dtype=np.float32))
np.save(d + "/shape.npy", np.array([4096, 4096], dtype=np.int64))
PY
fail=0
expect() {  # expect RC PATTERN ARGS...
  local rc=$1 pat=$2; shift 2
  local out; out=$(timeout 120 "$tessera" "$@" 2>&1); local got=$?
  if [[ $got != "$rc" ]] || ! grep -qF -- "$pat" <<<"$out"; then
    echo "FAIL: tessera $* exited $got (want $rc), output:"; echo "$out" | tail -5; fail=1
  else
    echo "ok: tessera $* -> $rc ($(grep -F -- "$pat" <<<"$out" | head -1 | cut -c1-160))"
  fi
}
"$tessera" convert "$dir/runaway.onnx" -o "$dir/runaway.tsr" >/dev/null || exit 1
"$tessera" convert "$dir/big.onnx" -o "$dir/big.tsr" >/dev/null || exit 1
expect 7 '(Loop "runaway")' run "$dir/runaway.tsr" -i "$dir/x0.npy" --max-loop-iterations 50
expect 7 'limit of 50 iterations' run "$dir/runaway.tsr" -i "$dir/x0.npy" --max-loop-iterations 50
expect 7 'limit of 1000000 iterations' run "$dir/runaway.tsr" -i "$dir/x0.npy"
expect 7 'memory limit of 1048576 bytes' run "$dir/big.tsr" -i "$dir/shape.npy" --max-memory 1M
expect 7 '(ConstantOfShape "big")' run "$dir/big.tsr" -i "$dir/shape.npy" --max-memory 1M
expect 0 'f32 [4096, 4096]' run "$dir/big.tsr" -i "$dir/shape.npy"
expect 2 '--max-loop-iterations' run "$dir/big.tsr" --max-loop-iterations -3
exit $fail
