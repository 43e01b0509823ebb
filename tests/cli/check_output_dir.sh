#!/bin/bash
# check_output_dir.sh TESSERA DATA_DIR: runs the test model with --output-dir and checks with
# numpy that output_<i>.npy and outputs.json hold the expected values, names, dtypes and shapes.
set -e
tessera=$1; data=$2
out=$data/out_dir_test
rm -rf "$out"
"$tessera" run "$data/model.tsr" --input "$data/x.npy" --input "$data/ids.npy" --output-dir "$out"
/usr/bin/python3 - "$out" "$data" <<'PY'
import json, sys, numpy as np
out, data = sys.argv[1], sys.argv[2]
meta = json.load(open(out + "/outputs.json"))["outputs"]
assert [o["index"] for o in meta] == [0, 1, 2], meta
assert [o["name"] for o in meta] == ["y", "ids_out", "w_out"], meta
assert [o["dtype"] for o in meta] == ["f32", "i64", "f32"], meta
assert [o["shape"] for o in meta] == [[2, 3], [4], [2, 3]], meta
y = np.load(out + "/output_0.npy"); ids = np.load(out + "/output_1.npy"); w = np.load(out + "/output_2.npy")
assert y.dtype == np.float32 and ids.dtype == np.int64, (y.dtype, ids.dtype)
np.testing.assert_array_equal(y, np.load(data + "/x.npy"))
np.testing.assert_array_equal(y, np.arange(6, dtype=np.float32).reshape(2, 3) * 0.5)
np.testing.assert_array_equal(ids, [7, 8, 9, 10])
np.testing.assert_array_equal(w, [[1, 2, 3], [4, 5, 6]])
print("output dir OK")
PY
