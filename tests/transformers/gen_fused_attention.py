"""Attention written with plain ops, as torch.onnx (torch 1.13, opset 17) exports it, for the
fuse_attention pass (core/passes/opt_fuse_attention.cpp): `tessera run` optimizes by default, so
each case runs the fused Attention node against onnxruntime's unfused graph.

- bert_*: a BERT-style layer (HF-style self-attention, [B, 1, 1, T] (1 - mask) * -10000 padding
  mask added after the 1/sqrt(d) Div), batch 2, T 16 and 40.
- gpt_prefill / gpt_decode: a GPT-style block with a constant lower-triangular bool buffer sliced
  to [.., S, T] and Where(mask, scores, finfo.min), a KV cache Concat(past, new, axis 2) whose
  result is an output (present); prefill T 12 (past 0 is not exportable, so no cache), decode S 1
  with past 12.
- vit: torchvision's VisionTransformer (nn.MultiheadAttention: fused in_proj sliced into Q/K/V,
  seq-first [S, B*H, Dh] bmm), 2 layers, 3 heads.
- whisper: a Whisper-style encoder layer (q_proj output scaled before the head split, 3-D bmm
  over [B*H, T, Dh]), T 150, 6 heads.
- qk_quarter: Q and K each scaled by Dh^-0.25, K split straight into [B, H, Dh, T] by
  Transpose [0, 2, 3, 1].
Needs torch (Debian python3-torch); without it there are no cases (a note says so).
"""
import io
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cases import Case, main  # noqa: E402

try:
    import onnx
    import torch
    import torch.nn as nn
except ImportError:  # pragma: no cover
    torch = None


class TorchCase(Case):
    """A case whose model is a torch module exported at opset 17."""

    def __init__(self, name, module, inputs, input_names, output_names, rtol=1e-4, atol=1e-4):
        self.module, self.args = module.eval(), tuple(torch.from_numpy(a) for a in inputs)
        super().__init__(name, [], dict(zip(input_names, inputs)), [], rtol=rtol, atol=atol)
        self.input_names, self.output_names = input_names, output_names

    def model(self):
        f = io.BytesIO()
        with torch.no_grad():
            torch.onnx.export(self.module, self.args, f, opset_version=17, input_names=self.input_names,
                              output_names=self.output_names)
        return onnx.load_from_string(f.getvalue())


if torch is not None:
    torch.manual_seed(0)

    class SelfAttention(nn.Module):
        """HF BERT / GPT-2 style: Linear -> view [B, S, H, Dh] -> permute(0, 2, 1, 3)."""

        def __init__(self, hidden, heads, mode="bert", max_pos=64):
            super().__init__()
            self.h, self.d, self.mode = heads, hidden // heads, mode
            self.q, self.k, self.v, self.o = (nn.Linear(hidden, hidden) for _ in range(4))
            self.register_buffer("tril", torch.tril(torch.ones(max_pos, max_pos, dtype=torch.bool)).view(1, 1, max_pos, max_pos))

        def heads(self, x):
            b, s, _ = x.shape
            return x.view(b, s, self.h, self.d).permute(0, 2, 1, 3)

        def forward(self, x, mask=None, past_k=None, past_v=None):
            q, k, v = self.heads(self.q(x)), self.heads(self.k(x)), self.heads(self.v(x))
            if self.mode == "quarter":
                b, s, _ = x.shape
                q = q * self.d ** -0.25
                k = self.k(x).view(b, s, self.h, self.d).permute(0, 2, 3, 1) * self.d ** -0.25
                w = torch.matmul(q, k)
            else:
                if past_k is not None:
                    k = torch.cat([past_k, k], dim=2)
                    v = torch.cat([past_v, v], dim=2)
                w = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.d)
            if self.mode == "bert":
                w = w + (1.0 - mask[:, None, None, :]) * -10000.0
            elif self.mode == "gpt":
                s, t = q.shape[-2], k.shape[-2]
                causal = self.tril[:, :, t - s:t, :t]
                w = torch.where(causal, w, torch.tensor(torch.finfo(w.dtype).min))
            p = torch.softmax(w, dim=-1)
            y = torch.matmul(p, v).permute(0, 2, 1, 3).contiguous()
            y = self.o(y.view(y.shape[0], y.shape[1], -1))
            if past_k is not None:
                return y, k, v
            return y

    class Layer(nn.Module):
        """Pre-norm block: attention + MLP with residuals."""

        def __init__(self, hidden, heads, mode):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(hidden), nn.LayerNorm(hidden)
            self.attn = SelfAttention(hidden, heads, mode)
            self.mlp = nn.Sequential(nn.Linear(hidden, 4 * hidden), nn.GELU(), nn.Linear(4 * hidden, hidden))

        def forward(self, x, *rest):
            h = self.ln1(x)
            a = self.attn(h, *rest) if self.attn.mode == "bert" else self.attn(h, None, *rest)
            extra = ()
            if isinstance(a, tuple):
                a, extra = a[0], a[1:]
            x = x + a
            x = x + self.mlp(self.ln2(x))
            return (x,) + extra if extra else x

    class WhisperAttention(nn.Module):
        """HF Whisper: q_proj(x) * scaling, heads merged into the bmm batch."""

        def __init__(self, hidden, heads):
            super().__init__()
            self.h, self.d = heads, hidden // heads
            self.q, self.k, self.v, self.o = (nn.Linear(hidden, hidden) for _ in range(4))

        def shape(self, x, b, s):
            return x.view(b, s, self.h, self.d).transpose(1, 2).contiguous()

        def forward(self, x):
            b, s, e = x.shape
            q = self.shape(self.q(x) * self.d ** -0.5, b, s).view(b * self.h, s, self.d)
            k = self.shape(self.k(x), b, s).view(b * self.h, s, self.d)
            v = self.shape(self.v(x), b, s).view(b * self.h, s, self.d)
            p = torch.softmax(torch.bmm(q, k.transpose(1, 2)), dim=-1)
            y = torch.bmm(p, v).view(b, self.h, s, self.d).transpose(1, 2).reshape(b, s, e)
            return self.o(y)

    def rnd(*shape, seed=0):
        return np.random.default_rng(seed + sum(shape)).standard_normal(shape).astype(np.float32)

    cases = []
    for t in (16, 40):
        mask = np.ones((2, t), np.float32)
        mask[1, t - 5:] = 0
        cases.append(TorchCase(f"bert_t{t}", Layer(64, 4, "bert"), [rnd(2, t, 64), mask], ["x", "mask"], ["y"]))
    gpt = Layer(64, 4, "gpt")
    cases.append(TorchCase("gpt_prefill", gpt, [rnd(1, 12, 64)], ["x"], ["y"]))
    cases.append(TorchCase("gpt_decode", gpt, [rnd(1, 1, 64), rnd(1, 4, 12, 16), rnd(1, 4, 12, 16, seed=1)],
                           ["x", "past_k", "past_v"], ["y", "present_k", "present_v"]))
    vit = __import__("torchvision").models.VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=3,
                                                             hidden_dim=48, mlp_dim=96, num_classes=10)
    nn.init.normal_(vit.heads.head.weight)
    cases.append(TorchCase("vit", vit, [rnd(1, 3, 32, 32)], ["x"], ["y"]))
    cases.append(TorchCase("whisper", WhisperAttention(96, 6), [rnd(1, 150, 96)], ["x"], ["y"]))
    cases.append(TorchCase("qk_quarter", Layer(64, 4, "quarter"), [rnd(1, 10, 64)], ["x"], ["y"]))
else:
    print("gen_fused_attention: torch is not importable, no cases")
    cases = []

if __name__ == "__main__":
    main(cases)
