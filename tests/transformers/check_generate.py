"""tsr::generate through `tessera generate` against the same loop on onnxruntime-node
(generate_ref.js), on the decoder of make_decoder.py (CTest "transformers: generate").

Each check runs on f32 decoders and on int4 ones (make_decoder.py int4=True: every linear layer a
com.microsoft MatMulNBits; block 32, and block 128 over K = 192, a partial last block).
Checks: greedy ids equal onnxruntime's (20 new tokens; from .onnx and from the converted .tsr);
top-k sampling with a seed is the same run to run and equals the reference's draw with the same
splitmix64 stream, another seed gives other ids; --stop ends after the stop token; and the
errors: a model without past inputs (exit 6), a past prefix without matching present outputs
(exit 6), a model input the loop cannot feed (exit 4).

    check_generate.py --tessera BIN --work DIR
"""
import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_decoder import decoder_model  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402

NODE = "/usr/bin/node"
PROMPT = "11,22,33,44,55,66,77"


def run(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return r.returncode, r.stdout, r.stderr


def ids_of(stdout):
    return [int(x) for x in stdout.splitlines()[0].split()]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--tessera", required=True)
    p.add_argument("--work", required=True)
    a = p.parse_args()
    os.makedirs(a.work, exist_ok=True)
    failures = []

    def check(what, cond, detail=""):
        print(("ok   " if cond else "FAIL ") + what + ("" if cond else ": " + detail))
        if not cond:
            failures.append(what)

    def tessera(model, *args):
        return run([a.tessera, "generate", model, "--prompt-ids", PROMPT, *args])

    def reference(model, *args):
        code, out, err = run([NODE, os.path.join(HERE, "generate_ref.js"), model, "--prompt-ids", PROMPT, *args])
        if code:
            sys.exit(f"generate_ref.js failed: {err}")
        return ids_of(out)

    for layers, hidden, heads, int4, block in ((2, 128, 4, False, 0), (3, 192, 6, False, 0),
                                               (2, 128, 4, True, 32), (3, 192, 6, True, 128)):
        q = f"_int4_b{block}" if int4 else ""
        onnx_file = os.path.join(a.work, f"decoder_l{layers}{q}.onnx")
        with open(onnx_file, "wb") as f:
            f.write(decoder_model(layers, hidden, heads, 1000, seed=layers, int4=int4,
                                  block_size=block).SerializeToString())
        tag = f"l{layers} h{hidden}" + (f" int4 block {block}" if int4 else "")
        greedy = ["--max-new-tokens", "20"]
        ref = reference(onnx_file, *greedy)
        code, out, err = tessera(onnx_file, *greedy)
        check(f"{tag} greedy 20 tokens = onnxruntime", code == 0 and ids_of(out) == ref,
              f"exit {code} {err.strip()}\n  tessera {out.splitlines()[:1]}\n  ort     {ref}")
        tsr_file = onnx_file[:-5] + ".tsr"
        code, _, err = run([a.tessera, "convert", onnx_file, "-o", tsr_file])
        check(f"{tag} convert to .tsr", code == 0, err)
        code, out, err = tessera(tsr_file, *greedy)
        check(f"{tag} greedy from .tsr = onnxruntime", code == 0 and ids_of(out) == ref, f"exit {code} {err.strip()}")

        topk = ["--max-new-tokens", "20", "--top-k", "8", "--temperature", "0.9", "--seed", "42"]
        runs = [tessera(onnx_file, *topk) for _ in range(2)]
        first = ids_of(runs[0][1]) if runs[0][0] == 0 else None
        check(f"{tag} top-k seed 42 run to run", first is not None and runs[1][0] == 0 and ids_of(runs[1][1]) == first,
              str([r[1] + r[2] for r in runs]))
        check(f"{tag} top-k seed 42 = the reference's draw", first == reference(onnx_file, *topk), str(first))
        code, out, _ = tessera(onnx_file, *topk[:-1], "43")
        check(f"{tag} top-k seed 43 differs", code == 0 and ids_of(out) != first, out)
        code, out, _ = tessera(onnx_file, *greedy, "--stop", str(ref[4]))
        check(f"{tag} --stop {ref[4]} ends there", code == 0 and ids_of(out) == ref[:ref.index(ref[4]) + 1], out)

    model_file = os.path.join(a.work, "decoder_l2.onnx")
    code, _, err = tessera(model_file, "--past-prefix", "past_key_values.", "--present-prefix", "nope.")
    check("past without present: exit 6 naming it", code == 6 and 'no present output "nope.0.key"' in err, err)

    def tiny(name, inputs):
        g = helper.make_graph([helper.make_node("Cast", ["input_ids"], ["logits"], to=TensorProto.FLOAT)], name,
                              [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, "s"])])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
        m.ir_version = 8
        path = os.path.join(a.work, name + ".onnx")
        with open(path, "wb") as f:
            f.write(m.SerializeToString())
        return path

    code, _, err = tessera(tiny("no_past", [("input_ids", TensorProto.INT64, [1, "s"])]))
    check("model without past inputs: exit 6", code == 6 and "no past input" in err, err)
    code, _, err = tessera(tiny("extra_input", [("input_ids", TensorProto.INT64, [1, "s"]),
                                                ("token_type_ids", TensorProto.INT64, [1, "s"])]))
    check("input the loop cannot feed: exit 4 naming it", code == 4 and "token_type_ids" in err, err)

    print(f"{'FAILED: ' + ', '.join(failures) if failures else 'all generate checks passed'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
