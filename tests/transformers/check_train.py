"""`tessera grad` and `tessera train` on the small transformer of make_train_transformer.py
(CTest "transformers: train"): ONNX Attention (GQA and causal), RMSNormalization, com.microsoft
FastGelu / BiasGelu / SkipSimplifiedLayerNormalization / SkipLayerNormalization, LayerNormalization
and SoftmaxCrossEntropyLoss.

1. Gradients: `tessera grad MODEL.onnx --wrt x,<every weight>` then `tessera run`; the loss must
   equal onnxruntime-node's (rtol 1e-5), and each gradient g of a tensor w is checked against
   central differences of onnxruntime's loss, (L(w + eps d) - L(w - eps d)) / 2 eps vs <g, d>,
   along a random unit direction d and the unit vectors of the largest-|g| coordinate and two
   random coordinates (loss_evals.js runs the perturbed forwards; the weights are graph inputs
   of the FD copy of the model). The same check runs on one-op models of each rule's other paths
   (op_cases: 4-D Attention with GQA, float / bool masks, present outputs, MQA; norms over two
   axes and through inv_std_var; broadcast skips; Gelu, FastGelu, QuickGelu), whose loss is a
   random projection of the outputs.
   Why these tolerances: onnxruntime computes the forward in float32 only, so L carries a rounding
   error of about 1e-7 relative (|L| ~ 1.5: ~2e-7 absolute), which a central difference with
   eps = 1e-2 turns into ~1e-5 absolute error; the truncation error eps^2/6 * L''' is ~1e-5 for
   these smooth ops. So |fd - <g,d>| <= 2e-2 * |<g,d>| + 1e-4 fails on any real error in a rule
   (a wrong sign, scale, head mapping or missing term is far larger) but not on float32 noise.
2. Training: `tessera train` (Adam, lr 3e-3, batch 32) on 640 Fashion-MNIST images fed as 16
   tokens of 49 pixels: 20 steps; the mean loss of the last 5 steps must be below 0.85 times the
   mean of the first 5. The dataset (Debian's dataset-fashion-mnist) comes with scripts/install_deps.sh.

    check_train.py --tessera BIN --work DIR
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from cases import elem_type  # noqa: E402
from make_train_transformer import MS, train_transformer  # noqa: E402

NODE = "/usr/bin/node"
EPS, RTOL, ATOL = 1e-2, 2e-2, 1e-4
FASHION = "/usr/share/datasets/fashion-mnist"


def run(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {r.returncode}:\n{r.stdout}")
    return r.stdout


def fd_model(model, names):
    """A copy of `model` whose initializers `names` are graph inputs instead (fed by loss_evals.js)."""
    m = type(model)()
    m.CopyFrom(model)
    keep = [t for t in m.graph.initializer if t.name not in names]
    moved = [t for t in m.graph.initializer if t.name in names]
    del m.graph.initializer[:]
    m.graph.initializer.extend(keep)
    for t in moved:
        m.graph.input.append(helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)))
    return m, {t.name: numpy_helper.to_array(t) for t in moved}


def check_gradients(tessera, work, model, feeds):
    """Failures of `tessera grad` on `model` (first output: the loss) with respect to every float
    input in `feeds` and every float32 initializer, against onnxruntime finite differences."""
    os.makedirs(work, exist_ok=True)
    weights = [t.name for t in model.graph.initializer if t.data_type == 1]  # float32 initializers
    wrt = [n for n, a in feeds.items() if a.dtype == np.float32] + weights
    onnx_file = os.path.join(work, "model.onnx")
    with open(onnx_file, "wb") as f:
        f.write(model.SerializeToString())
    r = np.random.default_rng(2)
    for n, a in feeds.items():
        np.save(os.path.join(work, n + ".npy"), a)
    grad_file = os.path.join(work, "grad.tsr")
    run([tessera, "grad", onnx_file, "-o", grad_file, "--wrt", ",".join(wrt)])
    out = os.path.join(work, "out")
    run([tessera, "run", grad_file, *[a for n in feeds for a in ("-i", f"{n}={work}/{n}.npy")], "--output-dir", out])
    meta = json.load(open(os.path.join(out, "outputs.json")))["outputs"]
    names = [o["name"] for o in meta]
    n_out = len(model.graph.output)
    assert names[n_out:] == [n + "_grad" for n in wrt], names
    loss = float(np.load(os.path.join(out, "output_0.npy")))
    grads = {n: np.load(os.path.join(out, f"output_{n_out + i}.npy")) for i, n in enumerate(wrt)}

    # The FD copy: every wrt tensor an input; evaluation 0 is the unperturbed loss.
    fdm, values = fd_model(model, set(weights))
    values.update((n, a) for n, a in feeds.items() if n in wrt)
    with open(os.path.join(work, "fd.onnx"), "wb") as f:
        f.write(fdm.SerializeToString())
    os.makedirs(os.path.join(work, "fd"), exist_ok=True)
    base = {n: n + ".npy" for n in feeds if n not in wrt}
    for n, a in values.items():
        base[n] = f"fd/{n}.npy"
        np.save(os.path.join(work, base[n]), a)
    evals, probes = [{}], []
    for n in wrt:
        w, g = values[n], grads[n]
        assert g.shape == w.shape and g.dtype == np.float32, (n, g.shape, g.dtype)
        dirs = [("random direction", r.standard_normal(w.shape))]
        for label, flat in (("max |g| coordinate", int(np.argmax(np.abs(g)))),
                            ("coordinate", int(r.integers(w.size))), ("coordinate", int(r.integers(w.size)))):
            e = np.zeros(w.size)
            e[flat] = 1
            dirs.append((f"{label} {np.unravel_index(flat, w.shape)}", e.reshape(w.shape)))
        for label, d in dirs:
            d = d / np.linalg.norm(d)
            for sign in (1, -1):
                f = f"fd/{n}.{len(evals)}.npy"
                np.save(os.path.join(work, f), (w + sign * EPS * d).astype(np.float32))
                evals.append({n: f})
            probes.append((n, label, float(np.sum(g.astype(np.float64) * d)), len(evals) - 2))
    json.dump({"model": "fd.onnx", "base": base, "evals": evals}, open(os.path.join(work, "evals.json"), "w"))
    run([NODE, os.path.join(HERE, "loss_evals.js"), work])
    losses = json.load(open(os.path.join(work, "losses.json")))
    failures = []
    if not np.isclose(loss, losses[0], rtol=1e-5, atol=0):
        failures.append(f"loss: tessera {loss} onnxruntime {losses[0]}")
    worst = 0.0
    for n, label, analytic, k in probes:
        fd = (losses[k] - losses[k + 1]) / (2 * EPS)
        err = abs(fd - analytic)
        worst = max(worst, err / (RTOL * abs(analytic) + ATOL))
        if err > RTOL * abs(analytic) + ATOL:
            failures.append(f"{os.path.basename(work)}: {n} {label}: tessera {analytic:.6g}, finite difference {fd:.6g}")
    print(f"{os.path.basename(work)}: {len(probes) - len([f for f in failures if not f.startswith('loss')])} of {len(probes)} "
          f"probes over {len(wrt)} tensors match onnxruntime finite differences (worst error/tolerance {worst:.3f}); "
          f"loss {loss:.6f} vs onnxruntime {losses[0]:.6f}")
    return failures


def projected(name, node, inputs, outputs, inits=None, opset=23):
    """A one-node model whose loss is sum_k sum(Y_k * R_k) over its float outputs `outputs`
    ({name: shape}; R_k seeded random): a random projection, so the gradient check covers the whole
    Jacobian, not one row. `inputs`: {name: array} (the feeds); `inits`: {name: array}."""
    r = np.random.default_rng(len(name))
    nodes, terms, inits = [node], [], dict(inits or {})
    for k, (o, shape) in enumerate(outputs.items()):
        inits[f"R{k}"] = r.standard_normal(shape).astype(np.float32)
        nodes.append(helper.make_node("Mul", [o, f"R{k}"], [f"t{k}"]))
        nodes.append(helper.make_node("ReduceSum", [f"t{k}"], [f"s{k}"], keepdims=0))
        terms.append(f"s{k}")
    nodes.append(helper.make_node("Sum", terms, ["loss"]))
    ins = [helper.make_tensor_value_info(n, elem_type(a.dtype), list(a.shape)) for n, a in inputs.items()]
    outs = [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])]
    g = helper.make_graph(nodes, name, ins, outs, [numpy_helper.from_array(a, n) for n, a in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset), helper.make_opsetid(MS, 1)])
    m.ir_version = 10
    return name, m, inputs


def op_cases():
    """The rules' other paths, one op each: 4-D Attention with GQA, masks and present outputs,
    norms over several axes and with inv_std_var in the loss, broadcast skips, the Gelu forms."""
    r = np.random.default_rng(5)

    def f(*shape):
        return r.standard_normal(shape).astype(np.float32)

    n = helper.make_node
    b, s, l, d = 2, 4, 5, 8
    yield projected("attention_4d_gqa_float_mask", n("Attention", ["q", "k", "v", "m"], ["y"], scale=0.3),
                    {"q": f(b, 4, s, d), "k": f(b, 2, l, d), "v": f(b, 2, l, 6), "m": f(s, l)}, {"y": [b, 4, s, 6]})
    mask = r.random((b, 1, s, s)) < 0.7
    mask[..., 0] = True  # every query sees a key
    yield projected("attention_4d_bool_mask_causal_present",
                    n("Attention", ["q", "k", "v", "m"], ["y", "pk", "pv"], is_causal=1),
                    {"q": f(b, 2, s, d), "k": f(b, 2, s, d), "v": f(b, 2, s, d)},
                    {"y": [b, 2, s, d], "pk": [b, 2, s, d], "pv": [b, 2, s, d]}, {"m": mask})
    yield projected("attention_3d_mqa_present", n("Attention", ["q", "k", "v"], ["y", "pk", "pv"],
                                                  q_num_heads=4, kv_num_heads=1),
                    {"q": f(b, s, 16), "k": f(b, l, 4), "v": f(b, l, 4)},
                    {"y": [b, s, 16], "pk": [b, 1, l, 4], "pv": [b, 1, l, 4]})
    yield projected("rms_norm_axis1", n("RMSNormalization", ["x", "g"], ["y"], axis=1, epsilon=1e-3),
                    {"x": f(b, s, d)}, {"y": [b, s, d]}, {"g": f(s, d)})
    yield projected("simplified_layer_norm_inv_std", n("SimplifiedLayerNormalization", ["x", "g"], ["y", "inv"],
                                                       axis=-1, epsilon=1e-3),
                    {"x": f(b, s, d)}, {"y": [b, s, d], "inv": [b, s, 1]}, {"g": f(d)}, opset=17)
    yield projected("skip_layer_norm_2d_skip_sum", n("SkipLayerNormalization", ["x", "sk", "g", "be", "bi"],
                                                     ["y", "", "", "sum"], domain=MS, epsilon=1e-3),
                    {"x": f(b, s, d), "sk": f(s, d)}, {"y": [b, s, d], "sum": [b, s, d]},
                    {"g": f(d), "be": f(d), "bi": f(d)})
    yield projected("skip_simplified_layer_norm_bias", n("SkipSimplifiedLayerNormalization", ["x", "sk", "g", "bi"],
                                                         ["y"], domain=MS, epsilon=1e-3),
                    {"x": f(b, s, d), "sk": f(1, s, d)}, {"y": [b, s, d]}, {"g": f(d), "bi": f(d)})
    yield projected("gelu", n("Gelu", ["x"], ["y"], domain=MS), {"x": f(b, s, d)}, {"y": [b, s, d]})
    yield projected("fast_gelu_no_bias", n("FastGelu", ["x"], ["y"], domain=MS), {"x": f(b, s, d)}, {"y": [b, s, d]})
    yield projected("quick_gelu", n("QuickGelu", ["x"], ["y"], domain=MS, alpha=1.5), {"x": f(b, s, d)},
                    {"y": [b, s, d]})


def check_training(tessera, work):
    onnx_file = os.path.join(work, "classifier.onnx")
    with open(onnx_file, "wb") as f:
        f.write(train_transformer(seq=16, feat=49, classes=10, seed=0).SerializeToString())
    run_dir = os.path.join(work, "run")
    run([tessera, "train", onnx_file, "--data", FASHION, "--limit", "640", "--batch-size", "32", "--epochs", "1",
         "--lr", "3e-3", "--seed", "0", "--threads", "1", "-o", run_dir])
    rows = [line.split(",") for line in open(os.path.join(run_dir, "loss.csv")).read().split("\n")[1:] if line]
    losses = [float(row[3]) for row in rows]
    first, last = np.mean(losses[:5]), np.mean(losses[-5:])
    print(f"training: {len(losses)} Adam steps, mean loss of steps 1-5 {first:.4f}, of steps 16-20 {last:.4f}")
    if len(losses) != 20 or not last < 0.85 * first:
        return [f"training loss did not decrease: {losses}"]
    return []


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--tessera", required=True)
    p.add_argument("--work", required=True)
    a = p.parse_args()
    os.makedirs(a.work, exist_ok=True)
    feeds = {"x": np.random.default_rng(2).standard_normal((3, 8, 16)).astype(np.float32),
             "labels": np.array([0, 3, 1], np.int64)}
    failures = check_gradients(a.tessera, os.path.join(a.work, "transformer"), train_transformer(seed=1, loss=True),
                               feeds)
    for name, model, inputs in op_cases():
        failures += check_gradients(a.tessera, os.path.join(a.work, name), model, inputs)
    failures += check_training(a.tessera, a.work)
    for f in failures:
        print("FAIL " + f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
