// The CPU attention core shared by every attention kernel (ONNX Attention, com.microsoft
// MultiHeadAttention / Attention / GroupQueryAttention) and the rotary-embedding rows they share.
//
// attention_core computes, for each batch b and query head h (kv head h / (q_heads / kv_heads),
// the GQA/MQA grouping of the ONNX spec),
//   Y[b, h] = softmax(softcap(scale * Q[b,h] K[b,kh]^T) + bias[b,h] + structural mask) V[b,kh]
// (the softmax optionally with a sink logit per head, see AttnProblem::sink)
// in f32, tiled over keys with an online softmax (running row max and sum, FlashAttention:
// Dao et al., "FlashAttention: Fast and Memory-Efficient Exact Attention with IO-Awareness",
// 2022), so the [q, keys] score matrix is never held beyond one block of keys. Q·K^T and P·V of
// each block go through sgemm (gemm.h); the row max / exp / sum / rescale run with Highway. On
// x86 AVX-512, f32 problems with 16 queries or more (no bf16, no qk_out) take register tiles on
// a K^T packed once per call instead (attention_flash-inl.h).
// Work is split over (batch, head, query block) on ctx.pool(); each chunk's blocks live in the
// run's scratch arena.
//
// Structural masks (key j of total T, query i of S): keys j >= kv_len[b] are masked; with
// `causal`, keys j > i + offset[b] are masked (offset: causal_offset, or causal_offset_b[b]);
// with local_window >= 0 also keys j < i + offset[b] - local_window. Masked scores are -inf; a
// row with every key masked yields zeros. Layouts are strided views: element (b, h, row, d) of a
// tensor is base[b*sb + h*sh + row*sr + d] (d contiguous).
#pragma once

#include <cstdint>
#include <functional>

#include "core/base/status.h"
#include "core/exec/kernel.h"

namespace tsr::cpu {

struct AttnView {
  const float* base = nullptr;
  int64_t sb = 0, sh = 0, sr = 0;
  const float* row(int64_t b, int64_t h, int64_t r) const { return base + b * sb + h * sh + r * sr; }
};

struct AttnOut {
  float* base = nullptr;
  int64_t sb = 0, sh = 0, sr = 0;
};

struct AttnProblem {
  int64_t batch = 0, q_heads = 0, kv_heads = 0, q_len = 0, kv_len = 0, head_size = 0, v_head_size = 0;
  AttnView q, k, v;
  AttnOut y;
  float scale = 1.0f;
  float softcap = 0.0f;  // > 0: scores become softcap * tanh(scores / softcap), before the bias
  // Additive bias, element (b, h, i, j) at bias[b*bias_sb + h*bias_sh + i*bias_sq + j] (strides 0
  // broadcast); null: none.
  const float* bias = nullptr;
  int64_t bias_sb = 0, bias_sh = 0, bias_sq = 0;
  bool causal = false;
  int64_t causal_offset = 0;
  const int64_t* causal_offset_b = nullptr;  // per batch; overrides causal_offset
  const int64_t* kv_valid = nullptr;         // per batch count of valid keys; null: all
  int64_t local_window = -1;
  // Per query head: an extra softmax logit with no value row (an "attention sink": onnxruntime's
  // smooth_softmax, 0 for every head, and head_sink), so a row's weights sum to below 1. Null: none.
  const float* sink = nullptr;
  // Optional [B, qN, S, T] copy of the scores at one stage (qk_matmul_output_mode of ONNX
  // Attention, as onnxruntime 1.30 and the onnx reference order them): 0 scaled Q·K^T, 1 after
  // softcap, 2 after the bias and masks, 3 the softmax.
  float* qk_out = nullptr;
  int qk_mode = 0;
  // FastMath::kBf16 (the session's fast_math): Q·K^T and P·V with bf16 operands and f32
  // accumulation where bf16_attention_usable (attention_bf16.h), else f32 as without it.
  bool bf16 = false;
};

Status attention_core(exec::KernelContext& ctx, const AttnProblem& p);

// The KV cache of one of K / V: present [B, N, P+L, hd] = past [B, N, P, hd] (may be null when P
// is 0) followed along the sequence by the L rows of `fresh` (a strided view).
void fill_present(float* present, const float* past, const AttnView& fresh, int64_t batch, int64_t heads, int64_t p,
                  int64_t l, int64_t hd);

// Rotates one head row x[0, head_size) into y (may equal x): the first rot_dim values by the
// angles whose cos/sin are cos[0, rot_dim/2), sin[...]; the rest are copied. interleaved: pairs
// (x[2i], x[2i+1]); else halves (x[i], x[i + rot_dim/2]) (RoFormer, Su et al. 2021).
void rotary_row(const float* x, float* y, const float* cos, const float* sin, int64_t rot_dim, int64_t head_size,
                bool interleaved);

// One rotary application over a whole tensor X ([B, S, heads*H] or [B, N, S, H]) into y (X's
// shape): token (b, s) uses row cache_row(b, s) of the [cache_rows, half] cos/sin tables.
// rot_dim 0 = the head size. Errors: bad rot_dim / cache widths, a row outside the cache.
struct RotaryArgs {
  const Tensor* x;
  Tensor* y;
  const float *cos, *sin;
  int64_t half;        // cache columns (rot_dim / 2)
  int64_t cache_rows;
  int64_t heads;       // for 3-D X
  int64_t rot_dim;
  bool interleaved;
  std::function<int64_t(int64_t, int64_t)> cache_row;
};
Status rotary_apply(exec::KernelContext& ctx, const RotaryArgs& a);

// float16 attention: every f16 input is converted to f32, `f32_kernel` runs on those (the shared
// core computes in f32 either way) and every f16 output is converted back, rounding once to
// nearest even. Other inputs (int masks, lengths) pass through.
Status run_f16_as_f32(exec::KernelContext& ctx, exec::KernelFn f32_kernel);

// The kernel registered for f32 and f16: K itself, or K through run_f16_as_f32.
template <exec::KernelFn K> Status f32_or_f16(exec::KernelContext& ctx) {
  return ctx.input(0)->dtype() == DType::kF16 ? run_f16_as_f32(ctx, K) : K(ctx);
}

}  // namespace tsr::cpu
