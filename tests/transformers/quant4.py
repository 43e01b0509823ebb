"""Block-wise weight quantization in onnxruntime's com.microsoft MatMulNBits / GatherBlockQuantized
layout (docs/ContribOperators.md): codes packed low bits first along K, one [N, k_blocks, blob] u8
blob per row; symmetric (zero point 2^(bits-1), the input omitted) or asymmetric (u8 zero points
packed per row like the codes). Shared by gen_int4.py (single-op cases) and make_decoder.py --int4
(a whole decoder with int4 linear layers).
"""
import numpy as np


def pack_codes(q, bits):
    """Packs integer codes [..., L] (L a multiple of 8 / bits) into u8 [..., L * bits / 8], low bits first."""
    per = 8 // bits
    q = q.astype(np.uint8).reshape(q.shape[:-1] + (q.shape[-1] // per, per))
    out = np.zeros(q.shape[:-1], np.uint8)
    for t in range(per):
        out |= (q[..., t] << (t * bits)).astype(np.uint8)
    return out


def quantize(w, bits, block, symmetric, r):
    """Block-wise quantization of w [N, K] along K. Returns (B u8 [N, kb, blob], scales f32 [N, kb],
    zero points int [N, kb], dequantized f32 [N, K])."""
    n, k = w.shape
    kb = -(-k // block)
    qmax = (1 << bits) - 1
    wp = np.zeros((n, kb * block), np.float32)
    wp[:, :k] = w
    blocks = wp.reshape(n, kb, block)
    if symmetric:
        zp = np.full((n, kb), 1 << (bits - 1), np.int64)
        scale = (np.abs(blocks).max(-1) / (1 << (bits - 1))).astype(np.float32)
    else:
        lo = np.minimum(blocks.min(-1), 0)
        hi = np.maximum(blocks.max(-1), 0)
        scale = ((hi - lo) / qmax).astype(np.float32)
        zp = np.clip(np.round(-lo / scale), 0, qmax).astype(np.int64)
    q = np.clip(np.round(blocks / scale[..., None]) + zp[..., None], 0, qmax).astype(np.int64)
    q = q.reshape(n, kb * block)
    q[:, k:] = r.integers(0, qmax + 1, size=(n, kb * block - k))  # padding codes: must be ignored
    deq = ((q[:, :k].reshape(n, -1) - np.repeat(zp, block, axis=1)[:, :k]) * np.repeat(scale, block, axis=1)[:, :k])
    b = pack_codes(q.reshape(n, kb, block), bits)
    return b, scale, zp, deq.astype(np.float32)


def pack_zero_points(zp, bits):
    """Zero points [N, kb] packed per row like B: [N, ceil(kb * bits / 8)]."""
    per = 8 // bits
    n, kb = zp.shape
    padded = np.zeros((n, -(-kb // per) * per), np.int64)
    padded[:, :kb] = zp
    return pack_codes(padded, bits)
