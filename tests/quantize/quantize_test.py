#!/usr/bin/python3
"""`tessera quantize` end to end: quantize a model, run the quantized file in onnxruntime-node and
in tessera, and require that both agree (same file, same integer math) and stay close to f32.

Usage: quantize_test.py --case NAME --tessera PATH/tessera --work-dir DIR [--ocr PATH/tessera-ocr]
Cases (CASES below): synthetic models built here with onnx.helper (cheap) and PP-OCRv4 rec from
third_party/models (skipped, 77, when absent). Prints one line per case:
    CASE: rel-L2 vs f32 ort=A tessera=B; tessera vs ort rel-L2 C max-abs D: PASS|FAIL
Tolerances (docs/quantization.md): agreement rel-L2 <= AGREE (both runtimes quantize the same
activations; a value on a rounding boundary of DynamicQuantizeLinear/QuantizeLinear may land one
step apart when the f32 ops before it differ in the last bits); accuracy: the case's max_drop.
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np

try:
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError:  # the onnx Python package builds the test models
    print("SKIP: python3 has no onnx package")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
NODE = os.environ.get("TSR_NODE", "/usr/bin/node")
MODELS = os.environ.get("TSR_MODELS_DIR", os.path.join(REPO, "third_party", "models"))
SKIP = 77
AGREE = 1e-2


def w(rng, *shape, scale=0.2):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def make_mlp(path):
    """MatMul (rank-3 A, two MatMuls sharing A), Add bias, Relu, Gemm transB with alpha/beta."""
    rng = np.random.default_rng(1)
    inits = [numpy_helper.from_array(w(rng, 64, 96), "w1"), numpy_helper.from_array(w(rng, 96), "b1"),
             numpy_helper.from_array(w(rng, 64, 96), "w1b"), numpy_helper.from_array(w(rng, 96, 32), "w2"),
             numpy_helper.from_array(w(rng, 24, 32), "wg"), numpy_helper.from_array(w(rng, 24), "bg"),
             numpy_helper.from_array(np.array([-1, 32], np.int64), "flat")]
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h0"], name="mm1"),
             helper.make_node("MatMul", ["x", "w1b"], ["h0b"], name="mm1b"),
             helper.make_node("Add", ["h0", "b1"], ["h1"]),
             helper.make_node("Mul", ["h1", "h0b"], ["h1b"]),
             helper.make_node("Relu", ["h1b"], ["h2"]),
             helper.make_node("MatMul", ["h2", "w2"], ["h3"], name="mm2"),
             helper.make_node("Reshape", ["h3", "flat"], ["h4"]),
             helper.make_node("Gemm", ["h4", "wg", "bg"], ["y"], name="gemm", transB=1, alpha=0.5, beta=2.0)]
    g = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 16, 64])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [32, 24])], inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)
    return {"x": ("float32", [2, 16, 64], -1, 1)}


def make_cnn(path):
    """Conv+bias, Relu, strided grouped Conv without bias, Relu, GlobalAveragePool, Gemm."""
    rng = np.random.default_rng(2)
    inits = [numpy_helper.from_array(w(rng, 8, 3, 3, 3), "c1w"), numpy_helper.from_array(w(rng, 8), "c1b"),
             numpy_helper.from_array(w(rng, 16, 4, 3, 3), "c2w"), numpy_helper.from_array(w(rng, 10, 16), "fw"),
             numpy_helper.from_array(w(rng, 10), "fb")]
    nodes = [helper.make_node("Conv", ["x", "c1w", "c1b"], ["a1"], name="conv1", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["a1"], ["r1"]),
             helper.make_node("Conv", ["r1", "c2w"], ["a2"], name="conv2", strides=[2, 2], group=2),
             helper.make_node("Relu", ["a2"], ["r2"]),
             helper.make_node("GlobalAveragePool", ["r2"], ["p"]),
             helper.make_node("Flatten", ["p"], ["f"]),
             helper.make_node("Gemm", ["f", "fw", "fb"], ["y"], name="fc", transB=1)]
    g = helper.make_graph(nodes, "cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 32, 32])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)
    return {"x": ("float32", [1, 3, 32, 32], -1, 1)}


def make_rescnn(path):
    """Residual blocks both ways: ResNet's Add -> Relu with a MaxPool identity, MobileNetV2's Adds
    without activation, one sum read by the next Add and by a conv, then GlobalAveragePool, Gemm."""
    rng = np.random.default_rng(3)
    inits = [numpy_helper.from_array(w(rng, 8, 3, 3, 3), "c1w"), numpy_helper.from_array(w(rng, 8), "c1b")]
    for k, ks in ((2, 3), (3, 3), (4, 1), (5, 1)):
        inits += [numpy_helper.from_array(w(rng, 8, 8, ks, ks), f"c{k}w"), numpy_helper.from_array(w(rng, 8), f"c{k}b")]
    inits += [numpy_helper.from_array(w(rng, 10, 8), "fw"), numpy_helper.from_array(w(rng, 10), "fb")]
    conv = lambda k, x, y, pad: helper.make_node("Conv", [x, f"c{k}w", f"c{k}b"], [y], name=f"conv{k}", pads=[pad] * 4)
    nodes = [conv(1, "x", "a1", 1), helper.make_node("Relu", ["a1"], ["r1"]),
             helper.make_node("MaxPool", ["r1"], ["mp"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
             conv(2, "mp", "a2", 1), helper.make_node("Relu", ["a2"], ["r2"]), conv(3, "r2", "a3", 1),
             helper.make_node("Add", ["a3", "mp"], ["s1"]), helper.make_node("Relu", ["s1"], ["rs1"]),
             conv(4, "rs1", "a4", 0), helper.make_node("Add", ["a4", "rs1"], ["s2"]),
             conv(5, "s2", "a5", 0), helper.make_node("Add", ["s2", "a5"], ["s3"]),
             helper.make_node("GlobalAveragePool", ["s3"], ["p"]), helper.make_node("Flatten", ["p"], ["f"]),
             helper.make_node("Gemm", ["f", "fw", "fb"], ["y"], name="fc", transB=1)]
    g = helper.make_graph(nodes, "rescnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 20, 18])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)
    return {"x": ("float32", [1, 3, 20, 18], -1, 1)}


def ppocr_rec(path):
    src = os.path.join(MODELS, "ch_PP-OCRv4_rec_infer.onnx")
    if not os.path.exists(src):
        return None
    if not os.path.exists(path):
        os.symlink(src, path)
    return {"x": ("float32", [1, 3, 48, 320], -1, 1)}


# name: (model maker, quantize arguments, max rel-L2 of q8 vs f32 (either runtime), max rel-L2 of
# tessera vs onnxruntime on the q8 file, OCR check). Both runtimes fuse the static models'
# DQ -> op -> Q into QLinearConv/QLinearMatMul (tessera's quantize_fusion), so static files agree
# as closely as dynamic ones (the rec model: 7.8e-8). The rec model's accuracy bound is loose
# because its output is a 6625-way Softmax whose rel-L2 follows the confidence; its decoded text
# must not change.
CASES = {
    "mlp_dynamic": (make_mlp, ["--mode", "dynamic"], 0.03, AGREE, False),
    "mlp_dynamic_per_channel_u8": (make_mlp, ["--per-channel", "--weight-type", "u8"], 0.03, AGREE, False),
    "cnn_static": (make_cnn, ["--mode", "static"], 0.05, AGREE, False),
    "cnn_residual_static": (make_rescnn, ["--mode", "static"], 0.05, AGREE, False),
    "cnn_static_percentile": (make_cnn, ["--mode", "static", "--calibrate", "percentile", "--percentile", "99.9"],
                              0.08, AGREE, False),
    "ppocr_rec_dynamic": (ppocr_rec, ["--mode", "dynamic"], 0.05, AGREE, True),
    # The rec model ends in a Softmax over 6625 classes: rel-L2 of the probabilities moves with the
    # confidence; what must hold is the decoded sequence (checked for both runtimes below).
    "ppocr_rec_static": (ppocr_rec, ["--mode", "static"], 0.4, AGREE, True),
}


def check_errors(tessera, wd):
    """The error cases of docs/quantization.md: exit code and the file named in the message."""
    os.makedirs(wd, exist_ok=True)
    model = os.path.join(wd, "cnn.onnx")
    make_cnn(model)
    not_onnx = os.path.join(wd, "not_onnx.onnx")
    with open(not_onnx, "w") as f:
        f.write("not a model\n")
    add_only = os.path.join(wd, "add.onnx")
    g = helper.make_graph([helper.make_node("Add", ["x", "x"], ["y"])], "add",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), add_only)
    empty = os.path.join(wd, "calib_empty", "s0")
    os.makedirs(empty, exist_ok=True)
    bad = os.path.join(wd, "calib_bad_shape", "s0")
    os.makedirs(bad, exist_ok=True)
    np.save(os.path.join(bad, "x.npy"), np.zeros((1, 3, 16, 16), np.float32))
    out = os.path.join(wd, "out.onnx")
    cases = [
        ([not_onnx], 3, "not an ONNX model"),
        ([add_only], 4, "no node to quantize"),
        ([model, "--mode", "static"], 4, "--calibration"),
        ([model, "--mode", "static", "--calibration", os.path.dirname(empty)], 6, "x.npy"),
        ([model, "--mode", "static", "--calibration", os.path.dirname(bad)], 4, os.path.join(bad, "x.npy")),
        ([model, "--mode", "static", "--calibration", os.path.join(wd, "no_such_dir")], 6, "no_such_dir"),
    ]
    ok = True
    for args, code, text in cases:
        cmd = [tessera, "quantize"] + args + ["-o", out]
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        good = r.returncode == code and text in r.stderr
        ok = ok and good
        print(f"{'ok' if good else 'FAIL'}: {' '.join(cmd)} -> exit {r.returncode} (want {code}): {r.stderr.strip()}")
    print("errors: " + ("PASS" if ok else "FAIL"))
    return 0 if ok else 1


def run(cmd, **kw):
    print("+ " + " ".join(cmd), flush=True)
    r = subprocess.run(cmd, **kw)
    if r.returncode != 0:
        raise RuntimeError(f"exit status {r.returncode}: {' '.join(cmd)}")
    return r


def random_inputs(spec, seed):
    rng = np.random.default_rng(seed)
    return {n: rng.uniform(lo, hi, shape).astype(dtype) for n, (dtype, shape, lo, hi) in spec.items()}


def save_inputs(d, feeds):
    os.makedirs(d, exist_ok=True)
    args = []
    for n, a in feeds.items():
        f = os.path.join(d, n.replace("/", "_").replace(":", "_") + ".npy")
        np.save(f, a)
        args.append(f"{n}={f}")
    return args


def outputs(d):
    out, i = [], 0
    while os.path.exists(os.path.join(d, f"output_{i}.npy")):
        out.append(np.load(os.path.join(d, f"output_{i}.npy")).astype(np.float64))
        i += 1
    return out


def rel_l2(a, b):
    a, b = a.astype(np.float64), b.astype(np.float64)
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30))


def ctc_indices(probs):
    """Greedy CTC: argmax per step, repeats merged, blank 0 dropped."""
    idx = probs.reshape(-1, probs.shape[-1]).argmax(-1)
    return [int(k) for j, k in enumerate(idx) if k != 0 and (j == 0 or k != idx[j - 1])]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--case", required=True, choices=sorted(CASES) + ["errors"])
    p.add_argument("--tessera", required=True)
    p.add_argument("--work-dir", required=True)
    p.add_argument("--ocr", default=None, help="tessera-ocr: also compare the text read from examples/ocr/hello.png")
    a = p.parse_args()
    if a.case == "errors":
        return check_errors(a.tessera, os.path.join(a.work_dir, "errors"))
    maker, qargs, max_drop, agree_tol, ocr = CASES[a.case]
    wd = os.path.join(a.work_dir, a.case)
    os.makedirs(wd, exist_ok=True)
    f32 = os.path.join(wd, "model.onnx")
    spec = maker(f32)
    if spec is None:
        print(f"SKIP {a.case}: model file absent (third_party/models/fetch.sh)")
        return SKIP
    q8 = os.path.join(wd, "model_q8.onnx")
    keys = os.path.join(MODELS, "ppocr_keys_v1.txt")
    image = os.path.join(REPO, "examples", "ocr", "hello.png")
    ocr = ocr and a.ocr is not None and os.path.exists(a.ocr) and os.path.exists(keys)
    image_input = None
    if ocr:
        # The real text-line image, preprocessed by tessera-ocr, is the evaluation input and (with
        # noisy/dimmed copies) the calibration set: random noise does not exercise the ranges.
        d = os.path.join(wd, "image")
        os.makedirs(d, exist_ok=True)
        run([a.ocr, "--model", f32, "--keys", keys, "--save-input", d, image], stdout=subprocess.DEVNULL)
        image_input = np.load(os.path.join(d, "input_0.npy"))
    elif "static" in qargs and maker is ppocr_rec:
        print(f"SKIP {a.case}: needs --ocr and ppocr_keys_v1.txt for its calibration image")
        return SKIP

    def sample(seed):
        if image_input is None:
            return random_inputs(spec, seed)
        rng = np.random.default_rng(seed)
        x = image_input * rng.uniform(0.85, 1.0) + rng.normal(0, 0.03, image_input.shape).astype(np.float32)
        return {"x": np.clip(x, -1, 1).astype(np.float32)}

    if "static" in qargs:
        # Calibration: 3 samples as <sample>/<input>.npy and one as input_<k>.pb (both layouts).
        calib = os.path.join(wd, "calib")
        for s in range(4):
            feeds = sample(100 + s) if s or image_input is None else {"x": image_input}
            d = os.path.join(calib, f"sample_{s}")
            if s < 3:
                save_inputs(d, feeds)
            else:
                os.makedirs(d, exist_ok=True)
                for k, (n, arr) in enumerate(feeds.items()):
                    with open(os.path.join(d, f"input_{k}.pb"), "wb") as f:
                        f.write(numpy_helper.from_array(arr, n).SerializeToString())
        qargs = qargs + ["--calibration", calib]
    run([a.tessera, "quantize", f32, "-o", q8] + qargs)

    feed_args = save_inputs(os.path.join(wd, "inputs"), random_inputs(spec, 7) if image_input is None else {"x": image_input})
    res = {}
    for tag, model in (("f32", f32), ("q8", q8)):
        run([NODE, os.path.join(HERE, "ort_run.js"), model, os.path.join(wd, "ort_" + tag)] + feed_args)
        res["ort_" + tag] = outputs(os.path.join(wd, "ort_" + tag))
        cmd = [a.tessera, "run", model, "--output-dir", os.path.join(wd, "tsr_" + tag)]
        for f in feed_args:
            cmd += ["--input", f]
        run(cmd, stdout=subprocess.DEVNULL)
        res["tsr_" + tag] = outputs(os.path.join(wd, "tsr_" + tag))
    ok = bool(res["ort_q8"]) and len(res["ort_q8"]) == len(res["tsr_q8"]) == len(res["ort_f32"])
    drop_ort = drop_tsr = agree = max_abs = 0.0
    for o_f32, o_q8, t_q8 in zip(res["ort_f32"], res["ort_q8"], res["tsr_q8"]):
        if t_q8.shape != o_q8.shape:
            ok = False
            continue
        drop_ort = max(drop_ort, rel_l2(o_q8, o_f32))
        drop_tsr = max(drop_tsr, rel_l2(t_q8, o_f32))
        agree = max(agree, rel_l2(t_q8, o_q8))
        max_abs = max(max_abs, float(np.max(np.abs(t_q8.astype(np.float64) - o_q8))))
    ok = ok and agree <= agree_tol and drop_ort <= max_drop and drop_tsr <= max_drop
    if maker is make_cnn and "static" in qargs:
        # Each Conv -> Relu is quantized after the Relu, and the optimizer absorbs the Relu into
        # the QLinearConv's saturation (zero point 0): no Relu is left to run in f32.
        opt = os.path.join(wd, "model_q8_opt.tsr")
        run([a.tessera, "optimize", q8, "-o", opt], stdout=subprocess.DEVNULL)
        ops = json.loads(run([a.tessera, "inspect", opt, "--json"], stdout=subprocess.PIPE, text=True).stdout)["ops"]
        fused = ops.get("QLinearConv", 0) == 2 and "Relu" not in ops
        print(f"{a.case}: optimized ops {ops}" + ("" if fused else " (expected 2 QLinearConv and no Relu)"))
        ok = ok and fused
    if maker is make_rescnn:
        # Each residual Add gets QDQ on its output (after ResNet's Relu), so all three run on the
        # codes as QLinearAdd (the Relu absorbed) in both runtimes; none is left in f32.
        opt = os.path.join(wd, "model_q8_opt.tsr")
        run([a.tessera, "optimize", q8, "-o", opt], stdout=subprocess.DEVNULL)
        ops = json.loads(run([a.tessera, "inspect", opt, "--json"], stdout=subprocess.PIPE, text=True).stdout)["ops"]
        # quantize_layout runs the chain channels last, as com.microsoft::QLinearConv
        convs = ops.get("QLinearConv", 0) + ops.get("com.microsoft::QLinearConv", 0)
        fused = convs == 5 and ops.get("com.microsoft::QLinearAdd", ops.get("QLinearAdd", 0)) == 3 \
            and "Add" not in ops and "Relu" not in ops
        print(f"{a.case}: optimized ops {ops}" + ("" if fused else " (expected 5 QLinearConv, 3 QLinearAdd, no Add/Relu)"))
        ok = ok and fused
    line = (f"{a.case}: rel-L2 vs f32 ort={drop_ort:.2e} tessera={drop_tsr:.2e}; tessera vs ort rel-L2 {agree:.2e} "
            f"max-abs {max_abs:.2e} (limits: agreement {agree_tol}, drop {max_drop})")
    if image_input is not None:
        seqs = {k: ctc_indices(res[k][0]) for k in ("ort_f32", "ort_q8", "tsr_q8")}
        same = seqs["ort_q8"] == seqs["ort_f32"] and seqs["tsr_q8"] == seqs["ort_f32"]
        line += f"; CTC decode of q8 == f32: {'yes' if same else 'NO ' + str(seqs)}"
        ok = ok and same
    if ocr:
        texts = [run([a.ocr, "--model", m, "--keys", keys, image], stdout=subprocess.PIPE, text=True).stdout.strip()
                 for m in (f32, q8)]
        line += f"; OCR f32 {texts[0]!r} q8 {texts[1]!r}"
        ok = ok and texts[0] == texts[1]
    elif CASES[a.case][4]:
        line += "; OCR text check skipped (needs --ocr and ppocr_keys_v1.txt)"
    print(line + (": PASS" if ok else ": FAIL"), flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except RuntimeError as e:
        print(f"FAIL: {e}")
        sys.exit(1)
