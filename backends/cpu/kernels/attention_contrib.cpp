// CPU kernels of the onnxruntime contrib attention ops (com.microsoft MultiHeadAttention,
// Attention, GroupQueryAttention, RotaryEmbedding; contracts: core/ops/families/attention.cpp and
// onnxruntime docs/ContribOperators.md). Each kernel lays its inputs out as strided views (adding
// biases, projecting, rotating and building the KV cache where the op asks) and runs the shared
// attention core (attention.h). f32, and f16 computed in f32 (run_f16_as_f32). Masks given as
// data (raw 0/1 masks, key lengths) add mask_filter_value, as onnxruntime does; causal and window
// masks exclude keys outright.
#include <algorithm>
#include <cmath>
#include <limits>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/kernels/attention.h"
#include "backends/cpu/kernels/gemm.h"
#include "backends/cpu/kernels/scratch.h"

namespace tsr::cpu {

namespace {

float default_scale(const ir::Node& node, int64_t head_size) {
  const double s = node.attr_float("scale");
  return static_cast<float>(s != 0.0 ? s : 1.0 / std::sqrt(static_cast<double>(head_size)));
}

// rows x cols of `src` (row stride `ld`) plus bias[cols] into a fresh dense scratch block.
Expected<float*> add_bias_copy(exec::KernelContext& ctx, const float* src, int64_t rows, int64_t cols, int64_t ld,
                               const float* bias) {
  TSR_ASSIGN_OR_RETURN(Scratch<float> out, Scratch<float>::make(ctx, static_cast<size_t>(rows * cols)));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) out[static_cast<size_t>(r * cols + c)] = src[r * ld + c] + bias[c];
  return out.data();
}

// The additive bias of the contrib ops, [Bm, Hm, Sm, T] summed from an int32 key mask
// (mask_index / key_padding_mask: [B] key lengths, [2B] end and start positions, [B, T] or
// [B, S, T] 0/1; masked keys add `filter`) and a float attention_bias [B|1, N|1, S|1, T].
Status contrib_bias(exec::KernelContext& ctx, const Tensor* mask, const Tensor* ab, float filter, int64_t total,
                    AttnProblem& p) {
  if (!mask && !ab) return ok_status();
  const int64_t batch = p.batch, s = p.q_len;
  int64_t bm = 1, hm = 1, sm = 1;
  if (mask) {
    const bool lens = mask->rank() == 1;
    if (lens && mask->numel() != batch && mask->numel() != 2 * batch)
      return ctx.error("mask of ", mask->numel(), " values: expected [B] or [2B] key positions (other 1-D forms are not supported)");
    if (!lens && (mask->rank() > 3 || mask->dim(0) != batch || mask->dim(mask->rank() - 1) != total ||
                  (mask->rank() == 3 && mask->dim(1) != s)))
      return ctx.error("mask ", shape_str(mask->shape()), ": expected [B, ", total, "] or [B, ", s, ", ", total, "]");
    bm = batch;
    if (mask->rank() == 3) sm = s;
  }
  if (ab) {
    if (ab->rank() != 4 || (ab->dim(0) != 1 && ab->dim(0) != batch) || (ab->dim(1) != 1 && ab->dim(1) != p.q_heads) ||
        (ab->dim(2) != 1 && ab->dim(2) != s) || ab->dim(3) != total)
      return ctx.error("attention_bias ", shape_str(ab->shape()), ": expected [B or 1, N or 1, S, ", total, "]");
    bm = std::max(bm, ab->dim(0));
    hm = ab->dim(1);
    sm = std::max(sm, ab->dim(2));
  }
  TSR_ASSIGN_OR_RETURN(Scratch<float> bias, Scratch<float>::make(ctx, static_cast<size_t>(bm * hm * sm * total)));
  const int32_t* pm = mask ? mask->data<int32_t>() : nullptr;
  const float* pa = ab ? ab->data<float>() : nullptr;
  for (int64_t b = 0; b < bm; ++b)
    for (int64_t h = 0; h < hm; ++h)
      for (int64_t i = 0; i < sm; ++i) {
        float* row = bias.data() + ((b * hm + h) * sm + i) * total;
        for (int64_t j = 0; j < total; ++j) {
          float v = 0.0f;
          if (pm) {
            bool keep;
            if (mask->rank() == 1) keep = j < pm[b] && (mask->numel() == batch || j >= pm[batch + b]);
            else keep = pm[(b * (mask->rank() == 3 ? s : 1) + (mask->rank() == 3 ? i : 0)) * total + j] != 0;
            if (!keep) v += filter;
          }
          if (pa)
            v += pa[((ab->dim(0) == 1 ? 0 : b) * ab->dim(1) + (ab->dim(1) == 1 ? 0 : h)) * ab->dim(2) * total +
                    (ab->dim(2) == 1 ? 0 : i) * total + j];
          row[j] = v;
        }
      }
  p.bias = bias.data();
  p.bias_sb = bm == 1 ? 0 : hm * sm * total;
  p.bias_sh = hm == 1 ? 0 : sm * total;
  p.bias_sq = sm == 1 ? 0 : total;
  return ok_status();
}

// The KV cache of one of K / V: present [B, N, P+L, hd] from past (may be null) and the new rows;
// the output when the node wants it, else scratch. Returns a view of it.
Expected<AttnView> make_present(exec::KernelContext& ctx, size_t out, const Tensor* past, const AttnView& fresh,
                                int64_t batch, int64_t heads, int64_t p, int64_t l, int64_t hd) {
  float* dst;
  if (out < ctx.num_outputs() && ctx.node().outputs[out] >= 0) {
    TSR_ASSIGN_OR_RETURN(Tensor * o, ctx.alloc_output(out));
    dst = o->mut_data<float>();
  } else {
    TSR_ASSIGN_OR_RETURN(Scratch<float> sc, Scratch<float>::make(ctx, static_cast<size_t>(batch * heads * (p + l) * hd)));
    dst = sc.data();
  }
  fill_present(dst, past ? past->data<float>() : nullptr, fresh, batch, heads, p, l, hd);
  return AttnView{dst, heads * (p + l) * hd, (p + l) * hd, hd};
}

// The optional scores output ([B, N, S, T], allocated as output `out` when the node has it): the
// core's copy at `mode`. Returns null when the node does not want it.
Expected<Tensor*> qk_output(exec::KernelContext& ctx, size_t out, int mode, AttnProblem& p) {
  if (ctx.num_outputs() <= out || ctx.node().outputs[out] < 0) return static_cast<Tensor*>(nullptr);
  TSR_ASSIGN_OR_RETURN(Tensor * qk, ctx.alloc_output(out, DType::kF32, {p.batch, p.q_heads, p.q_len, p.kv_len}));
  p.qk_out = qk->mut_data<float>();
  p.qk_mode = mode;
  return qk;
}

// Masked scores are -inf in the core's copy; onnxruntime writes `value` there instead.
void replace_masked(Tensor* qk, float value) {
  if (!qk) return;
  float* e = qk->mut_data<float>();
  for (int64_t i = 0; i < qk->numel(); ++i)
    if (e[i] == -std::numeric_limits<float>::infinity()) e[i] = value;
}

// The common end of MultiHeadAttention and Attention: scale, `unidirectional` (causal after a
// past of `past` tokens), the key mask and attention_bias, output [B, S, N*Hv].
Status run_unidirectional(exec::KernelContext& ctx, AttnProblem& p, const Tensor* mask, const Tensor* ab, int64_t past) {
  const ir::Node& node = ctx.node();
  p.scale = default_scale(node, p.head_size);
  p.causal = node.attr_int("unidirectional") != 0;
  p.causal_offset = past;
  TSR_RETURN_IF_ERROR(contrib_bias(ctx, mask, ab, static_cast<float>(node.attr_float("mask_filter_value")), p.kv_len, p));
  // MultiHeadAttention's output_qk: the scores with the bias and masks, causal ones at lowest().
  TSR_ASSIGN_OR_RETURN(Tensor * qk, qk_output(ctx, 3, 2, p));
  TSR_ASSIGN_OR_RETURN(Tensor * y, ctx.alloc_output(0));
  const int64_t dv = p.q_heads * p.v_head_size;
  p.y = AttnOut{y->mut_data<float>(), p.q_len * dv, p.v_head_size, dv};
  TSR_RETURN_IF_ERROR(attention_core(ctx, p));
  replace_masked(qk, std::numeric_limits<float>::lowest());
  return ok_status();
}

// com.microsoft::MultiHeadAttention: query, key, value, bias?, key_padding_mask?, attention_bias?,
// past_key?, past_value?. key/value 3-D [B, L, N*H] (bias added) or 4-D [B, N, L, H] (bias added
// to the query only, as onnxruntime does). output_qk? [B, N, S, T]: the scaled scores plus the
// bias and key mask, causally masked ones at the lowest float.
Status ms_mha(exec::KernelContext& ctx) {
  const ir::Node& node = ctx.node();
  const Tensor &q = *ctx.input(0), &k = *ctx.input(1), &v = *ctx.input(2);
  const Tensor *bias = ctx.input(3), *past_k = ctx.input(6), *past_v = ctx.input(7);
  AttnProblem p;
  p.batch = q.dim(0);
  p.q_len = q.dim(1);
  p.q_heads = p.kv_heads = node.attr_int("num_heads");
  const int64_t n = p.q_heads, dq = q.dim(2);
  const bool kv4 = k.rank() == 4;
  const int64_t l = kv4 ? k.dim(2) : k.dim(1), dv = kv4 ? v.dim(1) * v.dim(3) : v.dim(2);
  const int64_t past = past_k ? past_k->dim(2) : 0;
  p.head_size = dq / n;
  p.v_head_size = dv / n;
  p.kv_len = past + l;
  if (kv4 && past_k) return ctx.error("past_key with 4-D key/value is not supported");
  if (bias && bias->numel() != 2 * dq + dv) return ctx.error("bias has ", bias->numel(), " values, expected ", 2 * dq + dv);
  const float* bq = bias ? bias->data<float>() : nullptr;
  const float* pq = q.data<float>();
  const float *pk = k.data<float>(), *pv = v.data<float>();
  if (bias) {
    TSR_ASSIGN_OR_RETURN(pq, add_bias_copy(ctx, pq, p.batch * p.q_len, dq, dq, bq));
    if (!kv4) {  // 4-D key / value are already projected (a cross-attention cache): bias on Q only
      TSR_ASSIGN_OR_RETURN(pk, add_bias_copy(ctx, pk, p.batch * l, dq, dq, bq + dq));
      TSR_ASSIGN_OR_RETURN(pv, add_bias_copy(ctx, pv, p.batch * l, dv, dv, bq + 2 * dq));
    }
  }
  const int64_t hs = p.head_size, hv = p.v_head_size;
  p.q = AttnView{pq, p.q_len * dq, hs, dq};
  p.k = kv4 ? AttnView{pk, n * l * hs, l * hs, hs} : AttnView{pk, l * dq, hs, dq};
  p.v = kv4 ? AttnView{pv, n * l * hv, l * hv, hv} : AttnView{pv, l * dv, hv, dv};
  if (past_k || (ctx.num_outputs() > 1 && node.outputs[1] >= 0)) {
    TSR_ASSIGN_OR_RETURN(p.k, make_present(ctx, 1, past_k, p.k, p.batch, n, past, l, hs));
  }
  if (past_v || (ctx.num_outputs() > 2 && node.outputs[2] >= 0)) {
    TSR_ASSIGN_OR_RETURN(p.v, make_present(ctx, 2, past_v, p.v, p.batch, n, past, l, hv));
  }
  return run_unidirectional(ctx, p, ctx.input(4), ctx.input(5), past);
}

// com.microsoft::Attention: input, weights, bias?, mask_index?, past?, attention_bias?. QKV =
// input · weights + bias; past / present [2, B, N, P, H] hold K then V.
Status ms_attention(exec::KernelContext& ctx) {
  const ir::Node& node = ctx.node();
  const Tensor &x = *ctx.input(0), &w = *ctx.input(1);
  const Tensor *bias = ctx.input(2), *past = ctx.input(4);
  AttnProblem p;
  p.batch = x.dim(0);
  p.q_len = x.dim(1);
  p.q_heads = p.kv_heads = node.attr_int("num_heads");
  const int64_t n = p.q_heads, din = x.dim(2), dtot = w.dim(1);
  const auto sizes = node.attr_ints("qkv_hidden_sizes");
  const int64_t dq = sizes.empty() ? dtot / 3 : sizes[0], dk = sizes.empty() ? dq : sizes[1];
  const int64_t dv = sizes.empty() ? dq : sizes[2];
  if (bias && bias->numel() != dtot) return ctx.error("bias has ", bias->numel(), " values, expected ", dtot);
  const int64_t rows = p.batch * p.q_len, pl = past ? past->dim(3) : 0;
  if (past && (past->dim(0) != 2 || past->dim(1) != p.batch || past->dim(2) != n || past->dim(4) != dk / n))
    return ctx.error("past ", shape_str(past->shape()), ": expected [2, B, N, P, H]");
  TSR_ASSIGN_OR_RETURN(Scratch<float> qkv, Scratch<float>::make(ctx, static_cast<size_t>(rows * dtot)));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < dtot; ++c) qkv[static_cast<size_t>(r * dtot + c)] = bias ? bias->data<float>()[c] : 0.0f;
  sgemm(false, false, rows, dtot, din, 1.0f, x.data<float>(), din, w.data<float>(), dtot, 1.0f, qkv.data(), dtot, &ctx.pool());
  p.head_size = dq / n;
  p.v_head_size = dv / n;
  p.kv_len = pl + p.q_len;
  const int64_t hs = p.head_size, hv = p.v_head_size, s = p.q_len;
  p.q = AttnView{qkv.data(), s * dtot, hs, dtot};
  p.k = AttnView{qkv.data() + dq, s * dtot, dk / n, dtot};
  p.v = AttnView{qkv.data() + dq + dk, s * dtot, hv, dtot};
  const bool want_present = ctx.num_outputs() > 1 && node.outputs[1] >= 0;
  if (past || want_present) {
    float* present = nullptr;
    const int64_t total = p.kv_len, half = p.batch * n * total * hs;
    if (want_present) {
      TSR_ASSIGN_OR_RETURN(Tensor * o, ctx.alloc_output(1));
      present = o->mut_data<float>();
    } else {
      TSR_ASSIGN_OR_RETURN(Scratch<float> sc, Scratch<float>::make(ctx, static_cast<size_t>(2 * half)));
      present = sc.data();
    }
    const int64_t past_half = p.batch * n * pl * hs;
    for (int which = 0; which < 2; ++which) {
      AttnView& dst = which == 0 ? p.k : p.v;
      float* base = present + which * half;
      fill_present(base, past ? past->data<float>() + which * past_half : nullptr, dst, p.batch, n, pl, s, hs);
      dst = AttnView{base, n * total * hs, total * hs, hs};
    }
  }
  return run_unidirectional(ctx, p, ctx.input(3), ctx.input(5), pl);
}

// com.microsoft::GroupQueryAttention: query, key, value [B, S, ...], past_key/value [B, kvN, P, H],
// seqlens_k [B] (i32: total length - 1), total_sequence_length (i32), cos_cache?, sin_cache?.
// Packed QKV (key and value absent, the onnxruntime-genai export form): query is
// [B, S, (N + 2 kvN) H], each token's row holding its N query heads, then kvN key heads, then kvN
// value heads; the kernel splits it into dense Q, K, V first. position_ids? [B, S] (i64) give the
// rotary positions after the first prompt (onnxruntime ignores them on it); attention_bias? [B|1, N|1, S, T] is added to the scores; head_sink?
// [N] (or smooth_softmax = 1: 0 for every head) is an extra softmax logit per head. output_qk?
// (qk_output 1 / 2): the scores after softcap and bias, or the softmax; masked keys 0.
// Batch b holds seqlens_k[b] + 1 tokens after this step: its new tokens sit at positions
// [past_b, past_b + S) with past_b = seqlens_k[b] + 1 - S (0 on the first prompt, S == total);
// attention is causal from there (and, when local_window_size > 0, sees only the last
// local_window_size keys up to its own position).
Status ms_gqa(exec::KernelContext& ctx) {
  const ir::Node& node = ctx.node();
  const Tensor &q = *ctx.input(0), *k = ctx.input(1);
  const Tensor *past_k = ctx.input(3), *past_v = ctx.input(4), &seqlens = *ctx.input(5), &total_t = *ctx.input(6);
  AttnProblem p;
  p.batch = q.dim(0);
  p.q_len = q.dim(1);
  p.q_heads = node.attr_int("num_heads");
  p.kv_heads = node.attr_int("kv_num_heads");
  const int64_t s = p.q_len, n = p.q_heads, kvn = p.kv_heads, hs = q.dim(2) / (k ? n : n + 2 * kvn);
  p.head_size = p.v_head_size = hs;
  const int64_t q_numel = p.batch * s * n * hs, kv_numel = p.batch * s * kvn * hs;
  const float *pq = q.data<float>(), *pk = nullptr, *pv = nullptr;
  if (k) {
    if (k->dim(1) != s) return ctx.error("key has ", k->dim(1), " tokens, query ", s);
    pk = k->data<float>();
    pv = ctx.input(2)->data<float>();
  } else {
    TSR_ASSIGN_OR_RETURN(Scratch<float> dense, Scratch<float>::make(ctx, static_cast<size_t>(q_numel + 2 * kv_numel)));
    const int64_t row = (n + 2 * kvn) * hs, dq = n * hs, dk = kvn * hs;
    float *dqp = dense.data(), *dkp = dqp + q_numel, *dvp = dkp + kv_numel;
    for (int64_t r = 0; r < p.batch * s; ++r) {
      const float* src = pq + r * row;
      std::copy_n(src, dq, dqp + r * dq);
      std::copy_n(src + dq, dk, dkp + r * dk);
      std::copy_n(src + dq + dk, dk, dvp + r * dk);
    }
    pq = dqp;
    pk = dkp;
    pv = dvp;
  }
  const int64_t total = total_t.scalar_i64(0), pbuf = past_k ? past_k->dim(2) : 0;
  const int64_t present_len = std::max(pbuf, total);
  if (seqlens.numel() != p.batch) return ctx.error("seqlens_k has ", seqlens.numel(), " values, expected ", p.batch);
  TSR_ASSIGN_OR_RETURN(Scratch<int64_t> per_b, Scratch<int64_t>::make(ctx, static_cast<size_t>(2 * p.batch)));
  const bool first_prompt = s == total && s > 1;
  for (int64_t b = 0; b < p.batch; ++b) {
    const int64_t tb = seqlens.scalar_i64(b) + 1;
    const int64_t past_b = first_prompt ? 0 : tb - s;
    if (past_b < 0 || past_b > pbuf || past_b + s > present_len)
      return ctx.error("batch ", b, ": seqlens_k + 1 = ", tb, " does not fit ", s, " new tokens after a past of ", pbuf);
    per_b[static_cast<size_t>(b)] = past_b;                     // causal offset
    per_b[static_cast<size_t>(p.batch + b)] = first_prompt ? std::min(tb, s) : tb;  // valid keys
  }
  const Tensor* pos_ids = ctx.input(9);
  if (pos_ids && pos_ids->numel() != p.batch * s)
    return ctx.error("position_ids has ", pos_ids->numel(), " values, expected B*S = ", p.batch * s);
  if (node.attr_int("do_rotary") != 0) {
    const Tensor &cos = *ctx.input(7), &sin = *ctx.input(8);
    const bool inter = node.attr_int("rotary_interleaved") != 0;
    const int64_t half = cos.dim(1), rows = cos.dim(0);
    for (int which = 0; which < 2; ++which) {
      const float* t = which == 0 ? pq : pk;
      const int64_t heads = which == 0 ? n : kvn;
      TSR_ASSIGN_OR_RETURN(Scratch<float> rot, Scratch<float>::make(ctx, static_cast<size_t>(which == 0 ? q_numel : kv_numel)));
      for (int64_t b = 0; b < p.batch; ++b)
        for (int64_t i = 0; i < s; ++i) {
          // onnxruntime reads position_ids only after the first prompt (which always starts at 0).
          const int64_t pos = pos_ids && !first_prompt ? pos_ids->data<int64_t>()[b * s + i]
                                                       : per_b[static_cast<size_t>(b)] + i;
          if (pos < 0) return ctx.error("position_ids[", b, ", ", i, "] = ", pos, " is negative");
          if (pos >= rows) return ctx.error("position ", pos, " is outside the cos/sin cache of ", rows, " rows");
          for (int64_t h = 0; h < heads; ++h) {
            const int64_t off = ((b * s + i) * heads + h) * hs;
            rotary_row(t + off, rot.data() + off, cos.data<float>() + pos * half,
                       sin.data<float>() + pos * half, 2 * half, hs, inter);
          }
        }
      (which == 0 ? pq : pk) = rot.data();
    }
  }
  p.q = AttnView{pq, s * n * hs, hs, n * hs};
  // present: the past's first past_b rows, then the new rows, zeros after.
  for (int which = 0; which < 2; ++which) {
    const Tensor* past = which == 0 ? past_k : past_v;
    const float* fresh = which == 0 ? pk : pv;
    float* dst;
    if (ctx.num_outputs() > size_t(1 + which) && node.outputs[1 + which] >= 0) {
      TSR_ASSIGN_OR_RETURN(Tensor * o, ctx.alloc_output(1 + which, DType::kF32, {p.batch, kvn, present_len, hs}));
      dst = o->mut_data<float>();
    } else {
      TSR_ASSIGN_OR_RETURN(Scratch<float> sc, Scratch<float>::make(ctx, static_cast<size_t>(p.batch * kvn * present_len * hs)));
      dst = sc.data();
    }
    for (int64_t b = 0; b < p.batch; ++b)
      for (int64_t h = 0; h < kvn; ++h) {
        float* d = dst + (b * kvn + h) * present_len * hs;
        const int64_t past_b = per_b[static_cast<size_t>(b)];
        std::fill(d, d + present_len * hs, 0.0f);
        if (past_b > 0) std::copy_n(past->data<float>() + (b * kvn + h) * pbuf * hs, past_b * hs, d);
        for (int64_t i = 0; i < s; ++i) std::copy_n(fresh + ((b * s + i) * kvn + h) * hs, hs, d + (past_b + i) * hs);
      }
    (which == 0 ? p.k : p.v) = AttnView{dst, kvn * present_len * hs, present_len * hs, hs};
  }
  p.kv_len = present_len;
  p.scale = default_scale(node, hs);
  p.softcap = static_cast<float>(node.attr_float("softcap"));
  p.causal = true;
  p.causal_offset_b = per_b.data();
  p.kv_valid = per_b.data() + p.batch;
  const int64_t window = node.attr_int("local_window_size");
  p.local_window = window > 0 ? window - 1 : -1;  // a window of local_window_size keys, the query's own included
  TSR_RETURN_IF_ERROR(contrib_bias(ctx, nullptr, ctx.input(10), 0.0f, present_len, p));
  if (const Tensor* sink = ctx.input(11)) {
    if (sink->numel() != n) return ctx.error("head_sink has ", sink->numel(), " values, expected num_heads = ", n);
    p.sink = sink->data<float>();
  } else if (node.attr_int("smooth_softmax") != 0) {
    TSR_ASSIGN_OR_RETURN(Scratch<float> zeros, Scratch<float>::make(ctx, static_cast<size_t>(n)));
    std::fill(zeros.data(), zeros.data() + n, 0.0f);
    p.sink = zeros.data();
  }
  // qk_output 1 / 2: the core's stages after bias and masks / the softmax; masked scores 0.
  TSR_ASSIGN_OR_RETURN(Tensor * qk, qk_output(ctx, 3, node.attr_int("qk_output") == 1 ? 2 : 3, p));
  TSR_ASSIGN_OR_RETURN(Tensor * y, ctx.alloc_output(0));
  p.y = AttnOut{y->mut_data<float>(), s * n * hs, hs, n * hs};
  TSR_RETURN_IF_ERROR(attention_core(ctx, p));
  replace_masked(qk, 0.0f);
  return ok_status();
}

// com.microsoft::RotaryEmbedding: input, position_ids ([B, S], or [1]: the first position, the
// tokens following it), cos_cache, sin_cache [max_position, rot/2].
Status ms_rotary(exec::KernelContext& ctx) {
  const ir::Node& node = ctx.node();
  if (node.attr_int("is_packed_batching") != 0) return ctx.error("is_packed_batching = 1 is not supported");
  const Tensor &x = *ctx.input(0), &pos = *ctx.input(1), &cos = *ctx.input(2), &sin = *ctx.input(3);
  if (cos.shape() != sin.shape() || cos.rank() != 2)
    return ctx.error("cos_cache ", shape_str(cos.shape()), " and sin_cache ", shape_str(sin.shape()), ": expected equal [max, rot/2]");
  const int64_t s = x.rank() == 3 ? x.dim(1) : x.dim(2);
  int64_t heads = node.attr_int("num_heads");
  if (x.rank() == 3 && heads == 0) {
    if (node.attr_int("rotary_embedding_dim") != 0) return ctx.error("rotary_embedding_dim needs num_heads");
    heads = x.dim(2) / (2 * cos.dim(1));  // the head size is the caches' full width
  }
  TSR_ASSIGN_OR_RETURN(Tensor * y, ctx.alloc_output(0));
  RotaryArgs a{&x, y, cos.data<float>(), sin.data<float>(), cos.dim(1), cos.dim(0), heads,
               node.attr_int("rotary_embedding_dim"), node.attr_int("interleaved") != 0, {}};
  const int64_t* pp = pos.data<int64_t>();
  if (pos.numel() == 1) a.cache_row = [pp](int64_t, int64_t t) { return pp[0] + t; };
  else if (pos.numel() == x.dim(0) * s) a.cache_row = [pp, s](int64_t b, int64_t t) { return pp[b * s + t]; };
  else return ctx.error("position_ids has ", pos.numel(), " values, expected 1 or B*S");
  return rotary_apply(ctx, a);
}

}  // namespace

void register_attention_contrib_kernels(KernelRegistry& r) {
  TSR_IF_SELECTED("com.microsoft::MultiHeadAttention") r.add_fn("com.microsoft::MultiHeadAttention", {DType::kF32, DType::kF16}, f32_or_f16<ms_mha>);
  TSR_IF_SELECTED("com.microsoft::Attention") r.add_fn("com.microsoft::Attention", {DType::kF32, DType::kF16}, f32_or_f16<ms_attention>);
  TSR_IF_SELECTED("com.microsoft::GroupQueryAttention") r.add_fn("com.microsoft::GroupQueryAttention", {DType::kF32, DType::kF16}, f32_or_f16<ms_gqa>);
  TSR_IF_SELECTED("com.microsoft::RotaryEmbedding") r.add_fn("com.microsoft::RotaryEmbedding", {DType::kF32, DType::kF16}, f32_or_f16<ms_rotary>);
}

}  // namespace tsr::cpu
