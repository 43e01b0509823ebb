#!/bin/bash
# check_json.sh TESSERA DATA_DIR: `tessera inspect --json` parses and describes the test model.
set -e
"$1" inspect "$2/model.tsr" --json | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
assert [i["name"] for i in d["inputs"]] == ["x", "ids"], d["inputs"]
assert d["inputs"][1]["shape"] == [-1] and d["inputs"][1]["dim_names"] == ["N"], d["inputs"][1]
assert d["inputs"][0]["dtype"] == "f32" and d["inputs"][0]["shape"] == [2, 3]
assert [o["name"] for o in d["outputs"]] == ["y", "ids_out", "w_out"]
assert d["ops"] == {"Identity": 3}, d["ops"]
assert d["parameters"]["count"] == 6 and d["parameters"]["bytes"] == 24, d["parameters"]
assert d["signatures"] == [{"name": "infer", "graph": 0}], d["signatures"]
assert d["metadata"] == {"purpose": "cli test"}, d["metadata"]
assert d["producer"] == "tessera cli tests"
print("inspect --json OK")
'
