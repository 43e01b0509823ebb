#!/usr/bin/python3
"""Exports the model zoo: PyTorch 1.13 models as users export them, for bench/latency.js and the
`zoo: accuracy` test (issue 24).

Random weights (fixed seeds; the speed and the op mix do not depend on trained values; see
randomize() for the parameters given a spread), eval mode,
torch.onnx.export at opset 17 with constant folding, as a user of torch 1.13 gets them: Conv with
BatchNorm folded, LayerNormalization, erf GELU as Div/Erf/Add/Mul/Mul, attention as plain
MatMul/Div/Add/Softmax/MatMul with Reshape/Transpose around the heads.

Writes OUT/<name>.onnx and OUT/manifest.json, a model table in the format of
tests/models/models.json (name, file relative to OUT, note, inputs with name/dtype/shape/low/high).

Usage: /usr/bin/python3 bench/zoo/export.py [--out build/zoo] [--small] [--models a,b] [--set zoo|holdout]
  --small  the same architectures at reduced resolution, sequence length and depth, so that the
           accuracy check of the whole zoo stays around a minute (tests/models, `zoo: accuracy`).
  --set holdout  architectures no speed work was tuned on, to check that the zoo's figures carry
           over (grouped and channel-shuffled convs, DenseNet's concatenations, ConvNeXt's 7x7
           depthwise + LayerNorm, Swin's windowed attention, a BERT-base-width encoder).
Exit status: 0 written, 1 error (unknown model name, export failure), 77 torch is not installed.
"""
import argparse
import json
import math
import os
import sys
import warnings

try:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    import torchvision
except ImportError as e:  # the test skips (77) without torch; everything else is an error
    print(f"SKIP: PyTorch/torchvision are not installed ({e}): apt-get install python3-torch python3-torchvision")
    sys.exit(77)

OPSET = 17


# ---- BERT/MiniLM-style encoder (HF BERT layout, written out as the HF code computes it) ----

class BertLayer(nn.Module):
    def __init__(self, hidden, heads, ffn):
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)
        self.attn_out = nn.Linear(hidden, hidden)
        self.attn_norm = nn.LayerNorm(hidden, eps=1e-12)
        self.inter = nn.Linear(hidden, ffn)
        self.out = nn.Linear(ffn, hidden)
        self.out_norm = nn.LayerNorm(hidden, eps=1e-12)

    def split(self, x):  # [B, S, H] -> [B, heads, S, head_dim]
        b, s, _ = x.shape
        return x.view(b, s, self.heads, self.head_dim).permute(0, 2, 1, 3)

    def forward(self, x, ext_mask):
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim) + ext_mask
        ctx = torch.matmul(torch.softmax(scores, dim=-1), v)
        b, _, s, _ = ctx.shape
        ctx = ctx.permute(0, 2, 1, 3).contiguous().view(b, s, self.heads * self.head_dim)
        x = self.attn_norm(self.attn_out(ctx) + x)
        return self.out_norm(self.out(F.gelu(self.inter(x))) + x)  # erf GELU


class MiniLM(nn.Module):
    def __init__(self, vocab=30522, max_pos=512, hidden=384, layers=6, heads=12, ffn=1536):
        super().__init__()
        self.word = nn.Embedding(vocab, hidden)
        self.pos = nn.Embedding(max_pos, hidden)
        self.norm = nn.LayerNorm(hidden, eps=1e-12)
        self.layers = nn.ModuleList([BertLayer(hidden, heads, ffn) for _ in range(layers)])

    def forward(self, input_ids, attention_mask):
        s = input_ids.shape[1]
        pos_ids = torch.arange(s, dtype=torch.long).unsqueeze(0)
        x = self.norm(self.word(input_ids) + self.pos(pos_ids))
        # HF BERT's extended additive mask: 0 where attended, -10000 where masked.
        ext = (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * -10000.0
        for layer in self.layers:
            x = layer(x, ext)
        return x


# ---- GPT-2-style decoder with a KV cache ----

def gelu_tanh(x):  # GPT-2's gelu_new, written out as HF's NewGELUActivation does
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class GptBlock(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.ln1 = nn.LayerNorm(hidden)
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.proj = nn.Linear(hidden, hidden)
        self.ln2 = nn.LayerNorm(hidden)
        self.fc = nn.Linear(hidden, 4 * hidden)
        self.fc_out = nn.Linear(4 * hidden, hidden)

    def split(self, x):
        b, t, _ = x.shape
        return x.view(b, t, self.heads, self.head_dim).permute(0, 2, 1, 3)

    def forward(self, x, bias, past_k, past_v):
        q, k, v = self.qkv(self.ln1(x)).split(x.shape[-1], dim=2)
        q, k, v = self.split(q), self.split(k), self.split(v)
        if past_k is not None:
            k = torch.cat([past_k, k], dim=2)
            v = torch.cat([past_v, v], dim=2)
        att = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        att = torch.where(bias, att, torch.tensor(-1e4, dtype=att.dtype))
        y = torch.matmul(torch.softmax(att, dim=-1), v)
        b, _, t, _ = y.shape
        y = y.permute(0, 2, 1, 3).contiguous().view(b, t, self.heads * self.head_dim)
        x = x + self.proj(y)
        x = x + self.fc_out(gelu_tanh(self.fc(self.ln2(x))))
        return x, k, v


class Gpt(nn.Module):
    def __init__(self, vocab=8000, max_pos=1024, hidden=512, layers=4, heads=8):
        super().__init__()
        self.wte = nn.Embedding(vocab, hidden)
        self.wpe = nn.Embedding(max_pos, hidden)
        self.blocks = nn.ModuleList([GptBlock(hidden, heads) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(hidden)
        self.head = nn.Linear(hidden, vocab, bias=False)

    def forward(self, input_ids, *past):
        t = input_ids.shape[1]
        past_len = past[0].shape[2] if past else 0
        pos = torch.arange(past_len, past_len + t, dtype=torch.long).unsqueeze(0)
        x = self.wte(input_ids) + self.wpe(pos)
        # Causal: query i (at position past_len + i) sees keys 0 .. past_len + i.
        rows = torch.arange(t, dtype=torch.long).unsqueeze(1) + past_len
        cols = torch.arange(past_len + t, dtype=torch.long).unsqueeze(0)
        bias = (cols <= rows)[None, None]
        presents = []
        for i, blk in enumerate(self.blocks):
            pk, pv = (past[2 * i], past[2 * i + 1]) if past else (None, None)
            x, k, v = blk(x, bias, pk, pv)
            presents += [k, v]
        return (self.head(self.ln_f(x)), *presents)


# ---- Whisper-tiny-style audio encoder ----

def sinusoids(length, channels, max_timescale=10000):
    inc = math.log(max_timescale) / (channels // 2 - 1)
    inv = torch.exp(-inc * torch.arange(channels // 2, dtype=torch.float32))
    t = torch.arange(length, dtype=torch.float32)[:, None] * inv[None, :]
    return torch.cat([torch.sin(t), torch.cos(t)], dim=1)


class WhisperBlock(nn.Module):
    def __init__(self, hidden, heads, ffn):
        super().__init__()
        self.heads = heads
        self.attn_ln = nn.LayerNorm(hidden)
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden, bias=False)
        self.value = nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, hidden)
        self.mlp_ln = nn.LayerNorm(hidden)
        self.fc1 = nn.Linear(hidden, ffn)
        self.fc2 = nn.Linear(ffn, hidden)

    def forward(self, x):
        # openai/whisper's qkv_attention: q and k each scaled by head_dim^-0.25.
        h = self.attn_ln(x)
        b, t, d = h.shape
        hd = d // self.heads
        scale = hd ** -0.25
        q = self.query(h).view(b, t, self.heads, hd).permute(0, 2, 1, 3) * scale
        k = self.key(h).view(b, t, self.heads, hd).permute(0, 2, 3, 1) * scale
        v = self.value(h).view(b, t, self.heads, hd).permute(0, 2, 1, 3)
        w = torch.softmax(torch.matmul(q, k), dim=-1)
        y = torch.matmul(w, v).permute(0, 2, 1, 3).flatten(start_dim=2)
        x = x + self.out(y)
        return x + self.fc2(F.gelu(self.fc1(self.mlp_ln(x))))


class WhisperEncoder(nn.Module):
    def __init__(self, n_mels=80, frames=3000, hidden=384, heads=6, layers=4, ffn=1536):
        super().__init__()
        self.conv1 = nn.Conv1d(n_mels, hidden, kernel_size=3, padding=1)
        self.conv2 = nn.Conv1d(hidden, hidden, kernel_size=3, stride=2, padding=1)
        self.register_buffer("positions", sinusoids(frames // 2, hidden))
        self.blocks = nn.ModuleList([WhisperBlock(hidden, heads, ffn) for _ in range(layers)])
        self.ln_post = nn.LayerNorm(hidden)

    def forward(self, mel):
        x = F.gelu(self.conv1(mel))
        x = F.gelu(self.conv2(x)).permute(0, 2, 1)
        x = x + self.positions
        for blk in self.blocks:
            x = blk(x)
        return self.ln_post(x)


def randomize(model, gen):
    """Gives what the seeded initializers leave trivial values a spread a trained model has:
    BatchNorm statistics and affine parameters (mean 0 / var 1 / gamma 1 / beta 0 would fold into
    the Conv as an identity), LayerNorm's affine parameters and zero-initialized Linear weights
    (torchvision's ViT head, which would make every logit 0)."""
    def uniform(t, lo, hi):
        t.copy_(torch.rand(t.shape, generator=gen) * (hi - lo) + lo)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.modules.batchnorm._BatchNorm):
                uniform(m.weight, 0.5, 1.5)
                uniform(m.bias, -0.2, 0.2)
                uniform(m.running_mean, -0.2, 0.2)
                uniform(m.running_var, 0.5, 1.5)
            elif isinstance(m, nn.LayerNorm):
                uniform(m.weight, 0.8, 1.2)
                uniform(m.bias, -0.1, 0.1)
            elif isinstance(m, nn.Linear) and not m.weight.any():
                m.weight.copy_(torch.randn(m.weight.shape, generator=gen) * 0.02)


# ---- The zoo table ----

def image(shape):
    return [{"name": "input", "dtype": "float32", "shape": shape, "low": -2, "high": 2}]


def token_inputs(seq, vocab):
    # Token ids in [0, vocab); a 0/1 attention mask with some positions masked (random per seed).
    return [{"name": "input_ids", "dtype": "int64", "shape": [1, seq], "low": 0, "high": vocab},
            {"name": "attention_mask", "dtype": "int64", "shape": [1, seq], "low": 0, "high": 2}]


def zoo(small):
    """[(name, builder() -> (module, example args, input names, output names, dynamic axes), note, inputs)]."""
    res = 64 if small else 224
    entries = []
    for name in ["resnet18", "resnet50", "mobilenet_v2", "mobilenet_v3_small", "efficientnet_b0"]:
        shape = [1, 3, res, res]
        entries.append((name, lambda name=name, shape=shape: (
            getattr(torchvision.models, name)(), (torch.randn(*shape),), ["input"], ["logits"], None),
            f"torchvision.models.{name}() (random weights), {res}x{res} image", image(shape)))

    vit = dict(image_size=64, patch_size=16, num_layers=2) if small else dict(image_size=224, patch_size=16, num_layers=12)
    vit_shape = [1, 3, vit["image_size"], vit["image_size"]]
    tokens = (vit["image_size"] // 16) ** 2 + 1
    entries.append(("vit_tiny", lambda: (
        torchvision.models.vision_transformer.VisionTransformer(num_heads=3, hidden_dim=192, mlp_dim=768, **vit),
        (torch.randn(*vit_shape),), ["input"], ["logits"], None),
        f"ViT-Tiny (torchvision VisionTransformer, {vit['num_layers']} layers, hidden 192, 3 heads), {tokens} tokens",
        image(vit_shape)))

    bert_layers = 2 if small else 6
    for name, seq in [("minilm_s128", 128), ("minilm_s512", 512)]:
        if small:
            seq = 32 if name == "minilm_s128" else 64
        entries.append((name, lambda seq=seq: (
            MiniLM(layers=bert_layers), (torch.randint(0, 30522, (1, seq)), torch.ones(1, seq, dtype=torch.long)),
            ["input_ids", "attention_mask"], ["last_hidden_state"], None),
            f"BERT/MiniLM-style encoder ({bert_layers} layers, hidden 384, 12 heads, FFN 1536, erf GELU), sequence {seq}",
            token_inputs(seq, 30522)))

    gpt_layers, prefill, past = (2, 16, 16) if small else (4, 64, 64)
    n_past = 2 * gpt_layers
    past_names = [f"past_{kv}_{i}" for i in range(gpt_layers) for kv in ("key", "value")]
    present_names = [f"present_{kv}_{i}" for i in range(gpt_layers) for kv in ("key", "value")]
    entries.append(("gpt_prefill", lambda: (
        Gpt(layers=gpt_layers), (torch.randint(0, 8000, (1, prefill)),), ["input_ids"], ["logits"] + present_names, None),
        f"GPT-2-style decoder ({gpt_layers} layers, hidden 512, 8 heads, vocab 8000, tanh GELU), prefill of {prefill} tokens",
        [{"name": "input_ids", "dtype": "int64", "shape": [1, prefill], "low": 0, "high": 8000}]))
    # The past length is a dynamic axis; the manifest runs it at `past`.
    dyn = {n: {2: "past"} for n in past_names}
    dyn.update({n: {2: "past_plus_1"} for n in present_names})
    entries.append(("gpt_decode", lambda: (
        Gpt(layers=gpt_layers),
        (torch.randint(0, 8000, (1, 1)), *[torch.randn(1, 8, past, 64) for _ in range(n_past)]),
        ["input_ids"] + past_names, ["logits"] + present_names, dyn),
        f"the gpt_prefill decoder, one token with a KV cache of {past} (dynamic past axis)",
        [{"name": "input_ids", "dtype": "int64", "shape": [1, 1], "low": 0, "high": 8000}] +
        [{"name": n, "dtype": "float32", "shape": [1, 8, past, 64], "low": -1, "high": 1} for n in past_names]))

    frames, w_layers = (300, 2) if small else (3000, 4)
    entries.append(("whisper_tiny_enc", lambda: (
        WhisperEncoder(frames=frames, layers=w_layers), (torch.randn(1, 80, frames),), ["mel"], ["encoder_out"], None),
        f"Whisper-tiny-style encoder (2 Conv1d + GELU, sinusoidal positions, {w_layers} pre-LN layers, hidden 384, 6 heads), {frames} mel frames",
        [{"name": "mel", "dtype": "float32", "shape": [1, 80, frames], "low": -1.5, "high": 1.5}]))
    return entries


def holdout(small):
    """The held-out set (--set holdout), same format as zoo(); --small: 64x64 images, DeiT 16
    patches and 2 layers, BERT 2 layers at sequence 32 (the `zoo: holdout accuracy` test)."""
    res = 64 if small else 224
    entries = []
    for name in ["squeezenet1_1", "shufflenet_v2_x1_0", "mnasnet1_0", "regnet_y_400mf", "resnext50_32x4d",
                 "densenet121", "convnext_tiny", "swin_t"]:
        shape = [1, 3, res, res]
        entries.append((name, lambda name=name, shape=shape: (
            getattr(torchvision.models, name)(), (torch.randn(*shape),), ["input"], ["logits"], None),
            f"torchvision.models.{name}() (random weights), {res}x{res} image", image(shape)))
    deit_layers = 2 if small else 12
    entries.append(("deit_small", lambda: (
        torchvision.models.vision_transformer.VisionTransformer(
            image_size=res, patch_size=16, num_layers=deit_layers, num_heads=6, hidden_dim=384, mlp_dim=1536),
        (torch.randn(1, 3, res, res),), ["input"], ["logits"], None),
        f"DeiT-Small-like (torchvision VisionTransformer, {deit_layers} layers, hidden 384, 6 heads), "
        f"{(res // 16) ** 2 + 1} tokens", image([1, 3, res, res])))
    seq, bert_layers, vocab = (32, 2, 1000) if small else (128, 4, 30522)
    entries.append(("bert_base_s128", lambda: (
        MiniLM(vocab=vocab, layers=bert_layers, hidden=768, heads=12, ffn=3072),
        (torch.randint(0, vocab, (1, seq)), torch.ones(1, seq, dtype=torch.long)),
        ["input_ids", "attention_mask"], ["last_hidden_state"], None),
        f"BERT-base-width encoder ({bert_layers} layers, hidden 768, 12 heads, FFN 3072, erf GELU, vocabulary "
        f"{vocab}), sequence {seq}", token_inputs(seq, vocab)))
    return entries


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default="build/zoo")
    p.add_argument("--small", action="store_true")
    p.add_argument("--models", default="")
    p.add_argument("--set", default="zoo", choices=["zoo", "holdout"])
    args = p.parse_args()

    entries = holdout(args.small) if args.set == "holdout" else zoo(args.small)
    names = [e[0] for e in entries]
    wanted = [m for m in args.models.split(",") if m] or names
    unknown = [m for m in wanted if m not in names]
    if unknown:
        print(f"export.py: unknown model(s) {', '.join(unknown)}; known: {', '.join(names)}")
        return 1
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))
    warnings.filterwarnings("ignore")  # tracer warnings about shape-dependent Python values
    manifest = []
    for i, (name, build, note, inputs) in enumerate(entries):
        if name not in wanted:
            continue
        torch.manual_seed(1000 + i)
        model, example, in_names, out_names, dyn = build()
        randomize(model, torch.Generator().manual_seed(2000 + i))
        model.eval()
        path = os.path.join(args.out, name + ".onnx")
        torch.onnx.export(model, example, path, opset_version=OPSET, do_constant_folding=True,
                          input_names=in_names, output_names=out_names, dynamic_axes=dyn)
        manifest.append({"name": name, "file": name + ".onnx", "note": note, "inputs": inputs})
        print(f"export.py: {path} ({os.path.getsize(path) / 1e6:.1f} MB)", flush=True)
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        f.write("[\n" + ",\n".join("  " + json.dumps(m) for m in manifest) + "\n]\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
