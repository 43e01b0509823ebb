#!/usr/bin/python3
"""Writes onnxruntime quantize_dynamic's pattern into an f32 model, for benchmarks and tests of the
int8 path (quantize_fusion, DynamicQuantizeMatMul): every MatMul whose B is a 2-D f32 initializer
becomes DynamicQuantizeLinear(A) -> MatMulInteger(A_q, W_q, A_zp, W_zp) -> Cast(FLOAT) ->
Mul(., Mul(A_scale, W_scale)), W quantized to s8 symmetric per tensor (scale max|W| / 127, zero
point 0: quantize_dynamic's defaults). One DynamicQuantizeLinear per distinct A (Q/K/V share one).
A bias Add after the MatMul stays an Add (as quantize_dynamic leaves it).

Usage: make_q8_dynamic.py IN.onnx OUT.onnx
"""
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper


def main(src, dst):
    m = onnx.load(src)
    g = m.graph
    inits = {i.name: i for i in g.initializer}
    dql_of = {}
    nodes, new_inits = [], []
    for nd in g.node:
        if nd.op_type != "MatMul" or nd.input[1] not in inits:
            nodes.append(nd)
            continue
        w = numpy_helper.to_array(inits[nd.input[1]])
        if w.ndim != 2 or w.dtype != np.float32:
            nodes.append(nd)
            continue
        a, base = nd.input[0], nd.output[0]
        if a not in dql_of:
            q = a + "_q8"
            nodes.append(helper.make_node("DynamicQuantizeLinear", [a], [q, q + "_scale", q + "_zp"], name=q + "_dql"))
            dql_of[a] = q
        q = dql_of[a]
        amax = float(np.abs(w).max()) or 1.0
        scale = np.float32(amax / 127.0)
        wq = np.clip(np.rint(w / scale), -127, 127).astype(np.int8)
        new_inits += [numpy_helper.from_array(wq, base + "_wq"), numpy_helper.from_array(np.array(scale, np.float32), base + "_ws"),
                      numpy_helper.from_array(np.array(0, np.int8), base + "_wz")]
        nodes += [
            helper.make_node("MatMulInteger", [q, base + "_wq", q + "_zp", base + "_wz"], [base + "_i32"], name=base + "_mmi"),
            helper.make_node("Cast", [base + "_i32"], [base + "_f32"], to=1, name=base + "_cast"),
            helper.make_node("Mul", [q + "_scale", base + "_ws"], [base + "_s"], name=base + "_smul"),
            helper.make_node("Mul", [base + "_f32", base + "_s"], [base], name=base + "_mul"),
        ]
    used = {i for nd in nodes for i in nd.input}
    keep = [i for i in g.initializer if i.name in used]
    del g.node[:]
    g.node.extend(nodes)
    del g.initializer[:]
    g.initializer.extend(keep + new_inits)
    onnx.save(m, dst)
    print(f"{len(dql_of)} DynamicQuantizeLinear, {len(new_inits) // 3} MatMulInteger -> {dst}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
