#!/bin/bash
# check_string_npy.sh TESSERA WORK_DIR: string tensors cross the .npy boundary as numpy unicode.
# An ONNX model made with onnx.helper (StringNormalizer dropping the stopword "hello") is
# converted; its string input comes from np.save of a '<U' array with non-ASCII text, and numpy
# reads output_0.npy back and compares it with the input minus the stopword.
set -e
tessera=$1; dir=$2/string_npy
rm -rf "$dir"; mkdir -p "$dir"
/usr/bin/python3 - "$dir" <<'PY'
import sys, numpy as np, onnx
from onnx import helper, TensorProto
d = sys.argv[1]
node = helper.make_node("StringNormalizer", ["s"], ["u"], case_change_action="NONE",
                        is_case_sensitive=1, stopwords=["hello"])
g = helper.make_graph([node], "g", [helper.make_tensor_value_info("s", TensorProto.STRING, [4])],
                      [helper.make_tensor_value_info("u", TensorProto.STRING, None)])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), d + "/stop.onnx")
np.save(d + "/s.npy", np.array(["hello", "wörld ñ", "", "日本 ok"]))
PY
"$tessera" convert "$dir/stop.onnx" -o "$dir/stop.tsr"
"$tessera" run "$dir/stop.tsr" --input s="$dir/s.npy" --output-dir "$dir/out"
/usr/bin/python3 - "$dir" <<'PY'
import json, sys, numpy as np
d = sys.argv[1]
u = np.load(d + "/out/output_0.npy")
assert u.dtype.kind == "U", u.dtype
expect = [v for v in np.load(d + "/s.npy").tolist() if v != "hello"]
assert u.tolist() == expect, (u.tolist(), expect)
meta = json.load(open(d + "/out/outputs.json"))["outputs"]
assert meta[0]["file"] == "output_0.npy" and meta[0]["dtype"] == "string", meta
print("string npy OK:", u.tolist())
PY
