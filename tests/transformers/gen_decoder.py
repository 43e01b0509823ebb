"""The KV-cache decoder of make_decoder.py (the model tsr::generate runs) against onnxruntime:
a prefill step (past length 0: empty past tensors, prompt of 5 tokens) and a decode step (past
length 7, one new token), each with 2 and 3 layers. Checks logits and every present tensor.

The same steps on the int4 decoder (make_decoder.py int4=True: every linear layer a com.microsoft
MatMulNBits with 4-bit weights, block 32 for 2 layers, 128 for 3): tolerance as for f32 (rtol and
atol 1e-4), since (code - zero) * scale is exact in f32 in both runtimes, so the two dequantize to
the same weights and differ only by summation order, as the f32 MatMuls do (gen_int4.py bounds a
single MatMulNBits' reordering error far below that: about sqrt(K) * 2^-24 of the sum of |terms|).
Measured: at most 6e-6 on every output, f32 and int4 alike. A wrong zero point of one block of
layer1.fc2, or one code of lm_head off by one, moves the logits by 0.05 (over 100 times the
tolerance); one code off by one deep in fc2 (2.5e-4) can hide under rtol, which is what
gen_int4.py's single-op cases are for."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cases import Case, main, rng  # noqa: E402
from make_decoder import decoder_model  # noqa: E402

HEADS, HIDDEN, VOCAB = 4, 128, 1000


class DecoderCase(Case):
    """A Case whose model is the whole decoder of make_decoder.py rather than a node list."""

    def __init__(self, name, layers, new_tokens, past, seed, int4_block=0):
        r = rng(seed)
        hd = HIDDEN // HEADS
        inputs = {"input_ids": r.integers(0, VOCAB, size=(1, new_tokens)).astype(np.int64)}
        for i in range(layers):
            for kv in ("key", "value"):
                inputs[f"past_key_values.{i}.{kv}"] = r.standard_normal((1, HEADS, past, hd)).astype(np.float32)
        super().__init__(name, [], inputs, [])
        self.layers = layers
        self.int4_block = int4_block

    def model(self):
        return decoder_model(self.layers, HIDDEN, HEADS, VOCAB, seed=3, int4=self.int4_block > 0,
                             block_size=self.int4_block or 32)


cases = []
for layers in (2, 3):
    cases.append(DecoderCase(f"decoder_l{layers}_prefill_past0", layers, new_tokens=5, past=0, seed=layers))
    cases.append(DecoderCase(f"decoder_l{layers}_decode_past7", layers, new_tokens=1, past=7, seed=10 + layers))
for layers, block in ((2, 32), (3, 128)):
    q = f"int4_b{block}"
    cases.append(DecoderCase(f"decoder_{q}_l{layers}_prefill_past0", layers, 5, 0, seed=20 + layers, int4_block=block))
    cases.append(DecoderCase(f"decoder_{q}_l{layers}_decode_past7", layers, 1, 7, seed=30 + layers, int4_block=block))

if __name__ == "__main__":
    main(cases)
